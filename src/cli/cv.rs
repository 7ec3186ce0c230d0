//! `optc cv MODEL DATA --param λ --folds K`: K-fold cross-validation along warm-started paths
//! (glmnet's `cv.glmnet`). The path on all of the data sets the grid; each fold's path follows
//! it with the fold held out; the table gives each value's mean held-out loss and error with
//! their standard errors; λ_min and λ_1se are named, and the refit at `--choose`'s is the full
//! path's point there, certified, which `--save` writes.

use super::inputs::load_data;
use super::outputs::{commit_output, file_name, prepare_output};
use super::saved::saved_text;
use super::{compile, model_dir, read_model, report_compile_error, Failure};
use crate::data::LabelMap;
use crate::session::cv::{cross_validate, Choose, CrossValidated, CvEvent, CvSpec};
use crate::session::path::{PathError, PathEvent, PathSpec};
use crate::session::saved::saved_model;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct CvArgs {
    /// The model file (.opt).
    pub model: PathBuf,
    /// Training data, LIBSVM/svmlight text (plain or compressed).
    pub data: PathBuf,
    /// The parameter to choose (ASCII names allowed: lambda for λ).
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub param: String,
    /// The number of folds; for labels, each fold holds its share of every label.
    #[arg(long, default_value_t = 5, value_name = "K")]
    pub folds: usize,
    /// The value the model is refitted at: `min`, the least mean held-out loss, or `1se`, the
    /// largest value within one standard error of it (glmnet's default).
    #[arg(long, default_value = "1se", value_parser = ["min", "1se"])]
    pub choose: String,
    /// The first (largest) value; default λ_max on all of the data, as `optc path`.
    #[arg(long, value_name = "A")]
    pub from: Option<f64>,
    /// The last (smallest) value; default as `optc path`.
    #[arg(long, value_name = "B")]
    pub to: Option<f64>,
    /// Grid points, log-spaced from --from to --to.
    #[arg(long, default_value_t = 20)]
    pub steps: usize,
    /// The table as CSV, one row per value (default: standard output).
    #[arg(long, value_name = "cv.csv")]
    pub out: Option<PathBuf>,
    /// The cross-validation as a picture, glmnet's: the mean held-out loss with one standard
    /// error either side, λ_min and λ_1se marked, and the fit's non-zeros along the path.
    #[arg(long, value_name = "cv.svg")]
    pub plot: Option<PathBuf>,
    /// The refitted model, in LIBLINEAR's format (`-` for standard output).
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// The table, the choice and the refit as one JSON object on standard output (human
    /// output goes to standard error).
    #[arg(long)]
    pub json: bool,
    /// `--set` (another parameter), `--solver` and `--eager`, as `optc run` takes them.
    #[command(flatten)]
    pub model_options: super::session::ModelOptions,
    /// Each point's relative duality gap target (default 1e-4).
    #[arg(long, value_name = "T")]
    pub tol: Option<f64>,
    /// Each point's epoch cap (default: the solver's).
    #[arg(long)]
    pub epochs: Option<usize>,
    /// Seed of the folds and of the row order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run the reference interpreter.
    #[arg(long)]
    pub no_jit: bool,
    /// No progress lines on standard error.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub data_options: super::session::DataOptions,
    #[command(flatten)]
    pub weights: super::weights::WeightArgs,
}

pub fn cv(args: &CvArgs) -> Result<(), Failure> {
    let file = read_model(&args.model)?;
    let csv_out = prepare_output(args.out.as_ref())?;
    let save_out = prepare_output(args.save.as_ref())?;
    let plot_out = prepare_output(args.plot.as_ref())?;
    let to_stdout =
        [&csv_out, &save_out, &plot_out].iter().filter(|o| o.as_ref().is_some_and(|o| o.is_stdout())).count()
            + usize::from(args.json)
            + usize::from(csv_out.is_none() && !args.json);
    if to_stdout > 1 {
        return Err(Failure::Usage(
            "only one of the table (no --out), --out -, --save -, --plot - and --json can write to standard output"
                .into(),
        ));
    }
    let (mut data, _, _) = load_data(&args.data, "data file", false, &args.data_options)?;
    let dir = model_dir(&args.model);
    let options = args.model_options.compile_options(args.epochs, &dir)?;
    if args.weights.given() {
        let compiled = compile(&file, &options)?;
        super::weights::attach(&args.weights, &compiled.model, &mut data)?;
    }
    let spec = CvSpec {
        path: PathSpec {
            param: args.param.clone(),
            from: args.from,
            to: args.to,
            steps: args.steps,
            values: None,
            tol: args.tol,
            epochs: args.epochs,
            seed: args.seed,
            cold: false,
            jit: !args.no_jit,
            threads: args.data_options.threads(),
            compile: options.clone(),
            cancel: super::interrupt(),
        },
        folds: args.folds,
        choose: if args.choose == "min" { Choose::Min } else { Choose::OneSe },
        fold_of: None,
        keep_folds: false,
    };
    let param = &args.param;
    let show = |event: CvEvent| match event {
        _ if args.quiet => {}
        CvEvent::Full(PathEvent::Range(words)) => eprintln!("cv: {words}"),
        CvEvent::Full(PathEvent::Point(p)) => eprintln!(
            "cv: all rows, {param} = {:.3e}: F = {:.6}, gap {}, nnz {}, {}",
            p.value,
            p.objective,
            p.gap.map_or("none".into(), |g| format!("{g:.1e}")),
            p.nnz,
            p.status
        ),
        CvEvent::Fold(f, Ok(path)) => {
            let epochs: usize = path.points.iter().map(|p| p.epochs).sum();
            eprintln!(
                "cv: fold {} of {}: {} points, {epochs} epochs, {:.2} s",
                f + 1,
                spec.folds,
                path.points.len(),
                path.seconds
            )
        }
        CvEvent::Fold(f, Err(why)) => eprintln!("cv: fold {} failed: {why}", f + 1),
    };
    let done = cross_validate(&file, &data, &spec, show);
    if spec.path.cancel.is_cancelled() {
        return Err(Failure::Interrupted);
    }
    let done = done.map_err(|e| match e {
        PathError::Compile(e) => report_compile_error(e, &file),
        PathError::OneVsRest(classes) => {
            super::ovr::refuse("optc cv", &data.name, Some(classes)).err().unwrap_or(Failure::Reported)
        }
        PathError::Failed(e) => Failure::from(e),
    })?;
    if !args.quiet {
        summary(&done, param, data.rows(), if args.choose == "min" { "λ_min" } else { "λ_1se" });
    }
    let refit = done.refit();
    let saved = match &save_out {
        Some(_) => {
            let mut at = options.clone();
            at.overrides.push((param.clone(), refit.value));
            let c = compile(&file, &at)?;
            let labels = LabelMap::fit(c.model.label_kind, &data).map_err(|e| Failure::Input(e.to_string()))?;
            let b = c.model.intercept.as_ref().map(|_| refit.intercept);
            saved_text(saved_model(&c.model, &labels, refit.weights.len(), &refit.weights, b), "--save", args.quiet)
        }
        None => String::new(),
    };
    commit_output(save_out, || saved)?;
    if let Some(o) = plot_out {
        let shown: Vec<crate::plot::CvPoint> = done
            .points
            .iter()
            .zip(&done.full.points)
            .map(|(p, f)| crate::plot::CvPoint { lambda: p.value, loss: p.loss, se: p.loss_se, nnz: f.nnz })
            .collect();
        let title =
            format!("{} on {}: {}-fold cross-validation", file_name(&file.name), file_name(&data.name), done.folds);
        let (min, one_se) = (done.points[done.min].value, done.points[done.one_se].value);
        let svg = crate::plot::plot_cv(&title, param, &shown, min, one_se)
            .map_err(|e| Failure::Input(format!("{}: {e}", o.name())))?;
        o.commit(svg.as_bytes()).map_err(|e| Failure::Input(e.to_string()))?;
    }
    let table = to_csv(param, &done);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(param, &args.choose, &done)).unwrap_or_default());
    }
    match csv_out {
        Some(o) => o.commit(table.as_bytes()).map_err(|e| Failure::Input(e.to_string()))?,
        None if !args.json => print!("{table}"),
        None => {}
    }
    Ok(())
}

/// λ_min, λ_1se, the refit and the folds that failed, on standard error.
fn summary(done: &CrossValidated, param: &str, rows: usize, choice: &str) {
    let at = |i: usize| {
        let p = &done.points[i];
        format!("{param} = {:.4e} (held-out loss {:.6} ± {:.1e})", p.value, p.loss, p.loss_se)
    };
    eprintln!(
        "cv: {} folds{}, {} values in {:.2} s: λ_min at {}, λ_1se at {}",
        done.folds,
        if done.stratified { " (each with its share of every label)" } else { "" },
        done.points.len(),
        done.seconds,
        at(done.min),
        at(done.one_se)
    );
    for (f, why) in &done.failures {
        eprintln!("cv: fold {} failed and is out of every mean: {why}", f + 1);
    }
    let left_out = done.points.iter().filter(|p| p.unconverged > 0).count();
    if left_out > 0 {
        eprintln!("cv: {left_out} values with a fold that did not converge are marked and out of the choice");
    }
    let r = done.refit();
    eprintln!(
        "cv: refit on all {rows} rows at {} ({}): F = {:.6}, gap {}, {} non-zero weights, {}",
        format_args!("{param} = {:.4e}", r.value),
        choice,
        r.objective,
        r.gap.map_or("none (no certificate)".into(), |g| format!("{g:.2e} (F − F* ≤ gap, certified)")),
        r.nnz,
        r.status
    );
}

fn to_csv(param: &str, done: &CrossValidated) -> String {
    let metric = if done.full.regression { "mse" } else { "error" };
    let mut csv = format!(
        "{param},cv_loss,cv_loss_se,cv_{metric},cv_{metric}_se,folds,unconverged,nnz,objective,gap,status,chosen\n"
    );
    let opt = |v: Option<f64>| v.filter(|v| v.is_finite()).map_or(String::new(), |v| format!("{v:.6e}"));
    for (i, (p, f)) in done.points.iter().zip(&done.full.points).enumerate() {
        let mark = [(done.min, "min"), (done.one_se, "1se")]
            .iter()
            .filter(|(at, _)| *at == i)
            .map(|(_, name)| *name)
            .collect::<Vec<_>>()
            .join("+");
        csv.push_str(&format!(
            "{:.6e},{},{},{},{},{},{},{},{:.17e},{},{},{mark}\n",
            p.value,
            opt(Some(p.loss)),
            opt(Some(p.loss_se)),
            opt(p.error),
            opt(p.error_se),
            p.folds,
            p.unconverged,
            f.nnz,
            f.objective,
            opt(f.gap),
            f.status
        ));
    }
    csv
}

fn to_json(param: &str, choose: &str, done: &CrossValidated) -> serde_json::Value {
    let finite = |v: f64| v.is_finite().then_some(v);
    let points: Vec<serde_json::Value> = done
        .points
        .iter()
        .zip(&done.full.points)
        .map(|(p, f)| {
            serde_json::json!({
                "value": p.value,
                "cv_loss": finite(p.loss),
                "cv_loss_se": finite(p.loss_se),
                "cv_error": p.error.and_then(finite),
                "cv_error_se": p.error_se.and_then(finite),
                "folds": p.folds,
                "unconverged": p.unconverged,
                "nnz": f.nnz,
                "objective": f.objective,
                "gap": f.gap,
                "status": f.status,
            })
        })
        .collect();
    let r = done.refit();
    serde_json::json!({
        "param": param,
        "folds": done.folds,
        "stratified": done.stratified,
        "regression": done.full.regression,
        "lambda_min": done.points[done.min].value,
        "lambda_1se": done.points[done.one_se].value,
        "chosen": choose,
        "points": points,
        "failures": done.failures.iter().map(|(f, why)| serde_json::json!({"fold": f + 1, "error": why})).collect::<Vec<_>>(),
        "refit": {
            "value": r.value,
            "objective": r.objective,
            "gap": r.gap,
            "status": r.status,
            "nnz": r.nnz,
            "weights": r.weights,
            "intercept": r.intercept,
        },
        "seconds": done.seconds,
    })
}
