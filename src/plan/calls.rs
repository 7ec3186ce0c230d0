//! The arguments of the plan's calls into the runtime that are more than a buffer and a scalar:
//! SMM's dictionary epoch (its cost, majorizer and atoms' penalty are the runtime's own types,
//! re-exported here), and the prox of a composite ω∘B (Picard's fixed point or the shrink of
//! disjoint groups) with the operator B that binding builds.

use super::*;
pub use crate::runtime::dictionary::{AtomPenalty, DictionaryCost, Majorizer};

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
    pub lambda1: f64,
    pub lambda2: f64,
    pub batch: usize,
    /// n₀ of SMM's weights (`runtime::dictionary::weight`).
    pub n0: f64,
    pub majorizer: Majorizer,
    pub penalty: AtomPenalty,
}

impl DictionaryCall {
    /// What the runtime's epoch takes of the call besides its buffers.
    pub fn steps(&self) -> crate::runtime::dictionary::Steps {
        crate::runtime::dictionary::Steps {
            lambda1: self.lambda1,
            lambda2: self.lambda2,
            batch: self.batch,
            n0: self.n0,
            majorizer: self.majorizer,
            penalty: self.penalty,
        }
    }
}

/// Which operator B a composite term names; built when the data is bound (its size depends on
/// d, and `load(...)` files are read then, relative to the model file).
#[derive(Clone, Debug, PartialEq)]
pub enum OperatorSpec {
    /// `diff(n)`; None for `diff(dim(x))`.
    Diff(Option<usize>),
    /// `incidence(load(path))`
    Incidence(String),
    /// `groups(load(path))`
    Groups(String),
}

/// A composite term coef·ω(B w) (or `group_l2`, ω = Σ_g ‖·‖₂ over stacked group selections).
#[derive(Clone, Debug, PartialEq)]
pub struct Composite {
    pub omega: crate::runtime::picard::Omega,
    pub coef: f64,
    pub operator: OperatorSpec,
    /// ω sums ‖·‖₂ over the groups of B's rows (`group_l2`), rather than over all of them at
    /// once (`l2(B w)`); for ℓ1 every row is its own block.
    pub group_blocks: bool,
    pub prox: CompositeProx,
}

/// How the prox of a composite term is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompositeProx {
    /// The Picard fixed point ([`Stmt::Picard`]): right for any B.
    Picard,
    /// `group_l2` over groups its file showed disjoint: the closed-form shrink of each group
    /// ([`Stmt::GroupShrink`]). Binding the operator checks that they still are.
    GroupShrink,
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
