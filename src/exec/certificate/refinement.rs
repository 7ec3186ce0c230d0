//! The refinement a check runs when its gap is short of the target, the one part of the
//! certificate that solves rather than evaluates: [`super::check`] calls `refine` between
//! assessing and recording the check, and `optc plan` says which plans take it
//! ([`Plan::refines_certificate`]). It picks the refinement that fits the support: the dense
//! Newton steps of `refine.rs` on a narrow one, the conjugate-gradient and exact steps of
//! `support.rs` on a wide one, the steps of `softmax.rs` on every entry of a softmax W.

use super::refine::{dense_refined_dual, moves_freely, Budget, Refined};
use super::tuning::TUNING;
use super::{softmax, support, Assessment, Gate};
use crate::exec::{DataView, State};
use crate::plan::{Certificate, LossConjugate, Plan};

/// Tightens `a`, the assessment of `state` (F = `objective`, margins `margins`), by the dual
/// point at a Newton-refined primal, when the plan takes it, F has stalled against the gap and
/// the closed-form dual points left the gap above `target`, the gap the run stops at. The
/// refined dual value counts once [`super::check`] records the check. `halt` ends it early
/// (the run was asked to stop).
#[allow(clippy::too_many_arguments)]
pub(super) fn refine(
    plan: &Plan,
    data: &DataView,
    state: &State,
    margins: &[f64],
    a: &mut Assessment,
    gate: Gate,
    objective: f64,
    target: f64,
    halt: &dyn Fn() -> bool,
) {
    let gap = objective - a.dual.max(a.earlier);
    let due = gap > target && gate.stalled && plan.refines_certificate();
    let Some(cert) = plan.certificate.filter(|_| due) else { return };
    if cert.conjugate != LossConjugate::Softmax && !worth_a_round(&cert, data, state.weights(plan), gate, gap / target)
    {
        return;
    }
    let rounds = if gate.eager { TUNING.refine_rounds_eager } else { TUNING.refine_rounds };
    // Exact Newton steps on a wide support only near the optimum, where they finish the job
    // (see `support.rs`).
    let exact = gap <= TUNING.exact_gap * objective.abs();
    let settle = gap <= TUNING.settle_gap * objective.abs();
    let stalled_again = gate.stalled_again;
    let budget = Budget { enough: objective - target, slack: target, rounds, exact, settle, stalled_again, halt };
    let w = state.weights(plan);
    let c = plan.objective.loss_weight;
    let refined = if cert.conjugate == LossConjugate::Softmax {
        softmax::refined_dual(&cert, data, c, w, margins, budget)
    } else {
        refined_dual(&cert, data, c, w, margins, &a.gradient, budget)
    };
    if let Some(refined) = refined {
        a.dual = a.dual.max(refined.dual);
        a.polished = refined.moved;
        a.settle(objective);
    }
}

/// Whether a round of the refinement is worth its cost against the run's own epochs, `short`
/// the gap over the target. A round on a wide support costs as many epochs as its Hessian
/// and its factor ([`refine::round_cost`]); where that is more than
/// `TUNING.refine_defer_epochs`, it waits while the epochs are about to finish: at the pace
/// the gap kept since the last check, they reach the target within that many epochs and in
/// fewer than the round costs. At a run's first check after epochs (a warm start: a path's
/// next value) there is no pace yet, and such a round waits one check to measure it. Before
/// any epoch, and where the round is cheap, nothing changes: there the refinement is the
/// solver ([`first_check_solves`]). The loss of a wrong guess is bounded: at most that many
/// epochs, after which the next check refines. A warm-started lasso path on a sparse
/// 20,000 × 2,000 set (supports of 1,000–1,800 columns at its small end, well-conditioned
/// columns): each value's round took 60–100 ms, where two to six epochs of 1 ms certify it.
pub(super) fn worth_a_round(cert: &Certificate, data: &DataView, w: &[f64], gate: Gate, short: f64) -> bool {
    if gate.epochs == 0 {
        return true;
    }
    let support = w.iter().filter(|&&x| moves_freely(cert, x)).count();
    let cost = super::refine::round_cost(data, w.len(), support);
    let defer = TUNING.refine_defer_epochs;
    if cost <= defer {
        return true;
    }
    match gate.pace {
        None => false,
        Some(pace) if pace > 0.0 && pace < 1.0 => {
            let to_go = short.ln() / -pace.ln();
            !(to_go <= defer && to_go < cost)
        }
        Some(_) => true,
    }
}

/// Whether a check's refinement alone solves `plan` from any point, so that a run checks it
/// before its first epoch: a loss with ℓ″ (logistic, squared, the squared hinge) and
/// per-coordinate terms on at most `TUNING.refine_all` features, so that a round takes every
/// violating coordinate in V. The refinement is then proximal Newton on all of F, as
/// scikit-learn's `newton-cholesky` and glmnet run from w = 0 (for the squared loss one exact
/// step), and a column solver's epoch buys nothing its Newton steps do not: to a certified 1e-4,
/// from a check before any epoch against one after the first, ℓ2-logistic + b on a dense
/// 15,000 × 200 set 0.067 s against 0.115, on 100,000 × 100 0.24 against 0.40 (the columns SCD
/// walks, a copy of X, never built), on a9a and w8a 0.89–0.98×, the ℓ1 models 0.80–0.95×.
pub fn first_check_solves(plan: &Plan, features: usize) -> bool {
    plan.refines_certificate()
        && plan.certificate.is_some_and(|c| c.conjugate.has_curvature())
        && features <= TUNING.refine_all
}

/// The refined dual point of a loss with ℓ″ and per-coordinate terms: copies of earlier columns
/// folded onto the first of their kind, then the dense steps on a support of at most
/// `TUNING.refine_max` coordinates, or `support.rs`'s on a wider one. None for other models.
pub(super) fn refined_dual(
    cert: &Certificate,
    data: &DataView,
    c: f64,
    w: &[f64],
    margins: &[f64],
    gradient: &[f64],
    budget: Budget,
) -> Option<Refined> {
    if cert.vector.is_some() || cert.groups.is_some() || !cert.conjugate.has_curvature() {
        return None;
    }
    // Copies of earlier columns are held at zero, their weight on the first of their kind: the
    // margins, and so the gradient, stay the same.
    let copies = crate::exec::copies::foldable(cert, data);
    let mut v = w.to_vec();
    if let Some(copies) = copies {
        copies.fold(&mut v);
    }
    if v.iter().filter(|&&x| moves_freely(cert, x)).count() > TUNING.refine_max {
        support::refine(cert, data, c, v, margins, gradient, budget)
    } else {
        dense_refined_dual(cert, data, c, v, copies, margins, gradient, budget)
    }
}
