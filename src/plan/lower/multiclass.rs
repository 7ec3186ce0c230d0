//! Multiclass softmax regression on W ∈ ℝ^{d×k} by batch proximal gradient with FISTA
//! momentum and gradient restart — proxgrad's loop (see `proxgrad.rs`) on a matrix:
//!
//!   scores sᵢ = Ŵᵀxᵢ,  pᵢ = softmax(sᵢ),  G = (c/m)·Σᵢ xᵢ(pᵢ − e_{yᵢ})ᵀ,
//!   W⁺ = prox_{R/L}(Ŵ − G/L): per entry (ℓ1, ½‖·‖², box), then per row (ℓ1/ℓ2, ℓ1/ℓ∞),
//!
//! with L = c·½·λ_max(XᵀX)/m (the softmax Hessian is at most ½ in operator norm). Rows of W
//! are contiguous, so a row prox is one runtime call on W[j, 0..k]. An iteration costs
//! O(nnz·k + d·k).
//!
//! Per-class intercepts (`var b: vec[classes(y)]`, unregularized) are k more coordinates with a
//! column of ones: each score starts at b̂_c, b takes the plain gradient step
//! b⁺ = b̂ − (c/m)·Σᵢ(pᵢ − e_{yᵢ})/L′ with FISTA's momentum and restart, and L′ = L + c·½ covers
//! the column of ones (‖[X 1]‖² ≤ ‖X‖² + m).

use super::super::build::*;
use super::super::{
    Expr, Index, Len, ParamInit, Plan, Range, ScalarId, ScalarRole, Slice, Stmt, VecId, VecRole, VectorTerm,
};
use super::Builder;
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::symbolic::{Cmp, Func};

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx, rows: Option<VectorTerm>) -> Plan {
    let mut b = Builder::new(model, SolverKind::Proxgrad, false, prox, rows);
    b.plan.info.summary = summary(model, prox, rows);
    b.plan.info.classification = true;
    let beta = st.smooth.expect("softmax is smooth");
    let (j, cl) = (Index::Feature, Index::Class);
    let y = b.vector("y", Len::Rows, VecRole::Labels, 0.0);
    // The rows' weights ωᵢ: each row's residual, so its share of G, carries ωᵢ.
    let sw = model.loss.weighted.then(|| b.vector("ω", Len::Rows, VecRole::RowWeights, 1.0));
    let w = b.matrix("W", Len::Features, Len::Classes, VecRole::Weights, crate::plan::clamp(0.0, prox.lo, prox.hi));
    let lip = b.lipschitz(model, beta);
    let mean = b.per_example_weight(model);
    let v = b.matrix("Ŵ", Len::Features, Len::Classes, VecRole::State, 0.0);
    let wp = b.matrix("Wprev", Len::Features, Len::Classes, VecRole::State, 0.0);
    let g = b.matrix("G", Len::Features, Len::Classes, VecRole::State, 0.0);
    let sc = b.vector("s", Len::Classes, VecRole::State, 0.0);
    let theta = b.scalar("θ", ScalarRole::State, ParamInit::Value(1.0), "FISTA momentum");
    let top = b.local("top");
    let z = b.local("Z");
    let r = b.local("r");

    let classes = |body: Vec<Stmt>| each(Range::Upto(Len::Classes), body);
    let entries = |body: Vec<Stmt>| each(Range::Upto(Len::Features), vec![classes(body)]);
    let ld = |m| Expr::LoadAt(m, j, cl);
    let st_at = |m, e| Stmt::StoreAt(m, j, cl, e);

    // Per-class offsets: b, its extrapolated point b̂, its last value and its gradient.
    let offsets = model.intercept_per_class.then(|| Offsets {
        b: b.vector("b", Len::Classes, VecRole::State, 0.0),
        hat: b.vector("b̂", Len::Classes, VecRole::State, 0.0),
        prev: b.vector("bprev", Len::Classes, VecRole::State, 0.0),
        grad: b.vector("gb", Len::Classes, VecRole::State, 0.0),
    });
    let lip = match &offsets {
        Some(_) => {
            let cb = model.loss.coef.value * beta;
            let lb = match sw {
                Some(_) => b.scalar(
                    "Lb",
                    ScalarRole::Param,
                    ParamInit::MeanWeight { scale: cb },
                    "c·β·Σωᵢ/m: the offsets' column of ones adds ≤ c·β·Σωᵢ/m to L",
                ),
                None => b.param("Lb", cb, "c·β: the offsets' column of ones adds ≤ c·β to L"),
            };
            let total = b.state("L′", "L + c·β, the step bound with the offsets");
            b.plan.init.push(Stmt::Set(total, add(s(lip), s(lb))));
            total
        }
        None => lip,
    };

    b.plan.init.extend([entries(vec![st_at(v, ld(w))]), Stmt::Set(theta, k(1.0))]);
    if let Some(o) = &offsets {
        b.plan.init.push(classes(vec![Stmt::Store(o.hat, cl, at(o.b, cl))]));
    }

    let prox_step = b.coordinate_prox(sub(ld(v), div(ld(g), s(lip))), div(k(1.0), s(lip)));
    let mut per_row = vec![classes(vec![st_at(wp, ld(w)), st_at(w, prox_step)])];
    let step = b.scaled_inverse_step(lip);
    // A row term is one call per row; the nuclear norm one SVT of the whole of W, after the
    // per-entry part of every row.
    let whole = rows.filter(|t| t.whole_matrix());
    if let Some(term) = rows.filter(|t| !t.whole_matrix()) {
        per_row.push(Stmt::Call(term.routine(), Slice { buf: w, row: Some(j) }, div(k(term.arg(1.0)), step.clone())));
    }
    let restart_test = classes(vec![Stmt::Set(r, add(s(r), mul(sub(ld(v), ld(w)), sub(ld(w), ld(wp)))))]);
    if whole.is_none() {
        per_row.push(restart_test.clone());
    }

    // One example: its scores, the softmax residual, and its share of G.
    let mut example = vec![
        classes(vec![Stmt::Store(sc, cl, offsets.as_ref().map_or(k(0.0), |o| at(o.hat, cl)))]),
        each(Range::RowNonZeros, vec![classes(vec![Stmt::Store(sc, cl, add(at(sc, cl), mul(Expr::Value, ld(v))))])]),
    ];
    let weight = match sw {
        Some(sw) => mul(s(mean), at(sw, Index::Row)),
        None => s(mean),
    };
    example.extend(softmax_residual(y, sc, top, z, Some(weight)));
    example.push(each(Range::RowNonZeros, vec![classes(vec![st_at(g, add(ld(g), mul(Expr::Value, at(sc, cl))))])]));
    if let Some(o) = &offsets {
        example.push(classes(vec![Stmt::Store(o.grad, cl, add(at(o.grad, cl), at(sc, cl)))]));
    }

    b.plan.epoch = vec![entries(vec![st_at(g, k(0.0))])];
    if let Some(o) = &offsets {
        b.plan.epoch.push(classes(vec![Stmt::Store(o.grad, cl, k(0.0))]));
    }
    b.plan.epoch.extend([each(Range::Upto(Len::Rows), example), Stmt::Set(r, k(0.0))]);
    if let Some(o) = &offsets {
        // The offsets' gradient step (no prox), and their share of the restart test.
        b.plan.epoch.push(classes(vec![
            Stmt::Store(o.prev, cl, at(o.b, cl)),
            Stmt::Store(o.b, cl, sub(at(o.hat, cl), div(at(o.grad, cl), s(lip)))),
            Stmt::Set(r, add(s(r), mul(sub(at(o.hat, cl), at(o.b, cl)), sub(at(o.b, cl), at(o.prev, cl))))),
        ]));
    }
    b.plan.epoch.push(each(Range::Upto(Len::Features), per_row));
    if let Some(term) = whole {
        b.plan.epoch.extend([
            Stmt::Call(term.routine(), Slice { buf: w, row: None }, div(k(term.arg(1.0)), step)),
            each(Range::Upto(Len::Features), vec![restart_test]),
        ]);
    }
    let momentum = super::fista_momentum(&mut b, theta, r, "μ");
    let mu = momentum.beta;
    let mut extrapolate = vec![entries(vec![st_at(v, add(ld(w), mul(s(mu), sub(ld(w), ld(wp)))))])];
    if let Some(o) = &offsets {
        extrapolate.push(classes(vec![Stmt::Store(
            o.hat,
            cl,
            add(at(o.b, cl), mul(s(mu), sub(at(o.b, cl), at(o.prev, cl)))),
        )]));
    }
    b.plan.epoch.extend(momentum.around(extrapolate));
    b.report_multiclass(model, w, z);
    if let Some(o) = &offsets {
        b.plan.objective.class_intercept = Some(o.b);
        if let Some(c) = b.plan.certificate.as_mut() {
            c.intercept = true;
        }
    }
    b.plan
}

/// The per-class offsets' slots in the FISTA plan.
struct Offsets {
    b: VecId,
    hat: VecId,
    prev: VecId,
    grad: VecId,
}

/// The scores in `sc` (sᵢ = Wᵀxᵢ) become weight·(softmax(sᵢ) − e_{yᵢ}), the gradient of
/// weight·ℓ(yᵢ, sᵢ) in the scores (no weight: 1); `z` is left holding the normaliser, for the report. The
/// scores are shifted by the largest so exp never overflows.
pub(super) fn softmax_residual(y: VecId, sc: VecId, top: ScalarId, z: ScalarId, weight: Option<Expr>) -> Vec<Stmt> {
    let cl = Index::Class;
    let classes = |body: Vec<Stmt>| each(Range::Upto(Len::Classes), body);
    // [c = y[i]], with the label a class number 0..k−1.
    let is_label = Expr::Select(
        Cmp::Lt,
        Box::new(call(Func::Abs, vec![sub(at(y, Index::Row), Expr::Idx(cl))])),
        Box::new(k(0.5)),
        Box::new(k(1.0)),
        Box::new(k(0.0)),
    );
    let residual = sub(div(at(sc, cl), s(z)), is_label);
    vec![
        Stmt::Set(top, k(f64::NEG_INFINITY)),
        classes(vec![Stmt::Set(top, call(Func::Max, vec![s(top), at(sc, cl)]))]),
        Stmt::Set(z, k(0.0)),
        classes(vec![
            Stmt::Store(sc, cl, call(Func::Exp, vec![sub(at(sc, cl), s(top))])),
            Stmt::Set(z, add(s(z), at(sc, cl))),
        ]),
        Stmt::Guard(s(z), "the softmax normaliser Σ exp(s − max s)".into()),
        classes(vec![Stmt::Store(sc, cl, weight.map_or(residual.clone(), |c| mul(c, residual)))]),
    ]
}

/// The dump's header: the model and the prox, entry by entry and row by row.
pub(super) fn summary(model: &Model, prox: CoordinateProx, rows: Option<VectorTerm>) -> String {
    let regs: Vec<&str> = model.regs.iter().map(|r| r.text.as_str()).collect();
    let mut s = format!(
        "loss softmax (smooth, β = {}), R = {}",
        crate::symbolic::fmt_num(model.loss.def.smooth.unwrap_or(0.5)),
        if regs.is_empty() { "0".to_string() } else { regs.join(" + ") }
    );
    if !model.constraints.is_empty() {
        let cs: Vec<&str> = model.constraints.iter().map(|c| c.text.as_str()).collect();
        s.push_str(&format!(", st {}", cs.join(", ")));
    }
    s.push_str(&format!("; prox per entry {}", prox.describe()));
    match rows {
        Some(t) if t.whole_matrix() => s.push_str(&format!(", then {} of W ({})", t.routine().name(), t.describe())),
        Some(t) => s.push_str(&format!(", then {} of each row ({} of W[j, ·])", t.routine().name(), t.describe())),
        None => {}
    }
    s
}
