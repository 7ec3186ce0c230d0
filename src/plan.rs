//! Stage 4: the update plan, a tiny imperative IR between the analyser and the back ends.
//!
//! A plan is a program over f64 scalars, dense f64 vectors of length m or d, and the sparse rows
//! of the data. No closures and no trait objects stand in for math: every operation the solver
//! loop performs is a [`Stmt`] or an [`Expr`] node that can be printed, interpreted, and
//! translated to Cranelift. Counters (the step t) are f64 too: exact up to 2⁵³ steps.
//!
//! One call of the plan's `epoch` runs one pass over the rows in the order the driver gives
//! (a seeded permutation); `finish` flushes pending lazy work so the weights are exact.

pub mod dump;
pub mod lower;
pub mod verify;

use crate::symbolic::{Cmp, Func};

/// A scalar slot: a parameter (constant for the run), state, or a temporary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScalarId(pub usize);

/// A dense vector: an input (the labels) or state (the weights, lazy stamps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VecId(pub usize);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarRole {
    /// Known before the run starts; the JIT folds it.
    Param,
    /// Persists across steps and epochs.
    State,
    /// A temporary of one step.
    Local,
}

/// How a parameter gets its value: from the model, or from the data when the plan is bound.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamInit {
    Value(f64),
    /// η₀ = 1/(scale·max‖xᵢ‖²): the default step, the inverse curvature of the worst example.
    InverseMaxRowNormSq {
        scale: f64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ScalarDecl {
    pub name: String,
    pub role: ScalarRole,
    pub init: ParamInit,
    /// Why it exists, printed as a comment in the dump.
    pub note: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    /// One entry per example.
    Rows,
    /// One entry per feature.
    Features,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VecRole {
    /// The labels y (read only).
    Labels,
    /// The weights the solver returns.
    Weights,
    /// Other solver state.
    State,
}

#[derive(Clone, Debug, PartialEq)]
pub struct VecDecl {
    pub name: String,
    pub len: Len,
    pub role: VecRole,
    pub init: f64,
}

/// Which loop variable indexes a vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index {
    /// `i`, the current example (a row of X).
    Row,
    /// `j`, the current feature (inside `row(X, i)` or `0..d`).
    Feature,
}

/// Operations beyond arithmetic. Each has one numeric definition ([`Intrinsic::apply`]) that
/// the interpreter calls and the JIT reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intrinsic {
    Func(Func),
    /// soft(v, τ) = sign(v)·max(|v| − τ, 0)
    Soft,
    /// clamp(v, lo, hi)
    Clamp,
}

impl Intrinsic {
    pub fn name(self) -> &'static str {
        match self {
            Intrinsic::Func(f) => f.name(),
            Intrinsic::Soft => "soft",
            Intrinsic::Clamp => "clamp",
        }
    }

    pub fn arity(self) -> usize {
        match self {
            Intrinsic::Func(f) => f.arity(),
            Intrinsic::Soft => 2,
            Intrinsic::Clamp => 3,
        }
    }

    pub fn apply(self, args: &[f64]) -> f64 {
        match self {
            Intrinsic::Func(f) => f.apply(args[0], args.get(1).copied().unwrap_or(0.0)),
            Intrinsic::Soft => soft(args[0], args[1]),
            Intrinsic::Clamp => clamp(args[0], args[1], args[2]),
        }
    }
}

/// sign(v)·max(|v| − τ, 0), written so that τ = 0 returns v exactly.
pub fn soft(v: f64, tau: f64) -> f64 {
    if v > tau {
        v - tau
    } else if v < -tau {
        v + tau
    } else {
        0.0
    }
}

/// min(max(v, lo), hi); NaN stays NaN so a guard can see it.
pub fn clamp(v: f64, lo: f64, hi: f64) -> f64 {
    if v < lo {
        lo
    } else if v > hi {
        hi
    } else {
        v
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Const(f64),
    Scalar(ScalarId),
    /// `vec[i]` or `vec[j]`.
    Load(VecId, Index),
    /// `v`, the value of the current non-zero in `row(X, i)`.
    Value,
    Neg(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Call(Intrinsic, Vec<Expr>),
    /// `if l ⋈ r then a else b`
    Select(Cmp, Box<Expr>, Box<Expr>, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `s = e`
    Set(ScalarId, Expr),
    /// `vec[idx] = e`
    Store(VecId, Index, Expr),
    /// `for i in perm(m)`: the rows in the order the driver chose for this epoch.
    ForRows(Vec<Stmt>),
    /// `for (j, v) in row(X, i)`: the non-zeros of the current row.
    ForRowNonZeros(Vec<Stmt>),
    /// `for j in 0..d`
    ForFeatures(Vec<Stmt>),
    /// `if l ⋈ r: body`
    If(Cmp, Expr, Expr, Vec<Stmt>),
    /// Stops the run (exit 3) if the value is NaN or ±inf; `what` names it in the message.
    Guard(Expr, String),
}

/// Where the plan came from, for the header of the dump and the report.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanInfo {
    pub solver: &'static str,
    pub summary: String,
    pub lazy: bool,
    /// Labels are ±1 and a prediction is the sign of the margin.
    pub classification: bool,
}

/// How the report computes F(w) = c·(1/m)·Σᵢ ℓ(yᵢ, ⟨xᵢ, w⟩) + Σⱼ penalty(wⱼ), the same code
/// path whatever back end ran the plan (ALGORITHMS.md's normalisation).
#[derive(Clone, Debug, PartialEq)]
pub struct Objective {
    /// ℓ(y[i], a) with the margin in the scalar `margin`.
    pub loss: Expr,
    pub margin: ScalarId,
    pub loss_weight: f64,
    /// Σ of the coordinate-wise regularizers at w[j] (constraints hold by construction).
    pub penalty: Expr,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub info: PlanInfo,
    pub scalars: Vec<ScalarDecl>,
    pub vectors: Vec<VecDecl>,
    /// One pass over the data.
    pub epoch: Vec<Stmt>,
    /// Flush of pending lazy work; leaves the weights exact.
    pub finish: Vec<Stmt>,
    /// The step counter, read by the driver to say which step diverged.
    pub step_counter: Option<ScalarId>,
    pub objective: Objective,
}

impl Plan {
    pub fn scalar(&self, id: ScalarId) -> &ScalarDecl {
        &self.scalars[id.0]
    }
    pub fn vector(&self, id: VecId) -> &VecDecl {
        &self.vectors[id.0]
    }
    pub fn weights(&self) -> Option<VecId> {
        self.vectors.iter().position(|v| v.role == VecRole::Weights).map(VecId)
    }
    pub fn labels(&self) -> Option<VecId> {
        self.vectors.iter().position(|v| v.role == VecRole::Labels).map(VecId)
    }
}

/// Convenience constructors, so lowering code reads like the algorithm.
pub mod build {
    use super::*;

    pub fn k(v: f64) -> Expr {
        Expr::Const(v)
    }
    pub fn s(id: ScalarId) -> Expr {
        Expr::Scalar(id)
    }
    pub fn at(v: VecId, i: Index) -> Expr {
        Expr::Load(v, i)
    }
    pub fn add(a: Expr, b: Expr) -> Expr {
        Expr::Bin(BinOp::Add, Box::new(a), Box::new(b))
    }
    pub fn sub(a: Expr, b: Expr) -> Expr {
        Expr::Bin(BinOp::Sub, Box::new(a), Box::new(b))
    }
    pub fn mul(a: Expr, b: Expr) -> Expr {
        Expr::Bin(BinOp::Mul, Box::new(a), Box::new(b))
    }
    pub fn div(a: Expr, b: Expr) -> Expr {
        Expr::Bin(BinOp::Div, Box::new(a), Box::new(b))
    }
    pub fn call(f: Func, args: Vec<Expr>) -> Expr {
        Expr::Call(Intrinsic::Func(f), args)
    }
    pub fn soft(v: Expr, tau: Expr) -> Expr {
        Expr::Call(Intrinsic::Soft, vec![v, tau])
    }
    pub fn clamp(v: Expr, lo: f64, hi: f64) -> Expr {
        Expr::Call(Intrinsic::Clamp, vec![v, k(lo), k(hi)])
    }
}
