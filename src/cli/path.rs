//! `optc path MODEL DATA --param λ`: the model solved along a log-spaced grid of one parameter,
//! from the largest value down, each point warm-started from the last (glmnet's pathwise
//! strategy, for any model optc solves). The data is read and bound once; each value is a
//! new plan, because parameters are folded into the code.

use super::inputs::load_data;
use super::outputs::{file_name, prepare_output};
use super::{compile, model_dir, read_model, report_compile_error, Failure};
use crate::data::Dataset;
use crate::output::OutputFile;
use crate::pipeline::CompileOptions;
use crate::session::path::{solve_path, PathError, PathEvent, PathPoint, PathSpec};
use crate::source::SourceFile;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct PathArgs {
    /// The model file (.opt).
    pub model: PathBuf,
    /// Training data, LIBSVM/svmlight text (plain or compressed).
    pub data: PathBuf,
    #[command(flatten)]
    pub options: PathOptions,
    #[command(flatten)]
    pub weights: super::weights::WeightArgs,
}

/// Everything of `optc path` but the model and the data (the REPL's `:path` takes these).
#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct PathOptions {
    /// The parameter to vary (ASCII names allowed: lambda for λ).
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub param: String,
    /// The first (largest) value; default λ_max, the smallest value with w = 0 optimal, where
    /// the parameter scales a sparsifying norm (docs/cli.md lists them), or glmnet's start for
    /// a ridge.
    #[arg(long, value_name = "A")]
    pub from: Option<f64>,
    /// The last (smallest) value; default from·1e-4 when rows > features, else from·1e-2 (glmnet's).
    #[arg(long, value_name = "B")]
    pub to: Option<f64>,
    /// Grid points, log-spaced from --from to --to.
    #[arg(long, default_value_t = 20)]
    pub steps: usize,
    /// Held-out data: each point's test error (or MSE) and loss.
    #[arg(long)]
    pub test: Option<PathBuf>,
    /// The CSV, one row per point (default: standard output).
    #[arg(long, value_name = "path.csv")]
    pub out: Option<PathBuf>,
    /// The path as a picture: non-zeros, test error and the largest weights against the parameter.
    #[arg(long, value_name = "path.svg")]
    pub plot: Option<PathBuf>,
    /// `--set` (another parameter), `--solver` and `--eager`, as `optc run` takes them.
    #[command(flatten)]
    pub model: super::session::ModelOptions,
    /// Each point's relative duality gap target (default 1e-4).
    #[arg(long, value_name = "T")]
    pub tol: Option<f64>,
    /// Each point's epoch cap (default: the solver's).
    #[arg(long)]
    pub epochs: Option<usize>,
    /// Seed of the row order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Solve every point from w = 0 (to measure what warm starts save).
    #[arg(long)]
    pub cold: bool,
    /// Run the reference interpreter.
    #[arg(long)]
    pub no_jit: bool,
    /// No per-point lines on standard error.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub data: super::session::DataOptions,
}

/// Where a path's CSV and picture go, opened before any data is read.
pub(crate) struct Outputs {
    csv: Option<OutputFile>,
    plot: Option<OutputFile>,
}

impl Outputs {
    pub fn prepare(options: &PathOptions) -> Result<Outputs, Failure> {
        let csv = prepare_output(options.out.as_ref())?;
        let plot = prepare_output(options.plot.as_ref())?;
        if csv.is_none() && plot.as_ref().is_some_and(|o| o.is_stdout()) {
            return Err(Failure::Usage("--plot -: the CSV goes to standard output; give --out FILE for it".into()));
        }
        Ok(Outputs { csv, plot })
    }
}

pub fn path(args: &PathArgs) -> Result<(), Failure> {
    let file = read_model(&args.model)?;
    let outputs = Outputs::prepare(&args.options)?;
    let (mut train, _, _) = load_data(&args.data, "data file", false, &args.options.data)?;
    if args.weights.given() {
        // The model is compiled again by the path; here only to say whether it reads weights.
        let opts = CompileOptions { files: Some(model_dir(&args.model)), ..Default::default() };
        let compiled = compile(&file, &opts)?;
        super::weights::attach(&args.weights, &compiled.model, &mut train)?;
    }
    let test = match &args.options.test {
        Some(p) => Some(load_data(p, "test file", false, &args.options.data)?.0),
        None => None,
    };
    trace_path(&file, &model_dir(&args.model), &train, test.as_ref(), &args.options, outputs)
}

/// Solves the path of `file`'s model on `train` (the model's `load` files relative to `dir`)
/// and writes what `options` asks for.
pub(crate) fn trace_path(
    file: &SourceFile,
    dir: &Path,
    train: &Dataset,
    test: Option<&Dataset>,
    args: &PathOptions,
    outputs: Outputs,
) -> Result<(), Failure> {
    let spec = PathSpec {
        param: args.param.clone(),
        from: args.from,
        to: args.to,
        steps: args.steps,
        values: None,
        tol: args.tol,
        epochs: args.epochs,
        seed: args.seed,
        cold: args.cold,
        jit: !args.no_jit,
        threads: args.data.threads(),
        compile: args.model.compile_options(args.epochs, dir)?,
        cancel: super::interrupt(),
    };
    let show = |event: PathEvent| match event {
        PathEvent::Range(words) if !args.quiet => eprintln!("path: {words}"),
        PathEvent::Point(point) if !args.quiet => eprintln!(
            "{} = {:<10} F = {:.6}  gap {}  nnz {:>6}  {} epochs  {:.2} s  {}{}",
            args.param,
            format!("{:.3e}", point.value),
            point.objective,
            point.gap.map_or("none".into(), |g| format!("{g:.1e}")),
            point.nnz,
            point.epochs,
            point.seconds,
            point.status,
            if point.no_solve { " (w = 0 is optimal at λ ≥ λ_max: no solve)" } else { "" }
        ),
        _ => {}
    };
    let solved = solve_path(file, train, test, &spec, show).map_err(|e| match e {
        PathError::Compile(e) => report_compile_error(e, file),
        PathError::OneVsRest(classes) => {
            super::ovr::refuse("optc path", &train.name, Some(classes)).err().unwrap_or(Failure::Reported)
        }
        PathError::Failed(e) => Failure::from(e),
    })?;
    let points = &solved.points;
    if !args.quiet {
        let epochs: usize = points.iter().map(|p| p.epochs).sum();
        eprintln!(
            "path: {} points from {:.4e} to {:.4e} in {:.2} s, {epochs} epochs in all ({})",
            points.len(),
            solved.from,
            solved.to,
            solved.seconds,
            if args.cold { "each from w = 0" } else { "each warm-started from the last" }
        );
    }
    if let Some(o) = outputs.plot {
        let shown: Vec<crate::plot::PathPoint> = points
            .iter()
            .map(|p| crate::plot::PathPoint {
                lambda: p.value,
                nnz: p.nnz,
                test: p.test_error,
                weights: p.weights.iter().enumerate().filter(|(_, v)| **v != 0.0).map(|(j, v)| (j, *v)).collect(),
            })
            .collect();
        let title = format!("{} on {}: regularization path", file_name(&file.name), file_name(&train.name));
        let svg = crate::plot::plot_path(&title, &args.param, &shown, solved.regression)
            .map_err(|e| Failure::Input(format!("{}: {e}", o.name())))?;
        o.commit(svg.as_bytes()).map_err(|e| Failure::Input(e.to_string()))?;
    }
    let csv = to_csv(&args.param, points, solved.regression);
    match outputs.csv {
        Some(o) => o.commit(csv.as_bytes()).map_err(|e| Failure::Input(e.to_string()))?,
        None => print!("{csv}"),
    }
    if spec.cancel.is_cancelled() {
        return Err(Failure::Interrupted);
    }
    Ok(())
}

fn to_csv(param: &str, points: &[PathPoint], regression: bool) -> String {
    let metric = if regression { "mse" } else { "error" };
    let mut csv = format!("{param},objective,gap,status,nnz,train_{metric},test_{metric},test_loss,seconds,epochs\n");
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.6e}"));
    for p in points {
        csv.push_str(&format!(
            "{:.6e},{:.17e},{},{},{},{},{},{},{:.6},{}\n",
            p.value,
            p.objective,
            opt(p.gap),
            p.status,
            p.nnz,
            opt(p.train_error),
            opt(p.test_error),
            opt(p.test_loss),
            p.seconds,
            p.epochs
        ));
    }
    csv
}
