//! `optc path MODEL DATA --param λ`: the model solved along a log-spaced grid of one parameter,
//! from the largest value down, each point warm-started from the last (glmnet's pathwise
//! strategy, for any model optc solves). The data is read and bound once; each value is a
//! new plan, because parameters are folded into the code.

mod start;

use super::inputs::load_data;
use super::outputs::prepare_output;
use super::session::{self, Bound};
use super::{compile, model_dir, parse_sets, read_model, report_compile_error, Failure};
use crate::data::{Dataset, LabelMap};
use crate::exec::evaluate::evaluate;
use crate::exec::State;
use crate::output::OutputFile;
use crate::pipeline::{self, CompileOptions};
use crate::source::SourceFile;
use crate::symbolic::fmt_num;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct PathArgs {
    /// The model file (.opt).
    pub model: PathBuf,
    /// Training data, LIBSVM/svmlight text (plain or compressed).
    pub data: PathBuf,
    #[command(flatten)]
    pub options: PathOptions,
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

/// One solved point of the path.
pub(crate) struct Point {
    pub value: f64,
    pub objective: f64,
    pub gap: Option<f64>,
    pub status: &'static str,
    pub nnz: usize,
    pub train_error: Option<f64>,
    pub test_error: Option<f64>,
    pub test_loss: Option<f64>,
    pub seconds: f64,
    pub epochs: usize,
    pub weights: Vec<f64>,
    /// b, with `var b: scalar` (0 without).
    pub intercept: f64,
}

pub fn path(args: &PathArgs) -> Result<(), Failure> {
    let file = read_model(&args.model)?;
    let outputs = Outputs::prepare(&args.options)?;
    let (train, _, _) = load_data(&args.data, "data file", false, &args.options.data)?;
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
    if args.steps == 0 {
        return Err(Failure::Usage("--steps must be at least 1".into()));
    }
    for (flag, v) in [("--from", args.from), ("--to", args.to), ("--tol", args.tol)] {
        if let Some(v) = v.filter(|v| !(*v > 0.0 && v.is_finite())) {
            return Err(Failure::Usage(format!("{flag} {v}: give a positive number")));
        }
    }
    let sets = parse_sets(&args.model.set)?;
    pipeline::declares_param(file, &args.param, "--param").map_err(|e| report_compile_error(e, file))?;
    let opts_at = |value: f64| {
        let mut overrides = sets.clone();
        overrides.push((args.param.clone(), value));
        CompileOptions {
            overrides,
            solver: args.model.solver.clone(),
            eager: args.model.eager,
            epochs: args.epochs,
            files: Some(dir.to_path_buf()),
        }
    };
    // The default a data shape settles (docs/algorithms.md §9) is settled for every point alike;
    // one plan serves every λ, so no λ's ridge strength decides (an infinite mean ‖xᵢ‖²).
    let compiled_at = |value: f64| {
        compile(file, &opts_at(value)).map(|mut c| {
            pipeline::shape(&mut c, train.features(), train.rows(), f64::INFINITY);
            c
        })
    };
    let first = compiled_at(1.0)?;
    let plan_at = |c: &pipeline::Compiled, value: f64| {
        pipeline::plan(c, &opts_at(value)).map_err(|e| report_compile_error(e, file))
    };
    let plan = plan_at(&first, 1.0)?;
    super::ovr::refuse("optc path", &train.name, LabelMap::one_vs_rest(first.model.label_kind, train))?;
    let bound = Bound::new(&first, &plan, train, dir, args.data.threads())?;
    let view = bound.view(train, args.data.threads());
    let begin = start::at_start(&plan, &bound, &view);
    // λ_max is read off ∇f of the plan at 1: a parameter that also weighs the loss (or b's
    // ridge) moves ∇f with it, and then no one value separates w = 0 from the rest.
    let second = compiled_at(2.0)?;
    let plan_two = plan_at(&second, 2.0)?;
    let loss_fixed = plan.objective.loss_weight == plan_two.objective.loss_weight
        && plan.objective.intercept_l2 == plan_two.objective.intercept_l2;
    let range = if loss_fixed { start::range(&first, &second, &begin, &view) } else { None };
    let from = match (args.from, range) {
        (Some(v), _) => v,
        (None, Some(r)) => {
            if !args.quiet {
                let b = (plan.objective.intercept.is_some() && begin.exact).then(|| begin.state.intercept(&plan));
                eprintln!("path: {}", r.describe(&args.param, b));
            }
            r.from()
        }
        (None, None) => {
            return Err(Failure::Usage(format!(
                "--param {}: no closed-form λ_max for this model (the parameter does not scale one sparsifying norm, nor a ridge alone); give --from",
                args.param
            )))
        }
    };
    // At and above λ_max, w = 0 (with the intercept-only b) is optimal: those points are
    // reported, with their certificate where the plan has one, without running a solver.
    let zero_optimal = |value: f64| range.is_some_and(|r| r.zero_at(value));
    let ratio = if train.rows() > bound.features { 1e-4 } else { 1e-2 };
    let to = args.to.unwrap_or(from * ratio);
    if to > from {
        return Err(Failure::Usage(format!("--to {to} is above --from {from}: a path goes from large to small")));
    }
    let test_labels = test.map(|t| bound.labels_of(t)).transpose()?;
    // Every point stops on the certificate (or the cap), never after exactly N epochs.
    let stop = session::Stopping {
        epochs: args.epochs,
        tol: Some(args.tol.unwrap_or(session::DEFAULT_TOL)),
        time_limit: None,
        seed: Some(args.seed),
        shards: None,
    };
    let (_, mut settings) = session::run_settings(&first, &stop)?;
    settings.cancel = super::interrupt();
    let mut points: Vec<Point> = vec![];
    let started = Instant::now();
    for value in grid(from, to, args.steps) {
        let compiled = compiled_at(value)?;
        let mut plan = plan_at(&compiled, value)?;
        // At λ ≥ λ_max the answer is w = 0 and its certificate, with no solve; a certificate
        // that does not confirm it to the path's tolerance sends the point to the solver.
        let confirmed = |s: &start::Start| {
            s.assessment
                .as_ref()
                .is_none_or(|a| a.gap <= stop.tol.unwrap_or(session::DEFAULT_TOL) * s.eval.objective.abs())
        };
        let known =
            zero_optimal(value).then(|| start::at_start(&plan, &bound, &view)).filter(|s| s.exact && confirmed(s));
        let no_solve = known.is_some();
        let o = match known {
            Some(s) => Outcome {
                state: s.state,
                eval: s.eval,
                gap: s.assessment.map(|a| a.gap),
                status: crate::exec::driver::Status::Converged,
                epochs: 0,
                seconds: 0.0,
            },
            None => {
                let warm = points.last().filter(|_| !args.cold).map(|p| (p.weights.as_slice(), p.intercept));
                let solved =
                    session::solve(&mut plan, &bound, &view, Default::default(), &settings, !args.no_jit, warm)
                        .map_err(|e| {
                            // The point the path had reached, before the message of the failure itself.
                            let at = format!("at {} = {}: ", args.param, fmt_num(value));
                            match Failure::from(e.failure(train, plan.info.solver, None, None)) {
                                Failure::Diverged(m) => Failure::Diverged(format!("{at}{m}")),
                                other => other,
                            }
                        })?;
                let o = solved.outcome;
                Outcome {
                    state: o.state,
                    eval: o.eval,
                    gap: o.gap,
                    status: o.status,
                    epochs: o.epochs,
                    seconds: o.seconds,
                }
            }
        };
        let held = match (test, &test_labels) {
            (Some(t), Some(ty)) => Some(evaluate(&plan, &o.state, &bound.test_view(t, ty))),
            _ => None,
        };
        let point = Point {
            value,
            objective: o.eval.objective,
            gap: o.gap,
            status: o.status.name(),
            nnz: o.eval.nnz,
            train_error: o.eval.error.or(o.eval.mse),
            test_error: held.as_ref().and_then(|h| h.error.or(h.mse)),
            test_loss: held.as_ref().map(|h| h.loss),
            seconds: o.seconds,
            epochs: o.epochs,
            weights: o.state.weights(&plan).to_vec(),
            intercept: o.state.intercept(&plan),
        };
        if !args.quiet {
            eprintln!(
                "{} = {:<10} F = {:.6}  gap {}  nnz {:>6}  {} epochs  {:.2} s  {}{}",
                args.param,
                format!("{value:.3e}"),
                point.objective,
                point.gap.map_or("none".into(), |g| format!("{g:.1e}")),
                point.nnz,
                point.epochs,
                point.seconds,
                point.status,
                if no_solve { " (w = 0 is optimal at λ ≥ λ_max: no solve)" } else { "" }
            );
        }
        points.push(point);
        // Ctrl-C: the point it stopped is kept (status `interrupted`), the rest of the grid
        // is not run, and the finished points are written.
        if settings.cancel.is_cancelled() {
            break;
        }
    }
    if !args.quiet {
        let epochs: usize = points.iter().map(|p| p.epochs).sum();
        eprintln!(
            "path: {} points from {from:.4e} to {to:.4e} in {:.2} s, {epochs} epochs in all ({})",
            points.len(),
            started.elapsed().as_secs_f64(),
            if args.cold { "each from w = 0" } else { "each warm-started from the last" }
        );
    }
    let regression = bound.label_map.kind == crate::stdlib::LabelKind::Real;
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
        let name = |p: &std::path::Path| p.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let title = format!("{} on {}: regularization path", name(Path::new(&file.name)), name(Path::new(&train.name)));
        let svg = crate::plot::plot_path(&title, &args.param, &shown, regression)
            .map_err(|e| Failure::Input(format!("{}: {e}", o.name())))?;
        o.commit(svg.as_bytes()).map_err(|e| Failure::Input(e.to_string()))?;
    }
    let csv = to_csv(&args.param, &points, regression);
    match outputs.csv {
        Some(o) => o.commit(csv.as_bytes()).map_err(|e| Failure::Input(e.to_string()))?,
        None => print!("{csv}"),
    }
    if settings.cancel.is_cancelled() {
        return Err(Failure::Interrupted);
    }
    Ok(())
}

/// `steps` values from `from` down to `to`, evenly spaced in log scale.
pub(crate) fn grid(from: f64, to: f64, steps: usize) -> Vec<f64> {
    if steps == 1 {
        return vec![from];
    }
    let (a, b) = (from.ln(), to.ln());
    (0..steps).map(|k| (a + (b - a) * k as f64 / (steps - 1) as f64).exp()).collect()
}

/// What a point of the path ended with: a solve's outcome, or w = 0 where it is known optimal.
struct Outcome {
    state: State,
    eval: crate::exec::evaluate::Evaluation,
    gap: Option<f64>,
    status: crate::exec::driver::Status,
    epochs: usize,
    seconds: f64,
}

fn to_csv(param: &str, points: &[Point], regression: bool) -> String {
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

#[cfg(test)]
mod tests {
    use super::grid;

    #[test]
    fn the_grid_is_log_spaced_from_large_to_small() {
        let g = grid(1.0, 1e-4, 5);
        let want = [1.0, 0.1, 0.01, 1e-3, 1e-4];
        assert_eq!(g.len(), 5);
        for (a, b) in g.iter().zip(want) {
            assert!((a - b).abs() <= 1e-12 * b, "{a} vs {b}");
        }
        assert_eq!(grid(0.5, 0.1, 1), vec![0.5]);
    }
}
