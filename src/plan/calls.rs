//! The arguments of the plan's calls into the runtime that are more than a buffer and a scalar:
//! SMM's dictionary epoch (its settings, cost, majorizer and atoms' penalty are the runtime's own
//! types, re-exported here), and the prox of a composite ω∘B (Picard's fixed point or the shrink of
//! disjoint groups) with the operator B that binding builds.

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
