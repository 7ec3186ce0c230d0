//! A regularization path: the model solved along a log-spaced grid of one parameter, from the
//! largest value down, each point warm-started from the last (glmnet's pathwise strategy, for
//! any model optc solves). The data is bound once; each value is a new plan, because parameters
//! are folded into the code. `optc path`, the REPL's `:path` and the Python package's
//! `Model.path` solve through [`solve_path`]; what they show of it is theirs.

mod start;

use super::bind::Bound;
use super::solve::{self, Stopping};
use crate::data::{Dataset, LabelMap};
use crate::exec::cancel::Cancel;
use crate::exec::evaluate::evaluate;
use crate::exec::State;
use crate::pipeline::{self, CompileError, CompileOptions, Compiled};
use crate::source::SourceFile;
use crate::stdlib::Library;
use crate::symbolic::fmt_num;
use std::time::Instant;

/// What a path solves beside the model: the parameter, its grid and each point's stopping rule.
#[derive(Clone, Debug)]
pub struct PathSpec {
    /// The parameter to vary (its name or ASCII alias).
    pub param: String,
    /// The first (largest) value; None: λ_max where it has a closed form.
    pub from: Option<f64>,
    /// The last (smallest) value; None: from·1e-4 when rows > features, else from·1e-2.
    pub to: Option<f64>,
    /// Grid points, log-spaced from `from` to `to`.
    pub steps: usize,
    /// The grid itself, instead of `from`, `to` and `steps` (sorted from large to small).
    pub values: Option<Vec<f64>>,
    /// Each point's relative duality gap target (None: the default 1e-4).
    pub tol: Option<f64>,
    /// Each point's epoch cap (None: the solver's).
    pub epochs: Option<usize>,
    pub seed: u64,
    /// Every point from w = 0 (to measure what warm starts save).
    pub cold: bool,
    pub jit: bool,
    pub threads: usize,
    /// The other parameters set, the solver forced, eager lowering and where `load` files are.
    pub compile: CompileOptions,
    /// Stops the point being solved (kept, `interrupted`); the rest of the grid is not run.
    pub cancel: Cancel,
}

/// One solved point of the path.
#[derive(Clone, Debug)]
pub struct PathPoint {
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
    /// w = 0 is known optimal here (at or above λ_max): no solver ran.
    pub no_solve: bool,
}

/// A solved path.
pub struct SolvedPath {
    pub points: Vec<PathPoint>,
    pub from: f64,
    pub to: f64,
    /// The labels are real: the errors are mean squared errors.
    pub regression: bool,
    pub seconds: f64,
}

/// What a path says while it runs, for a caller that shows progress.
pub enum PathEvent<'a> {
    /// Where the grid starts when the spec does not say: λ_max, in words.
    Range(String),
    Point(&'a PathPoint),
}

/// Why a path gave no answer: a model that does not compile (the caller renders its
/// diagnostics), labels that make k one-vs-rest problems (a path follows one), or the
/// library's other errors.
#[derive(Debug)]
pub enum PathError {
    Compile(CompileError),
    OneVsRest(LabelMap),
    Failed(super::Error),
}

impl From<super::Error> for PathError {
    fn from(e: super::Error) -> PathError {
        PathError::Failed(e)
    }
}

fn usage(m: String) -> PathError {
    PathError::Failed(super::Error::Usage(m))
}

/// Solves the path of `file`'s model on `train`, each point also evaluated on `test`.
pub fn solve_path(
    file: &SourceFile,
    train: &Dataset,
    test: Option<&Dataset>,
    spec: &PathSpec,
    mut on: impl FnMut(PathEvent),
) -> Result<SolvedPath, PathError> {
    if spec.steps == 0 && spec.values.is_none() {
        return Err(usage("--steps must be at least 1".into()));
    }
    let values = match &spec.values {
        Some(v) if v.is_empty() => return Err(usage(format!("no value of {} given", spec.param))),
        Some(v) => {
            if let Some(bad) = v.iter().find(|v| !(**v > 0.0 && v.is_finite())) {
                return Err(usage(format!("{} = {bad}: give positive numbers", spec.param)));
            }
            let mut v = v.clone();
            v.sort_by(|a, b| b.total_cmp(a));
            v.dedup();
            Some(v)
        }
        None => None,
    };
    for (flag, v) in [("--from", spec.from), ("--to", spec.to), ("--tol", spec.tol)] {
        if let Some(v) = v.filter(|v| !(*v > 0.0 && v.is_finite())) {
            return Err(usage(format!("{flag} {v}: give a positive number")));
        }
    }
    pipeline::declares_param(file, &spec.param, "--param").map_err(PathError::Compile)?;
    let opts_at = |value: f64| {
        let mut opts = spec.compile.clone();
        opts.overrides.push((spec.param.clone(), value));
        opts.epochs = spec.epochs;
        opts
    };
    // The default a data shape settles (docs/algorithms.md §9) is settled for every point alike;
    // one plan serves every λ, so no λ's ridge strength decides (an infinite mean ‖xᵢ‖²).
    let compiled_at = |value: f64| {
        pipeline::front_end(file, &Library::standard(), &opts_at(value)).map_err(PathError::Compile).map(|mut c| {
            pipeline::shape(&mut c, (train.features(), train.rows(), train.nnz()), || f64::INFINITY);
            c
        })
    };
    let plan_at = |c: &Compiled, value: f64| pipeline::plan(c, &opts_at(value)).map_err(PathError::Compile);
    let first = compiled_at(1.0)?;
    let plan = plan_at(&first, 1.0)?;
    if let Some(classes) = LabelMap::one_vs_rest(first.model.label_kind, train) {
        return Err(PathError::OneVsRest(classes));
    }
    let dir = spec.compile.files.clone().unwrap_or_else(|| ".".into());
    let bound = Bound::new(&first, &plan, train, &dir)?;
    let view = bound.view(train, spec.threads);
    let begin = start::at_start(&plan, &bound, &view);
    // λ_max is read off ∇f of the plan at 1: a parameter that also weighs the loss (or b's
    // ridge) moves ∇f with it, and then no one value separates w = 0 from the rest.
    let second = compiled_at(2.0)?;
    let plan_two = plan_at(&second, 2.0)?;
    let loss_fixed = plan.objective.loss_weight == plan_two.objective.loss_weight
        && plan.objective.intercept_l2 == plan_two.objective.intercept_l2;
    let range = if loss_fixed { start::range(&first, &second, &begin, &view) } else { None };
    let from = match (values.as_ref().map(|v| v[0]).or(spec.from), range.as_ref()) {
        (Some(v), _) => v,
        (None, Some(r)) => {
            let b = (plan.objective.intercept.is_some() && begin.exact).then(|| begin.state.intercept(&plan));
            on(PathEvent::Range(r.describe(&spec.param, b)));
            r.from()
        }
        (None, None) => {
            return Err(usage(format!(
                "--param {}: no closed-form λ_max for this model (the parameter does not scale one sparsifying norm, nor a ridge alone); give --from",
                spec.param
            )))
        }
    };
    // At and above λ_max, w = 0 (with the intercept-only b) is optimal: those points are
    // reported, with their certificate where the plan has one, without running a solver.
    let zero_optimal = |value: f64| range.as_ref().is_some_and(|r| r.zero_at(value));
    let ratio = if train.rows() > bound.features { 1e-4 } else { 1e-2 };
    let to = values.as_ref().and_then(|v| v.last().copied()).or(spec.to).unwrap_or(from * ratio);
    if to > from {
        return Err(usage(format!("--to {to} is above --from {from}: a path goes from large to small")));
    }
    let test_labels = test.map(|t| bound.labels_of(t)).transpose()?;
    // Every point stops on the certificate (or the cap), never after exactly N epochs.
    let tol = spec.tol.unwrap_or(solve::DEFAULT_TOL);
    let stop = Stopping { epochs: spec.epochs, tol: Some(tol), time_limit: None, seed: Some(spec.seed), shards: None };
    let (_, mut settings) = solve::run_settings(&first, &stop)?;
    settings.cancel = spec.cancel.clone();
    let mut points: Vec<PathPoint> = vec![];
    let started = Instant::now();
    for value in values.unwrap_or_else(|| grid(from, to, spec.steps)) {
        let compiled = compiled_at(value)?;
        let mut plan = plan_at(&compiled, value)?;
        // At λ ≥ λ_max the answer is w = 0 and its certificate, with no solve; a certificate
        // that does not confirm it to the path's tolerance sends the point to the solver.
        let confirmed = |s: &start::Start| s.assessment.as_ref().is_none_or(|a| a.gap <= tol * s.eval.objective.abs());
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
                let warm = points.last().filter(|_| !spec.cold).map(|p| (p.weights.as_slice(), p.intercept));
                let solved = solve::solve(&mut plan, &bound, &view, Default::default(), &settings, spec.jit, warm)
                    .map_err(|e| match e.failure(train, plan.info.solver, None, None) {
                        // The point the path had reached, before the message of the failure itself.
                        super::Error::Diverged(m) => {
                            super::Error::Diverged(format!("at {} = {}: {m}", spec.param, fmt_num(value)))
                        }
                        other => other,
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
        let point = PathPoint {
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
            no_solve,
        };
        on(PathEvent::Point(&point));
        points.push(point);
        // Interrupted: the point it stopped is kept (status `interrupted`), the rest of the
        // grid is not run.
        if settings.cancel.is_cancelled() {
            break;
        }
    }
    let regression = bound.label_map.kind == crate::stdlib::LabelKind::Real;
    Ok(SolvedPath { points, from, to, regression, seconds: started.elapsed().as_secs_f64() })
}

/// `steps` values from `from` down to `to`, evenly spaced in log scale.
pub fn grid(from: f64, to: f64, steps: usize) -> Vec<f64> {
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
