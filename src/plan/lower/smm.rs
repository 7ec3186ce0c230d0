//! SMM, stochastic majorization–minimization with proximal-gradient surrogates (Mairal 2013;
//! docs/algorithms.md §7). Every surrogate has the same curvature L, so their weighted average is
//! one vector z̄:
//!
//!   z̄ ← (1 − ωₙ)·z̄ + ωₙ·(θ − ∇fₙ(θ)/L),   θ ← prox_{ψ/L}(z̄),   ωₙ = √((n₀ + 1)/(n + n₀)),
//!
//! with L = c·β·max‖xᵢ‖² and n₀ tuned by `optc run` on a sample of the rows. ∇fₙ is zero off
//! the example's support, where z̄ follows a scalar recursion; for ψ = λ‖·‖₁ that recursion
//! has a closed form (`runtime::smm`), so the lazy plan touches only the support: it keeps
//! the prefix sums of ω and of log(1 − ω) over the epoch's steps and, per coordinate, the
//! position of its last update, and catches a coordinate up before reading it. The history
//! restarts each epoch, after every coordinate is caught up. Other regularizers run the eager
//! plan, which averages every coordinate each step (O(d)), and say so.
//!
//! `average = 1` reports Mairal's averaged iterate θ̄ₙ = (1 − ωₙ₊₁)·θ̄ₙ₋₁ + ωₙ₊₁·θₙ in w, the
//! steps reading θ, kept beside it; that plan is eager.

use super::super::build::*;
use super::super::{CatchUp, Expr, Index, Len, ParamInit, Plan, Range, ScalarRole, Stmt, VecRole};
use super::{Builder, LowerOptions};
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::symbolic::Func;

/// The n₀ candidates `optc run` tries on its sample (and the default where it cannot).
pub const N0_GRID: [f64; 6] = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5];
const N0_DEFAULT: f64 = 100.0;

/// log(1 − ω) is kept above this: ω₁ = 1 would make the prefix sums −∞ (and their
/// differences NaN); exp of it is 0 to the precision of any weight.
const LOG_FLOOR: f64 = 1e-300;

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx, opts: LowerOptions) -> Plan {
    lower_as(model, st, prox, opts, SolverKind::Smm)
}

/// The plan under `solver`'s name. Online DC (docs/algorithms.md §8) is this plan with a `logeps`
/// tangent in the prox: the tangents' weights are averaged like the surrogates' points,
/// η ← (1 − ω)·η + ω/(|θ| + ε), before the prox at threshold (l1 + λ·ηⱼ)/L.
pub(super) fn lower_as(
    model: &Model,
    st: &Structure,
    prox: CoordinateProx,
    opts: LowerOptions,
    solver: SolverKind,
) -> Plan {
    let average = st.settings.average;
    // The closed-form catch-up is for ψ = λ‖·‖₁ alone, and for θ, not for an average of θ.
    let lazy = opts.lazy && !average && prox.l1 > 0.0 && prox.l2 == 0.0 && !prox.has_box() && prox.tangent.is_none();
    let mut b = Builder::new(model, solver, lazy, prox, None);
    b.plan.info.summary.push_str(if average {
        // Off the support θⱼ drifts linearly in Σω and then sits at 0, so θ̄ⱼ has a closed form
        // too, but one through Π(1 − ω′)⁻¹, which overflows within an epoch of a large data set.
        "; averaged outputs θ̄ ← (1 − ω′)·θ̄ + ω′·θ, ω′ the next step's weight (Mairal's averaged option): eager (O(d) per step), θ̄ moves every coordinate every step"
    } else if lazy {
        "; lazy: a coordinate off the support is caught up in closed form (binary search on Σω, then Π(1 − ω))"
    } else if prox.tangent.is_some() {
        // While θⱼ = 0 the pair (z̄ⱼ, ηⱼ) decays geometrically toward (0, 1/ε), a closed form; but
        // while θⱼ ≠ 0 each missed step moves z̄ⱼ by ω·λ·ηⱼ/L and ηⱼ by ω/(|θⱼ| + ε), which
        // compose into no closed form.
        "; online DC: the tangent weights η averaged like z̄; eager (O(d) per step): every ηⱼ moves at every step, and (z̄ⱼ, ηⱼ) of a non-zero coordinate off the example follow a non-linear recursion with no closed form"
    } else if opts.lazy {
        "; eager (O(d) per step): the closed-form catch-up is for ℓ1 alone"
    } else {
        "; eager reference (O(d) per step)"
    });
    // w is what the run reports: θ itself, or its average θ̄ kept beside it.
    let (y, w) = b.labels_and_weights();
    let theta = if average {
        b.vector("θ", Len::Features, VecRole::State, crate::plan::clamp(0.0, prox.lo, prox.hi))
    } else {
        w
    };
    let beta = st.smooth.expect("SMM is only chosen for smooth losses");
    let c = model.loss.coef.value;
    let lip = b.scalar(
        "L",
        ScalarRole::Param,
        ParamInit::MaxRowNormSq { scale: c * beta },
        "c·β·max‖xᵢ‖²: every example's surrogate has this curvature",
    );
    // With an intercept a row is [xᵢ, 1]: its surrogate's curvature grows by c·β.
    let lip = if b.wants_intercept() {
        let lb = match model.loss.weighted {
            true => b.scalar(
                "Lb",
                ScalarRole::Param,
                ParamInit::MaxWeight { scale: c * beta },
                "c·β·max ωᵢ: the intercept's feature of 1 adds at most this to L",
            ),
            false => b.param("Lb", c * beta, "c·β: the intercept's feature of 1 adds c·β to L"),
        };
        let total = b.state("L′", "L + c·β, every example's curvature with the intercept");
        b.plan.init.push(Stmt::Set(total, add(s(lip), s(lb))));
        total
    } else {
        lip
    };
    let n0 = match st.settings.n0 {
        Some(v) => b.param("n0", v, &format!("from `solve with {solver}(n0 = ...)`")),
        None => b.scalar(
            "n0",
            ScalarRole::Param,
            ParamInit::Tuned { default: N0_DEFAULT, grid: &N0_GRID },
            "of the weights ω = √((n0 + 1)/(n + n0)); `optc run` tunes it on a sample",
        ),
    };
    // ωₙ = √((n0 + 1)/(n + n0)).
    let weight_at = |n: Expr| call(Func::Sqrt, vec![div(add(s(n0), k(1.0)), add(n, s(n0)))]);
    let zbar = b.vector("z̄", Len::Features, VecRole::State, crate::plan::clamp(0.0, prox.lo, prox.hi));
    let t = b.state("n", "step counter");
    b.plan.step_counter = Some(t);
    let omega = b.local("ω");
    let next = average.then(|| b.local("ω′"));
    let a = b.local("a");
    let g = b.local("g");
    let step = b.local("δ");
    let inv_lip = div(k(1.0), s(lip));
    let j = Index::Feature;
    let prox_of = |b: &Builder, e: Expr| b.coordinate_prox(e, inv_lip.clone());

    let mut body = vec![Stmt::Set(t, add(s(t), k(1.0))), Stmt::Set(omega, weight_at(s(t)))];
    let history = lazy.then(|| {
        let sums = b.vector("S", Len::Rows, VecRole::State, 0.0);
        let logs = b.vector("P", Len::Rows, VecRole::State, 0.0);
        let last = b.vector("last", Len::Features, VecRole::State, 0.0);
        let count = b.state("steps", "steps taken in this epoch");
        let total = b.state("ΣS", "Σ ω over the epoch's steps so far");
        let total_log = b.state("ΣP", "Σ log(1 − ω) over the epoch's steps so far");
        History { sums, logs, last, count, total, total_log }
    });
    // The margin at θ, each coordinate caught up first.
    body.push(Stmt::Set(a, k(0.0)));
    let mut read = vec![];
    if let Some(h) = &history {
        body.push(Stmt::Store(h.sums, Index::Step, s(h.total)));
        body.push(Stmt::Store(h.logs, Index::Step, s(h.total_log)));
        read.push(Stmt::Store(zbar, j, h.catch_up(at(zbar, j), Expr::Idx(Index::Step), prox.l1, lip)));
        read.push(Stmt::Store(w, j, prox_of(&b, at(zbar, j))));
    }
    read.push(Stmt::Set(a, add(s(a), mul(Expr::Value, at(theta, j)))));
    body.push(each(Range::RowNonZeros, read));
    // The intercept's iterate (b itself, or beside its average b̄ when w is averaged) and its
    // surrogate average z̄b: the same recursion with no prox, O(1) per step.
    let intercept = b.intercept().map(|slot| {
        let iterate = if average { b.state("bθ", "the intercept's iterate; b is its average") } else { slot };
        (slot, iterate, b.state("z̄b", "the intercept's averaged surrogate minimiser"))
    });
    if let Some((_, iterate, _)) = intercept {
        body.push(Stmt::Set(a, add(s(a), s(iterate))));
    }
    body.push(Stmt::Set(g, b.weighted_dloss(model, st, y, s(a))));
    body.push(Stmt::Guard(s(g), "the loss derivative ℓ′".into()));
    // ω·g/L, the weight of this example's gradient in z̄.
    body.push(Stmt::Set(step, div(mul(s(omega), s(g)), s(lip))));
    if let Some((_, iterate, zb)) = intercept {
        let mixed = add(mul(sub(k(1.0), s(omega)), s(zb)), mul(s(omega), s(iterate)));
        body.extend([Stmt::Set(zb, sub(mixed, s(step))), Stmt::Set(iterate, s(zb))]);
    }
    let mix = |e: Expr| add(mul(sub(k(1.0), s(omega)), at(zbar, j)), mul(s(omega), e));
    match &history {
        Some(h) => {
            let mut write = vec![
                Stmt::Store(zbar, j, sub(mix(at(w, j)), mul(s(step), Expr::Value))),
                Stmt::Store(w, j, prox_of(&b, at(zbar, j))),
            ];
            write.push(Stmt::Store(h.last, j, add(Expr::Idx(Index::Step), k(1.0))));
            body.push(each(Range::RowNonZeros, write));
            body.push(Stmt::Set(h.total, add(s(h.total), s(omega))));
            let log_keep = call(Func::Log, vec![call(Func::Max, vec![sub(k(1.0), s(omega)), k(LOG_FLOOR)])]);
            body.push(Stmt::Set(h.total_log, add(s(h.total_log), log_keep)));
            body.push(Stmt::Set(h.count, add(s(h.count), k(1.0))));
        }
        None => {
            let mut averages = vec![Stmt::Store(zbar, j, mix(at(theta, j)))];
            if let Some((eta, t)) = b.tangent() {
                let weight = div(k(1.0), add(call(Func::Abs, vec![at(theta, j)]), k(t.eps)));
                averages.push(Stmt::Store(eta, j, add(mul(sub(k(1.0), s(omega)), at(eta, j)), mul(s(omega), weight))));
            }
            body.push(each(Range::Upto(Len::Features), averages));
            body.push(each(
                Range::RowNonZeros,
                vec![Stmt::Store(zbar, j, sub(at(zbar, j), mul(s(step), Expr::Value)))],
            ));
            body.push(each(Range::Upto(Len::Features), vec![Stmt::Store(theta, j, prox_of(&b, at(zbar, j)))]));
            if let Some(next) = next {
                body.push(Stmt::Set(next, weight_at(add(s(t), k(1.0)))));
                let mean = add(mul(sub(k(1.0), s(next)), at(w, j)), mul(s(next), at(theta, j)));
                body.push(each(Range::Upto(Len::Features), vec![Stmt::Store(w, j, mean)]));
                if let Some((slot, iterate, _)) = intercept {
                    let mean = add(mul(sub(k(1.0), s(next)), s(slot)), mul(s(next), s(iterate)));
                    body.push(Stmt::Set(slot, mean));
                }
            }
        }
    }
    b.plan.epoch = vec![];
    if let Some(h) = &history {
        b.plan.epoch.extend([Stmt::Set(h.count, k(0.0)), Stmt::Set(h.total, k(0.0)), Stmt::Set(h.total_log, k(0.0))]);
    }
    b.plan.epoch.push(each(Range::Perm(Len::Rows), body));
    // Every coordinate caught up before the history restarts (and before anyone reads w).
    if let Some(h) = &history {
        b.plan.epoch.push(each(
            Range::Upto(Len::Features),
            vec![
                Stmt::Store(zbar, j, h.catch_up(at(zbar, j), s(h.count), prox.l1, lip)),
                Stmt::Store(w, j, prox_of(&b, at(zbar, j))),
                Stmt::Store(h.last, j, k(0.0)),
            ],
        ));
    }
    // A warm start (--init, a path's next point, the REPL) hands over w: the surrogates' average
    // starts there (and the iterate beside an average, and a `logeps` tangent's weights), as at
    // w = 0 cold. Without it θ = prox(z̄ = 0) would throw the start away at the first read.
    let mut start = vec![Stmt::Store(zbar, j, at(w, j))];
    if average {
        start.push(Stmt::Store(theta, j, at(w, j)));
    }
    if let Some((eta, t)) = b.tangent() {
        start.push(Stmt::Store(eta, j, div(k(1.0), add(call(Func::Abs, vec![at(w, j)]), k(t.eps)))));
    }
    b.plan.init.push(each(Range::Upto(Len::Features), start));
    if let Some((slot, iterate, zb)) = intercept {
        b.plan.init.push(Stmt::Set(zb, s(slot)));
        if average {
            b.plan.init.push(Stmt::Set(iterate, s(slot)));
        }
    }
    b.report(model, st, w, y, a);
    b.plan
}

/// The lazy plan's bookkeeping (see the module docs).
struct History {
    sums: super::super::VecId,
    logs: super::super::VecId,
    last: super::super::VecId,
    count: super::super::ScalarId,
    total: super::super::ScalarId,
    total_log: super::super::ScalarId,
}

impl History {
    /// z̄[j] after the steps it missed, up to position `to`, with τ = λ/L.
    fn catch_up(&self, value: Expr, to: Expr, l1: f64, lip: super::super::ScalarId) -> Expr {
        Expr::CatchUp(Box::new(CatchUp {
            value,
            from: at(self.last, Index::Feature),
            to,
            sums: self.sums,
            logs: self.logs,
            sums_to: s(self.total),
            logs_to: s(self.total_log),
            tau: mul(div(k(1.0), s(lip)), k(l1)),
        }))
    }
}
