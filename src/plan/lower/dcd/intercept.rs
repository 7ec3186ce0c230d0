//! The intercept of a dual CD plan, free or penalised, shared by the classification duals
//! (`dcd.rs`, Σᵢ αᵢyᵢ) and the regression box duals (`svr.rs`, Σᵢ βᵢ). Write σᵢ for row i's
//! dual coefficient on xᵢ (αᵢyᵢ or βᵢ), so that w = Σᵢ σᵢxᵢ.
//!
//! `μ·l2sq(b)`: b = t·β with β a weight of feature value t = √(λ/μ), so the dual is the plain one
//! over the rows [xᵢ, t]: Q̄ᵢᵢ gains t², and b moves by t²·Δ when w moves by Δ·xᵢ.
//!
//! A free b is the same coordinate under the augmented Lagrangian of the dual's Σᵢ σᵢ = 0 (the
//! proximal point method on b): each epoch solves the model penalised by (μ/2)(b − b₀)², μ = λ/t²,
//! whose dual is the plain one with b₀·Σᵢ σᵢ in its linear term and (t²/2)(Σᵢ σᵢ)² on top, so
//! b = b₀ + t²·Σᵢ σᵢ; then the centre moves to that b, the multiplier step b₀ ← b₀ + t²·Σᵢ σᵢ.
//! Its fixed points have Σᵢ σᵢ = 0 with the duals optimal at offset b₀ = b: the free model's
//! optimality conditions. Every dual stays in its box, so the run warm-starts through every move
//! of the centre.

use super::super::super::build::*;
use super::super::super::{Expr, Index, Len, ParamInit, Range, ScalarId, ScalarRole, Stmt, VecId};
use super::super::Builder;
use super::select;
use crate::check::Model;
use crate::symbolic::{Cmp, Func};

/// t²'s first value is this times max ‖xᵢ‖² for a free intercept: the weight of the augmented
/// Lagrangian's (Σ αᵢyᵢ)², and the length of its multiplier steps, which follow one epoch of
/// the dual, not an exact solve. Longer steps overshoot what one epoch has answered and b
/// oscillates; shorter, the centre crawls. Hinge + b, `--tol 1e-4`, solve seconds with t² fixed
/// at 0.001 / 0.003 / 0.01 / 0.03 / 1 times max ‖xᵢ‖²: a9a C = 1 0.15 / 0.16 / 0.19 / 0.18 / 0.31
/// (0.20 without b), C = 0.01 0.091 / 0.044 / 0.058 / 0.026 / 0.044 (0.021); w8a C = 1 0.44 /
/// 0.51 / 0.56 / 0.54 / epoch cap (0.15), C = 0.01 0.051 / 0.076 / 0.054 / 0.049 / 0.22 (0.041);
/// debian-desc C = 0.01 0.78 / 0.69 / 0.40 / 0.25 (0.30). No one value suits every set, so t²
/// adapts from here (below).
const FREE_INTERCEPT_WEIGHT: f64 = 0.03;
/// t² grows by this after a multiplier step in the direction of the one before,
const T2_GROW: f64 = 1.2;
/// and shrinks by this after one that turned back (Rprop's rule, on the one step length);
const T2_SHRINK: f64 = 0.5;
/// within t²₀/T2_RANGE and t²₀·T2_RANGE. Epochs to a certified 1e-4 for hinge + b, a9a C = 1
/// and 0.01, w8a C = 1 and 0.01 (without b: 666, 10, 194, 9): t² fixed 654, 43, 1304, 50; grow
/// 1.2 / shrink 0.5 660, 13, 808, 55; 1.5 / 0.5 679, 39, 769, 45; 2 / 0.5 713, 12, 1155, 62;
/// 1.5 / 0.7 709, 43, 1172, 52; a range of 300 for 1.5 / 0.5 683, 44, 856, 47. Over-relaxed
/// multiplier steps (1.5–1.8 times) gained nothing (1.8: 1,629 epochs on w8a at C = 0.01). debian-desc
/// (hinge, logistic, squared hinge at C = 1 and 0.01) takes the same epochs either way.
const T2_RANGE: f64 = 30.0;

/// A free intercept's augmented Lagrangian: the centre, t²'s first value, the last step.
struct Center {
    b0: ScalarId,
    start: ScalarId,
    last: ScalarId,
    next: ScalarId,
}

/// The plan's b (`slot`) and t², with the centre when b is free.
pub(super) struct Intercept {
    pub slot: ScalarId,
    pub t2: ScalarId,
    center: Option<Center>,
}

impl Intercept {
    /// The model's intercept, if it has one; `l2` is λ of `λ·l2sq(w)`, `sum` how the plan's text
    /// writes Σᵢ σᵢ.
    pub fn declare(b: &mut Builder, model: &Model, l2: f64, sum: &str) -> Option<Intercept> {
        let slot = b.intercept()?;
        let t2 = match &model.intercept_l2 {
            Some(r) => {
                b.param("t²", l2 / r.coef, "λ/μ: the squared value of b's feature (b = t·β, β penalised as a weight)")
            }
            None => b.state("t²", &format!("the augmented Lagrangian's weight on ({sum})² and its multiplier step")),
        };
        let center = model.intercept_l2.is_none().then(|| Center {
            b0: b.state("b₀", "the centre of the proximal term on a free b"),
            start: b.scalar(
                "t²₀",
                ScalarRole::Param,
                ParamInit::MaxRowNormSq { scale: FREE_INTERCEPT_WEIGHT },
                "t²'s first value, and the middle of its range",
            ),
            last: b.state("Δb₀", "the last multiplier step"),
            next: b.local("t²⁺"),
        });
        Some(Intercept { slot, t2, center })
    }

    /// (b, t²), the pair the steps read.
    pub fn pair(&self) -> (ScalarId, ScalarId) {
        (self.slot, self.t2)
    }

    /// A free b's centre b₀.
    pub fn b0(&self) -> Option<ScalarId> {
        self.center.as_ref().map(|c| c.b0)
    }

    /// The start of init: t² at its first value, no multiplier step yet.
    pub fn start(&self) -> Vec<Stmt> {
        self.center.as_ref().map_or(vec![], |c| vec![Stmt::Set(self.t2, s(c.start)), Stmt::Set(c.last, k(0.0))])
    }

    /// Before w and b are summed from the duals σᵢ (`sigma`, read at row i): a free b's centre is
    /// b less what the duals give it, so that b comes back as it was; b starts from its centre (0
    /// when penalised), `step` a scratch scalar.
    pub fn recentre(&self, step: ScalarId, sigma: Expr) -> Vec<Stmt> {
        let mut out = vec![];
        if let Some(c) = &self.center {
            out.extend([
                Stmt::Set(step, k(0.0)),
                each(Range::Upto(Len::Rows), vec![Stmt::Set(step, add(s(step), sigma))]),
                Stmt::Set(c.b0, sub(s(self.slot), mul(s(self.t2), s(step)))),
            ]);
        }
        out.push(Stmt::Set(self.slot, self.center.as_ref().map_or(k(0.0), |c| s(c.b0))));
        out
    }

    /// The end of an epoch, for a free b: the multiplier step moves the centre to b
    /// (b₀ + t²·Σ σᵢ). Its length t² then grows while the steps keep their direction and shrinks
    /// when one turns back, within [t²₀/T2_RANGE, t²₀·T2_RANGE]; b = b₀ + t²·Σ σᵢ at the new t²,
    /// and the diagonal `q` follows it. `step` is a scratch scalar.
    pub fn multiplier_step(&self, step: ScalarId, q: VecId) -> Vec<Stmt> {
        let Some(c) = &self.center else { return vec![] };
        let (slot, t2) = (self.slot, self.t2);
        let factor = select(mul(s(step), s(c.last)), Cmp::Lt, k(0.0), k(T2_SHRINK), k(T2_GROW));
        let range = call(Func::Max, vec![mul(s(t2), factor), div(s(c.start), k(T2_RANGE))]);
        vec![
            Stmt::Set(step, sub(s(slot), s(c.b0))),
            Stmt::Set(c.next, call(Func::Min, vec![range, mul(s(c.start), k(T2_RANGE))])),
            Stmt::Set(c.b0, s(slot)),
            Stmt::Set(slot, add(s(slot), div(mul(s(step), s(c.next)), s(t2)))),
            each(
                Range::Upto(Len::Rows),
                vec![Stmt::Store(q, Index::Row, add(at(q, Index::Row), sub(s(c.next), s(t2))))],
            ),
            Stmt::Set(c.last, s(step)),
            Stmt::Set(t2, s(c.next)),
        ]
    }
}
