//! What checking produces: the model, its terms resolved against the library.

use crate::source::Span;
use crate::stdlib::{LabelKind, LossDef, RegDef, SetDef};
use crate::symbolic::Sym;

/// A dimension as the model states it; the data fixes its value.
#[derive(Clone, Debug, PartialEq)]
pub enum Dim {
    /// `dim(x)`: the feature count.
    Features,
    /// `classes(y)`: the number of distinct labels.
    Classes,
    Fixed(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Vec(Dim),
    Mat(Dim, Dim),
}

#[derive(Clone, Debug)]
pub struct Named {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub value: f64,
    pub span: Span,
    /// Set by `--set` rather than by the model text.
    pub overridden: bool,
}

/// A constant factor in front of a term, kept as written for reports.
#[derive(Clone, Debug)]
pub struct Coef {
    pub value: f64,
    /// `λ`, `λ/2`, or empty for 1.
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct LossTerm {
    pub def: LossDef,
    pub coef: Coef,
    /// `E[s·loss(...)]`: each row's loss times its weight from the data's `s: weights`
    /// column, (1/m) Σᵢ sᵢ ℓᵢ (not renormalised).
    pub weighted: bool,
    pub span: Span,
}

/// A structured linear operator B in `ω(B w)`, or a group structure.
#[derive(Clone, Debug, PartialEq)]
pub enum Operator {
    /// `diff(n)`: first differences, (n−1)×n.
    Diff(Dim),
    /// `incidence(load(path))`: graph incidence from lines `i j`.
    Incidence(String),
    /// `groups(load(path))`: one group per line.
    Groups(String),
    /// `center(k)`: I − 11ᵀ/k, applied to Wᵀ (the centred trace norm).
    Center(Dim),
}

impl Operator {
    /// The file the operator is read from (`load(path)`), if any.
    pub fn file(&self) -> Option<&str> {
        match self {
            Operator::Incidence(path) | Operator::Groups(path) => Some(path),
            Operator::Diff(_) | Operator::Center(_) => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct RegTerm {
    pub def: RegDef,
    pub coef: Coef,
    /// `B` when the term is `ω(B w)`.
    pub operator: Option<Operator>,
    /// The group structure of `group_l2(G, w)`.
    pub groups: Option<Operator>,
    /// Values of the scalar parameters (α, ε), by the names the stdlib gives them.
    pub scalars: Vec<(String, f64)>,
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct ConstraintTerm {
    pub set: SetDef,
    pub args: Vec<f64>,
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct SolverOption {
    pub name: String,
    /// The value with parameters folded in; may mention `t` (the step counter).
    pub value: Sym,
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct SolverRequest {
    pub name: String,
    pub options: Vec<SolverOption>,
    pub span: Span,
}

/// See [`Model::intercept_l2`].
#[derive(Clone, Debug)]
pub struct InterceptL2 {
    pub coef: f64,
    pub text: String,
    pub span: Span,
}

/// A model whose names, shapes and terms are known to fit together.
#[derive(Clone, Debug)]
pub struct Model {
    pub features: Named,
    pub label: Named,
    pub label_kind: LabelKind,
    /// The data's `s: weights` column, which the loss then reads (`E[s·loss(...)]`).
    pub weights: Option<Named>,
    pub var: Named,
    pub shape: Shape,
    /// `var b: scalar`, added to every margin (`<x, w> + b`); unregularized unless the model
    /// says `μ·l2sq(b)` ([`Model::intercept_l2`]), since a penalty on it makes predictions
    /// depend on where the data's origin sits.
    pub intercept: Option<Named>,
    /// The intercept is `vec[classes(y)]` beside a matrix W: one offset per class's score.
    pub intercept_per_class: bool,
    /// `μ·l2sq(b)`: the intercept penalised like a weight, μ·½b² (LIBLINEAR's `-B 1` when μ is
    /// the λ of `λ·l2sq(w)`); its text and span.
    pub intercept_l2: Option<InterceptL2>,
    pub params: Vec<Param>,
    pub loss: LossTerm,
    pub regs: Vec<RegTerm>,
    pub constraints: Vec<ConstraintTerm>,
    pub solver: Option<SolverRequest>,
    pub objective_span: Span,
}

/// `columns(D) ∈ L2Ball(r)`: every atom in the ℓ2 ball of radius r.
#[derive(Clone, Debug)]
pub struct ColumnBall {
    pub radius: f64,
    pub text: String,
    pub span: Span,
}

/// A dictionary-learning model (Mairal 2013 §4.3): min over D ∈ ℝ^{m×K} of
/// c·E_x[sparse_code(x, D, λ₁, λ₂)] + ϕ(D), sparse_code(x, D, λ₁, λ₂) = min over α of
/// ½‖x − Dα‖² + λ₁‖α‖₁ + (λ₂/2)‖α‖², ϕ acting on each atom (column of D), and the atoms
/// optionally in a ball. No labels: the data's are ignored.
#[derive(Clone, Debug)]
pub struct Dictionary {
    pub features: Named,
    pub var: Named,
    /// K, the atoms: the columns of D.
    pub atoms: usize,
    pub lambda1: f64,
    pub lambda2: f64,
    /// The weight of the expectation.
    pub coef: Coef,
    pub loss_text: String,
    pub loss_span: Span,
    /// ϕ's terms (`l1`, `l2sq`, `group_l2`, `group_linf`), each applied to every atom.
    pub penalties: Vec<RegTerm>,
    pub ball: Option<ColumnBall>,
    pub params: Vec<Param>,
    pub solver: Option<SolverRequest>,
    pub objective_span: Span,
}
