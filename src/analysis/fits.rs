//! Which models the solvers with a narrow reach take: the Picard SVM, dual coordinate descent
//! and the primal-dual method, each by the model's loss, shape and terms.

use crate::check::{Model, Shape};
use crate::stdlib::ProxKind;

/// hinge + λ·½‖w‖² and nothing else: the SVM the Picard solver takes as a prox of hinge∘B.
pub(super) fn is_svm(model: &Model) -> bool {
    model.loss.def.name == "hinge"
        && matches!(model.shape, Shape::Vec(_))
        && model.constraints.is_empty()
        && !model.regs.is_empty()
        && model.regs.iter().all(|r| r.def.prox == ProxKind::Scale && r.operator.is_none())
}

/// A loss whose conjugate's prox the primal-dual method has in closed form (hinge, squared hinge,
/// squared, Huber's, the pinball and ε-insensitive losses; `plan::lower::pdhg::conjugate_prox`),
/// by name or by formula, on a vector w.
pub(super) fn primal_dual_fits(model: &Model) -> bool {
    use crate::stdlib::KnownLoss;
    matches!(
        model.loss.def.known(),
        Some(
            KnownLoss::Hinge
                | KnownLoss::SquaredHinge
                | KnownLoss::Squared
                | KnownLoss::Huber
                | KnownLoss::Quantile
                | KnownLoss::EpsInsensitive
                | KnownLoss::SquaredEpsInsensitive
        )
    ) && matches!(model.shape, Shape::Vec(_))
        && model.loss.coef.value > 0.0
}

/// A loss whose dual coordinate step optc has (hinge, squared hinge in closed form; logistic by
/// a 1-D Newton method), by name or by formula, with λ·l2sq terms only: no constraint, no other term, no unregularized intercept
/// (whose Σ αᵢyᵢ = 0 in the dual needs pairwise steps, docs/algorithms.md §11).
pub(super) fn dual_cd_fits(model: &Model) -> bool {
    use crate::stdlib::KnownLoss;
    matches!(model.loss.def.known(), Some(KnownLoss::Hinge | KnownLoss::SquaredHinge | KnownLoss::Logistic))
        && matches!(model.shape, Shape::Vec(_))
        && model.constraints.is_empty()
        && model.loss.coef.value > 0.0
        && !model.regs.is_empty()
        && model.regs.iter().all(|r| r.def.prox == ProxKind::Scale && r.operator.is_none() && r.coef.value > 0.0)
}
