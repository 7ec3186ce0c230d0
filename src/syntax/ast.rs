//! The untyped syntax tree. Every node keeps its span; no meaning is attached here.

use crate::source::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Data(DataDecl),
    Var(VarDecl),
    Param(ParamDecl),
    Minimize(Objective),
    Solve(SolveStmt),
    Loss(FormulaDecl),
    Regularizer(FormulaDecl),
    Set(SetDecl),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// `data x: sparse, y: labels`
#[derive(Clone, Debug, PartialEq)]
pub struct DataDecl {
    pub bindings: Vec<(Ident, Ident)>,
    pub span: Span,
}

/// `var w: vec[dim(x)]`
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    pub name: Ident,
    pub kind: Ident,
    pub dims: Vec<Expr>,
    pub span: Span,
}

/// `param λ = 1e-4`
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDecl {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

/// `minimize TERM + TERM ... st C, C`
#[derive(Clone, Debug, PartialEq)]
pub struct Objective {
    /// The whole sum as written; check splits it into terms.
    pub sum: Expr,
    pub constraints: Vec<Constraint>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    In,
    Ge,
    Le,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    pub lhs: Expr,
    pub relation: Relation,
    pub rhs: Expr,
    pub span: Span,
}

/// `solve with fobos(step = 0.5/sqrt(t), epochs = 10)`
#[derive(Clone, Debug, PartialEq)]
pub struct SolveStmt {
    pub solver: Ident,
    pub options: Vec<(Ident, Expr)>,
    pub span: Span,
}

/// `loss NAME(params) = formula attrs` or `regularizer NAME(params) = formula attrs`.
#[derive(Clone, Debug, PartialEq)]
pub struct FormulaDecl {
    pub name: Ident,
    pub params: Vec<TypedParam>,
    pub body: Expr,
    pub attrs: Vec<Attr>,
    pub span: Span,
}

/// `set NAME(params) attrs`: a constraint set known by its projection.
#[derive(Clone, Debug, PartialEq)]
pub struct SetDecl {
    pub name: Ident,
    pub params: Vec<TypedParam>,
    pub attrs: Vec<Attr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypedParam {
    pub name: Ident,
    pub ty: Option<Ident>,
}

/// `smooth 1/4`, `separable coordinate`, `convex`.
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    pub name: Ident,
    pub value: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Number(f64),
    Str(String),
    Name(String),
    Neg(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Call {
        func: Ident,
        args: Vec<Arg>,
    },
    /// `E[ ... ]`, the empirical mean over the rows of the data.
    Expect(Box<Expr>),
    /// `⟨x, w⟩`, `<x, w>` or `xᵀw`.
    Inner(Ident, Ident),
    /// `B w`: a matrix-valued expression applied to a variable.
    Apply(Box<Expr>, Ident),
    /// `B Wᵀ`: a matrix-valued expression applied to the transpose of a matrix variable.
    ApplyT(Box<Expr>, Ident),
    /// `a[y]`
    Index(Box<Expr>, Box<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
}

impl Expr {
    pub fn name(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Name(n) => Some(n),
            _ => None,
        }
    }
}
