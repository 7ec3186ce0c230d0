//! How a run's report says things: the summary lines, the step a solver took, and the hint
//! for a run that stopped short of its tolerance.

use super::Failure;
use crate::data::DataFacts;
use crate::data::Dataset;
use crate::exec::driver;
use crate::exec::evaluate::Evaluation;
use crate::exec::stream::StreamStop;
use crate::solvers::SolverKind;
use crate::symbolic::fmt_num;

/// What to do about a run that stopped short of its tolerance.
pub(crate) fn unconverged_hint(solver: SolverKind) -> &'static str {
    if solver.can().decaying_steps {
        "stochastic steps with decaying steps or weights rarely certify a tight gap; give a looser --tol, more --epochs with --tol, or leave the solver to optc (it picks a batch or coordinate method that certifies)"
    } else {
        "raise the cap with --epochs N (and keep --tol), or give --time-limit more time"
    }
}

/// The warning of a run that stopped short of `tol`: the rule that stopped it, how far the
/// relative gap was (or that there was none), and `hint`.
pub(crate) fn not_converged(rule: &str, gap: Option<f64>, objective: f64, tol: f64, hint: &str) -> String {
    format!(
        "warning: not converged: stopped by {rule} with {}; the answer may be far from the optimum\n  hint: {hint}",
        match gap {
            Some(g) => format!("relative gap {:.1e} > tol {tol:.0e}", g / objective.abs()),
            None => "no certificate".into(),
        },
    )
}

/// The report's line for a step (or n₀) tuned on a sample of the rows.
pub(crate) fn calibrated(c: &crate::exec::calibrate::Calibration) -> String {
    format!(
        "  step         {} chosen on {} sample rows in {:.2} s (default would be {})",
        c.param,
        c.rows,
        c.seconds,
        sig4(c.default)
    )
}

/// The `--json` record of a run that ended worse than w = 0.
pub(crate) fn diverged_json(
    objective: f64,
    start_objective: f64,
    solver: SolverKind,
    epochs: usize,
    step: &StepShown,
) -> serde_json::Value {
    serde_json::json!({
        "status": "diverged",
        "objective": objective,
        "start_objective": start_objective,
        "gap": null,
        "solver": solver,
        "epochs": epochs,
        "step": step.json(),
    })
}

/// Which of its plans the solver ran, after its name: lazy or eager, DC online or batch.
pub(crate) fn variant(plan: &crate::plan::Plan) -> &'static str {
    match (plan.info.solver.can().lazy, plan.info.lazy, plan.uncertified) {
        (true, true, _) => " (lazy)",
        (true, false, _) => " (eager)",
        (_, _, crate::plan::Uncertified::Reweighting { .. }) => " (batch: reweighted ℓ1)",
        _ if plan.info.solver == SolverKind::Dc => " (online)",
        _ => "",
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn summary(
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
        variant(plan),
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
        let b = sig6(outcome.state.intercept(plan));
        s += &format!("  intercept    b = {b}  ({})\n", plan.objective.intercept_words());
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
pub(crate) fn sig4(v: f64) -> String {
    format!("{v:.3e}").parse::<f64>().map_or_else(|_| fmt_num(v), fmt_num)
}

pub(crate) use crate::symbolic::sig6;

/// The step schedule a run used, as the report shows it.
pub(crate) enum StepShown {
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
pub(crate) struct StepOf {
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
            (None, None, Some(eta)) if plan.info.solver == SolverKind::Adagrad => StepShown::Scaled(eta),
            (None, None, _) if plan.info.solver == SolverKind::Smidas => StepShown::PerEpoch(eta0.unwrap_or(f64::NAN)),
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

    pub(super) fn hint(&self, solver: SolverKind) -> String {
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

/// A streamed run's stop other than a fault (which each caller words with its own context).
pub(super) fn stopped(stop: StreamStop) -> Failure {
    match stop {
        StreamStop::Data(m) => Failure::Input(m),
        StreamStop::Fault { fault, line } => Failure::Diverged(format!(
            "the run stopped: {} is {} (in the block from line {line})",
            fault.what, fault.value
        )),
        StreamStop::Elsewhere => Failure::Input("another rank stopped the run (its message says why)".into()),
        StreamStop::Collective(e) => Failure::Input(format!("the ranks could not reduce: {e}")),
        StreamStop::Refused(m) => Failure::Usage(m),
    }
}

/// The line that says a run (or a plan on DATA) is solved at the check before its first epoch,
/// with the figures of that choice: a Newton step's Hessian and factor against an epoch of the
/// column solver, in multiply-adds.
pub(crate) fn first_check(solver: SolverKind, features: usize, c: &crate::exec::linalg::NewtonCosts) -> String {
    format!(
        "checked before the first epoch: Newton steps on all {features} features, each forming the Hessian ({} \
         multiply-adds) and factoring it ({}), where an epoch of {} costs {}",
        flops(c.hessian),
        flops(c.factor),
        solver.name(),
        flops(c.epoch)
    )
}

/// A count of multiply-adds in two significant digits: 3.0e6.
fn flops(x: f64) -> String {
    format!("{x:.1e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_numbers_keep_their_significant_digits() {
        assert_eq!(sig6(12.0009), "12.0009");
        assert_eq!(sig6(-0.000123456789), "-1.23457e-4");
        assert_eq!(sig4(100.0), "100");
        assert_eq!(sig4(0.012345), "0.01235");
    }
}
