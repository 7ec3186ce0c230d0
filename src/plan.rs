//! Stage 4: the update plan, a tiny imperative IR between the analyser and the back ends.
//!
//! A plan is a program over f64 scalars, dense f64 buffers — vectors `vec[n]` and row-major
//! matrices `mat[n, c]` — and the sparse rows and columns of the data. No closures and no trait
//! objects stand in for math: every operation the solver loop performs is a [`Stmt`] or an
//! [`Expr`] node that can be printed, interpreted, and translated to Cranelift; vector kernels
//! that are not per coordinate are `call`s into [`crate::runtime`] on a buffer or a row of one.
//! Counters (the step t) are f64 too: exact up to 2⁵³ steps.
//!
//! Dimensions are symbols bound with the data ([`Dims`]): m (rows), d (features), k (classes).
//! Every loop names its range — `perm(m)`, `perm(d)` (a fresh seeded permutation per epoch,
//! from the driver), `0..m`, `0..d`, `0..k`, `row(X, i)`, `col(Xc, j)` — and binds the index of
//! that dimension (i for m, j for d, c for k), so the one verifier rule, "every axis of a buffer
//! of dimension D is indexed only inside a loop over D", keeps native code in bounds.
//!
//! Phases: `init` runs once at the start of a run (and of a warm start: it rebuilds derived
//! state such as z = Xw from the weights), `epoch` is one pass or one batch iteration, `finish`
//! flushes pending lazy work so the weights are exact; the driver checks the certificate
//! ([`Certificate`], docs/algorithms.md §10) between epochs and the report evaluates [`Objective`].

mod calls;
mod distribute;
pub mod dump;
mod facts;
pub mod lower;
mod objective;
pub mod verify;
pub mod walk;

pub use calls::*;
pub use objective::*;

pub use crate::runtime::{Routine, VectorTerm};
use crate::symbolic::{Cmp, Func};
pub use distribute::distribute;
pub use facts::{bound_scalars, needs_gram, needs_row_norms, DataFacts};

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
    /// L = scale·max‖xᵢ‖²: the curvature bound of every example's loss (SMM's L).
    MaxRowNormSq {
        scale: f64,
    },
    /// A constant that `optc run` tunes on a sample of the rows (one pass per candidate of
    /// `grid`, the best sample objective wins); `default` where it is not tuned.
    Tuned {
        default: f64,
        grid: &'static [f64],
    },
    /// η = 1/(scale·max‖xᵢ‖): a step in the units of w, for a solver whose moves do not scale
    /// with the gradient (AdaGrad's g/‖g_{1:t}‖).
    InverseMaxRowNorm {
        scale: f64,
    },
    /// scale/m: per-example weights of a mean.
    PerRow {
        scale: f64,
    },
    /// scale·Σᵢ ωᵢ/m (the rows' weights; scale without them): an intercept's curvature bound.
    MeanWeight {
        scale: f64,
    },
    /// scale·max ωᵢ (scale without weights): the curvature an intercept adds to one row's.
    MaxWeight {
        scale: f64,
    },
    /// L = scale·λ_max(XᵀX)/m, by power iteration when the data is bound: the Lipschitz
    /// constant of the mean loss's gradient for a loss of curvature scale.
    GramNorm {
        scale: f64,
    },
    /// μ = 1/λ_max(XXᵀ) = 1/(m·λ_max(XᵀX)/m): the step of the Picard iteration on an operator
    /// B = diag(y)·X, whose BBᵀ has the same largest eigenvalue as XXᵀ.
    DualStep,
    /// p = max(2, 2·ln d): SMIDAS's p-norm exponent, at which ‖x‖_p ≤ √e·‖x‖_∞ (its regret then
    /// grows with log d, not d); below d = e it would drop under 2, where the link stops being
    /// a gradient step's (p = 2 is plain SGD).
    NormExponent,
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
    /// m: one entry per example.
    Rows,
    /// d: one entry per feature.
    Features,
    /// k: one entry per class (multiclass labels are mapped to 0..k).
    Classes,
    /// p: one entry per row of the operator B of a composite ω∘B (the Picard dual).
    OpRows,
}

/// The sizes the symbolic dimensions are bound to when the data is bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Dims {
    pub rows: usize,
    pub features: usize,
    pub classes: usize,
    pub op_rows: usize,
}

impl Dims {
    pub fn of(&self, len: Len) -> usize {
        match len {
            Len::Rows => self.rows,
            Len::Features => self.features,
            Len::Classes => self.classes,
            Len::OpRows => self.op_rows,
        }
    }

    /// The number of entries of a buffer: n for `vec[n]`, n·c for `mat[n, c]`.
    pub fn size(&self, decl: &VecDecl) -> usize {
        self.of(decl.len).saturating_mul(decl.cols.map_or(1, |c| self.of(c)))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VecRole {
    /// The labels y (read only).
    Labels,
    /// The rows' weights ωᵢ of `E[s·loss(...)]` (read only, bound with the data like y): each
    /// row's loss, its derivatives and its dual term carry ωᵢ.
    RowWeights,
    /// The weights the solver returns.
    Weights,
    /// Other solver state.
    State,
}

impl VecRole {
    /// Read from the data, never written by a plan: the labels and the rows' weights.
    pub fn is_input(self) -> bool {
        matches!(self, VecRole::Labels | VecRole::RowWeights)
    }
}

/// A dense buffer: a vector `vec[len]`, or a matrix `mat[len, cols]` stored row-major (row r
/// is the slice r·cols..(r+1)·cols, so a row of W is contiguous for row-wise proxes).
#[derive(Clone, Debug, PartialEq)]
pub struct VecDecl {
    pub name: String,
    pub len: Len,
    /// Rank 2 when set: the dimension of each row.
    pub cols: Option<Len>,
    pub role: VecRole,
    pub init: f64,
}

/// Which loop variable indexes a vector: the index of a dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Index {
    /// `i` ∈ 0..m, the current example (a row of X).
    Row,
    /// `j` ∈ 0..d, the current feature.
    Feature,
    /// `c` ∈ 0..k, the current class.
    Class,
    /// `r` ∈ 0..p, a row of the operator B.
    OpRow,
    /// `q` ∈ 0..m, the position of the current example in this epoch's order, where a
    /// stochastic solver keeps per-step history (SMM's prefix sums). A loop over the rows
    /// (`perm(m)`, `0..m`) binds it together with i; a column's rows do not.
    Step,
}

impl Index {
    /// The dimension this index ranges over.
    pub fn len(self) -> Len {
        match self {
            Index::Row => Len::Rows,
            Index::Feature => Len::Features,
            Index::Class => Len::Classes,
            Index::OpRow => Len::OpRows,
            Index::Step => Len::Rows,
        }
    }

    /// Its name in the dump.
    pub fn name(self) -> &'static str {
        match self {
            Index::Row => "i",
            Index::Feature => "j",
            Index::Class => "c",
            Index::OpRow => "r",
            Index::Step => "q",
        }
    }
}

impl Len {
    /// The index a loop over this dimension binds.
    pub fn index(self) -> Index {
        match self {
            Len::Rows => Index::Row,
            Len::Features => Index::Feature,
            Len::Classes => Index::Class,
            Len::OpRows => Index::OpRow,
        }
    }

    /// Its name in the dump.
    pub fn name(self) -> &'static str {
        match self {
            Len::Rows => "m",
            Len::Features => "d",
            Len::Classes => "k",
            Len::OpRows => "p",
        }
    }
}

/// What a `call` applies its routine to: a whole buffer, or one row of a matrix
/// (`W[j, 0..k]`, the row of the index in scope). Either way the routine gets a length the
/// buffer's own shape fixes, so a call is in bounds by construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    pub buf: VecId,
    pub row: Option<Index>,
}

/// What a loop ranges over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Range {
    /// `perm(m)` / `perm(d)`: this epoch's seeded permutation, from the driver.
    Perm(Len),
    /// `0..m` / `0..d`, in order.
    Upto(Len),
    /// `(j, v) in row(X, i)`: the non-zeros of row i; binds j and v.
    RowNonZeros,
    /// `(i, v) in col(Xc, j)`: the non-zeros of column j (CSC, built once); binds i and v.
    ColNonZeros,
}

impl Range {
    /// The index the loop binds.
    pub fn binds(self) -> Index {
        match self {
            Range::Perm(l) | Range::Upto(l) => l.index(),
            Range::RowNonZeros => Index::Feature,
            Range::ColNonZeros => Index::Row,
        }
    }

    /// The index that must already be in scope (the row or column being walked).
    pub fn needs(self) -> Option<Index> {
        match self {
            Range::RowNonZeros => Some(Index::Row),
            Range::ColNonZeros => Some(Index::Feature),
            _ => None,
        }
    }
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

pub use crate::runtime::soft;

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
    /// `mat[r, c]`: an entry of a rank-2 buffer.
    LoadAt(VecId, Index, Index),
    /// The current value of a loop index, as a number (compared with a class label).
    Idx(Index),
    /// `v`, the value of the current non-zero in `row(X, i)`.
    Value,
    Neg(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Call(Intrinsic, Vec<Expr>),
    /// `if l ⋈ r then a else b`
    Select(Cmp, Box<Expr>, Box<Expr>, Box<Expr>, Box<Expr>),
    /// SMM's ℓ1 catch-up of a coordinate over the steps it missed (`runtime::smm`).
    CatchUp(Box<CatchUp>),
}

/// The operands of [`Expr::CatchUp`]: `value` after the steps [from, to) of the epoch, each
/// z ← (1 − w)·z + w·soft(z, τ), by a binary search on the prefix sums of w (`sums`) and the
/// prefix sums of log(1 − w) (`logs`), both vec\[m] indexed by position in the epoch;
/// `sums_to`, `logs_to` are their values at `to`. Positions are numbers the runtime clamps
/// into the buffers.
#[derive(Clone, Debug, PartialEq)]
pub struct CatchUp {
    pub value: Expr,
    pub from: Expr,
    pub to: Expr,
    pub sums: VecId,
    pub logs: VecId,
    pub sums_to: Expr,
    pub logs_to: Expr,
    pub tau: Expr,
}

impl CatchUp {
    /// The scalar operands in the order of the runtime's signature.
    pub fn operands(&self) -> [&Expr; 6] {
        [&self.value, &self.from, &self.to, &self.sums_to, &self.logs_to, &self.tau]
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `s = e`
    Set(ScalarId, Expr),
    /// `vec[idx] = e`
    Store(VecId, Index, Expr),
    /// `mat[r, c] = e`
    StoreAt(VecId, Index, Index, Expr),
    /// `for INDEX in RANGE: body`
    For(Range, Vec<Stmt>),
    /// `if l ⋈ r: body`
    If(Cmp, Expr, Expr, Vec<Stmt>),
    /// `repeat at most N until l ⋈ r: body`: the body runs, then the test; at most N times.
    /// A line search or an inner fixed point, bounded so native code always returns.
    Repeat(u32, Cmp, Expr, Expr, Vec<Stmt>),
    /// Stops the run (exit 3) if the value is NaN or ±inf; `what` names it in the message.
    Guard(Expr, String),
    /// `call routine(slice, arg)`: a vector kernel of the runtime library applied in place to
    /// a whole buffer or one row of a matrix (a prox that is not per coordinate).
    Call(Routine, Slice, Expr),
    /// `picard(target, dual, γ)`: target ← prox_{γ·ω∘B}(target) by the runtime's Picard fixed
    /// point, B the operator bound with the data, the dual (a vec\[p]) warm-started across calls.
    Picard(PicardCall),
    /// `group_shrink(target, γ)`: target_g ← max(0, 1 − γ/‖target_g‖)·target_g for each group g
    /// of the operator bound with the data (its blocks of rows, each row selecting one
    /// feature); features in no group are left as they are. The exact prox of γ·Σ_g‖·_g‖₂
    /// when the groups are disjoint, which binding checks. The target is a vec\[d].
    GroupShrink(VecId, Expr),
    /// One epoch of SMM on a dictionary ([`crate::runtime::dictionary`]): this epoch's row
    /// order in mini-batches, each coded, averaged into the surrogate and followed by the prox
    /// of ϕ on every atom.
    Dictionary(DictionaryCall),
    /// `newton(step, …)`: tron's Newton direction by one dense factor ([`NewtonCall`]), where the
    /// features are few enough for it to pay; `solved` says whether it was taken.
    Newton(NewtonCall),
    /// `alm(w, b, α, σ, …)`: an epoch of the hinge's augmented Lagrangian method ([`AlmCall`]),
    /// its Newton steps on a dense Hessian of the features.
    Alm(AlmCall),
    /// `ranks: …`: a step of a plan whose rows are split across ranks ([`distribute`]).
    Reduce(Reduction),
}

/// A row loop's sums on split rows: before the loop every rank but the first clears them (so
/// what they held, λ·w say, is counted once), after it each becomes its total over the ranks.
/// Alone both are no-ops: a distributed plan run by one process is the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Reduction {
    /// Its place among the plan's reductions (init, epoch, finish in order): how compiled code
    /// names it to the runtime.
    pub id: usize,
    pub step: ReduceStep,
    pub scalars: Vec<ScalarId>,
    /// Never per-row buffers: those are each rank's own.
    pub vectors: Vec<VecId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceStep {
    /// Before the loop, on every rank but rank 0: each sum set to 0.
    Clear,
    /// After the loop: each sum replaced by its total over the ranks (an AllReduce).
    Sum,
}

/// Where the plan came from, for the header of the dump and the report.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanInfo {
    pub solver: crate::solvers::SolverKind,
    pub summary: String,
    pub lazy: bool,
    /// Labels are ±1 and a prediction is the sign of the margin.
    pub classification: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub info: PlanInfo,
    pub scalars: Vec<ScalarDecl>,
    pub vectors: Vec<VecDecl>,
    /// Once per run, after the state is set (fresh or warm): derived state from the weights.
    pub init: Vec<Stmt>,
    /// One pass over the data, or one batch iteration.
    pub epoch: Vec<Stmt>,
    /// Flush of pending lazy work; leaves the weights exact.
    pub finish: Vec<Stmt>,
    /// The step counter, read by the driver to say which step diverged.
    pub step_counter: Option<ScalarId>,
    /// When a solver whose epochs leave rows out (dual coordinate descent's shrinking) is worth
    /// checking: a check costs about two passes over all the data, so at a check an epoch, the
    /// checks of epochs that visit a tenth of the rows would cost twenty times the solve.
    pub cadence: Option<Cadence>,
    /// The rows the next epoch visits, when an epoch leaves rows out (shrinking): the driver
    /// draws its permutation among them alone, so an epoch over the few rows shrinking keeps
    /// costs O(those rows), not a shuffle of all m. The epoch must still skip the others itself
    /// (the order is a speed-up, not the meaning: a back end given every row computes the same).
    pub active_rows: Option<ActiveRows>,
    /// A state scalar the epoch sets to the relative duality gap it expects at the iterate it
    /// ends at, when it knows it for free (tron: ‖∇F‖²/(2λ|F|) is exactly the plain gap of
    /// ½‖·‖² models, and after a full Newton step ∇F is about minus CG's last residual): the
    /// driver checks only once it is within [`ESTIMATE_SLACK`] of the tolerance, or every
    /// [`ESTIMATE_EVERY`] epochs. With no penalty (tron at λ = 0) it is ‖∇F‖/‖∇F(0)‖ where the
    /// epoch started, which [`Uncertified::Gradient`] stops on. A plan with a [`Cadence`] too (logistic `dcd`, whose estimate
    /// comes from its dual's rate of fall) is checked when either says so.
    pub estimate: Option<ScalarId>,
    /// A state scalar the driver sets to the run's `--tol` before the first epoch (∞ without
    /// one), for a solver that shapes its last steps to the certificate: tron solves a Newton
    /// system that will end the run to the accuracy the gap needs (see `lower/tron.rs`).
    pub tolerance: Option<ScalarId>,
    pub objective: Objective,
    /// None where ℓ* or R* has no closed form here, or F is not convex: `uncertified` then
    /// says what ends the run.
    pub certificate: Option<Certificate>,
    pub uncertified: Uncertified,
}

/// See [`Plan::estimate`]. The loss's change of curvature along a step makes the gap found
/// above the one predicted more often than below, so a little slack is enough: a check costs
/// about two passes, a missed stop a whole epoch.
pub const ESTIMATE_SLACK: f64 = 2.0;
/// See [`Plan::estimate`].
pub const ESTIMATE_EVERY: usize = 10;

/// See [`Plan::active_rows`]. Rows only leave during an epoch, and come back all at once, so
/// the driver keeps the rows of the last order that are still in (O(that order)), or takes
/// every row when `returned` says they came back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActiveRows {
    /// A vec\[m]: the rows with a positive entry are in.
    pub flags: VecId,
    /// A state scalar the epoch sets to 1 when every row came back, else 0.
    pub returned: ScalarId,
}

/// When the driver checks the certificate of a plan that says ([`Plan::cadence`]): after an
/// epoch that set `ready` to 1 (the solver's own convergence test passed: the point LIBLINEAR
/// would stop at), and otherwise once the rows visited since the last check (`visits`, a running
/// count) add up to [`Cadence::PASSES`] passes over the data. Both are state the epoch writes.
/// A plan that also has an estimate ([`Plan::estimate`]) is checked when it is near `--tol` too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cadence {
    pub visits: ScalarId,
    pub ready: ScalarId,
}

impl Cadence {
    /// Passes' worth of visits between two checks when the solver's test does not pass.
    pub const PASSES: usize = 8;
}

impl Plan {
    /// Whether a run's checks may refine the certificate's dual point by Newton steps on a copy
    /// of w (`exec::certificate::refine`): a twice-differentiable loss (logistic, squared),
    /// per-coordinate terms only, and a dual point made from the margins rather than a dual
    /// method's own iterate.
    pub fn refines_certificate(&self) -> bool {
        // Softmax's steps take every entry of W (`certificate/softmax.rs`), for ℓ1 (proxgrad's
        // models). With ½‖·‖² alone, tron's own Newton steps are the solver: its next iteration
        // costs a few passes over X, where the refinement's exact steps factor a dense Hessian of
        // the support (ridge on a planted 20,000 × 2,000 set: 145 ms of a 160 ms run).
        let newton =
            |c: &Certificate| c.conjugate.has_curvature() || (c.conjugate == LossConjugate::Softmax && c.l1 > 0.0);
        self.certificate.is_some_and(|c| newton(&c) && c.vector.is_none() && c.groups.is_none())
            && !self.objective.dual_only
            && self.info.solver != crate::solvers::SolverKind::Tron
    }

    /// A plan with nothing in it yet: no buffers or statements, an objective of 0 with the
    /// loss's weight 1, no certificate. Lowering fills in what its solver needs.
    pub fn empty(info: PlanInfo) -> Plan {
        Plan {
            info,
            scalars: vec![],
            vectors: vec![],
            init: vec![],
            epoch: vec![],
            finish: vec![],
            step_counter: None,
            cadence: None,
            active_rows: None,
            estimate: None,
            tolerance: None,
            objective: Objective {
                loss: Expr::Const(0.0),
                dloss: Expr::Const(0.0),
                margin: ScalarId(0),
                intercept: None,
                intercept_l2: 0.0,
                class_intercept: None,
                loss_weight: 1.0,
                penalty: Expr::Const(0.0),
                vector: None,
                composite: None,
                dual: None,
                dual_only: false,
                softmax: false,
                dictionary: None,
            },
            certificate: None,
            uncertified: Uncertified::Progress,
        }
    }

    pub fn scalar(&self, id: ScalarId) -> &ScalarDecl {
        &self.scalars[id.0]
    }
    pub fn vector(&self, id: VecId) -> &VecDecl {
        &self.vectors[id.0]
    }
    pub fn weights(&self) -> Option<VecId> {
        self.vectors.iter().position(|v| v.role == VecRole::Weights).map(VecId)
    }
    /// The operator a composite term needs bound with the data.
    pub fn operator(&self) -> Option<&OperatorSpec> {
        self.objective.composite.as_ref().map(|c| &c.operator)
    }
    pub fn labels(&self) -> Option<VecId> {
        self.vectors.iter().position(|v| v.role == VecRole::Labels).map(VecId)
    }
    /// The rows' weights, when the model weights its loss (`E[s·loss(...)]`).
    pub fn row_weights(&self) -> Option<VecId> {
        self.vectors.iter().position(|v| v.role == VecRole::RowWeights).map(VecId)
    }
    /// Whether any phase walks columns (then the data is bound with a CSC copy).
    pub fn reads_columns(&self) -> bool {
        self.phases().any(|body| walk::any_loop(body, |r| r == Range::ColNonZeros))
    }
    /// Whether any phase reads the operator B (the Picard prox, the group shrink): then the
    /// data is bound with one.
    pub fn uses_operator(&self) -> bool {
        let mut found = false;
        self.phases()
            .for_each(|body| walk::stmts(body, &mut |s| found |= matches!(s, Stmt::Picard(_) | Stmt::GroupShrink(..))));
        found
    }
    /// Whether an epoch needs the driver's permutation of the rows / of the columns.
    pub fn permutes(&self, len: Len) -> bool {
        let mut learns_dictionary = false;
        walk::stmts(&self.epoch, &mut |s| learns_dictionary |= matches!(s, Stmt::Dictionary(_)));
        // A dictionary epoch visits the rows in the seeded order the driver draws.
        walk::any_loop(&self.epoch, |r| r == Range::Perm(len)) || (learns_dictionary && len == Len::Rows)
    }
    /// The reductions across ranks ([`distribute`]), in the order of their ids.
    pub fn reductions(&self) -> Vec<&Reduction> {
        let mut out = vec![];
        self.phases().for_each(|body| {
            walk::stmts(body, &mut |s| {
                if let Stmt::Reduce(r) = s {
                    out.push(r);
                }
            })
        });
        out
    }
    /// The statement lists that run: init, epoch, finish.
    pub fn phases(&self) -> impl Iterator<Item = &[Stmt]> {
        [self.init.as_slice(), self.epoch.as_slice(), self.finish.as_slice()].into_iter()
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
    pub fn each(range: Range, body: Vec<Stmt>) -> Stmt {
        Stmt::For(range, body)
    }
    /// `if abs(δ) > 0: body` — work done only when a step moved.
    pub fn if_moved(delta: ScalarId, body: Vec<Stmt>) -> Stmt {
        Stmt::If(crate::symbolic::Cmp::Gt, call(Func::Abs, vec![s(delta)]), k(0.0), body)
    }
    /// `for (i, v) in col(Xc, j): r[i] = r[i] + δ·v` — a rank-one update of a row vector.
    pub fn col_axpy(r: VecId, delta: ScalarId) -> Stmt {
        Stmt::For(
            Range::ColNonZeros,
            vec![Stmt::Store(r, Index::Row, add(at(r, Index::Row), mul(s(delta), Expr::Value)))],
        )
    }
}
