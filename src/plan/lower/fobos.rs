//! FOBOS (docs/algorithms.md §4): one stochastic gradient step per row, then the prox.
//!
//! The lazy plan is exactly the eager algorithm reordered: a coordinate's proxes from the steps
//! that did not touch it are composed into one closed-form catch-up, applied just before the
//! coordinate is next read (and for every coordinate in `finish`). The composition of k proxes
//!   v ↦ soft(v, τₛ·l1)/(1 + τₛ·l2)
//! is v ↦ soft(A·v, B) with A = Πₛ aₛ, B = Σₖ bₖ·Π_{s>k} aₛ, aₛ = 1/(1 + τₛ·l2), bₛ = τₛ·l1·aₛ,
//! and a box that holds v stays satisfied after clamping once (the maps move toward 0 and the
//! bound reached is absorbing). Running sums keep A and B O(1) per read:
//!   l2 = 0:  B = Λ − Λlast[j] with Λ = Σ τₛ·l1                         (ℓ1: additive)
//!   l1 = 0:  A = exp(Φlast[j] − Φ) with Φ = Σ log(1 + τₛ·l2)             (½‖·‖²: multiplicative)
//!   both:    A = exp(Llast[j] − L), B = exp(−L)·(Q − Qlast[j]),
//!            L = Σ log(1 + τₛ·l2), Q = Σ bₛ·exp(Lₛ)                       (elastic net)
//! In the last case L is reset (after a full flush) before exp(L) can overflow. ½‖·‖² without a
//! box uses a global scale instead (w = s·u), which needs no per-coordinate stamp at all.
//!
//! Truncated gradient (Langford, Li & Zhang 2009) is this plan for ℓ1 alone with two changes:
//! the shrink (their gravity, g = λ) is K·η·λ on every K-th step and 0 on the others, and it
//! spares the weights beyond a threshold θ: T(v, α) = v if |v| > θ, else soft(v, α). The lazy
//! catch-up stays exact: between two reads of a coordinate nothing but T moves it, T never
//! raises |v|, so a weight beyond θ stays untouched and one within θ stays within it, and
//! T(T(v, α), β) = T(v, α + β) — the running sum Λ of FOBOS's ℓ1 plan, advanced by the
//! truncation steps only. With K = 1 and θ = ∞ it is FOBOS's ℓ1 step exactly.

use super::super::build::*;
use super::super::{Expr, Index, Len, ParamInit, Plan, Range, ScalarId, ScalarRole, Stmt, VecId, VecRole};
use super::{formula, Builder, LowerOptions};
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::runtime::VectorTerm;
use crate::solvers::SolverKind;
use crate::symbolic::Func;

/// The elastic-net renormalisation threshold for L (exp(300) is far from overflow).
const RESET_L: f64 = 300.0;

/// The ½‖·‖² scale is folded into the weights below this (far above subnormals).
const RESET_SCALE: f64 = 1e-150;

mod matrix;

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx, opts: LowerOptions) -> Plan {
    Fobos { model, st, prox, opts, b: Builder::new(model, SolverKind::Fobos, opts.lazy, prox, None), truncation: None }
        .lower()
}

/// Truncated gradient (see the module docs); the analysis has checked that R is ℓ1 alone.
pub(super) fn lower_truncated(model: &Model, st: &Structure, prox: CoordinateProx, opts: LowerOptions) -> Plan {
    let mut b = Builder::new(model, SolverKind::Truncated, opts.lazy, prox, None);
    let every = st.settings.every.unwrap_or(1);
    let theta = st.settings.theta;
    b.plan.info.summary.push_str(&format!(
        "; truncated gradient: gravity {}, {}",
        if every == 1 { "λ·η every step".to_string() } else { format!("λ·K·η every K = {every} steps") },
        match theta {
            Some(t) => format!(
                "to the weights with |wⱼ| ≤ θ = {} (the others keep their value: F is not minimised exactly)",
                crate::symbolic::fmt_num(t)
            ),
            None => "to every weight (θ = ∞: the ℓ1 prox)".into(),
        }
    ));
    let theta = theta.map(|t| b.param("θ", t, "weights with |wⱼ| > θ are not truncated"));
    let counter = (every > 1).then(|| b.state("κ", "steps since the last truncation"));
    Fobos { model, st, prox, opts, b, truncation: Some(Truncation { every, theta, counter }) }.lower()
}

/// FOBOS on a multiclass W (see `fobos/matrix.rs`). Lazy per row unless ℓ1 per entry and a
/// row norm are both present: their proxes do not compose in one closed form.
pub(super) fn lower_multiclass(
    model: &Model,
    st: &Structure,
    prox: CoordinateProx,
    rows: Option<VectorTerm>,
    opts: LowerOptions,
) -> Plan {
    let lazy = opts.lazy && !(prox.l1 > 0.0 && rows.is_some());
    Fobos { model, st, prox, opts, b: Builder::new(model, SolverKind::Fobos, lazy, prox, rows), truncation: None }
        .lower_matrix(rows)
}

struct Fobos<'a> {
    model: &'a Model,
    st: &'a Structure,
    prox: CoordinateProx,
    opts: LowerOptions,
    b: Builder,
    /// Set for truncated gradient.
    truncation: Option<Truncation>,
}

/// Truncated gradient's shrink: every K steps, and only within θ of 0 (None: everywhere).
#[derive(Clone, Copy)]
struct Truncation {
    every: usize,
    theta: Option<ScalarId>,
    /// Steps since the last truncation, when K > 1.
    counter: Option<ScalarId>,
}

impl Fobos<'_> {
    fn lower(mut self) -> Plan {
        let p = self.prox;
        // A box that excludes 0 starts the weights at its nearest point, so every stored
        // weight is feasible (the lazy catch-up relies on it).
        let (y, w) = self.b.labels_and_weights();

        // Parameters, folded by the JIT.
        let l1 = (p.l1 > 0.0).then(|| self.b.param("l1", p.l1, "weight of Σ|wⱼ| in the prox"));
        let l2 = (p.l2 > 0.0).then(|| self.b.param("l2", p.l2, "weight of ½Σwⱼ² in the prox"));
        let eta0 = self.eta0();

        // State.
        let t = self.b.state("t", "step counter");
        self.b.plan.step_counter = Some(t);
        let stamps = self.stamps(self.opts.lazy, l1, l2);
        let eta = self.b.local("η");
        // This step's prox weights, computed once per row rather than once per non-zero.
        let tau1 = l1.map(|_| self.b.local("τ1"));
        let tau2 = l2.map(|_| self.b.local("τ2"));
        let a = self.b.local("a");
        let g = self.b.local("g");
        let eta_g = self.b.local("ηg");

        // ---- one epoch
        let mut step = vec![Stmt::Set(t, add(s(t), k(1.0)))];
        step.push(Stmt::Set(eta, self.schedule(eta0, t)));
        for (tau, weight) in [(tau1, l1), (tau2, l2)] {
            if let (Some(tau), Some(weight)) = (tau, weight) {
                step.push(Stmt::Set(tau, mul(s(eta), s(weight))));
            }
        }
        if let (Some(Truncation { every, counter: Some(kappa), .. }), Some(tau1)) = (self.truncation, tau1) {
            // The gravity of K steps at once on every K-th step, none on the others.
            let due = |then: Expr, otherwise: Expr| {
                Expr::Select(
                    crate::symbolic::Cmp::Gt,
                    Box::new(s(kappa)),
                    Box::new(k(every as f64 - 0.5)),
                    Box::new(then),
                    Box::new(otherwise),
                )
            };
            step.push(Stmt::Set(kappa, add(s(kappa), k(1.0))));
            step.push(Stmt::Set(tau1, due(mul(k(every as f64), s(tau1)), k(0.0))));
            step.push(Stmt::Set(kappa, due(k(0.0), s(kappa))));
        }
        step.push(Stmt::Set(a, k(0.0)));
        // The margin a = ⟨xᵢ, w⟩, catching each coordinate up first.
        let mut read = vec![];
        if let Some(catch_up) = self.catch_up(&stamps, w) {
            read.push(Stmt::Store(w, Index::Feature, catch_up));
        }
        read.push(Stmt::Set(a, add(s(a), mul(Expr::Value, at(w, Index::Feature)))));
        step.push(each(Range::RowNonZeros, read));
        if let Stamps::Scaled { scale } = stamps {
            step.push(Stmt::Set(a, mul(s(scale), s(a)))); // ⟨x, s·u⟩
        }
        if let Some(intercept) = self.b.intercept() {
            step.push(Stmt::Set(a, add(s(a), s(intercept))));
        }
        // c·ℓ′(yᵢ, a), inlined from the stdlib formula.
        step.push(Stmt::Set(g, self.b.weighted_dloss(self.model, self.st, y, s(a))));
        step.push(Stmt::Guard(s(g), "the loss derivative ℓ′".into()));
        step.push(Stmt::Set(eta_g, mul(s(eta), s(g))));
        // The intercept's plain gradient step (no prox, nothing to catch up: O(1)).
        step.extend(self.b.intercept_step(s(eta_g)));
        let half = sub(at(w, Index::Feature), mul(s(eta_g), Expr::Value));
        if let Stamps::Scaled { scale } = stamps {
            // w = s·u. Every coordinate decays by 1/(1 + τ2): s does, u does not. A touched
            // coordinate's new w is (s·u − ηg·v)/(1 + τ2) = s′·(u − (ηg/s)·v).
            let step_u = self.b.local("δu");
            step.push(Stmt::Set(step_u, div(s(eta_g), s(scale))));
            step.push(Stmt::Set(scale, div(s(scale), add(k(1.0), s(tau2.expect("scaled stamps need l2"))))));
            step.push(each(
                Range::RowNonZeros,
                vec![Stmt::Store(w, Index::Feature, sub(at(w, Index::Feature), mul(s(step_u), Expr::Value)))],
            ));
            // Keep s a normal number: fold it into u and restart at 1.
            step.push(Stmt::If(crate::symbolic::Cmp::Lt, s(scale), k(RESET_SCALE), self.flush(&stamps, w)));
        } else if self.opts.lazy {
            // Advance the running sums by this step's prox, then the gradient step and the prox
            // on the touched coordinates, stamped as up to date.
            step.extend(self.advance(&stamps, tau1, tau2));
            let mut write = if self.spares_large_weights() {
                // T reads its argument twice: the gradient step is stored first.
                vec![
                    Stmt::Store(w, Index::Feature, half),
                    Stmt::Store(w, Index::Feature, self.prox_only(at(w, Index::Feature), tau1, tau2)),
                ]
            } else {
                vec![Stmt::Store(w, Index::Feature, self.prox_only(half, tau1, tau2))]
            };
            write.extend(self.stamp(&stamps));
            step.push(each(Range::RowNonZeros, write));
            if let Stamps::Affine { l, .. } = stamps {
                // Keep exp(L) finite: flush every coordinate; the sums restart at 0.
                step.push(Stmt::If(crate::symbolic::Cmp::Gt, s(l), k(RESET_L), self.flush(&stamps, w)));
            }
        } else {
            // Eager reference: the gradient step on the row, then the prox on all d coordinates.
            step.push(each(Range::RowNonZeros, vec![Stmt::Store(w, Index::Feature, half)]));
            if l1.is_some() || l2.is_some() || p.has_box() {
                let prox = self.prox_only(at(w, Index::Feature), tau1, tau2);
                step.push(each(Range::Upto(Len::Features), vec![Stmt::Store(w, Index::Feature, prox)]));
            }
        }
        self.b.plan.epoch = vec![each(Range::Perm(Len::Rows), step)];

        // ---- finish: every coordinate caught up, stamps at "now".
        self.b.plan.finish = self.flush(&stamps, w);

        // ---- report: F(w) from the stdlib formulas.
        self.b.report(self.model, self.st, w, y, a);
        self.b.plan
    }

    /// η₀: the user's, or 1/(c·β·max‖xᵢ‖²), so the step at t = 1 does not overshoot the
    /// curvature of any example. Non-smooth losses use β = 1 (G = 1 bounds the subgradient).
    fn eta0(&mut self) -> ScalarId {
        if let Some(v) = self.st.settings.eta0 {
            let note = format!("from `solve with {}(eta0 = ...)`", self.b.plan.info.solver);
            return self.b.param("η0", v, &note);
        }
        let beta = self.st.smooth.unwrap_or(1.0);
        let note = if self.st.smooth.is_some() {
            "1/(β·max‖xᵢ‖²); `optc run` calibrates it on a sample"
        } else {
            "1/max‖xᵢ‖² (no curvature: β taken as 1); `optc run` calibrates it on a sample"
        };
        let scale = beta * self.model.loss.coef.value;
        self.b.scalar("η0", ScalarRole::Param, ParamInit::InverseMaxRowNormSq { scale }, note)
    }

    /// η_t: the user's schedule, or η₀/√t.
    fn schedule(&mut self, eta0: ScalarId, t: ScalarId) -> Expr {
        match self.st.settings.step.clone() {
            Some(sched) => {
                // The user's step replaces η0 entirely; η0 stays declared but unused.
                self.b.plan.scalars[eta0.0].note.push_str(" (unused: `step` is given)");
                formula(&sched, &[("t", s(t))])
            }
            None => div(s(eta0), call(Func::Sqrt, vec![s(t)])),
        }
    }

    /// The running sums the lazy catch-up needs for these prox weights (see the module docs).
    fn stamps(&mut self, lazy: bool, l1: Option<ScalarId>, l2: Option<ScalarId>) -> Stamps {
        // The shrinking weight's name, for the notes: l1, or λr for a row norm.
        let w1 = l1.map_or_else(String::new, |id| self.b.plan.scalar(id).name.clone());
        if !lazy {
            return Stamps::None;
        }
        match (l1, l2) {
            (None, None) => Stamps::None,
            (Some(_), None) => {
                let note = match self.truncation {
                    Some(_) => format!("Σ K·η·{w1} over the truncation steps: the pending truncation"),
                    None => format!("Σ η·{w1} over all steps: the pending shrinkage"),
                };
                let big = self.b.state("Λ", &note);
                let last = self.b.vector("Λlast", Len::Features, VecRole::State, 0.0);
                Stamps::Additive { big, last }
            }
            (None, Some(_)) if !self.prox.has_box() => {
                let scale = self.b.scalar(
                    "s",
                    ScalarRole::State,
                    ParamInit::Value(1.0),
                    "w = s·u: the pending ½‖·‖² decay of every coordinate at once",
                );
                Stamps::Scaled { scale }
            }
            (None, Some(_)) => {
                let big = self.b.state("Φ", "Σ log(1 + η·l2): the pending ½‖·‖² decay, in logs");
                let last = self.b.vector("Φlast", Len::Features, VecRole::State, 0.0);
                Stamps::Multiplicative { big, last }
            }
            _ => {
                let l = self.b.state("L", "Σ log(1 + η·l2) since the last reset");
                let q = self.b.state("Q", &format!("Σ (η·{w1}/(1 + η·l2))·exp(L) since the last reset"));
                let llast = self.b.vector("Llast", Len::Features, VecRole::State, 0.0);
                let qlast = self.b.vector("Qlast", Len::Features, VecRole::State, 0.0);
                Stamps::Affine { l, q, llast, qlast }
            }
        }
    }

    /// Whether the ℓ1 shrink spares weights beyond a threshold (truncated gradient's θ).
    fn spares_large_weights(&self) -> bool {
        self.truncation.is_some_and(|t| t.theta.is_some())
    }

    /// The ℓ1 shrink of v by α: soft(v, α), or truncated gradient's T(v, α) = v if |v| > θ.
    fn shrink(&self, v: Expr, alpha: Expr) -> Expr {
        match self.truncation.and_then(|t| t.theta) {
            Some(theta) => Expr::Select(
                crate::symbolic::Cmp::Gt,
                Box::new(call(Func::Abs, vec![v.clone()])),
                Box::new(s(theta)),
                Box::new(v.clone()),
                Box::new(soft(v, alpha)),
            ),
            None => soft(v, alpha),
        }
    }

    fn boxed(&self, e: Expr) -> Expr {
        if self.prox.has_box() {
            clamp(e, self.prox.lo, self.prox.hi)
        } else {
            e
        }
    }

    /// prox_{η·R}(v) for one coordinate, with τ1 = η·l1 and τ2 = η·l2.
    fn prox_only(&self, v: Expr, tau1: Option<ScalarId>, tau2: Option<ScalarId>) -> Expr {
        let mut e = v;
        if let Some(tau1) = tau1 {
            e = self.shrink(e, s(tau1));
        }
        if let Some(tau2) = tau2 {
            e = div(e, add(k(1.0), s(tau2)));
        }
        self.boxed(e)
    }

    /// The proxes coordinate (or row) j missed, composed: v ↦ shrink(A·v, B), as (A, B), each
    /// None where it is the identity; None for stamps that defer nothing per coordinate.
    fn pending(&self, stamps: &Stamps) -> Option<(Option<Expr>, Option<Expr>)> {
        let j = Index::Feature;
        Some(match *stamps {
            Stamps::None | Stamps::Scaled { .. } => return None,
            Stamps::Additive { big, last } => (None, Some(sub(s(big), at(last, j)))),
            Stamps::Multiplicative { big, last } => (Some(call(Func::Exp, vec![sub(at(last, j), s(big))])), None),
            Stamps::Affine { l, q, llast, qlast } => (
                Some(call(Func::Exp, vec![sub(at(llast, j), s(l))])),
                Some(mul(call(Func::Exp, vec![Expr::Neg(Box::new(s(l)))]), sub(s(q), at(qlast, j)))),
            ),
        })
    }

    /// The closed-form composition of the proxes a coordinate missed.
    fn catch_up(&self, stamps: &Stamps, w: VecId) -> Option<Expr> {
        let wj = at(w, Index::Feature);
        let e = match self.pending(stamps)? {
            (None, Some(b)) => self.shrink(wj, b),
            (Some(a), None) => mul(wj, a),
            (Some(a), Some(b)) => soft(mul(a, wj), b),
            (None, None) => wj,
        };
        Some(self.boxed(e))
    }

    /// Running sums after this step's prox (applied lazily to everyone but the touched rows).
    fn advance(&self, stamps: &Stamps, tau1: Option<ScalarId>, tau2: Option<ScalarId>) -> Vec<Stmt> {
        match *stamps {
            Stamps::None | Stamps::Scaled { .. } => vec![],
            Stamps::Additive { big, .. } => {
                vec![Stmt::Set(big, add(s(big), s(tau1.expect("additive stamps need l1"))))]
            }
            Stamps::Multiplicative { big, .. } => vec![Stmt::Set(
                big,
                add(s(big), call(Func::Log1p, vec![s(tau2.expect("multiplicative stamps need l2"))])),
            )],
            Stamps::Affine { l, q, .. } => {
                let (tau1, tau2) = (tau1.expect("affine stamps need l1"), tau2.expect("affine stamps need l2"));
                vec![
                    Stmt::Set(l, add(s(l), call(Func::Log1p, vec![s(tau2)]))),
                    Stmt::Set(q, add(s(q), mul(div(s(tau1), add(k(1.0), s(tau2))), call(Func::Exp, vec![s(l)])))),
                ]
            }
        }
    }

    /// Marks the current coordinate as up to date.
    fn stamp(&self, stamps: &Stamps) -> Vec<Stmt> {
        match *stamps {
            Stamps::None | Stamps::Scaled { .. } => vec![],
            Stamps::Additive { big, last } | Stamps::Multiplicative { big, last } => {
                vec![Stmt::Store(last, Index::Feature, s(big))]
            }
            Stamps::Affine { l, q, llast, qlast } => {
                vec![Stmt::Store(llast, Index::Feature, s(l)), Stmt::Store(qlast, Index::Feature, s(q))]
            }
        }
    }

    /// Catch every coordinate up and stamp it.
    fn flush(&self, stamps: &Stamps, w: VecId) -> Vec<Stmt> {
        if let Stamps::Scaled { scale } = *stamps {
            let fold = Stmt::Store(w, Index::Feature, mul(s(scale), at(w, Index::Feature)));
            return vec![each(Range::Upto(Len::Features), vec![fold]), Stmt::Set(scale, k(1.0))];
        }
        let Some(catch_up) = self.catch_up(stamps, w) else {
            return vec![];
        };
        self.flush_with(stamps, vec![Stmt::Store(w, Index::Feature, catch_up)])
    }

    /// For every coordinate (or row of W) j: `catch_up`, then its stamps at "now"; the affine
    /// sums restart at 0 after it, and so do their stamps.
    fn flush_with(&self, stamps: &Stamps, catch_up: Vec<Stmt>) -> Vec<Stmt> {
        let mut body = catch_up;
        match *stamps {
            Stamps::Affine { llast, qlast, .. } => {
                body.push(Stmt::Store(llast, Index::Feature, k(0.0)));
                body.push(Stmt::Store(qlast, Index::Feature, k(0.0)));
            }
            _ => body.extend(self.stamp(stamps)),
        }
        let mut out = vec![each(Range::Upto(Len::Features), body)];
        if let Stamps::Affine { l, q, .. } = *stamps {
            out.push(Stmt::Set(l, k(0.0)));
            out.push(Stmt::Set(q, k(0.0)));
        }
        out
    }
}

/// The running sums of the lazy catch-up (see the module docs).
enum Stamps {
    None,
    Additive {
        big: ScalarId,
        last: VecId,
    },
    Multiplicative {
        big: ScalarId,
        last: VecId,
    },
    Affine {
        l: ScalarId,
        q: ScalarId,
        llast: VecId,
        qlast: VecId,
    },
    /// ½‖·‖² alone, no box: w = s·u with one global scale (Bottou's SGD trick), so the decay
    /// costs O(1) per step and nothing per coordinate.
    Scaled {
        scale: ScalarId,
    },
}
