//! `optc run MODEL DATA`: compile, read the data, solve, report, save.

use super::init;
use super::session::{self, Bound, DataOptions, SolveOptions, Unsolved};
use super::{compile, model_dir, parse_sets, read_model, report_compile_error, Failure};
use crate::data::cache::CacheNote;
use crate::data::DataFacts;
use crate::data::{read_libsvm_with, DataError, Dataset, LabelMap, ReadOptions};
use crate::exec::driver;
use crate::exec::evaluate::{evaluate, Evaluation};
use crate::model_file::SavedModel;
use crate::output::OutputFile;
use crate::pipeline::{self, CompileOptions};
use crate::stdlib::LabelKind;
use crate::symbolic::fmt_num;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The model file (.opt).
    pub model: PathBuf,
    /// Training data, LIBSVM/svmlight text (plain, .gz, .bz2, .xz or .zst); `-` for stdin.
    pub data: PathBuf,
    #[command(flatten)]
    pub solve: SolveOptions,
    /// Hold out this fraction of the rows (seeded) and stop when their loss has not improved
    /// for --patience epochs, returning the best epoch's weights.
    #[arg(long, value_name = "FRACTION")]
    pub holdout: Option<f64>,
    /// Epochs without a better held-out loss before --holdout stops the run.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub patience: usize,
    /// Start from the weights of a saved model (optc's or LIBLINEAR's) instead of 0.
    #[arg(long, value_name = "SAVED_MODEL")]
    pub init: Option<PathBuf>,
    /// Write the weights in LIBLINEAR's model format (`-` for stdout).
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Write the objective after every epoch as CSV (`-` for stdout); with --test, the test
    /// error (or MSE) and loss too.
    #[arg(long, value_name = "FILE.csv")]
    pub trace: Option<PathBuf>,
    /// Draw the trace as an SVG figure (`-` for stdout): suboptimality against epochs and
    /// seconds, and the test error with --test.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Print the report as JSON on stdout (human output goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// No progress bar and no summary.
    #[arg(long)]
    pub quiet: bool,
    /// Make passes over DATA without loading it: memory is the weights plus a few blocks of
    /// rows (stochastic solvers, rows in file order).
    #[arg(long)]
    pub stream: bool,
    /// Rows per block with --stream (default 16384).
    #[arg(long, value_name = "N", requires = "stream")]
    pub block_rows: Option<usize>,
}

/// Reads a data file (`-`: standard input), with the time it took and, with `--cache`, what
/// the cache did; with `progress`, the bytes read are shown on a terminal.
pub(crate) fn load_data(
    path: &Path,
    progress: bool,
    opts: &DataOptions,
) -> Result<(Dataset, f64, Option<CacheNote>), Failure> {
    let start = Instant::now();
    let read = ReadOptions { threads: opts.threads(), progress };
    let parse = || read_libsvm_with(path, &read);
    let (d, note) = match opts.cache_dir() {
        Some(dir) => {
            let (d, note) = crate::data::cache::load(path, &dir, parse).map_err(data_failure)?;
            (d, Some(note))
        }
        None => (parse().map_err(data_failure)?, None),
    };
    Ok((d, start.elapsed().as_secs_f64(), note))
}

impl RunArgs {
    /// A note for the user: on stdout, or on stderr when stdout carries `--json`; nothing
    /// with `--quiet`.
    pub(super) fn say(&self, s: String) {
        if self.quiet {
            return;
        }
        if self.json {
            eprintln!("{s}");
        } else {
            println!("{s}");
        }
    }
}

/// The files a run writes, opened before any work.
pub(super) struct Outputs {
    pub save: Option<OutputFile>,
    pub trace: Option<OutputFile>,
    pub plot: Option<OutputFile>,
}

impl Outputs {
    /// Opens `--save`, `--trace` and `--plot`; at most one of them, or `--json`, may be
    /// standard output.
    pub(super) fn prepare(args: &RunArgs) -> Result<Outputs, Failure> {
        let out = Outputs {
            save: prepare_output(args.save.as_ref())?,
            trace: prepare_output(args.trace.as_ref())?,
            plot: prepare_output(args.plot.as_ref())?,
        };
        let to_stdout =
            [&out.save, &out.trace, &out.plot].iter().filter(|o| o.as_ref().is_some_and(|o| o.is_stdout())).count();
        if to_stdout + usize::from(args.json) > 1 {
            return Err(Failure::Usage(
                "only one of --json, --save -, --trace - and --plot - can write to standard output".into(),
            ));
        }
        Ok(out)
    }
}

/// Opens every output file before any work, so a bad path costs nothing (exit 2).
pub(crate) fn prepare_output(path: Option<&PathBuf>) -> Result<Option<OutputFile>, Failure> {
    path.map(|p| OutputFile::prepare(p).map_err(|e| Failure::Usage(e.to_string()))).transpose()
}

/// Writes a prepared output file.
pub(crate) fn commit_output(out: Option<OutputFile>, contents: impl FnOnce() -> String) -> Result<(), Failure> {
    match out {
        Some(o) => o.commit(contents().as_bytes()).map_err(|e| Failure::Input(e.to_string())),
        None => Ok(()),
    }
}

fn data_failure(e: DataError) -> Failure {
    let ctx = e.context();
    if ctx.is_empty() {
        Failure::Input(e.to_string())
    } else {
        Failure::Input(format!("{e}\n{ctx}"))
    }
}

pub fn run(args: &RunArgs) -> Result<(), Failure> {
    // A dictionary-learning model has a run of its own (its data has no labels to read).
    if super::dictionary::run(args)? {
        return Ok(());
    }
    if args.stream {
        return super::stream::run(args);
    }
    // Ctrl-C from here on stops the solve, not the process.
    let cancel = super::interrupt();
    let compile_start = Instant::now();
    let file = read_model(&args.model)?;
    let opts = CompileOptions {
        overrides: parse_sets(&args.solve.set)?,
        solver: args.solve.solver.clone(),
        eager: args.solve.eager,
        epochs: args.solve.epochs,
        files: Some(model_dir(&args.model)),
    };
    let mut compiled = compile(&file, &opts)?;
    let mut plan = pipeline::plan(&compiled, &opts).map_err(|e| report_compile_error(e, &file))?;
    let stop = args.solve.stopping();
    let (mut settings, mut run_settings) = session::run_settings(&compiled, &stop)?;
    if let Some(f) = args.holdout {
        if !(f > 0.0 && f < 1.0) {
            return Err(Failure::Usage(format!(
                "--holdout {f}: give the fraction of rows to hold out, between 0 and 1"
            )));
        }
    }
    if args.patience == 0 {
        return Err(Failure::Usage("--patience must be at least 1".into()));
    }

    let front_seconds = compile_start.elapsed().as_secs_f64();
    let Outputs { save: save_out, trace: trace_out, plot: plot_out } = Outputs::prepare(args)?;
    let (train, parse_seconds, cache_note) = load_data(&args.data, !args.quiet, &args.solve.data)?;
    // A default that depends on the data's shape is settled now (ALGORITHMS.md §9).
    if pipeline::shape(&mut compiled, train.features(), train.rows(), train.mean_row_norm_sq()) {
        plan = pipeline::plan(&compiled, &opts).map_err(|e| report_compile_error(e, &file))?;
        (settings, run_settings) = session::run_settings(&compiled, &stop)?;
    }
    // A two-class loss on more than two labels: k one-vs-rest problems (ALGORITHMS.md §11).
    if let Some(classes) = LabelMap::one_vs_rest(compiled.model.label_kind, &train) {
        let outputs = Outputs { save: save_out, trace: trace_out, plot: plot_out };
        let start = super::ovr::Start {
            file: &file,
            compiled: &compiled,
            plan,
            settings,
            run_settings,
            train,
            classes,
            parse_seconds,
            cache_note,
            front_seconds,
            outputs,
        };
        return super::ovr::run(args, start);
    }
    let tol = run_settings.tol;
    // With --holdout the model never sees the held-out rows: F, the gap and the train error are
    // of the rest.
    let (train, held) = match args.holdout {
        Some(f) => {
            let (rest, held) = train.split(f, settings.seed);
            (rest, Some(held))
        }
        None => (train, None),
    };
    let kind = compiled.model.label_kind;
    let bound = Bound::new(&compiled, &plan, &train, &model_dir(&args.model), args.solve.data.threads())?;
    let (features, facts) = (bound.features, bound.facts);
    let view = bound.view(&train, args.solve.data.threads());
    let warm = args
        .init
        .as_deref()
        .map(|p| init::initial_weights(p, &bound, kind, plan.objective.intercept.is_some()))
        .transpose()?;

    let human = !args.quiet;
    let say = |s: String| args.say(s);
    if let Some(m) = bound.label_map.describe() {
        say(format!("note: {m}"));
    }
    if let Some(n) = &cache_note {
        say(format!("note: {n}"));
    }

    run_settings.trace = args.trace.is_some() || args.plot.is_some();
    run_settings.progress = human;
    run_settings.cancel = cancel;
    // Read before the run, so that a trace can follow the test error epoch by epoch.
    let test_data = match &args.solve.test {
        Some(p) => {
            let (t, _, _) = load_data(p, !args.quiet, &args.solve.data)?;
            let ty = bound.labels_of(&t)?;
            Some((t, ty))
        }
        None => None,
    };
    let test_view = test_data.as_ref().map(|(t, ty)| bound.test_view(t, ty));
    let held_labels = held.as_ref().map(|h| bound.labels_of(h)).transpose()?;
    let held_view = held.as_ref().zip(held_labels.as_ref()).map(|(h, hy)| bound.test_view(h, hy));
    let watch = driver::Watch { test: test_view.as_ref(), holdout: held_view.as_ref().map(|v| (v, args.patience)) };
    let solved = match session::solve(
        &mut plan,
        &bound,
        &view,
        watch,
        &run_settings,
        !args.solve.no_jit,
        warm.as_ref().map(|(w, b)| (w.as_slice(), *b)),
    ) {
        Ok(s) => s,
        Err(e @ Unsolved::Fault(_)) => return Err(e.failure(&train, plan.info.solver, None, None).into()),
        Err(e @ Unsolved::Worse { epochs, objective, start_objective }) => {
            let step = StepShown::of(&plan, &settings, &facts).shown;
            if args.json {
                let r = serde_json::json!({
                    "status": "diverged",
                    "objective": objective,
                    "start_objective": start_objective,
                    "gap": null,
                    "solver": plan.info.solver,
                    "epochs": epochs,
                    "step": step.json(),
                });
                println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
            }
            return Err(e
                .failure(&train, plan.info.solver, Some(&step.text()), Some(&step.hint(plan.info.solver)))
                .into());
        }
    };
    if let Some(why) = &solved.fallback {
        say(format!("note: {why}"));
    }
    if let Some(p) = &args.init {
        say(format!("note: started from the weights of {}", p.display()));
    }
    let step = StepShown::of(&plan, &settings, &facts);
    let (eta0, n0) = (step.eta0, step.n0);
    let step = step.shown;
    let compile_seconds = front_seconds + solved.jit_seconds;
    let backend_name = solved.backend;
    let calibration = solved.calibration;
    let outcome = solved.outcome;
    let train_eval = outcome.eval.clone();
    let w = outcome.state.weights(&plan).to_vec();
    let intercept = plan.objective.intercept.map(|_| outcome.state.intercept(&plan));
    let class_bias = plan.objective.class_intercept.map(|b| outcome.state.vectors[b.0].clone());
    // Online DC always ends at its cap: its status line says so, and a warning each run would
    // be noise.
    let caps_only = plan.certificate.is_none() && plan.uncertified == crate::plan::Uncertified::Caps;
    // Early stopping is what the user asked for; the status line says it.
    let early = outcome.status == driver::Status::EarlyStopped;
    if outcome.status != driver::Status::Converged && tol.is_some() && !args.quiet && !caps_only && !early {
        eprintln!(
            "warning: not converged: stopped by {} with {}; the answer may be far from the optimum\n  hint: {}",
            outcome.rule,
            match outcome.gap {
                Some(g) =>
                    format!("relative gap {:.1e} > tol {:.0e}", g / train_eval.objective.abs(), tol.unwrap_or(0.0)),
                None => "no certificate".into(),
            },
            unconverged_hint(plan.info.solver)
        );
    }

    let test = test_view.as_ref().map(|tv| evaluate(&plan, &outcome.state, tv));

    commit_output(trace_out, || trace_csv(&outcome.trace, kind))?;
    write_plot(plot_out, &file.name, &train.name, plan.info.solver, &outcome.trace, kind)?;
    commit_output(save_out, || {
        let saved = saved_model(&compiled.model, &bound.label_map, features, &w, intercept);
        saved_text(with_class_bias(saved, class_bias.as_deref()), "--save", args.quiet)
    })?;

    if args.json {
        let mut r = serde_json::json!({
            "model": file.name,
            "data": train.name,
            "solver": plan.info.solver,
            "solver_reason": compiled.structure.chosen.as_ref().map(|c| c.reason.clone()),
            "lazy": plan.info.lazy,
            "backend": backend_name,
            "compile_seconds": compile_seconds,
            "objective": train_eval.objective,
            "loss": train_eval.loss,
            "nnz": train_eval.nnz,
            "nnz_rows": train_eval.nnz_rows,
            "intercept": intercept,
            "intercepts": class_bias,
            "features": features,
            "rows": train.rows(),
            "data_nnz": train.nnz(),
            "epochs": outcome.epochs,
            "status": outcome.status.name(),
            "stopped_by": outcome.rule,
            "gap": outcome.gap,
            "relative_gap": outcome.gap.map(|g| g / train_eval.objective.abs().max(f64::MIN_POSITIVE)),
            "tol": tol,
            "check_seconds": outcome.check_seconds,
            "working_set": outcome.working_set,
            "screened": outcome.screened,
            "shards": run_settings.shards,
            "seed": settings.seed,
            "init": args.init.as_ref().map(|p| p.display().to_string()),
            "holdout": outcome.holdout.as_ref().map(|h| serde_json::json!({
                "fraction": args.holdout,
                "rows": held.as_ref().map(|d| d.rows()),
                "best_epoch": h.best_epoch,
                "best_loss": h.best_loss,
                "stopped": h.stopped,
            })),
            "eta0": if settings.step_text.is_some() { None } else { eta0 },
            "step": step.json(),
            "eta0_calibration": calibration.as_ref().filter(|c| c.param == "η0").map(|c| serde_json::json!({
                "rows": c.rows,
                "default": c.default,
                "tried": c.tried,
                "seconds": c.seconds,
            })),
            "n0": n0,
            "n0_calibration": calibration.as_ref().filter(|c| c.param == "n0").map(|c| serde_json::json!({
                "rows": c.rows,
                "default": c.default,
                "tried": c.tried,
                "seconds": c.seconds,
            })),
            "seconds": outcome.seconds,
            "parse_seconds": parse_seconds,
        });
        let obj = r.as_object_mut().expect("json object");
        match kind {
            LabelKind::Real => _ = obj.insert("train_mse".into(), train_eval.mse.into()),
            _ => _ = obj.insert("train_error".into(), train_eval.error.into()),
        }
        if let Some(t) = &test {
            obj.insert("test_loss".into(), t.loss.into());
            match kind {
                LabelKind::Real => _ = obj.insert("test_mse".into(), t.mse.into()),
                _ => _ = obj.insert("test_error".into(), t.error.into()),
            }
        }
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    }
    if human {
        say(summary(
            &plan,
            &train,
            parse_seconds,
            &train_eval,
            test.as_ref(),
            &outcome,
            &step,
            (settings.seed, run_settings.shards),
            features,
        ));
        if let Some(c) = &calibration {
            say(format!(
                "  step         {} chosen on {} sample rows in {:.2} s (default would be {:.4})",
                c.param, c.rows, c.seconds, c.default
            ));
        }
        if let Some(c) = &compiled.structure.chosen {
            say(format!("  solver       {} — {}", c.solver.name(), c.reason));
        }
        say(format!("  backend      {backend_name} (model text → kernel in {:.1} ms)", 1e3 * compile_seconds));
    }
    super::unless_interrupted(outcome.status)
}

/// What to do about a run that stopped short of its tolerance.
pub(super) fn unconverged_hint(solver: &str) -> &'static str {
    if matches!(solver, "fobos" | "adagrad" | "smm") {
        "stochastic steps with decaying steps or weights rarely certify a tight gap; give a looser --tol, more --epochs with --tol, or leave the solver to optc (it picks a batch or coordinate method that certifies)"
    } else {
        "raise the cap with --epochs N (and keep --tol), or give --time-limit more time"
    }
}

/// The trace as CSV: one row per epoch; the test columns are empty without --test.
pub(super) fn trace_csv(trace: &[driver::TracePoint], kind: LabelKind) -> String {
    let test_metric = if kind == LabelKind::Real { "test_mse" } else { "test_error" };
    let mut csv = format!("epoch,seconds,objective,loss,nnz,gap,{test_metric},test_loss\n");
    for p in trace {
        let gap = p.gap.map_or(String::new(), |g| format!("{g:.6e}"));
        let (metric, loss) = match &p.test {
            Some(t) => (t.error.or(t.mse).map_or(String::new(), |v| format!("{v:.6e}")), format!("{:.17e}", t.loss)),
            None => (String::new(), String::new()),
        };
        csv.push_str(&format!(
            "{},{:.6},{:.17e},{:.17e},{},{gap},{metric},{loss}\n",
            p.epoch, p.seconds, p.eval.objective, p.eval.loss, p.eval.nnz
        ));
    }
    csv
}

/// Draws the trace for `--plot`, titled by the files' own names (folders would crowd the title).
pub(super) fn write_plot(
    out: Option<OutputFile>,
    model: &str,
    data: &str,
    solver: &str,
    trace: &[driver::TracePoint],
    kind: LabelKind,
) -> Result<(), Failure> {
    let Some(out) = out else { return Ok(()) };
    let base = |p: &str| Path::new(p).file_name().map_or(p.to_string(), |n| n.to_string_lossy().into_owned());
    let title = format!("{} on {}: {solver}, {} epochs", base(model), base(data), trace.len());
    let rows: Vec<crate::plot::TraceRow> = trace
        .iter()
        .map(|p| crate::plot::TraceRow {
            epoch: p.epoch,
            seconds: p.seconds,
            objective: p.eval.objective,
            gap: p.gap,
            test: p.test.as_ref().and_then(|t| t.error.or(t.mse)),
        })
        .collect();
    let svg = crate::plot::plot_trace(&title, &rows, kind == LabelKind::Real)
        .map_err(|e| Failure::Input(format!("{}: {e}", out.name())))?;
    commit_output(Some(out), || svg)
}

#[allow(clippy::too_many_arguments)]
fn summary(
    plan: &crate::plan::Plan,
    train: &Dataset,
    parse_seconds: f64,
    ev: &Evaluation,
    test: Option<&Evaluation>,
    outcome: &driver::Outcome,
    step: &StepShown,
    (seed, shards): (u64, usize),
    features: usize,
) -> String {
    let mut s = format!(
        "optc: {}{} on {} — {} rows × {} features, {} non-zeros (read in {:.2} s)\n",
        plan.info.solver,
        match (plan.info.solver, plan.info.lazy, plan.uncertified) {
            ("fobos" | "adagrad" | "truncated", true, _) => " (lazy)",
            ("fobos" | "adagrad" | "truncated", false, _) => " (eager)",
            ("dc", _, crate::plan::Uncertified::Reweighting { .. }) => " (batch: reweighted ℓ1)",
            ("dc", _, _) => " (online)",
            _ => "",
        },
        train.name,
        train.rows(),
        features,
        train.nnz(),
        parse_seconds
    );
    match step {
        StepShown::Eta0(None) => s += &format!("  epochs       {} (seed {seed})\n", outcome.epochs),
        StepShown::Weights(_) => s += &format!("  epochs       {} (seed {seed}, {})\n", outcome.epochs, step.text()),
        _ => s += &format!("  epochs       {} (seed {seed}, step {})\n", outcome.epochs, step.text()),
    }
    if shards > 1 {
        s += &format!(
            "  shards       {shards}: each epoch's rows cut into {shards} shards on {shards} threads from the same state, the flushed states averaged\n"
        );
    }
    s += &format!("  objective    F = {:.6}  (mean loss {:.6})\n", ev.objective, ev.loss);
    match outcome.gap {
        Some(g) => {
            s += &format!(
                "  gap          {:.2e}  (relative {:.2e}: F − F* ≤ gap, certified)\n",
                g,
                g / ev.objective.abs()
            )
        }
        None => s += &format!("  gap          none: {}\n", plan.uncertified.reason()),
    }
    s += &format!("  status       {}: {}\n", outcome.status.name(), outcome.rule);
    if let Some(h) = &outcome.holdout {
        s += &format!("  holdout      best held-out loss {:.6} at epoch {}\n", h.best_loss, h.best_epoch);
    }
    match ev.nnz_rows {
        Some(rows) => {
            s += &format!(
                "  nnz          {} of {} weights; {rows} of {features} features used by some class\n",
                ev.nnz,
                outcome.state.weights(plan).len()
            )
        }
        None => s += &format!("  nnz          {} of {} weights\n", ev.nnz, features),
    }
    if let Some(n) = outcome.screened.filter(|&n| n > 0) {
        s += &format!(
            "  screened     {n} of {features} features proven zero at the optimum (Gap Safe), out of the working set\n"
        );
    }
    if plan.objective.intercept.is_some() {
        s += &format!("  intercept    b = {}  (unregularized)\n", sig4(outcome.state.intercept(plan)));
    }
    if let Some(e) = ev.error {
        s += &format!("  train error  {:.2}%\n", 100.0 * e);
    }
    if let Some(e) = ev.mse {
        s += &format!("  train mse    {e:.6}\n");
    }
    if let Some(t) = test {
        match (t.error, t.mse) {
            (Some(e), _) => s += &format!("  test error   {:.2}%  (test loss {:.6})\n", 100.0 * e, t.loss),
            (_, Some(m)) => s += &format!("  test mse     {m:.6}  (test loss {:.6})\n", t.loss),
            _ => {}
        }
    }
    s += &format!("  time         {:.3} s to solve", outcome.seconds);
    s
}

/// Four significant digits (a calibrated η₀ is a product of floats: 0.2857142857142857).
fn sig4(v: f64) -> String {
    format!("{v:.3e}").parse::<f64>().map_or_else(|_| fmt_num(v), fmt_num)
}

/// The step schedule a run used, as the report shows it.
pub(super) enum StepShown {
    /// The user's `step = ...` formula in t.
    Schedule(String),
    /// η₀/√t with this η₀ (None: the plan has no step, e.g. a batch solver).
    Eta0(Option<f64>),
    /// SMM's surrogate weights √((n₀ + 1)/(n + n₀)) with this n₀.
    Weights(f64),
    /// AdaGrad's η/sⱼ per coordinate with this η.
    Scaled(f64),
    /// SMIDAS's η₀/√e, constant through each epoch e.
    PerEpoch(f64),
}

/// The step a run used and the values it came from (after calibration).
pub(super) struct StepOf {
    pub eta0: Option<f64>,
    pub n0: Option<f64>,
    pub shown: StepShown,
}

impl StepShown {
    pub(super) fn of(plan: &crate::plan::Plan, settings: &crate::analysis::Settings, facts: &DataFacts) -> StepOf {
        let eta0 = plan.scalars.iter().find(|s| s.name == "η0").and_then(|s| s.init.value(Some(facts)));
        let n0 = plan.scalars.iter().find(|s| s.name == "n0").and_then(|s| s.init.value(Some(facts)));
        let shown = match (&settings.step_text, n0, eta0) {
            (Some(text), _, _) => StepShown::Schedule(text.clone()),
            (None, Some(n0), _) => StepShown::Weights(n0),
            (None, None, Some(eta)) if plan.info.solver == "adagrad" => StepShown::Scaled(eta),
            (None, None, _) if plan.info.solver == "smidas" => StepShown::PerEpoch(eta0.unwrap_or(f64::NAN)),
            (None, None, _) => StepShown::Eta0(eta0),
        };
        StepOf { eta0, n0, shown }
    }

    pub(super) fn text(&self) -> String {
        match self {
            StepShown::Schedule(f) => format!("η_t = {f}"),
            StepShown::Eta0(Some(v)) => format!("η_t = {}/√t", sig4(*v)),
            StepShown::Eta0(None) => "-".into(),
            StepShown::Weights(n0) => format!("weights ω_n = √((n0 + 1)/(n + n0)), n0 = {}", sig4(*n0)),
            StepShown::Scaled(v) => format!("η/sⱼ per coordinate, η = {}", sig4(*v)),
            StepShown::PerEpoch(v) => format!("η = {}/√e in epoch e", sig4(*v)),
        }
    }

    pub(super) fn json(&self) -> serde_json::Value {
        match self {
            StepShown::Schedule(f) => f.clone().into(),
            StepShown::Eta0(Some(v)) => format!("{}/sqrt(t)", fmt_num(*v)).into(),
            StepShown::Eta0(None) => serde_json::Value::Null,
            StepShown::Weights(n0) => format!("sqrt(({0} + 1)/(n + {0}))", fmt_num(*n0)).into(),
            StepShown::Scaled(v) => format!("{}/s_j", fmt_num(*v)).into(),
            StepShown::PerEpoch(v) => format!("{}/sqrt(epoch)", fmt_num(*v)).into(),
        }
    }

    pub(super) fn hint(&self, solver: &str) -> String {
        match self {
            StepShown::Schedule(f) => format!("the step `{f}` is too large for this data; make it smaller, e.g. divide it by 10"),
            StepShown::Eta0(Some(v)) | StepShown::PerEpoch(v) => format!(
                "η0 = {} is too large for this data; lower it, e.g. `solve with {solver}(eta0 = {})`, or leave eta0 out to calibrate it",
                fmt_num(*v),
                fmt_num(v / 10.0)
            ),
            StepShown::Eta0(None) => "scale the features, or choose another solver".into(),
            // SMM's steps are 1/L, safe for every example; a large n₀ keeps the weights near 1,
            // so z̄ follows the last few examples only and the iterate wanders.
            StepShown::Weights(n0) => format!(
                "n0 = {} keeps the weights ω_n near 1 for too long; lower it, e.g. `solve with {solver}(n0 = {})`, or leave n0 out to tune it",
                fmt_num(*n0),
                fmt_num((n0 / 100.0).max(1.0))
            ),
            // Every coordinate's first step is ±η whatever its gradient: η is a distance in w.
            StepShown::Scaled(v) => format!(
                "η0 = {} moves each weight too far at its first step; lower it, e.g. `solve with adagrad(eta0 = {})`",
                fmt_num(*v),
                fmt_num(v / 10.0)
            ),
        }
    }
}

/// The text of a saved model, with a warning on standard error (unless `quiet`) when LIBLINEAR
/// could not read it; optc's own predict reads any label, so the file is still worth writing.
/// `flag` names what asked for it (`--save`, `:save`).
pub(super) fn saved_text(saved: SavedModel, flag: &str, quiet: bool) -> String {
    if let Some(why) = saved.liblinear_cannot_read().filter(|_| !quiet) {
        eprintln!("warning: {flag}: {why} (`optc predict` reads it)");
    }
    saved.to_text()
}

/// Per-class intercepts as LIBLINEAR's bias row: `bias 1`, the k offsets the last row (their
/// difference when two classes are saved as one column), which LIBLINEAR's predict adds to
/// each class's decision value as optc's does.
fn with_class_bias(mut saved: SavedModel, b: Option<&[f64]>) -> SavedModel {
    if let Some(b) = b {
        match b {
            [first, second] if saved.nr_class == 2 => saved.w.push(first - second),
            _ => saved.w.extend_from_slice(b),
        }
        saved.bias = 1.0;
    }
    saved
}

/// The value of LIBLINEAR's bias feature that makes its model this one: with `μ·l2sq(b)` beside
/// `λ·l2sq(w)`, b = t·β where β is penalised as a weight, t = √(λ/μ), which is LIBLINEAR's
/// `-B t` (`-B 1` when μ = λ); 1 for a free intercept, or with no ½‖w‖² to match.
pub(super) fn bias_feature(model: &crate::check::Model) -> f64 {
    let lambda: f64 = model.regs.iter().filter(|r| r.def.name == "l2sq").map(|r| r.coef.value).sum();
    match &model.intercept_l2 {
        Some(r) if lambda > 0.0 && r.coef > 0.0 => (lambda / r.coef).sqrt(),
        _ => 1.0,
    }
}

/// The weights as a LIBLINEAR model file; an intercept b is LIBLINEAR's bias feature of value 1,
/// its weight (b) the last row, so LIBLINEAR's `predict` adds it as optc's does.
pub(super) fn saved_model(
    model: &crate::check::Model,
    labels: &LabelMap,
    features: usize,
    w: &[f64],
    intercept: Option<f64>,
) -> SavedModel {
    let has_l1 = has_l1(model);
    let mut w = w.to_vec();
    let (solver_type, nr_class, label_line) = match (model.label_kind, model.loss.def.name.as_str()) {
        (LabelKind::Real, _) => ("L2R_L2LOSS_SVR", 2, vec![]),
        // K weight columns in `label` order; LIBLINEAR's predict takes the largest decision
        // value, which for softmax is the most probable class.
        (LabelKind::Classes, _) => {
            if labels.originals.len() == 2 {
                // LIBLINEAR reads one column when `nr_class` is 2 (decision > 0 → the first
                // label), so two softmax columns become their difference: the same argmax,
                // and sigmoid of it is the softmax probability, as LIBLINEAR's `-b 1` computes.
                w = w.chunks_exact(2).map(|row| row[0] - row[1]).collect();
            }
            (if has_l1 { "L1R_LR" } else { "L2R_LR" }, labels.originals.len(), labels.originals.clone())
        }
        _ => (binary_solver_type(model), 2, vec![labels.originals[1], labels.originals[0]]),
    };
    // The checker allows an intercept on a vector model only: one weight column.
    let bias = match intercept {
        Some(b) => {
            let t = bias_feature(model);
            w.push(b / t);
            t
        }
        None => -1.0,
    };
    SavedModel { solver_type: solver_type.into(), nr_class, labels: label_line, nr_feature: features, bias, w }
}

fn has_l1(model: &crate::check::Model) -> bool {
    model.regs.iter().any(|r| matches!(r.def.name.as_str(), "l1" | "elastic" | "l1l2" | "l1inf"))
}

/// LIBLINEAR's name for a two-class model of this loss and regularizer (one-vs-rest's k columns
/// are k of them).
pub(super) fn binary_solver_type(model: &crate::check::Model) -> &'static str {
    match (model.loss.def.name.as_str(), has_l1(model)) {
        ("logistic", true) => "L1R_LR",
        ("logistic", false) => "L2R_LR",
        ("hinge", false) => "L2R_L1LOSS_SVC_DUAL",
        (_, true) => "L1R_L2LOSS_SVC",
        (_, false) => "L2R_L2LOSS_SVC",
    }
}
