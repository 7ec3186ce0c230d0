//! One solve of a plan on bound data, cold or warm, and the settings it runs with: the model's
//! `solve with` overridden by the caller's [`Stopping`].

use super::bind::Bound;
use super::Error;
use crate::analysis::{Settings, SolverKind};
use crate::data::Dataset;
use crate::exec::calibrate::Calibration;
use crate::exec::driver::{self, Outcome, RunSettings};
use crate::exec::evaluate::evaluate;
use crate::exec::{DataView, Fault, State};
use crate::pipeline::Compiled;
use crate::plan::Plan;
use crate::symbolic::fmt_num;

/// How a solve goes, as the command line (or `:run`) gives it: how long, its seed, its shards.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stopping {
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
pub fn run_settings(compiled: &Compiled, stop: &Stopping) -> Result<(Settings, RunSettings), Error> {
    let mut settings = compiled.structure.settings.clone();
    if let Some(e) = stop.epochs {
        if e == 0 {
            return Err(Error::Usage("--epochs must be at least 1".into()));
        }
        settings.epochs = Some(e);
    }
    if let Some(t) = stop.tol {
        if !(t > 0.0 && t.is_finite()) {
            return Err(Error::Usage(format!("--tol {t}: the tolerance must be a positive number")));
        }
        settings.tol = Some(t);
    }
    if let Some(t) = stop.time_limit {
        if t.is_nan() || t <= 0.0 {
            return Err(Error::Usage(format!("--time-limit {t}: give a positive number of seconds")));
        }
    }
    if let Some(s) = stop.seed {
        settings.seed = s;
    }
    let solver = compiled.structure.chosen.as_ref().map_or(SolverKind::Fobos, |c| c.solver);
    let shards = stop.shards.unwrap_or(1);
    if shards == 0 || shards > crate::exec::shards::MAX_SHARDS {
        return Err(Error::Usage(format!(
            "--shards {shards}: give 1 to {} (a thread and a copy of the state each)",
            crate::exec::shards::MAX_SHARDS
        )));
    }
    if shards > 1 {
        crate::exec::shards::takes(solver)
            .map_err(|why| Error::Usage(format!("--shards {shards}: {why} (give --solver fobos, say)")))?;
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
        cancel: Default::default(),
    };
    Ok((settings, run))
}

/// The relative duality gap a run stops at when neither the model nor the command line says.
pub const DEFAULT_TOL: f64 = 1e-4;

/// A finished solve.
pub struct Solved {
    pub outcome: Outcome,
    pub calibration: Option<Calibration>,
    pub backend: &'static str,
    /// Why the JIT was not used, if it was asked for and could not be.
    pub fallback: Option<String>,
    pub jit_seconds: f64,
}

/// Why a solve produced no answer.
pub enum Unsolved {
    /// A guarded value went NaN or infinite.
    Fault(Fault),
    /// The driver would not start it (a usage error).
    Refused(String),
    /// It ended worse than w = 0: with a convex F that was a valid answer, so the step
    /// overshot. (F may be negative: a `logeps` term is, near 0.)
    Worse { epochs: usize, objective: f64, start_objective: f64 },
}

impl Unsolved {
    /// The message of exit 3: a fault names the row of `train` it happened at; an ending worse
    /// than w = 0 says so, with `step` (the schedule, when the caller knows it) and `hint` (by
    /// default: a smaller step, or another solver).
    pub fn failure(self, train: &Dataset, solver: SolverKind, step: Option<&str>, hint: Option<&str>) -> Error {
        let hint = hint.map_or_else(
            || format!("give the solver a smaller step (`solve with {solver}(eta0 = ...)`), or choose another solver"),
            str::to_string,
        );
        match self {
            Unsolved::Fault(f) => diverged(&f, train, solver),
            Unsolved::Refused(why) => Error::Usage(why),
            Unsolved::Worse { epochs, objective, start_objective } => Error::Diverged(format!(
                "the solver diverged: after {epochs} epochs F = {} is worse than F = {} at the cold start (w = 0){}\n  hint: {hint}",
                crate::symbolic::fmt_num(objective),
                crate::symbolic::fmt_num(start_objective),
                step.map_or(String::new(), |s| format!(" (step {s})"))
            )),
        }
    }
}

/// A run that ended at F worse than F at w = 0 (or not a number): with a convex F the cold
/// start was a valid answer, so the steps overshot. The in-memory and the streamed run test it.
pub fn worse_than_start(objective: f64, start_objective: f64) -> bool {
    !objective.is_finite() || objective > start_objective + 1e-9 * start_objective.abs() + 1e-12
}

/// Runs `plan` on the bound data: calibrates its tuned parameter, picks the back end, and
/// solves from `warm` weights and intercept if given (the derived state is rebuilt from them by the plan's
/// init), looking at held-out rows as `watch` says. `plan` comes back with the calibrated value
/// bound.
pub fn solve(
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
    // A run that checks before its first epoch compiles when a phase first runs, so one that
    // check ends compiles nothing; any other compiles now, outside the run's time.
    let mut lazy = crate::exec::LazyBackend::new(plan, &bound.facts, jit);
    if !driver::checks_before_epochs(plan, view, settings, watch.holdout.is_some()) {
        lazy.choose();
    }
    let outcome = driver::run_watched(plan, &mut lazy, view, &bound.facts, settings, warm.map(|_| start), watch)
        .map_err(|stopped| match stopped {
            driver::Stopped::Fault(f) => Unsolved::Fault(f),
            driver::Stopped::Refused(why) => Unsolved::Refused(why),
        })?;
    let objective = outcome.eval.objective;
    // A dual method cannot overshoot: its dual value only rises, and w(α) is not monotone in F.
    // Stopped by its cap above F(0) (on near-collinear rows, dual CD at a large C), it has not
    // converged, and its status and gap say so; it has not diverged.
    let unconverged_dual = plan.objective.dual_only && objective.is_finite();
    // A run its duality gap certified is within tol of F* ≤ F(0): only another is compared with
    // F(0) (a pass of the loss over every row: 5 ms of a dense 200,000 × 50 ridge fit), measured
    // at the cold start w = 0 even when warm: a stochastic method started at (or near) the
    // optimum ends a little above it, which is noise, not divergence.
    let certified = outcome.status == crate::exec::driver::Status::Converged && outcome.gap.is_some();
    if !certified && !unconverged_dual {
        let start_objective = evaluate(plan, &State::new(plan, &bound.facts, view.labels), view).objective;
        if worse_than_start(objective, start_objective) {
            return Err(Unsolved::Worse { epochs: outcome.epochs, objective, start_objective });
        }
    }
    let backend = crate::exec::Backend::name(&lazy);
    Ok(Solved { outcome, calibration, backend, fallback: lazy.fallback.take(), jit_seconds: lazy.jit_seconds })
}

pub fn diverged(f: &Fault, data: &Dataset, solver: SolverKind) -> Error {
    let steps = solver.option("eta0").is_some();
    let hint = if steps {
        format!("the step is too large for this data; lower it with `solve with {solver}(eta0 = ...)` or `step = ...`, or scale the features")
    } else {
        "scale the features, or choose another solver".to_string()
    };
    Error::Diverged(format!(
        "the solver diverged: at step t = {} ({}), {} is {}\n  hint: {hint}",
        fmt_num(f.step),
        data.place(f.row),
        f.what,
        f.value
    ))
}
