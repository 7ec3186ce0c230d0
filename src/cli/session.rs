//! What `run`, `path` and the REPL share: training data bound to a plan, and one solve of a
//! plan on it, cold or warm. Data is read once and bound again for each plan, because a new
//! parameter value is a new plan (parameters are folded into the code) but not new data.

use super::run::ensure_memory;
use super::Failure;
use crate::analysis::{Settings, SolverKind};
use crate::data::{Columns, DataFacts, Dataset, LabelMap};
use crate::exec::calibrate::Calibration;
use crate::exec::driver::{self, Outcome, RunSettings};
use crate::exec::evaluate::evaluate;
use crate::exec::{DataView, Fault, State};
use crate::pipeline::Compiled;
use crate::plan::Plan;
use crate::runtime::picard::Operator;
use crate::stdlib::LabelKind;
use std::path::{Path, PathBuf};

/// Training data bound to a plan: labels mapped, the feature count the model sees, the
/// columns when the plan walks them, the operator B of a composite term.
pub(crate) struct Bound {
    pub label_map: LabelMap,
    pub y: Vec<f64>,
    pub features: usize,
    /// k, for multiclass labels (mapped to 0..k in first-seen order).
    pub classes: usize,
    pub facts: DataFacts,
    columns: Option<Columns>,
    operator: Option<Operator>,
}

impl Bound {
    /// Binds `train` to `plan` (compiled from `compiled`); `dir` is where the model's `load`
    /// files are, `threads` how many build its columns.
    pub fn new(
        compiled: &Compiled,
        plan: &Plan,
        train: &Dataset,
        dir: &Path,
        threads: usize,
    ) -> Result<Bound, Failure> {
        let label_map = LabelMap::fit(compiled.model.label_kind, train).map_err(|e| Failure::Input(e.to_string()))?;
        Bound::with_labels(compiled, plan, train, dir, threads, label_map)
    }

    /// Binds `train` for one-vs-rest: `y` holds each row's class (0..k, in the order of
    /// `classes`, a map from [`LabelMap::one_vs_rest`]), from which each problem's ±1 labels are
    /// made; the plan and everything else bound are the same for every class.
    pub fn one_vs_rest(
        compiled: &Compiled,
        plan: &Plan,
        train: &Dataset,
        dir: &Path,
        threads: usize,
        classes: LabelMap,
    ) -> Result<Bound, Failure> {
        Bound::with_labels(compiled, plan, train, dir, threads, classes)
    }

    fn with_labels(
        compiled: &Compiled,
        plan: &Plan,
        train: &Dataset,
        dir: &Path,
        threads: usize,
        label_map: LabelMap,
    ) -> Result<Bound, Failure> {
        let kind = compiled.model.label_kind;
        let y = label_map.apply(train).map_err(|e| Failure::Input(e.to_string()))?;
        let features = match &compiled.model.shape {
            crate::check::Shape::Vec(crate::check::Dim::Fixed(n)) if *n < train.features() => {
                return Err(Failure::Input(format!(
                    "{}: the data has {} features but the model declares `{}: vec[{n}]`",
                    train.name,
                    train.features(),
                    compiled.model.var.name
                )))
            }
            crate::check::Shape::Vec(crate::check::Dim::Fixed(n)) => *n,
            _ => train.features(),
        };
        let classes = if kind == LabelKind::Classes { label_map.originals.len() } else { 0 };
        let facts = DataFacts { features, classes, ..train.facts() };
        ensure_memory(plan, &facts, train, &compiled.model.var.name)?;
        let facts = train.complete_facts(plan, facts);
        let columns = plan.reads_columns().then(|| {
            let (indptr, indices, values) = train.csr();
            Columns::of(indptr, indices, values, features, threads)
        });
        let operator = match &plan.objective.composite {
            Some(c) => Some(crate::data::operator::bind(c, features, dir).map_err(|e| Failure::Input(e.to_string()))?),
            None => None,
        };
        let facts = DataFacts { op_rows: operator.as_ref().map_or(0, |b| b.rows), ..facts };
        Ok(Bound { label_map, y, features, classes, facts, columns, operator })
    }

    /// The training data as the plan reads it, its passes on `threads` threads.
    pub fn view<'a>(&'a self, train: &'a Dataset, threads: usize) -> DataView<'a> {
        let view = match &self.columns {
            Some(c) => train.view(&self.y, self.features).with_columns(c),
            None => train.view(&self.y, self.features),
        };
        view.with_classes(self.classes).with_operator(self.operator.as_ref()).with_threads(threads)
    }

    /// Held-out labels, mapped as the training labels were.
    pub fn labels_of(&self, test: &Dataset) -> Result<Vec<f64>, Failure> {
        self.label_map.apply(test).map_err(|e| Failure::Input(e.to_string()))
    }

    /// Held-out data as the report reads it (labels from [`Bound::labels_of`]).
    pub fn test_view<'a>(&'a self, test: &'a Dataset, labels: &'a [f64]) -> DataView<'a> {
        test.view(labels, self.features).with_classes(self.classes).with_operator(self.operator.as_ref())
    }
}

/// The options of one solve, shared by `optc run` and the REPL's `:run`.
#[derive(clap::Args, Debug, Default, Clone, PartialEq)]
pub(crate) struct SolveOptions {
    /// Held-out data: report its error and loss.
    #[arg(long)]
    pub test: Option<PathBuf>,
    /// Override a parameter (repeatable): --set lambda=1e-3
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Force a solver (same as `solve with NAME`).
    #[arg(long)]
    pub solver: Option<String>,
    /// Exactly N epochs (batch solvers: iterations), unless --tol is also given; then a cap.
    #[arg(long)]
    pub epochs: Option<usize>,
    /// Stop when the certified relative duality gap is at most T (default 1e-4).
    #[arg(long, value_name = "T")]
    pub tol: Option<f64>,
    /// Stop after the epoch during which this many seconds passed.
    #[arg(long, value_name = "SECONDS")]
    pub time_limit: Option<f64>,
    /// Seed of the row order and of the η₀ calibration sample (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Stochastic epochs (fobos, adagrad) on K threads: each epoch's rows are cut into K
    /// shards, run from the same state, and the K flushed states averaged (iterative parameter
    /// mixing). The same numbers for the same K and seed on any machine (default 1: no shards).
    #[arg(long, value_name = "K")]
    pub shards: Option<usize>,
    /// Run the reference interpreter.
    #[arg(long)]
    pub no_jit: bool,
    /// Run the eager reference plan (prox on every coordinate each step).
    #[arg(long)]
    pub eager: bool,
    #[command(flatten)]
    pub data: DataOptions,
}

/// How data files are read (`--threads`, `--cache`), shared by `run`, `path` and the REPL.
#[derive(clap::Args, Debug, Default, Clone, PartialEq)]
pub(crate) struct DataOptions {
    /// Threads to use (default: the cores available). Reading the data: N parser threads and
    /// one that reads and decompresses; --threads 1 reads line by line on one thread. Solving:
    /// the passes over all rows at a check (F, the margins, the certificate's Xᵀu).
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Keep the parsed data in a binary cache, memory-mapped by the next run instead of parsing
    /// the text: FILE.optc-cache next to the data (or in ~/.cache/optc when that directory is
    /// not writable), or in DIR with --cache=DIR. Rebuilt when the data file changes.
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true)]
    pub cache: Option<Option<PathBuf>>,
}

fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{s}`: give a whole number of threads, at least 1")),
    }
}

impl DataOptions {
    /// The thread count: the flag's, else the cores available. Reading uses it now; whatever
    /// else parallelises a run (gradient passes) should read it from here too.
    pub fn threads(&self) -> usize {
        self.threads.unwrap_or_else(crate::data::available_threads)
    }

    /// Where `--cache` puts caches, or None without it.
    pub fn cache_dir(&self) -> Option<crate::data::cache::CacheDir> {
        use crate::data::cache::CacheDir;
        self.cache.as_ref().map(|d| d.as_ref().map_or(CacheDir::Beside, |d| CacheDir::In(d.clone())))
    }

    /// These options, with `fallback`'s where these give none (a `:run` flag over the REPL's).
    pub fn or(&self, fallback: &DataOptions) -> DataOptions {
        DataOptions {
            threads: self.threads.or(fallback.threads),
            cache: self.cache.clone().or_else(|| fallback.cache.clone()),
        }
    }
}

impl SolveOptions {
    pub fn stopping(&self) -> Stopping {
        Stopping {
            epochs: self.epochs,
            tol: self.tol,
            time_limit: self.time_limit,
            seed: self.seed,
            shards: self.shards,
        }
    }
}

/// How a solve goes, as the command line (or `:run`) gives it: how long, its seed, its shards.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stopping {
    pub epochs: Option<usize>,
    pub tol: Option<f64>,
    pub time_limit: Option<f64>,
    pub seed: Option<u64>,
    /// How many shards a stochastic epoch is cut into (`--shards`).
    pub shards: Option<usize>,
}

/// The model's `solve with` settings overridden by `stop`, and the driver's settings from
/// them: `--epochs N` alone means exactly N epochs; otherwise the run stops on the certificate
/// (at `tol`, default 1e-4) or the cap. Nothing is traced or shown; callers say if it is.
pub(crate) fn run_settings(compiled: &Compiled, stop: &Stopping) -> Result<(Settings, RunSettings), Failure> {
    let mut settings = compiled.structure.settings.clone();
    if let Some(e) = stop.epochs {
        if e == 0 {
            return Err(Failure::Usage("--epochs must be at least 1".into()));
        }
        settings.epochs = Some(e);
    }
    if let Some(t) = stop.tol {
        if !(t > 0.0 && t.is_finite()) {
            return Err(Failure::Usage(format!("--tol {t}: the tolerance must be a positive number")));
        }
        settings.tol = Some(t);
    }
    if let Some(t) = stop.time_limit {
        if t.is_nan() || t <= 0.0 {
            return Err(Failure::Usage(format!("--time-limit {t}: give a positive number of seconds")));
        }
    }
    if let Some(s) = stop.seed {
        settings.seed = s;
    }
    let solver = compiled.structure.chosen.as_ref().map_or(SolverKind::Fobos, |c| c.solver);
    let shards = stop.shards.unwrap_or(1);
    if shards == 0 || shards > crate::exec::shards::MAX_SHARDS {
        return Err(Failure::Usage(format!(
            "--shards {shards}: give 1 to {} (a thread and a copy of the state each)",
            crate::exec::shards::MAX_SHARDS
        )));
    }
    if shards > 1 {
        crate::exec::shards::takes(solver.name())
            .map_err(|why| Failure::Usage(format!("--shards {shards}: {why} (give --solver fobos, say)")))?;
    }
    let tol = match (settings.tol, settings.epochs) {
        (Some(t), _) => Some(t),
        (None, Some(_)) => None,
        (None, None) => Some(DEFAULT_TOL),
    };
    let run = RunSettings {
        max_epochs: settings.epochs.unwrap_or_else(|| solver.default_max_epochs()),
        tol,
        time_limit: stop.time_limit,
        check_every: solver.check_every(),
        seed: settings.seed,
        trace: false,
        progress: false,
        shards,
    };
    Ok((settings, run))
}

/// The relative duality gap a run stops at when neither the model nor the command line says.
pub(crate) const DEFAULT_TOL: f64 = 1e-4;

/// A finished solve.
pub(crate) struct Solved {
    pub outcome: Outcome,
    pub calibration: Option<Calibration>,
    pub backend: &'static str,
    /// Why the JIT was not used, if it was asked for and could not be.
    pub fallback: Option<String>,
    pub jit_seconds: f64,
}

/// Why a solve produced no answer.
pub(crate) enum Unsolved {
    /// A guarded value went NaN or infinite.
    Fault(Fault),
    /// It ended worse than w = 0: with a convex F that was a valid answer, so the step
    /// overshot. (F may be negative: a `logeps` term is, near 0.)
    Worse { epochs: usize, objective: f64, start_objective: f64 },
}

impl Unsolved {
    /// The message of exit 3: a fault names the row of `train` it happened at; an ending worse
    /// than w = 0 says so, with `step` (the schedule, when the caller knows it) and `hint` (by
    /// default: a smaller step, or another solver).
    pub fn failure(self, train: &Dataset, solver: &str, step: Option<&str>, hint: Option<&str>) -> Failure {
        let hint = hint.map_or_else(
            || format!("give the solver a smaller step (`solve with {solver}(eta0 = ...)`), or choose another solver"),
            str::to_string,
        );
        match self {
            Unsolved::Fault(f) => super::run::diverged(&f, train, solver),
            Unsolved::Worse { epochs, objective, start_objective } => Failure::Diverged(format!(
                "the solver diverged: after {epochs} epochs F = {} is worse than F = {} at the cold start (w = 0){}\n  hint: {hint}",
                crate::symbolic::fmt_num(objective),
                crate::symbolic::fmt_num(start_objective),
                step.map_or(String::new(), |s| format!(" (step {s})"))
            )),
        }
    }
}

/// Runs `plan` on the bound data: calibrates its tuned parameter, picks the back end, and
/// solves from `warm` weights and intercept if given (the derived state is rebuilt from them by the plan's
/// init), looking at held-out rows as `watch` says. `plan` comes back with the calibrated value
/// bound.
pub(crate) fn solve(
    plan: &mut Plan,
    bound: &Bound,
    view: &DataView,
    watch: driver::Watch,
    settings: &RunSettings,
    jit: bool,
    warm: Option<(&[f64], f64)>,
) -> Result<Solved, Unsolved> {
    let calibration = match crate::exec::calibrate::calibrate(plan, view, &bound.facts, settings.seed, jit) {
        Some((calibrated, c)) => {
            *plan = calibrated;
            Some(c)
        }
        None => None,
    };
    let mut start = State::new(plan, &bound.facts, view.labels);
    if let (Some((w, _)), Some(id)) = (warm, plan.weights()) {
        if start.vectors[id.0].len() == w.len() {
            start.vectors[id.0].copy_from_slice(w);
        }
    }
    if let (Some((_, b)), Some(id)) = (warm, plan.objective.intercept) {
        start.scalars[id.0] = b;
    }
    // Measured at the cold start w = 0 even when warm: a stochastic method started at (or near)
    // the optimum ends a little above it, which is noise, not divergence.
    let start_objective = evaluate(plan, &State::new(plan, &bound.facts, view.labels), view).objective;
    let mut selected = crate::exec::select_backend(plan, &bound.facts, jit);
    let backend = selected.backend.name();
    let outcome =
        driver::run_watched(plan, selected.backend.as_mut(), view, &bound.facts, settings, warm.map(|_| start), watch)
            .map_err(Unsolved::Fault)?;
    let objective = outcome.eval.objective;
    if !objective.is_finite() || objective > start_objective + 1e-9 * start_objective.abs() + 1e-12 {
        return Err(Unsolved::Worse { epochs: outcome.epochs, objective, start_objective });
    }
    Ok(Solved { outcome, calibration, backend, fallback: selected.fallback.take(), jit_seconds: selected.jit_seconds })
}
