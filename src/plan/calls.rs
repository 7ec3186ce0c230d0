//! The arguments of the plan's calls into the runtime that are more than a buffer and a scalar:
//! SMM's dictionary epoch (its settings, cost, majorizer and atoms' penalty are the runtime's own
//! types, re-exported here), and the prox of a composite ω∘B (Picard's fixed point or the shrink of
//! disjoint groups) with the operator B that binding builds, tron's dense Newton direction, and
//! an epoch of the hinge's augmented Lagrangian method.

use super::*;
pub use crate::analysis::{Composite, CompositeProx, OperatorSpec};
pub use crate::runtime::dictionary::{AtomPenalty, DictionaryCost, EpochSettings, Majorizer};

/// The operands of [`Stmt::Dictionary`].
#[derive(Clone, Debug, PartialEq)]
pub struct DictionaryCall {
    /// D, a mat[d, k] whose column c is atom c (the k of [`Dims`] counts the atoms), and B, the
    /// averaged surrogate's point, of the same shape.
    pub atoms: VecId,
    pub surrogate: VecId,
    /// A, the averaged curvature (a mat[k, k]), and n, the steps so far (a state scalar). At
    /// n = 0 the atoms start from the first k signals of the epoch's order.
    pub curvature: VecId,
    pub steps: ScalarId,
    /// λ₁, λ₂, the batch size, n₀, the majorizer and ϕ: what the runtime's epoch takes besides
    /// the buffers.
    pub settings: EpochSettings,
}

/// The operands of [`Stmt::Picard`]: a vec\[d] and a vec\[p], ω, γ, and the inner stopping rule.
#[derive(Clone, Debug, PartialEq)]
pub struct PicardCall {
    pub target: VecId,
    pub dual: VecId,
    pub omega: crate::runtime::picard::Omega,
    pub gamma: Expr,
    pub tol: f64,
    pub cap: u32,
}

/// The operands of [`Stmt::Newton`]: s = −H⁻¹g for H = Xᵀ·diag(D)·X + ridge·I (and b one more
/// coordinate, its row Xᵀ·D, its corner Σᵢ Dᵢ + ridge_b; rows with Dᵢ ≤ 0 left out, as the
/// plan's Hessian products leave them), by one dense Cholesky factor where that costs less than
/// the conjugate gradients of the last iteration that ran them (`exec::linalg::newton_statement`).
#[derive(Clone, Debug, PartialEq)]
pub struct NewtonCall {
    /// D, a state vec\[m].
    pub curvature: VecId,
    /// g, a vec\[d], and b's entry of it when the model has an intercept.
    pub gradient: VecId,
    pub gradient_b: Option<ScalarId>,
    /// Where s goes: a state vec\[d], and b's entry (a state scalar or a local).
    pub step: VecId,
    pub step_b: Option<ScalarId>,
    pub ridge: Expr,
    pub ridge_b: Expr,
    /// The conjugate-gradient steps of the last iteration that ran them (0 before any): what one
    /// dense step is weighed against.
    pub cg_steps: Expr,
    /// Set to 1 when the step was taken, else 0 (the step left as it was): the plan's
    /// conjugate gradients run then.
    pub solved: ScalarId,
}

/// The operands of [`Stmt::Alm`]: one epoch of the augmented Lagrangian method for the hinge
/// with ½‖w‖² (`exec::alm::epoch`), in LIBLINEAR's scaling: its subproblem in (w, b) solved by
/// Newton steps, then the multipliers α moved and σ grown.
#[derive(Clone, Debug, PartialEq)]
pub struct AlmCall {
    /// w, the weights (a vec\[d]), and b, a state scalar, when the model has an intercept.
    pub weights: VecId,
    pub intercept: Option<ScalarId>,
    /// ρ_b, b's own ridge in units of λ (0 for a free b).
    pub ridge_b: Expr,
    /// α, a state vec\[m]: the dual variables, each in its box [0, C·ωᵢ].
    pub multipliers: VecId,
    /// σ, a state scalar: the augmented Lagrangian's penalty (≤ 0: not yet set).
    pub sigma: ScalarId,
    /// C = c/(λm).
    pub cap: Expr,
    /// A state scalar set to the relative gap the epoch expects ([`super::Plan::estimate`]).
    pub estimate: ScalarId,
    /// y (±1) and the rows' weights ω, vec\[m] inputs.
    pub labels: VecId,
    pub row_weights: Option<VecId>,
}
