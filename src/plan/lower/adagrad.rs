//! AdaGrad-FOBOS with diagonal scaling (docs/algorithms.md §4, Duchi & Singer's slides): one
//! stochastic gradient step per row, scaled per coordinate by the root of the squared
//! gradients that coordinate has seen, then the prox scaled the same way:
//!
//!   sⱼ = δ + √(Σ_{τ≤t} g²_{τ,j}),   wⱼ ← prox_{(η/sⱼ)·r}(wⱼ − η·gⱼ/sⱼ).
//!
//! A coordinate outside the row's support gets no gradient, so its sⱼ does not move and every
//! prox it misses is the same map v ↦ clamp(soft(v, τ·l1)/(1 + τ·l2)), τ = η/sⱼ. n of them
//! compose in closed form (soft(v, b)·a = soft(a·v, a·b) for a > 0):
//!   v ↦ soft(Aⁿ·v, (l1/l2)·(1 − Aⁿ)),  A = 1/(1 + τ·l2)          (elastic net)
//!   v ↦ soft(v, n·τ·l1)                                            (ℓ1: l2 = 0)
//!   v ↦ Aⁿ·v                                                        (½‖·‖²: l1 = 0)
//! and a box is clamped once, as FOBOS's lazy plan argues (the maps move toward 0 and a bound
//! reached is absorbing). So the lazy plan needs no running sums, only the step at which each
//! coordinate was last brought up to date: every regularizer FOBOS takes is lazy here, and
//! exact. Aⁿ is exp(−n·log1p(τ·l2)), which stays finite for any n.
//!
//! η carries the units of w: sⱼ scales with the gradient, so a coordinate's first step is
//! η·sign(gⱼ) whatever the scale of the loss. Its default, 1/(8·max‖xᵢ‖), scales with the
//! features as w does. It is not calibrated on a sample as FOBOS's η₀ is: one pass rewards a
//! large η, and the noise a large η leaves (the objective's floor is ∝ η/√t) then dominates a
//! long run. With rows of norm ≤ 1, the l1-logistic and lasso fixtures do best at 200 epochs
//! with η between 0.06 and 0.25; rarely seen features want more (0.5–0.75 on the 2000 × 5000
//! fixture at 50 epochs), which `eta0` gives.
//!
//! `rda = 1` runs the other update of Duchi, Hazan & Singer with the same scaling, regularized
//! dual averaging: wⱼ is a closed form of the summed gradients, exactly 0 unless their average
//! exceeds l1. The composite step's last iterate keeps the noise of its last steps on the
//! coordinates that are 0 at the optimum (28 of 30 non-zero on the 200 × 30 l1-logistic
//! fixture, whose optimum has 8), and that noise is most of its distance to F*; dual averaging
//! has the optimum's zeros, and on the l1-logistic fixtures gets 25–100× closer to F* in the
//! same epochs.

use super::super::build::*;
use super::super::{Expr, Index, Len, ParamInit, Plan, Range, ScalarId, ScalarRole, Stmt, VecId, VecRole};
use super::{Builder, LowerOptions};
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::symbolic::Func;

/// η = 1/(ETA_SCALE·max‖xᵢ‖) when `eta0` is not given (see the module docs).
const ETA_SCALE: f64 = 8.0;

/// The same for dual averaging, where η weighs the summed gradients against sⱼ·w²/2 rather
/// than setting a first move, and the noise does not reach the zeros: η = 2 (rows of norm ≤ 1)
/// is within a factor 2 of the best η on every l1 fixture (at 200 epochs on the dense ones, 50
/// on the sparse ones).
const RDA_ETA_SCALE: f64 = 0.5;

/// δ when `delta` is not given: small against any gradient that moves a weight, so a
/// coordinate's first step is η·sign(gⱼ), as the slides' s = ‖g_{1:t,j}‖ makes it.
const DEFAULT_DELTA: f64 = 1e-8;

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx, opts: LowerOptions) -> Plan {
    let mut ada = Adagrad::new(model, st, prox, opts);
    if st.settings.rda {
        ada.dual_averaging();
    } else {
        ada.composite_step();
    }
    ada.b.report(model, st, ada.w, ada.y, ada.a);
    ada.b.plan
}

/// What both updates share: the declarations, and the statements around a step.
struct Adagrad<'a> {
    model: &'a Model,
    st: &'a Structure,
    prox: CoordinateProx,
    lazy: bool,
    b: Builder,
    y: VecId,
    w: VecId,
    eta: ScalarId,
    delta: ScalarId,
    weight: Option<ScalarId>,
    t: ScalarId,
    /// Σ g²ⱼ over the steps so far.
    sum_sq: VecId,
    a: ScalarId,
    g: ScalarId,
    gj: ScalarId,
}

impl<'a> Adagrad<'a> {
    fn new(model: &'a Model, st: &'a Structure, prox: CoordinateProx, opts: LowerOptions) -> Self {
        let mut b = Builder::new(model, SolverKind::Adagrad, opts.lazy, prox, None);
        let (y, w) = b.labels_and_weights();
        let eta = match st.settings.eta0 {
            Some(v) => b.param("η0", v, "from `solve with adagrad(eta0 = ...)`"),
            None if st.settings.rda => b.scalar(
                "η0",
                ScalarRole::Param,
                ParamInit::InverseMaxRowNorm { scale: RDA_ETA_SCALE },
                "weight of the summed gradients against sⱼ·w²/2; not calibrated",
            ),
            None => b.scalar(
                "η0",
                ScalarRole::Param,
                ParamInit::InverseMaxRowNorm { scale: ETA_SCALE },
                "a coordinate's first move; not calibrated (a one-pass sample favours too large an η)",
            ),
        };
        let delta = match st.settings.delta {
            Some(v) => b.param("δ", v, "from `solve with adagrad(delta = ...)`"),
            None => b.param("δ", DEFAULT_DELTA, "keeps η/sⱼ finite before coordinate j has a gradient"),
        };
        let c = model.loss.coef.value;
        let weight = (c != 1.0).then(|| b.param("c", c, "weight of the loss term"));
        let t = b.state("t", "step counter");
        b.plan.step_counter = Some(t);
        let sum_sq = b.vector("G", Len::Features, VecRole::State, 0.0);
        let (a, g, gj) = (b.local("a"), b.local("g"), b.local("gj"));
        Adagrad { model, st, prox, lazy: opts.lazy, b, y, w, eta, delta, weight, t, sum_sq, a, g, gj }
    }

    /// sⱼ = δ + √G[j].
    fn scale(&self) -> Expr {
        add(s(self.delta), call(Func::Sqrt, vec![at(self.sum_sq, Index::Feature)]))
    }

    /// One step on row i: t += 1, the margin through `read` (per non-zero, before w[j] is
    /// added in), g = c·ℓ′ guarded, then `write` per non-zero after gⱼ = g·xᵢⱼ has entered G[j]
    /// (as in the slides' s_{t,j}), then `after`.
    fn step(&mut self, read: Vec<Stmt>, write: Vec<Stmt>, after: Vec<Stmt>) -> Vec<Stmt> {
        let (t, a, g, gj, w, sum_sq, j) = (self.t, self.a, self.g, self.gj, self.w, self.sum_sq, Index::Feature);
        let mut margin = read;
        margin.push(Stmt::Set(a, add(s(a), mul(Expr::Value, at(w, j)))));
        let dloss = self.b.dloss(self.model, self.st, self.y, s(a));
        let mut per_entry =
            vec![Stmt::Set(gj, mul(s(g), Expr::Value)), Stmt::Store(sum_sq, j, add(at(sum_sq, j), mul(s(gj), s(gj))))];
        per_entry.extend(write);
        let mut step = vec![
            Stmt::Set(t, add(s(t), k(1.0))),
            Stmt::Set(a, self.b.intercept().map_or(k(0.0), s)),
            each(Range::RowNonZeros, margin),
            Stmt::Set(g, self.weight.map_or(dloss.clone(), |c| mul(s(c), dloss))),
            Stmt::Guard(s(g), "the loss derivative ℓ′".into()),
            each(Range::RowNonZeros, per_entry),
        ];
        step.extend(self.intercept_step());
        step.extend(after);
        vec![each(Range::Perm(Len::Rows), step)]
    }

    /// The intercept as one more AdaGrad coordinate whose feature is 1 and whose r is 0: its
    /// own Gb += g², then b −= η·g/(δ + √Gb) (the composite step), or, for dual averaging,
    /// b = −η·Σg/(δ + √Gb) (its closed form with r = 0).
    fn intercept_step(&mut self) -> Vec<Stmt> {
        let Some(intercept) = self.b.intercept() else { return vec![] };
        let sum_sq = self.b.state("Gb", "Σ g² of the intercept");
        let scaled = |ada: &Self| div(s(ada.eta), add(s(ada.delta), call(Func::Sqrt, vec![s(sum_sq)])));
        let mut out = vec![Stmt::Set(sum_sq, add(s(sum_sq), mul(s(self.g), s(self.g))))];
        if self.st.settings.rda {
            let sum = self.b.state("Σgb", "Σ g of the intercept");
            out.push(Stmt::Set(sum, add(s(sum), s(self.g))));
            out.push(Stmt::Set(intercept, Expr::Neg(Box::new(mul(scaled(self), s(sum))))));
        } else {
            out.push(Stmt::Set(intercept, sub(s(intercept), mul(scaled(self), s(self.g)))));
        }
        out
    }

    /// The slides' update: wⱼ ← prox_{τ·r}(wⱼ − τ·gⱼ), τ = η/sⱼ, with the closed-form catch-up
    /// of the module docs.
    fn composite_step(&mut self) {
        let (prox, w, t, j) = (self.prox, self.w, self.t, Index::Feature);
        self.b.plan.info.summary.push_str(if self.lazy {
            "; lazy: a coordinate's missed proxes are one closed-form catch-up (ℓ1, ½‖·‖², elastic net and boxes alike)"
        } else {
            "; eager reference: every coordinate's prox every step"
        });
        // Only a prox that changes a feasible weight leaves anything to catch up.
        let deferred = self.lazy && (prox.l1 > 0.0 || prox.l2 > 0.0);
        let last = deferred.then(|| self.b.vector("tlast", Len::Features, VecRole::State, 0.0));
        let tau = self.b.local("τ");
        let decay = (deferred && prox.l2 > 0.0).then(|| self.b.local("A"));
        let set_tau = Stmt::Set(tau, div(s(self.eta), self.scale()));
        // w[j] caught up on `n` missed proxes, and stamped up to date when `now` is given (the
        // margin's read needs no stamp: the step writes w[j] and stamps it right after).
        let catch_up = |n: Expr, now: Option<Expr>| -> Vec<Stmt> {
            let Some(last) = last else { return vec![] };
            let mut out = vec![set_tau.clone()];
            out.extend(decay.map(|a| {
                let log_a = call(Func::Log1p, vec![mul(s(tau), k(prox.l2))]);
                Stmt::Set(a, call(Func::Exp, vec![Expr::Neg(Box::new(mul(n.clone(), log_a)))]))
            }));
            out.push(Stmt::Store(w, j, composed(prox, at(w, j), n, s(tau), decay)));
            out.extend(now.map(|now| Stmt::Store(last, j, now)));
            out
        };

        // The margin reads each coordinate caught up on the proxes of the steps since it was
        // last written (t − 1 − tlast[j] of them).
        let read = last.map_or_else(Vec::new, |last| catch_up(sub(sub(s(t), k(1.0)), at(last, j)), None));
        let moved = sub(at(w, j), mul(s(tau), s(self.gj)));
        let mut write = vec![set_tau.clone()];
        let mut after = vec![];
        if self.lazy {
            write.push(Stmt::Store(w, j, self.b.coordinate_prox(moved, s(tau))));
            write.extend(last.map(|last| Stmt::Store(last, j, s(t))));
        } else {
            // Eager reference: the gradient step on the row, then every coordinate's prox.
            write.push(Stmt::Store(w, j, moved));
            if prox.l1 > 0.0 || prox.l2 > 0.0 || prox.has_box() {
                let all = vec![set_tau.clone(), Stmt::Store(w, j, self.b.coordinate_prox(at(w, j), s(tau)))];
                after.push(each(Range::Upto(Len::Features), all));
            }
        }
        self.b.plan.epoch = self.step(read, write, after);
        // Every coordinate caught up to step t.
        if let Some(last) = last {
            self.b.plan.finish = vec![each(Range::Upto(Len::Features), catch_up(sub(s(t), at(last, j)), Some(s(t))))];
        }
    }

    /// Regularized dual averaging with the same scaling (Duchi, Hazan & Singer's primal-dual
    /// update, Xiao's RDA): after n steps, wⱼ = argmin uⱼ·w + n·r(w) + (sⱼ/2η)·w² with
    /// uⱼ = Σ gⱼ, i.e. clamp(−soft(uⱼ, n·l1)/(sⱼ/η + n·l2), lo, hi). A weight is 0 unless its
    /// averaged gradient exceeds l1, so the iterates are as sparse as the optimum rather than
    /// kept off 0 by the noise of the last steps; and wⱼ is a closed form of (uⱼ, G[j], n), so
    /// a coordinate outside the row has nothing to catch up.
    fn dual_averaging(&mut self) {
        let (w, t, j) = (self.w, self.t, Index::Feature);
        self.b.plan.info.summary.push_str(if self.lazy {
            "; dual averaging: w[j] is a closed form of the running sums, computed when read"
        } else {
            "; dual averaging, eager reference: every w[j] from the running sums every step"
        });
        let sum = self.b.vector("Σg", Len::Features, VecRole::State, 0.0);
        let h = self.b.local("h");
        // w[j] after n steps; h is the curvature of its objective.
        let at_step = |ada: &Self, n: Expr| {
            let p = ada.prox;
            let mut curvature = div(ada.scale(), s(ada.eta));
            if p.l2 > 0.0 {
                curvature = add(curvature, mul(n.clone(), k(p.l2)));
            }
            let mut pull = at(sum, j);
            if p.l1 > 0.0 {
                pull = soft(pull, mul(n, k(p.l1)));
            }
            vec![Stmt::Set(h, curvature), Stmt::Store(w, j, boxed(p, div(Expr::Neg(Box::new(pull)), s(h))))]
        };
        let write = vec![Stmt::Store(sum, j, add(at(sum, j), s(self.gj)))];
        self.b.plan.epoch = if self.lazy {
            let read = at_step(self, sub(s(t), k(1.0)));
            self.step(read, write, vec![])
        } else {
            let after = vec![each(Range::Upto(Len::Features), at_step(self, s(t)))];
            self.step(vec![], write, after)
        };
        self.b.plan.finish = vec![each(Range::Upto(Len::Features), at_step(self, s(t)))];
    }
}

/// n proxes of τ·r composed and applied to v (see the module docs); `decay` holds Aⁿ when
/// l2 > 0.
fn composed(p: CoordinateProx, v: Expr, n: Expr, tau: Expr, decay: Option<ScalarId>) -> Expr {
    let e = match decay {
        None if p.l1 > 0.0 => soft(v, mul(mul(n, tau), k(p.l1))),
        None => v,
        Some(a) if p.l1 > 0.0 => soft(mul(s(a), v), mul(k(p.l1 / p.l2), sub(k(1.0), s(a)))),
        Some(a) => mul(s(a), v),
    };
    boxed(p, e)
}

/// e clamped to the box, if there is one.
fn boxed(p: CoordinateProx, e: Expr) -> Expr {
    if p.has_box() {
        clamp(e, p.lo, p.hi)
    } else {
        e
    }
}
