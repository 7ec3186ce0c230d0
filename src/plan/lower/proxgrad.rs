//! Batch proximal gradient with FISTA momentum and gradient-based adaptive restart
//! (docs/algorithms.md §3's outer loop; O'Donoghue & Candès' restart):
//!
//!   g = ∇f(ŵ) = (c/m)·Xᵀℓ′(y, Xŵ),   w⁺ = prox_{R/L}(ŵ − g/L),
//!   restart when ⟨ŵ − w⁺, w⁺ − w⟩ > 0 (momentum points uphill), else
//!   θ⁺ = (1 + √(1 + 4θ²))/2,  ŵ = w⁺ + ((θ − 1)/θ⁺)(w⁺ − w).
//!
//! L = c·β·λ_max(XᵀX)/m comes from power iteration when the data is bound. One iteration is
//! one pass over the rows plus O(d) work.
//!
//! A vector term (ℓ2 or ℓ∞ norm, ℓ1/ℓ2 ball, simplex) is one runtime call on w after the
//! per-coordinate part of the prox; a set also projects the starting point in `init`, so every
//! iterate, warm starts included, is feasible. A composite ω∘B is the Picard fixed point on w
//! after the ½‖·‖² scaling, except `group_l2` over disjoint groups, whose prox is separable per
//! group: one `group_shrink`, no dual and no inner iterations.

use super::super::build::*;
use super::super::{
    Composite, CompositeProx, Expr, Len, OperatorSpec, ParamInit, PicardCall, Plan, Range, ScalarRole, Slice, Stmt,
    VecRole, VectorTerm,
};
use super::Builder;
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;

/// The inner Picard loop's stopping rule: ‖Δz‖ ≤ TOL·max(1, ‖z‖), or CAP iterations. Warm
/// starts make a few iterations typical once the outer iterates settle.
const PICARD_TOL: f64 = 1e-9;
const PICARD_CAP: u32 = 1000;

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx, vector: Option<VectorTerm>) -> Plan {
    build(model, st, prox, vector, None)
}

/// proxgrad with a composite term: the per-coordinate ½‖·‖² scaling, then the Picard prox, or
/// the closed-form shrink of each group when the term is group_l2 over disjoint groups.
pub(super) fn lower_composite(model: &Model, st: &Structure, prox: CoordinateProx, term: Composite) -> Plan {
    build(model, st, prox, None, Some(term))
}

fn build(
    model: &Model,
    st: &Structure,
    prox: CoordinateProx,
    vector: Option<VectorTerm>,
    composite: Option<Composite>,
) -> Plan {
    let mut b = Builder::new(model, SolverKind::Proxgrad, false, prox, vector);
    b.composite = composite.clone();
    if let Some(c) = &composite {
        let (how, which) = match c.prox {
            CompositeProx::Picard => ("picard", ""),
            CompositeProx::GroupShrink => ("group_shrink", " (disjoint groups)"),
        };
        b.plan.info.summary.push_str(&format!(
            ", then {how} for {}·{}(B w), B = {}{which}",
            crate::symbolic::fmt_num(c.coef),
            match (c.group_blocks, c.omega) {
                (true, crate::runtime::picard::Omega::BlockLinf) => "group_linf",
                (true, _) => "group_l2",
                (false, omega) => omega.name(),
            },
            operator_text(&c.operator)
        ));
    }
    let (y, w) = b.labels_and_weights();
    let beta = st.smooth.expect("proxgrad is only chosen for smooth losses");
    let j = super::super::Index::Feature;
    let lip = b.lipschitz(model, beta);
    let mean = b.per_example_weight(model);
    let v = b.vector("ŵ", Len::Features, VecRole::State, 0.0);
    let wp = b.vector("wprev", Len::Features, VecRole::State, 0.0);
    let g = b.vector("g", Len::Features, VecRole::State, 0.0);
    let theta = b.scalar("θ", ScalarRole::State, ParamInit::Value(1.0), "FISTA momentum");
    let a = b.local("a");
    let u = b.local("u");
    let r = b.local("r");

    // The intercept: its own gradient Σ c/m·ℓ′, its extrapolated point b̂ and previous value,
    // and a step bound that covers its column of ones (‖[X 1]‖² ≤ ‖X‖² + m, so L + c·β).
    let intercept = b.intercept().map(|slot| {
        let cb = model.loss.coef.value * beta;
        let lb = match model.loss.weighted {
            true => b.scalar(
                "Lb",
                ScalarRole::Param,
                ParamInit::MeanWeight { scale: cb },
                "c·β·Σωᵢ/m: the intercept's column of ones adds ≤ c·β·Σωᵢ/m to L",
            ),
            false => b.param("Lb", cb, "c·β: the intercept's column of ones adds ≤ c·β to L"),
        };
        Intercept {
            slot,
            hat: b.state("b̂", "the intercept's extrapolated point"),
            prev: b.local("bprev"),
            grad: b.local("gb"),
            lb,
        }
    });
    let lip = match &intercept {
        Some(m) => {
            let total = b.state("L′", "L + c·β, the step bound with the intercept");
            b.plan.init.push(Stmt::Set(total, add(s(lip), s(m.lb))));
            total
        }
        None => lip,
    };
    // The vector routine's argument: τ′λ for a norm, with τ′ = 1/(L + l2) the step left after
    // the per-coordinate ½‖·‖² scaling; the radius for a set.
    let step = b.scaled_inverse_step(lip);
    let routine_call = |term: VectorTerm| {
        let arg = if term.is_norm() { div(k(term.arg(1.0)), step.clone()) } else { k(term.arg(1.0)) };
        Stmt::Call(term.routine(), Slice { buf: w, row: None }, arg)
    };
    let mut init = std::mem::take(&mut b.plan.init);
    init.extend([each(Range::Upto(Len::Features), vec![Stmt::Store(v, j, at(w, j))]), Stmt::Set(theta, k(1.0))]);
    if let Some(m) = &intercept {
        init.push(Stmt::Set(m.hat, s(m.slot)));
    }
    b.plan.init = init;
    if let Some(term) = vector.filter(|t| !t.is_norm()) {
        b.plan.init.insert(0, routine_call(term));
    }

    let dloss = b.dloss(model, st, y, s(a));
    let prox_step = b.coordinate_prox(sub(at(v, j), div(at(g, j), s(lip))), div(k(1.0), s(lip)));
    b.plan.epoch = vec![
        each(Range::Upto(Len::Features), vec![Stmt::Store(g, j, k(0.0))]),
        each(
            Range::Upto(Len::Rows),
            [
                vec![
                    Stmt::Set(a, intercept.as_ref().map_or(k(0.0), |m| s(m.hat))),
                    each(Range::RowNonZeros, vec![Stmt::Set(a, add(s(a), mul(Expr::Value, at(v, j))))]),
                    Stmt::Set(u, mul(s(mean), dloss)),
                    Stmt::Guard(s(u), "the loss derivative ℓ′".into()),
                    each(Range::RowNonZeros, vec![Stmt::Store(g, j, add(at(g, j), mul(s(u), Expr::Value)))]),
                ],
                intercept.as_ref().map_or(vec![], |m| vec![Stmt::Set(m.grad, add(s(m.grad), s(u)))]),
            ]
            .concat(),
        ),
        Stmt::Set(r, k(0.0)),
    ];
    if let Some(m) = &intercept {
        b.plan.epoch.insert(0, Stmt::Set(m.grad, k(0.0)));
        // The intercept's gradient step (no prox), and its share of the restart test.
        b.plan.epoch.extend([
            Stmt::Set(m.prev, s(m.slot)),
            Stmt::Set(m.slot, sub(s(m.hat), div(s(m.grad), s(lip)))),
            Stmt::Set(r, mul(sub(s(m.hat), s(m.slot)), sub(s(m.slot), s(m.prev)))),
        ]);
    }
    let restart_test = Stmt::Set(r, add(s(r), mul(sub(at(v, j), at(w, j)), sub(at(w, j), at(wp, j)))));
    let coordinate_step =
        each(Range::Upto(Len::Features), vec![Stmt::Store(wp, j, at(w, j)), Stmt::Store(w, j, prox_step.clone())]);
    match (vector, &composite) {
        (None, None) => b.plan.epoch.push(each(
            Range::Upto(Len::Features),
            vec![Stmt::Store(wp, j, at(w, j)), Stmt::Store(w, j, prox_step), restart_test],
        )),
        (Some(term), _) => b.plan.epoch.extend([
            coordinate_step,
            routine_call(term),
            each(Range::Upto(Len::Features), vec![restart_test]),
        ]),
        (None, Some(c)) if c.prox == CompositeProx::GroupShrink => b.plan.epoch.extend([
            coordinate_step,
            Stmt::GroupShrink(w, div(k(c.coef), step)),
            each(Range::Upto(Len::Features), vec![restart_test]),
        ]),
        (None, Some(c)) => {
            let dual = b.vector("z", Len::OpRows, VecRole::State, 0.0);
            b.plan.epoch.extend([
                coordinate_step,
                Stmt::Picard(PicardCall {
                    target: w,
                    dual,
                    omega: c.omega,
                    gamma: div(k(c.coef), step),
                    tol: PICARD_TOL,
                    cap: PICARD_CAP,
                }),
                each(Range::Upto(Len::Features), vec![restart_test]),
            ]);
        }
    }
    let momentum = super::fista_momentum(&mut b, theta, r, "μ");
    let mu = momentum.beta;
    let mut extrapolate = vec![each(
        Range::Upto(Len::Features),
        vec![Stmt::Store(v, j, add(at(w, j), mul(s(mu), sub(at(w, j), at(wp, j)))))],
    )];
    if let Some(m) = &intercept {
        extrapolate.push(Stmt::Set(m.hat, add(s(m.slot), mul(s(mu), sub(s(m.slot), s(m.prev))))));
    }
    b.plan.epoch.extend(momentum.around(extrapolate));
    b.report(model, st, w, y, a);
    b.plan
}

/// The intercept's slots in the FISTA plan.
struct Intercept {
    slot: super::super::ScalarId,
    hat: super::super::ScalarId,
    prev: super::super::ScalarId,
    grad: super::super::ScalarId,
    lb: super::super::ScalarId,
}

/// B as the dump names it.
fn operator_text(op: &OperatorSpec) -> String {
    match op {
        OperatorSpec::Diff(Some(n)) => format!("diff({n})"),
        OperatorSpec::Diff(None) => "diff(d)".into(),
        OperatorSpec::Incidence(p) => format!("incidence(\"{p}\")"),
        OperatorSpec::Groups(p) => format!("groups(\"{p}\")"),
    }
}
