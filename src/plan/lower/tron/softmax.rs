//! The Newton-CG iteration of [`super`] on a multiclass W ∈ ℝ^{d×k} with softmax:
//! F(W) = (c/m)·Σᵢ (logsumexp(aᵢ) − a_{i,yᵢ}) + (λ/2)‖W‖², scores aᵢ = Wᵀxᵢ.
//!
//! The scores A (mat[m, k]) play z's part. The gradient pass stores each row's probabilities
//! pᵢ = softmax(aᵢ) in P (mat[m, k]), so a Hessian-vector product needs no exp: for a
//! direction V, tᵢ = Vᵀxᵢ, then (diag(pᵢ) − pᵢpᵢᵀ)·tᵢ = pᵢ ⊙ (tᵢ − pᵢᵀtᵢ), scattered as
//! xᵢ·((c/m)·pᵢ ⊙ (tᵢ − pᵢᵀtᵢ))ᵀ: two passes over the row's non-zeros, k entries each. CG is
//! not preconditioned (`Newton::m`), so the gradient pass scatters G alone. Every per-row
//! vector of k (the residual, tᵢ) lives in a vec[k] scratch.

use super::super::super::build::*;
use super::super::super::{Expr, Index, Len, Plan, Range, ScalarId, Stmt, VecId, VecRole};
use super::super::Builder;
use super::{Newton, Passes, Var};
use crate::analysis::CoordinateProx;
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::symbolic::{Cmp, Func};

pub(super) fn lower(model: &Model, prox: CoordinateProx) -> Plan {
    let mut b = Builder::new(model, SolverKind::Tron, false, prox, None);
    b.plan.info.summary =
        super::summary(model, "Newton steps by preconditioned CG on W, each row's ∇²ℓ = diag(p) − ppᵀ");
    b.plan.info.classification = true;
    let (i, j, cl) = (Index::Row, Index::Feature, Index::Class);
    let y = b.vector("y", Len::Rows, VecRole::Labels, 0.0);
    // The rows' weights ωᵢ (`E[s·softmax(...)]`): each row's ℓ, its gradient and its Hessian
    // block carry ωᵢ.
    let sw = model.loss.weighted.then(|| b.vector("ω", Len::Rows, VecRole::RowWeights, 1.0));
    let weighted = move |e: Expr| match sw {
        Some(sw) => mul(at(sw, Index::Row), e),
        None => e,
    };
    let w = b.matrix("W", Len::Features, Len::Classes, VecRole::Weights, 0.0);
    // `var b: vec[classes(y)]`: one offset per class's score, unregularized.
    let offsets = model.intercept_per_class.then(|| b.vector("b", Len::Classes, VecRole::State, 0.0));
    let n = Newton::declare(&mut b, model, Var { buf: w, b: None, classes: offsets }, prox.l2, true);
    let scores = b.matrix("A", Len::Rows, Len::Classes, VecRole::State, 0.0);
    let probs = b.matrix("P", Len::Rows, Len::Classes, VecRole::State, 0.0);
    let lz = b.vector("ℓz", Len::Rows, VecRole::State, 0.0);
    let xs = b.matrix("XS", Len::Rows, Len::Classes, VecRole::State, 0.0);
    let e = b.vector("e", Len::Classes, VecRole::State, 0.0);
    let t = b.vector("t", Len::Classes, VecRole::State, 0.0);
    let (top, z, ay, pt) = (b.local("top"), b.local("Z"), b.local("ay"), b.local("pt"));
    let unused_margin = b.local("a");

    let classes = |body: Vec<Stmt>| each(Range::Upto(Len::Classes), body);
    let row_entry = |m: VecId| Expr::LoadAt(m, i, cl);
    let entry = |m: VecId| Expr::LoadAt(m, j, cl);
    // Xᵀ-side product of a row: into[i, c] (or into[c]) = Σⱼ xᵢⱼ·from[j, c], plus the class
    // offsets `from` has (b[c] for W, s_b[c] for S, …).
    let row_times = |from: Var, into: Expr, store: &dyn Fn(Expr) -> Stmt| {
        let offset = from.classes.map_or(k(0.0), |o| at(o, cl));
        let from = from.buf;
        vec![
            classes(vec![store(offset)]),
            each(Range::RowNonZeros, vec![classes(vec![store(add(into.clone(), mul(Expr::Value, entry(from))))])]),
        ]
    };
    let store_scores = |e: Expr| Stmt::StoreAt(scores, i, cl, e);
    b.plan.init = vec![each(Range::Upto(Len::Rows), row_times(n.w, row_entry(scores), &store_scores))];

    // 1. Probabilities, ℓ, and each row's share of G and of the Hessian's diagonal.
    let label = |yes: Expr, no: Expr| {
        Expr::Select(
            Cmp::Lt,
            Box::new(call(Func::Abs, vec![sub(at(y, i), Expr::Idx(cl))])),
            Box::new(k(0.5)),
            Box::new(yes),
            Box::new(no),
        )
    };
    // No penalty: ‖∇F(0)‖², the gradient rule's reference, at W = 0 and b = 0 whatever the run
    // starts from: every class's probability is 1/k there, each row's residual 1/k − [y = c].
    if let Some(g0) = n.unpenalised {
        let kk = b.local("k");
        let mut at_zero = vec![classes(vec![Stmt::Store(
            e,
            cl,
            mul(s(n.mean), weighted(sub(div(k(1.0), s(kk)), label(k(1.0), k(0.0))))),
        )])];
        at_zero.push(each(
            Range::RowNonZeros,
            vec![classes(vec![Stmt::StoreAt(n.g.buf, j, cl, add(entry(n.g.buf), mul(Expr::Value, at(e, cl))))])],
        ));
        if let Some(gb) = n.g.classes {
            at_zero.push(classes(vec![Stmt::Store(gb, cl, add(at(gb, cl), at(e, cl)))]));
        }
        b.plan.init.extend([Stmt::Set(kk, k(0.0)), classes(vec![Stmt::Set(kk, add(s(kk), k(1.0)))])]);
        b.plan.init.push(each(Range::Upto(Len::Features), vec![classes(vec![Stmt::StoreAt(n.g.buf, j, cl, k(0.0))])]));
        b.plan.init.extend(n.g.classes.map(|gb| classes(vec![Stmt::Store(gb, cl, k(0.0))])));
        b.plan.init.push(each(Range::Upto(Len::Rows), at_zero));
        b.plan.init.push(Stmt::Set(g0, k(0.0)));
        b.plan.init.push(each(
            Range::Upto(Len::Features),
            vec![classes(vec![Stmt::Set(g0, add(s(g0), mul(entry(n.g.buf), entry(n.g.buf))))])],
        ));
        b.plan.init.extend(n.g.classes.map(|gb| classes(vec![Stmt::Set(g0, add(s(g0), mul(at(gb, cl), at(gb, cl))))])));
    }
    let mut gradient_row = largest(top, row_entry(scores));
    gradient_row.extend([
        Stmt::Set(z, k(0.0)),
        classes(vec![
            Stmt::StoreAt(probs, i, cl, call(Func::Exp, vec![sub(row_entry(scores), s(top))])),
            Stmt::Set(z, add(s(z), row_entry(probs))),
        ]),
        Stmt::Guard(s(z), "the softmax normaliser Σ exp(a − max a)".into()),
        Stmt::Set(ay, k(0.0)),
        classes(vec![
            Stmt::StoreAt(probs, i, cl, div(row_entry(probs), s(z))),
            Stmt::Store(e, cl, mul(s(n.mean), weighted(sub(row_entry(probs), label(k(1.0), k(0.0)))))),
            Stmt::Set(ay, label(row_entry(scores), s(ay))),
        ]),
        Stmt::Store(lz, i, weighted(sub(add(s(top), call(Func::Log, vec![s(z)])), s(ay)))),
        each(
            Range::RowNonZeros,
            vec![classes(vec![Stmt::StoreAt(n.g.buf, j, cl, add(entry(n.g.buf), mul(Expr::Value, at(e, cl))))])],
        ),
    ]);
    // The offsets' column is all ones: their share of G is e.
    if let Some(gb) = n.g.classes {
        gradient_row.push(classes(vec![Stmt::Store(gb, cl, add(at(gb, cl), at(e, cl)))]));
    }

    // 2. tᵢ = Vᵀxᵢ, then (c/m)·pᵢ ⊙ (tᵢ − pᵢᵀtᵢ) scattered into HV.
    let mut hv_row = row_times(n.v, at(t, cl), &|e| Stmt::Store(t, cl, e));
    hv_row.extend([
        Stmt::Set(pt, k(0.0)),
        classes(vec![Stmt::Set(pt, add(s(pt), mul(row_entry(probs), at(t, cl))))]),
        classes(vec![Stmt::Store(t, cl, mul(s(n.mean), weighted(mul(row_entry(probs), sub(at(t, cl), s(pt))))))]),
        each(
            Range::RowNonZeros,
            vec![classes(vec![Stmt::StoreAt(n.hv.buf, j, cl, add(entry(n.hv.buf), mul(Expr::Value, at(t, cl))))])],
        ),
    ]);
    if let Some(hb) = n.hv.classes {
        hv_row.push(classes(vec![Stmt::Store(hb, cl, add(at(hb, cl), at(t, cl)))]));
    }

    // 3. XS = X·S once, then ℓ at A + η·XS per trial.
    let moved = add(row_entry(scores), mul(s(n.eta), row_entry(xs)));
    let mut trial_row = largest(top, moved.clone());
    trial_row.extend([
        Stmt::Set(z, k(0.0)),
        Stmt::Set(ay, k(0.0)),
        classes(vec![
            Stmt::Set(z, add(s(z), call(Func::Exp, vec![sub(moved.clone(), s(top))]))),
            Stmt::Set(ay, label(moved.clone(), s(ay))),
        ]),
        Stmt::Set(
            n.change,
            add(s(n.change), sub(weighted(sub(add(s(top), call(Func::Log, vec![s(z)])), s(ay))), at(lz, i))),
        ),
    ]);
    let passes = Passes {
        losses: lz,
        gradient: vec![each(Range::Upto(Len::Rows), gradient_row)],
        hessian: vec![each(Range::Upto(Len::Rows), hv_row)],
        direction: vec![each(
            Range::Upto(Len::Rows),
            row_times(n.step, row_entry(xs), &|e| Stmt::StoreAt(xs, i, cl, e)),
        )],
        trial: vec![each(Range::Upto(Len::Rows), trial_row)],
        advance: vec![each(Range::Upto(Len::Rows), vec![classes(vec![Stmt::StoreAt(scores, i, cl, moved)])])],
    };
    b.plan.epoch = n.epoch(&mut b, passes);
    b.report_multiclass(model, w, unused_margin);
    b.plan.objective.class_intercept = offsets;
    if let (Some(c), Some(_)) = (b.plan.certificate.as_mut(), offsets) {
        c.intercept = true;
    }
    // No penalty: the gradient's norm ends the run (see `Newton::unpenalised`).
    if n.unpenalised.is_some() {
        b.plan.certificate = None;
        b.plan.uncertified = crate::plan::Uncertified::Gradient { norm: n.estimate };
    }
    b.plan
}

/// top = max_c a_c: the scores are shifted by the largest before exp, which never overflows.
fn largest(top: ScalarId, a: Expr) -> Vec<Stmt> {
    vec![
        Stmt::Set(top, k(f64::NEG_INFINITY)),
        each(Range::Upto(Len::Classes), vec![Stmt::Set(top, call(Func::Max, vec![s(top), a]))]),
    ]
}
