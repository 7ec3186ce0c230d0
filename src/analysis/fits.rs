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

/// A loss whose dual coordinate step optc has (hinge, squared hinge, the ε-insensitive losses and
/// the pinball loss in closed form; logistic by a 1-D Newton method), by name or by formula, with
/// λ·l2sq terms only: no constraint, no other term. An intercept, free or `μ·l2sq(b)`, is a
/// coordinate of the dual's rows, a free one under the augmented Lagrangian of the dual's
/// Σᵢ αᵢyᵢ = 0 (docs/algorithms.md §11).
pub(super) fn dual_cd_fits(model: &Model) -> bool {
    use crate::stdlib::KnownLoss;
    matches!(
        model.loss.def.known(),
        Some(
            KnownLoss::Hinge
                | KnownLoss::SquaredHinge
                | KnownLoss::Logistic
                | KnownLoss::EpsInsensitive
                | KnownLoss::SquaredEpsInsensitive
                | KnownLoss::Quantile
        )
    ) && matches!(model.shape, Shape::Vec(_))
        && model.constraints.is_empty()
        && model.loss.coef.value > 0.0
        && !model.regs.is_empty()
        && model.regs.iter().all(|r| r.def.prox == ProxKind::Scale && r.operator.is_none() && r.coef.value > 0.0)
}

/// Why dual CD is the default for a model [`dual_cd_fits`] takes: its LIBLINEAR counterpart.
pub(super) fn dual_cd_reason(model: &Model) -> String {
    use crate::stdlib::KnownLoss;
    format!(
        "`{}` with ½‖w‖² only: dual coordinate descent ({}), one dual variable a step at O(nnz of its row), certified by the gap to its own dual",
        model.loss.def.name,
        match model.loss.def.known() {
            Some(KnownLoss::Hinge) => "LIBLINEAR's -s 3",
            Some(KnownLoss::EpsInsensitive) => "LIBLINEAR's -s 13",
            Some(KnownLoss::Quantile) => "a box dual, as LIBLINEAR's -s 13 for the ε-insensitive loss",
            _ => "LIBLINEAR's -s 1",
        }
    )
}
