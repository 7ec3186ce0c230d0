//! The ℓ2-regularized models of docs/algorithms.md §11 that `tron` (truncated Newton with
//! conjugate gradients) takes: a smooth loss with λ·l2sq terms only, λ ≥ 0, no constraint.
//! F is then twice differentiable (almost everywhere, for squared hinge), and with λ > 0
//! λ-strongly convex, so every Newton system (c/m)·XᵀDX + λI is positive definite; with λ = 0
//! (no penalty) tron damps it by the gradient's norm. Any other term needs a prox or a
//! projection, which Newton steps do not take.

use super::Choice;
use crate::check::{Model, Shape};
use crate::solvers::SolverKind;
use crate::source::Span;
use crate::stdlib::ProxKind;

/// Why `tron` cannot take `model`'s regularizer and constraints, with the span to blame and its
/// label; None when it can. (The loss's smoothness and the convexity are the registry's
/// common requirements, checked before.)
pub(super) fn misfit(model: &Model) -> Option<(String, Span, String)> {
    if let Some(c) = model.constraints.first() {
        return Some((
            format!(
                "tron takes no constraints: its Newton steps are unconstrained, and `{}` needs a projection (proxgrad applies one)",
                c.text
            ),
            c.span,
            "constraint".into(),
        ));
    }
    if let Some(r) = model.regs.iter().find(|r| !plain_l2sq(r)) {
        return Some((
            format!(
                "tron's Newton steps need F twice differentiable, and `{}` is not ½‖·‖²: the regularizer may be λ·l2sq terms only",
                r.text
            ),
            r.span,
            "not λ·l2sq".into(),
        ));
    }
    let lambda: f64 = model.regs.iter().map(|r| r.coef.value).sum();
    // λ = 0 (no penalty): Newton-CG steps on the semidefinite (c/m)·XᵀDX damped by the
    // gradient's norm (softmax is blind to W + v·1ᵀ, along which it is singular), and the
    // gradient's norm ends the run.
    if !(lambda.is_finite() && lambda >= 0.0) {
        return Some((
            "tron needs λ·l2sq with a finite λ ≥ 0".into(),
            model.objective_span,
            "no finite ½‖·‖² weight".into(),
        ));
    }
    // Its line search weighs b's ridge at μ/λ of w's.
    if let (0.0, Some(r)) = (lambda, &model.intercept_l2) {
        return Some((
            format!("tron does not compile a penalised intercept (`{}`) beside no penalty on the weights", r.text),
            r.span,
            "the intercept's ridge".into(),
        ));
    }
    None
}

/// No penalty at all (no term, or λ·l2sq terms whose λ add up to 0): tron's Newton steps with the
/// gradient's norm as the rule (the plan's `Uncertified::Gradient`), whatever the shape.
pub(super) fn unpenalised(model: &Model) -> bool {
    model.regs.iter().all(|r| plain_l2sq(r) && r.coef.value == 0.0)
        && model.constraints.is_empty()
        && model.intercept_l2.is_none()
}

/// `tron` as the default (docs/algorithms.md §9): a smooth scalar loss, or softmax on a matrix W,
/// with λ·l2sq terms only. None for every other model.
pub(super) fn default_choice(model: &Model) -> Option<Choice> {
    let loss = &model.loss.def;
    let newton_only = loss.known().is_some_and(crate::stdlib::KnownLoss::newton_only);
    if (loss.smooth.is_none() && !newton_only) || misfit(model).is_some() {
        return None;
    }
    match (&model.shape, loss.multiclass) {
        (Shape::Mat(..), true) => Some(Choice {
            solver: SolverKind::Tron,
            reason: "softmax with ½‖W‖² only (docs/algorithms.md §9, §11): truncated Newton with conjugate gradients on W, a few Hessian-vector passes per iteration where FISTA takes thousands of gradient steps".into(),
        }),
        (Shape::Vec(_), false) => Some(Choice {
            solver: SolverKind::Tron,
            reason: "twice-differentiable loss with ½‖·‖² only (docs/algorithms.md §9, §11): truncated Newton with conjugate gradients and a line search (TRON's successor in LIBLINEAR, -s 0/-s 2), a few Hessian-vector passes per iteration and a fast local rate".into(),
        }),
        _ => None,
    }
}

/// `λ·l2sq(w)` on the variable itself.
fn plain_l2sq(r: &crate::check::RegTerm) -> bool {
    r.def.prox == ProxKind::Scale && r.operator.is_none() && r.groups.is_none()
}
