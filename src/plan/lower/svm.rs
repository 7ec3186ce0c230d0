//! The linear SVM as Argyriou, Baldassarre, Micchelli & Pontil solve it (§4 of their paper,
//! docs/algorithms.md §3): F(w) = c·(1/m)·Σᵢ hinge(yᵢ⟨xᵢ, w⟩) + λ·½‖w‖² is λ times
//! ½‖w − 0‖² + ω(Bw) with B = diag(y)·X and ω(ζ) = κ·Σᵢ hinge(ζᵢ), κ = c/(λm), so its minimiser
//! is prox_{ω∘B}(0), computed by the Picard iteration on the dual v ∈ ℝᵐ:
//!
//!   sᵢ = vᵢ + yᵢ⟨xᵢ, w⟩   ((I − μBBᵀ)v, since w = −μBᵀv),
//!   vᵢ ← sᵢ − prox_{(κ/μ)·hinge}(sᵢ) = sᵢ − min(sᵢ + κ/μ, max(sᵢ, 1)),
//!   w = −μ·Σᵢ vᵢyᵢxᵢ,
//!
//! with μ = 1/λ_max(BBᵀ) = 1/λ_max(XXᵀ) and FISTA momentum (with gradient restart) on v; w is
//! linear in v, so the momentum point's w̃ costs O(d). An iteration is two passes over the
//! data. The dual v is also the certificate's dual point: uᵢ = yᵢ·μ·vᵢ/κ, which the iteration
//! keeps in the domain of hinge* (yᵢuᵢ ∈ [−1, 0]).

use super::super::build::*;
use super::super::{Expr, Index, Len, ParamInit, Plan, Range, ScalarRole, Stmt, VecRole};
use super::Builder;
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::symbolic::Func;

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx) -> Plan {
    let mut b = Builder::new(model, SolverKind::Picard, false, prox, None);
    let regs: Vec<&str> = model.regs.iter().map(|r| r.text.as_str()).collect();
    b.plan.info.summary = format!(
        "loss hinge, R = {}: the SVM as prox_{{ω∘B}}(0), B = diag(y)·X, ω = κ·Σ hinge; Picard on the dual",
        regs.join(" + ")
    );
    let (i, j) = (Index::Row, Index::Feature);
    let c = model.loss.coef.value;
    let lambda = prox.l2;
    let (y, w) = b.labels_and_weights();
    let mu = b.scalar("μ", ScalarRole::Param, ParamInit::DualStep, "1/λmax(BBᵀ) = 1/λmax(XXᵀ), power iteration");
    let kappa = b.scalar("κ", ScalarRole::Param, ParamInit::PerRow { scale: c / lambda }, "c/(λm): ω = κ·Σ hinge");
    let v = b.vector("v", Len::Rows, VecRole::State, 0.0);
    let vhat = b.vector("v̂", Len::Rows, VecRole::State, 0.0);
    let vprev = b.vector("vprev", Len::Rows, VecRole::State, 0.0);
    let wt = b.vector("w̃", Len::Features, VecRole::State, 0.0);
    let wprev = b.vector("wprev", Len::Features, VecRole::State, 0.0);
    let theta = b.scalar("θ", ScalarRole::State, ParamInit::Value(1.0), "FISTA momentum");
    let a = b.local("a");
    let sv = b.local("s");
    let r = b.local("r");

    // w = −μ·Σᵢ vᵢyᵢxᵢ from the dual (a warm start from weights alone restarts the dual at 0).
    let rebuild_w = vec![
        each(Range::Upto(Len::Features), vec![Stmt::Store(w, j, k(0.0))]),
        each(
            Range::Upto(Len::Rows),
            vec![
                Stmt::Set(sv, mul(Expr::Neg(Box::new(s(mu))), mul(at(v, i), at(y, i)))),
                each(Range::RowNonZeros, vec![Stmt::Store(w, j, add(at(w, j), mul(s(sv), Expr::Value)))]),
            ],
        ),
    ];
    b.plan.init = rebuild_w.clone();
    b.plan.init.extend([
        each(Range::Upto(Len::Rows), vec![Stmt::Store(vhat, i, at(v, i))]),
        each(Range::Upto(Len::Features), vec![Stmt::Store(wt, j, at(w, j))]),
        Stmt::Set(theta, k(1.0)),
    ]);

    let t = div(s(kappa), s(mu));
    let hinge_prox = call(Func::Min, vec![add(s(sv), t), call(Func::Max, vec![s(sv), k(1.0)])]);
    b.plan.epoch = vec![
        Stmt::Set(r, k(0.0)),
        each(
            Range::Upto(Len::Rows),
            vec![
                Stmt::Set(a, k(0.0)),
                each(Range::RowNonZeros, vec![Stmt::Set(a, add(s(a), mul(Expr::Value, at(wt, j))))]),
                Stmt::Set(sv, add(at(vhat, i), mul(at(y, i), s(a)))),
                Stmt::Guard(s(sv), "the Picard point s = v + y·⟨x, w⟩".into()),
                Stmt::Store(vprev, i, at(v, i)),
                Stmt::Store(v, i, sub(s(sv), hinge_prox)),
                Stmt::Set(r, add(s(r), mul(sub(at(vhat, i), at(v, i)), sub(at(v, i), at(vprev, i))))),
            ],
        ),
        each(Range::Upto(Len::Features), vec![Stmt::Store(wprev, j, at(w, j))]),
    ];
    b.plan.epoch.extend(rebuild_w);
    let momentum = super::fista_momentum(&mut b, theta, r, "β");
    let beta = momentum.beta;
    b.plan.epoch.extend(momentum.around(vec![
        each(
            Range::Upto(Len::Rows),
            vec![Stmt::Store(vhat, i, add(at(v, i), mul(s(beta), sub(at(v, i), at(vprev, i)))))],
        ),
        each(
            Range::Upto(Len::Features),
            vec![Stmt::Store(wt, j, add(at(w, j), mul(s(beta), sub(at(w, j), at(wprev, j)))))],
        ),
    ]));
    b.report(model, st, w, y, a);
    // The Picard dual, as the loss's dual point: uᵢ = yᵢ·μ·vᵢ/κ.
    b.plan.objective.dual = Some(div(mul(at(y, i), mul(s(mu), at(v, i))), s(kappa)));
    b.plan
}
