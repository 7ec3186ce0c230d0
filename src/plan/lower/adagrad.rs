//! AdaGrad-FOBOS with diagonal scaling (ALGORITHMS.md §4, Duchi & Singer's slides): one
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

use super::super::build::*;
use super::super::{Expr, Index, Len, ParamInit, Plan, Range, ScalarId, ScalarRole, Stmt, VecRole};
use super::{Builder, LowerOptions};
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::symbolic::Func;

/// η = 1/(ETA_SCALE·max‖xᵢ‖) when `eta0` is not given (see the module docs).
const ETA_SCALE: f64 = 8.0;

/// δ when `delta` is not given: small against any gradient that moves a weight, so a
/// coordinate's first step is η·sign(gⱼ), as the slides' s = ‖g_{1:t,j}‖ makes it.
const DEFAULT_DELTA: f64 = 1e-8;

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx, opts: LowerOptions) -> Plan {
    let mut b = Builder::new(model, "adagrad", opts.lazy, prox, None);
    b.plan.info.summary.push_str(if opts.lazy {
        "; lazy: a coordinate's missed proxes are one closed-form catch-up (ℓ1, ½‖·‖², elastic net and boxes alike)"
    } else {
        "; eager reference: every coordinate's prox every step"
    });
    let (y, w) = b.labels_and_weights();

    let eta = match st.settings.eta0 {
        Some(v) => b.param("η0", v, "from `solve with adagrad(eta0 = ...)`"),
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
    // Only a prox that changes a feasible weight leaves anything to catch up.
    let deferred = opts.lazy && (prox.l1 > 0.0 || prox.l2 > 0.0);
    let last = deferred.then(|| b.vector("tlast", Len::Features, VecRole::State, 0.0));
    let a = b.local("a");
    let g = b.local("g");
    let gj = b.local("gj");
    let tau = b.local("τ");
    let decay = (deferred && prox.l2 > 0.0).then(|| b.local("A"));

    let j = Index::Feature;
    // τ = η/sⱼ with sⱼ from the squared gradients so far.
    let set_tau = Stmt::Set(tau, div(s(eta), add(s(delta), call(Func::Sqrt, vec![at(sum_sq, j)]))));
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

    // ---- one epoch: a step per row.
    let mut step = vec![Stmt::Set(t, add(s(t), k(1.0))), Stmt::Set(a, k(0.0))];
    // The margin a = ⟨xᵢ, w⟩, each coordinate first caught up on the proxes of the steps
    // since it was last written (t − 1 − tlast[j] of them).
    let mut read = last.map_or_else(Vec::new, |last| catch_up(sub(sub(s(t), k(1.0)), at(last, j)), None));
    read.push(Stmt::Set(a, add(s(a), mul(Expr::Value, at(w, j)))));
    step.push(each(Range::RowNonZeros, read));
    let dloss = b.dloss(model, st, y, s(a));
    step.push(Stmt::Set(g, weight.map_or(dloss.clone(), |c| mul(s(c), dloss))));
    step.push(Stmt::Guard(s(g), "the loss derivative ℓ′".into()));
    // gⱼ = g·xᵢⱼ enters sⱼ before its own step, as in the slides' s_{t,j}.
    let mut write = vec![
        Stmt::Set(gj, mul(s(g), Expr::Value)),
        Stmt::Store(sum_sq, j, add(at(sum_sq, j), mul(s(gj), s(gj)))),
        set_tau.clone(),
    ];
    let moved = sub(at(w, j), mul(s(tau), s(gj)));
    if opts.lazy {
        write.push(Stmt::Store(w, j, b.coordinate_prox(moved, s(tau))));
        write.extend(last.map(|last| Stmt::Store(last, j, s(t))));
        step.push(each(Range::RowNonZeros, write));
    } else {
        // Eager reference: the gradient step on the row, then every coordinate's prox.
        write.push(Stmt::Store(w, j, moved));
        step.push(each(Range::RowNonZeros, write));
        if prox.l1 > 0.0 || prox.l2 > 0.0 || prox.has_box() {
            let all = vec![set_tau.clone(), Stmt::Store(w, j, b.coordinate_prox(at(w, j), s(tau)))];
            step.push(each(Range::Upto(Len::Features), all));
        }
    }
    b.plan.epoch = vec![each(Range::Perm(Len::Rows), step)];

    // ---- finish: every coordinate caught up to step t.
    if let Some(last) = last {
        b.plan.finish = vec![each(Range::Upto(Len::Features), catch_up(sub(s(t), at(last, j)), Some(s(t))))];
    }

    b.report(model, st, w, y, a);
    b.plan
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
    if p.has_box() {
        clamp(e, p.lo, p.hi)
    } else {
        e
    }
}
