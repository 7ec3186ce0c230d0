//! One-vs-rest (docs/algorithms.md §11): a two-class loss on data with k > 2 labels is k binary
//! problems, problem c labelled +1 on the rows of class c and −1 on the rest, as LIBLINEAR
//! trains every solver but its Crammer–Singer one. Each problem is the same plan on the same
//! bound data (only y changes), solved to the same certificate; the combined predictor is the
//! argmax of LIBLINEAR's k-column model, computed by the same code as `optc predict`. The
//! library's [`super::Session`] and `optc run` both train through [`solve`].

use super::bind::Bound;
use super::solve::{self, Solved, Unsolved};
use crate::data::{one_vs_rest_labels, DataView, Dataset};
use crate::exec::driver::{self, RunSettings, Status};
use crate::exec::passes;
use crate::model_file::SavedModel;
use crate::plan::Plan;

/// One class's problem, solved.
pub(crate) struct Class {
    /// The raw label of the class.
    pub label: f64,
    /// The plan as it ran, with a calibrated step bound in.
    pub plan: Plan,
    pub solved: Solved,
    pub w: Vec<f64>,
    pub intercept: Option<f64>,
}

impl Class {
    /// gap / |F|, None without a certificate.
    pub fn relative_gap(&self) -> Option<f64> {
        let o = &self.solved.outcome;
        o.gap.map(|g| g / o.eval.objective.abs().max(f64::MIN_POSITIVE))
    }
}

/// How `threads` are spent: min(threads, k) problems at once, each problem's passes (F and the
/// certificate at a check) on threads / that many. A pass's numbers do not depend on its
/// thread count ([`passes`]), nor a problem's on which worker ran it, so the weights are the
/// same bits for every count.
pub(crate) fn split_threads(threads: usize, k: usize) -> (usize, usize) {
    let at_once = threads.clamp(1, k.max(1));
    (at_once, (threads / at_once).max(1))
}

/// A class whose problem gave no answer: its index, and why.
pub(crate) struct Failed {
    pub class: usize,
    pub plan: Plan,
    pub why: Unsolved,
}

/// Trains the k problems of `bound` (bound with [`Bound::one_vs_rest`], whose labels `labels`
/// are in class order) on `threads` threads, each from `warm`'s column for its class when
/// given: the classes in order, or the first that failed.
pub(crate) fn solve(
    plan: &Plan,
    bound: &Bound,
    train: &Dataset,
    labels: &[f64],
    settings: &RunSettings,
    (threads, jit): (usize, bool),
    warm: Option<&[Vec<f64>]>,
) -> Result<Vec<Class>, Box<Failed>> {
    let k = labels.len();
    let (at_once, per_problem) = split_threads(threads, k);
    let view = bound.view(train, per_problem);
    let results = passes::queued(k, at_once, |c| {
        let y = one_vs_rest_labels(&bound.y, c);
        let view = DataView { labels: &y, ..view };
        let mut plan = plan.clone();
        let warm = warm.map(|w| (w[c].as_slice(), 0.0));
        let solved = solve::solve(&mut plan, bound, &view, driver::Watch::default(), settings, jit, warm);
        (plan, solved)
    });
    let mut classes = Vec::with_capacity(k);
    for (c, (plan, result)) in results.into_iter().enumerate() {
        match result {
            Ok(s) => {
                let w = s.outcome.state.weights(&plan).to_vec();
                let intercept = plan.objective.intercept.map(|_| s.outcome.state.intercept(&plan));
                classes.push(Class { label: labels[c], plan, solved: s, w, intercept });
            }
            Err(why) => return Err(Box::new(Failed { class: c, plan, why })),
        }
    }
    Ok(classes)
}

/// The mean over the classes of a figure of their training evaluation (F, the loss).
pub(crate) fn mean(classes: &[Class], of: impl Fn(&crate::exec::evaluate::Evaluation) -> f64) -> f64 {
    classes.iter().map(|c| of(&c.solved.outcome.eval)).sum::<f64>() / classes.len().max(1) as f64
}

/// The worst of the classes' statuses: the run is converged only when every class is.
pub(crate) fn worst(classes: &[Class]) -> Status {
    let rank = |s: Status| match s {
        Status::Converged => 0,
        Status::EarlyStopped => 1,
        Status::MaxEpochs => 2,
        Status::TimeLimit => 3,
        Status::Interrupted => 4,
    };
    classes.iter().map(|c| c.solved.outcome.status).max_by_key(|s| rank(*s)).unwrap_or(Status::Converged)
}

/// LIBLINEAR's k-column model: row j holds w₁[j] … w_k[j] in `label` order, an intercept row
/// last when the model has one (bias t, b/t: see [`super::saved::bias_feature`]); the solver
/// type is the two-class one of each column.
pub(crate) fn saved_model(
    model: &crate::check::Model,
    labels: &[f64],
    features: usize,
    classes: &[Class],
) -> SavedModel {
    let k = classes.len();
    let with_bias = classes.iter().any(|c| c.intercept.is_some());
    let t = super::saved::bias_feature(model);
    let mut w = vec![0.0; (features + usize::from(with_bias)) * k];
    for (c, class) in classes.iter().enumerate() {
        for (j, v) in class.w.iter().enumerate().take(features) {
            w[j * k + c] = *v;
        }
        if let Some(b) = class.intercept {
            w[features * k + c] = b / t;
        }
    }
    SavedModel {
        solver_type: super::saved::binary_solver_type(model).into(),
        nr_class: k,
        labels: labels.to_vec(),
        nr_feature: features,
        bias: if with_bias { t } else { -1.0 },
        w,
    }
}

/// The fraction of rows whose label is not the argmax of the k decision values (ties to the
/// first class, as LIBLINEAR's predict).
pub(crate) fn argmax_error(saved: &SavedModel, data: &Dataset) -> f64 {
    argmax_wrong(saved, data) as f64 / data.rows().max(1) as f64
}

/// The rows of `data` whose label is not the argmax (for ranks, which add up their counts).
pub(crate) fn argmax_wrong(saved: &SavedModel, data: &Dataset) -> usize {
    let (indptr, indices, values) = data.csr();
    (0..data.rows())
        .filter(|&i| {
            let rows = indptr[i]..indptr[i + 1];
            saved.predict(&saved.decision(indices.range(rows.clone()), &values[rows])) != data.labels[i]
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_go_to_problems_first() {
        assert_eq!(split_threads(1, 3), (1, 1));
        assert_eq!(split_threads(2, 3), (2, 1));
        assert_eq!(split_threads(3, 3), (3, 1));
        assert_eq!(split_threads(8, 3), (3, 2));
        assert_eq!(split_threads(16, 10), (10, 1));
    }
}
