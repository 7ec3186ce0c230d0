//! The primal-dual hybrid gradient method of Chambolle and Pock (2011; docs/algorithms.md §12)
//! for a loss whose conjugate has a closed-form prox beside a penalty with a prox, neither
//! needing to be smooth (the 1-norm SVM: hinge + ℓ1). With F = (c/m)·Σᵢ ℓ(yᵢ, aᵢ) + R(w),
//! aᵢ = ⟨xᵢ, w⟩ + b, written through ℓ*:
//!
//!   min over (w, b) of max over u of (c/m)·Σᵢ [uᵢ·aᵢ − ℓ*(yᵢ, uᵢ)] + R(w),
//!
//! an iteration is
//!
//!   w⁺ = prox_{τR}(w − τ·(c/m)·Xᵀu),   b⁺ = b − τ·(c/m)·Σᵢ uᵢ,
//!   w̄ = 2w⁺ − w,   b̄ = 2b⁺ − b,
//!   uᵢ⁺ = prox_{s·ℓ*(yᵢ, ·)}(uᵢ + s·(⟨xᵢ, w̄⟩ + b̄)),   s = σ·c/m,
//!
//! one pass over the rows (the margins at w̄, then Xᵀu⁺ for the next primal step, from the same
//! row) and O(d) work. The steps are Pock and Chambolle's diagonal ones (α = 1) for the
//! coupling K = (c/m)·[X 1]: τⱼ = γ/(ω·Σᵢ|Kᵢⱼ|) per coordinate and sᵢ = γω/(‖xᵢ‖₁ + 1 with b)
//! per row, γ < 1, ω the primal weight; a penalty whose prox takes the whole vector (a vector
//! term, groups) takes one step for all, τ = γ/(ω√L) and s = γω/√L with L = (c/m)·‖[X 1]‖₂²
//! from power iteration. u stays in dom ℓ* (the prox lands there), in the units of ℓ′, so it is
//! the certificate's dual point as it stands; the certificate balances it for b (Σᵢ uᵢ = 0).
//!
//! The iteration is restarted Halpern PDHG (Lu and Yang, 2024): z ← k₁·(2T(z) − z) + k₂·z₀,
//! restarted on the fixed-point residual ‖z − T(z)‖, each restart balancing ω as PDLP does.
//! Measured on the 200 × 30 fixture with b (hinge + ℓ1, λ = 3.07e-5): plain PDHG ended 100,000
//! iterations at a relative gap of 4e-3, the restarted Halpern steps certify 1e-4 in about 4,600.
//! On a9a at λ = 1/m the uniform steps left the rare features near zero for thousands of
//! iterations (a relative gap of 3.8e-4 after 200,000); the diagonal ones certify 1e-4 in 8,250.

use super::super::build::*;
use super::super::{
    Composite, Expr, Index, Len, ParamInit, Plan, Range, ScalarId, ScalarRole, Slice, Stmt, VecRole, VectorTerm,
};
use super::Builder;
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::stdlib::{KnownLoss, LossDef};
use crate::symbolic::{Cmp, Func};

/// γ < 1, the steps' share of the bound they must stay under: τ·s·L = γ² for the uniform
/// steps (whose power iteration already overestimates L by 1%), and a factor γ on each
/// diagonal step, whose sums bound ‖K̃‖₂ by 1.
const GAMMA: f64 = 0.99;

/// The least column or row sum a diagonal step divides by: an empty column's step is then
/// finite (its gradient is 0, so it never moves), an empty row's dual lands on its bound.
const TINY: f64 = 1e-300;

/// The restart rule of restarted Halpern PDHG (Lu and Yang, 2024): restart once the residual
/// falls to this share of the restart's first,
const RESTART_ENOUGH: f64 = 0.2;
/// or falls to this share and then rises,
const RESTART_SOME: f64 = 0.8;
/// or the steps since the last restart reach this share of the run's.
const RESTART_SHARE: f64 = 0.36;
/// ρ of the reflected step (1 + ρ)·T(z) − ρ·z: 1 reflects fully, as Lu and Yang do.
const REFLECTION: f64 = 1.0;

/// The prox of s·ℓ*(y, ·) at v, in closed form, for the losses whose conjugate has one
/// (docs/algorithms.md §12); None for the others (logistic's needs a Newton solve).
///
/// - hinge: ℓ*(y, u) = y·u on y·u ∈ [−1, 0], so u = y·clamp(y·v − s, −1, 0);
/// - squared hinge: ℓ*(y, u) = y·u + u²/4 on y·u ≤ 0, so u = y·min((y·v − s)/(1 + s/2), 0);
/// - squared: ℓ*(y, u) = u²/2 + y·u, so u = (v − s·y)/(1 + s);
/// - Huber's, the squared one's on |u| ≤ δ: u = clamp((v − s·y)/(1 + s), −δ, δ);
/// - the pinball loss: ℓ*(y, u) = u·y on [−τ, 1 − τ], so u = clamp(v − s·y, −τ, 1 − τ);
/// - ε-insensitive: ℓ*(y, u) = u·y + ε|u| on |u| ≤ 1, so u = clamp(soft(v − s·y, s·ε), −1, 1);
/// - its square: ℓ*(y, u) = u·y + ε|u| + u²/4, so u = soft(v − s·y, s·ε)/(1 + s/2).
pub(crate) fn conjugate_prox(loss: &LossDef, y: Expr, v: Expr, step: Expr) -> Option<Expr> {
    Some(match loss.known()? {
        KnownLoss::Hinge => mul(y.clone(), clamp(sub(mul(y, v), step), -1.0, 0.0)),
        KnownLoss::SquaredHinge => {
            let inside = div(sub(mul(y.clone(), v), step.clone()), add(k(1.0), mul(k(0.5), step)));
            mul(y, call(Func::Min, vec![inside, k(0.0)]))
        }
        KnownLoss::Squared => div(sub(v, mul(step.clone(), y)), add(k(1.0), step)),
        KnownLoss::Huber => {
            let delta = *loss.bound.first()?;
            clamp(div(sub(v, mul(step.clone(), y)), add(k(1.0), step)), -delta, delta)
        }
        KnownLoss::Quantile => {
            let tau = *loss.bound.first()?;
            clamp(sub(v, mul(step, y)), -tau, 1.0 - tau)
        }
        KnownLoss::EpsInsensitive => {
            let eps = *loss.bound.first()?;
            clamp(soft(sub(v, mul(step.clone(), y)), mul(step, k(eps))), -1.0, 1.0)
        }
        KnownLoss::SquaredEpsInsensitive => {
            let eps = *loss.bound.first()?;
            let shrunk = soft(sub(v, mul(step.clone(), y)), mul(step.clone(), k(eps)));
            div(shrunk, add(k(1.0), mul(k(0.5), step)))
        }
        KnownLoss::Logistic | KnownLoss::Softmax | KnownLoss::Poisson => return None,
    })
}

/// How the penalty's prox is taken after the per-coordinate part: nothing more, a vector
/// routine (a norm or a set), or the ℓ2 shrink of each disjoint group.
pub(super) enum Whole {
    None,
    Vector(VectorTerm),
    Groups(Composite),
}

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx, whole: Whole) -> Plan {
    let vector = match &whole {
        Whole::Vector(t) => Some(*t),
        _ => None,
    };
    let mut b = Builder::new(model, SolverKind::Pdhg, false, prox, vector);
    if let Whole::Groups(c) = &whole {
        b.composite = Some(c.clone());
        b.plan.info.summary.push_str(&format!(
            ", then group_shrink for {}·group_l2 (disjoint groups)",
            crate::symbolic::fmt_num(c.coef)
        ));
    }
    b.plan.info.summary.push_str("; reflected Halpern steps, restarted with the primal weight");
    let (y, w) = b.labels_and_weights();
    let (i, j) = (Index::Row, Index::Feature);
    // ωᵢ·e with the rows' weights (`E[s·loss]`): the coupling is (c/m)·diag(ω)·[X 1], so Xᵀ
    // takes ω∘u and the column sums weigh each row; the dual step ŝᵢ is the same (ωᵢ cancels).
    let row_weights = b.row_weights();
    let weighted = |e: Expr| match row_weights {
        Some(s) => mul(at(s, Index::Row), e),
        None => e,
    };
    let c = model.loss.coef.value;
    let cm = b.per_example_weight(model);
    let omega0 = b.param("ω₀", st.settings.weight.unwrap_or(1.0), "the primal weight the run starts from");
    let omega = b.state("ω", "the primal weight: τ/s = 1/ω², balanced at each restart");
    // The steps at ω = 1, τ̂ⱼ per coordinate and ŝᵢ per row: at ω, τⱼ = τ̂ⱼ/ω and sᵢ = ω·ŝᵢ.
    let tau_hat = b.vector("τ̂", Len::Features, VecRole::State, 0.0);
    let s_hat = b.vector("ŝ", Len::Rows, VecRole::State, 0.0);
    // A prox of the whole vector takes one step for every coordinate: there the steps are
    // uniform, γ/√L from power iteration, and the vector routine reads τ = τ̂/ω.
    let uniform = match &whole {
        Whole::None => None,
        Whole::Vector(_) | Whole::Groups(_) => Some(Uniform {
            gram: b.scalar(
                "L",
                ScalarRole::Param,
                ParamInit::GramNorm { scale: c },
                "c·λmax(XᵀX)/m (power iteration): (c/m)·‖X‖₂², the coupling's squared norm",
            ),
            tau: b.state("τ", "the primal step γ/(ω√L) the vector's prox takes"),
            inverse_tau: b.state("1/τ", "its inverse"),
        }),
    };
    let halpern = b.state("k", "Halpern steps since the last restart");
    let total = b.state("n", "steps of the run");
    let r_start = b.state("r₀", "the residual at the first step after the last restart (−1: none yet)");
    let r_prev = b.state("r′", "the residual of the step before");
    // z = (zw, zb, zu), the Halpern iterate; T(z) = (w, b, u), the PDHG step from it, which the
    // report and the certificate read; z₀ = (w0, b0, u0), the anchor of the last restart.
    let u = b.vector("u", Len::Rows, VecRole::State, 0.0);
    let zu = b.vector("zu", Len::Rows, VecRole::State, 0.0);
    let u0 = b.vector("u0", Len::Rows, VecRole::State, 0.0);
    let zw = b.vector("zw", Len::Features, VecRole::State, 0.0);
    let w0 = b.vector("w0", Len::Features, VecRole::State, 0.0);
    let wbar = b.vector("w̄", Len::Features, VecRole::State, 0.0);
    // Xᵀzu, Xᵀu and Xᵀu0: the mixing is linear, so Xᵀzu follows without a pass.
    let g = b.vector("g", Len::Features, VecRole::State, 0.0);
    let gn = b.vector("gn", Len::Features, VecRole::State, 0.0);
    let g0 = b.vector("g0", Len::Features, VecRole::State, 0.0);
    let a = b.local("a");
    let ui = b.local("uᵢ");
    let (rw, ru, r) = (b.local("rw"), b.local("ru"), b.local("r"));
    let restart = b.local("restart");
    let (k1, k2) = (b.local("k1"), b.local("k2"));
    let intercept = b.intercept().map(|slot| Intercept {
        slot,
        tau_hat: b.state("τ̂b", "the intercept's step at ω = 1"),
        z: b.state("zb", "the intercept's Halpern iterate"),
        anchor: b.state("b0", "the intercept's anchor"),
        bar: b.local("b̄"),
        grad: b.state("gb", "Σᵢ zuᵢ"),
        next: b.state("gbn", "Σᵢ uᵢ"),
        grad0: b.state("gb0", "Σᵢ u0ᵢ"),
    });
    let root = uniform.as_ref().map(|u| {
        // With b, the coupling's norm takes its column of ones: (c/m)·‖1‖² = c more.
        call(
            Func::Sqrt,
            vec![match &intercept {
                Some(_) => add(s(u.gram), k(c)),
                None => s(u.gram),
            }],
        )
    });
    let set_steps: Vec<Stmt> = match (&uniform, &root) {
        (Some(u), Some(root)) => vec![
            Stmt::Set(u.tau, div(k(GAMMA), mul(s(omega), root.clone()))),
            Stmt::Set(u.inverse_tau, div(k(1.0), s(u.tau))),
        ],
        _ => vec![],
    };
    let tau_at = |e: Expr| div(e, s(omega));
    let step_at = mul(s(omega), at(s_hat, i));
    let mut init = std::mem::take(&mut b.plan.init);
    // A set projects the starting point, so that every iterate is feasible.
    if let Some(term) = vector.filter(|t| !t.is_norm()) {
        init.push(Stmt::Call(term.routine(), Slice { buf: w, row: None }, k(term.arg(1.0))));
    }
    init.push(Stmt::Set(omega, s(omega0)));
    init.extend(set_steps.clone());
    let tiny = k(TINY);
    match &root {
        Some(root) => {
            init.push(each(Range::Upto(Len::Features), vec![Stmt::Store(tau_hat, j, div(k(GAMMA), root.clone()))]));
            init.push(each(Range::Upto(Len::Rows), vec![Stmt::Store(s_hat, i, div(k(GAMMA), root.clone()))]));
            if let Some(m) = &intercept {
                init.push(Stmt::Set(m.tau_hat, div(k(GAMMA), root.clone())));
            }
        }
        // Pock and Chambolle's diagonal steps (α = 1) for K = (c/m)·[X 1]: τⱼ = γ/Σᵢ|Kᵢⱼ|,
        // σᵢ = γ/Σⱼ|Kᵢⱼ|, so sᵢ = σᵢ·c/m = γ/(‖xᵢ‖₁ + 1 with b). A rare feature takes long
        // steps, where one step for all kept it near zero for thousands of iterations.
        None => {
            let sum = b.local("Σ|x|");
            init.push(each(Range::Upto(Len::Features), vec![Stmt::Store(tau_hat, j, k(0.0))]));
            init.push(each(
                Range::Upto(Len::Rows),
                vec![
                    Stmt::Set(sum, k(if intercept.is_some() { 1.0 } else { 0.0 })),
                    each(
                        Range::RowNonZeros,
                        vec![
                            Stmt::Store(tau_hat, j, add(at(tau_hat, j), weighted(call(Func::Abs, vec![Expr::Value])))),
                            Stmt::Set(sum, add(s(sum), call(Func::Abs, vec![Expr::Value]))),
                        ],
                    ),
                    Stmt::Store(s_hat, i, div(k(GAMMA), call(Func::Max, vec![s(sum), tiny.clone()]))),
                ],
            ));
            init.push(each(
                Range::Upto(Len::Features),
                vec![Stmt::Store(
                    tau_hat,
                    j,
                    div(k(GAMMA), call(Func::Max, vec![mul(s(cm), at(tau_hat, j)), tiny.clone()])),
                )],
            ));
            if let Some(m) = &intercept {
                // τ̂b = γ/((c/m)·Σᵢ ωᵢ), γ/c without weights.
                if row_weights.is_some() {
                    let total_weight = b.local("Σω");
                    init.push(Stmt::Set(total_weight, k(0.0)));
                    init.push(each(
                        Range::Upto(Len::Rows),
                        vec![Stmt::Set(total_weight, add(s(total_weight), weighted(k(1.0))))],
                    ));
                    init.push(Stmt::Set(
                        m.tau_hat,
                        div(k(GAMMA), call(Func::Max, vec![mul(s(cm), s(total_weight)), tiny.clone()])),
                    ));
                } else {
                    init.push(Stmt::Set(m.tau_hat, k(GAMMA / c)));
                }
            }
        }
    }
    init.extend([
        Stmt::Set(halpern, k(0.0)),
        Stmt::Set(total, k(0.0)),
        Stmt::Set(r_start, k(-1.0)),
        Stmt::Set(r_prev, k(0.0)),
    ]);
    // z = z₀ = the run's start (w, b, u), and Xᵀu with Σᵢ uᵢ for it.
    init.push(each(
        Range::Upto(Len::Features),
        vec![Stmt::Store(zw, j, at(w, j)), Stmt::Store(w0, j, at(w, j)), Stmt::Store(g, j, k(0.0))],
    ));
    if let Some(m) = &intercept {
        init.extend([Stmt::Set(m.z, s(m.slot)), Stmt::Set(m.anchor, s(m.slot)), Stmt::Set(m.grad, k(0.0))]);
    }
    init.push(each(
        Range::Upto(Len::Rows),
        [
            vec![
                Stmt::Store(zu, i, at(u, i)),
                Stmt::Store(u0, i, at(u, i)),
                each(Range::RowNonZeros, vec![Stmt::Store(g, j, add(at(g, j), mul(weighted(at(u, i)), Expr::Value)))]),
            ],
            intercept.as_ref().map_or(vec![], |m| vec![Stmt::Set(m.grad, add(s(m.grad), weighted(at(u, i))))]),
        ]
        .concat(),
    ));
    init.push(each(Range::Upto(Len::Features), vec![Stmt::Store(g0, j, at(g, j))]));
    if let Some(m) = &intercept {
        init.push(Stmt::Set(m.grad0, s(m.grad)));
    }
    b.plan.init = init;

    // T(z), the primal half: w = prox_{τR}(zw − τ·(c/m)·Xᵀzu), w̄ = 2w − zw.
    let tau_j = tau_at(at(tau_hat, j));
    let prox_step = b.coordinate_prox(sub(at(zw, j), mul(tau_j.clone(), mul(s(cm), at(g, j)))), tau_j);
    let mut epoch = vec![Stmt::Set(rw, k(0.0))];
    let prox_loop = each(Range::Upto(Len::Features), vec![Stmt::Store(w, j, prox_step)]);
    match &whole {
        Whole::None => epoch.push(prox_loop),
        Whole::Vector(term) => {
            let inverse_step = b.scaled_inverse_step(uniform.as_ref().expect("uniform steps").inverse_tau);
            let arg = if term.is_norm() { div(k(term.arg(1.0)), inverse_step) } else { k(term.arg(1.0)) };
            epoch.extend([prox_loop, Stmt::Call(term.routine(), Slice { buf: w, row: None }, arg)]);
        }
        Whole::Groups(c) => {
            let inverse_step = b.scaled_inverse_step(uniform.as_ref().expect("uniform steps").inverse_tau);
            epoch.extend([prox_loop, Stmt::GroupShrink(w, div(k(c.coef), inverse_step))]);
        }
    }
    let moved = |x: Expr, z: Expr| mul(sub(x.clone(), z.clone()), sub(x, z));
    epoch.push(each(
        Range::Upto(Len::Features),
        vec![
            Stmt::Store(wbar, j, sub(mul(k(2.0), at(w, j)), at(zw, j))),
            Stmt::Set(rw, add(s(rw), div(moved(at(w, j), at(zw, j)), tau_at(at(tau_hat, j))))),
            Stmt::Store(gn, j, k(0.0)),
        ],
    ));
    if let Some(m) = &intercept {
        epoch.extend([
            Stmt::Set(m.slot, sub(s(m.z), mul(tau_at(s(m.tau_hat)), mul(s(cm), s(m.grad))))),
            Stmt::Set(m.bar, sub(mul(k(2.0), s(m.slot)), s(m.z))),
            Stmt::Set(rw, add(s(rw), div(moved(s(m.slot), s(m.z)), tau_at(s(m.tau_hat))))),
            Stmt::Set(m.next, k(0.0)),
        ]);
    }
    // T(z), the dual half, row by row at the margins of w̄, and Xᵀu for the next step.
    let dual_prox =
        conjugate_prox(&model.loss.def, at(y, i), add(at(zu, i), mul(step_at.clone(), s(a))), step_at.clone())
            .expect("the analysis chose pdhg for a loss with a closed-form conjugate prox");
    epoch.push(Stmt::Set(ru, k(0.0)));
    epoch.push(each(
        Range::Upto(Len::Rows),
        [
            vec![
                Stmt::Set(a, intercept.as_ref().map_or(k(0.0), |m| s(m.bar))),
                each(Range::RowNonZeros, vec![Stmt::Set(a, add(s(a), mul(Expr::Value, at(wbar, j))))]),
                Stmt::Set(ui, dual_prox),
                Stmt::Guard(s(ui), "the dual variable uᵢ".into()),
                Stmt::Set(ru, add(s(ru), weighted(div(moved(s(ui), at(zu, i)), step_at)))),
                Stmt::Store(u, i, s(ui)),
                each(Range::RowNonZeros, vec![Stmt::Store(gn, j, add(at(gn, j), mul(weighted(s(ui)), Expr::Value)))]),
            ],
            intercept.as_ref().map_or(vec![], |m| vec![Stmt::Set(m.next, add(s(m.next), weighted(s(ui))))]),
        ]
        .concat(),
    ));
    // The fixed-point residual ‖z − T(z)‖ in the norm of the steps, and the restart rule of
    // restarted Halpern PDHG (Lu & Yang 2024): the residual fell to RESTART_ENOUGH of the
    // restart's first, or fell to RESTART_SOME of it and rose again, or the run spent
    // RESTART_SHARE of its steps since the last restart.
    let flag = |cmp: Cmp, l: Expr, r: Expr| Stmt::If(cmp, l, r, vec![Stmt::Set(restart, k(1.0))]);
    epoch.extend([
        Stmt::Set(r, call(Func::Sqrt, vec![add(s(rw), mul(s(cm), s(ru)))])),
        Stmt::Guard(s(r), "the fixed-point residual".into()),
        Stmt::If(Cmp::Lt, s(r_start), k(0.0), vec![Stmt::Set(r_start, s(r))]),
        Stmt::Set(restart, k(0.0)),
        flag(Cmp::Lt, s(r), mul(k(RESTART_ENOUGH), s(r_start))),
        Stmt::If(Cmp::Lt, s(r), mul(k(RESTART_SOME), s(r_start)), vec![flag(Cmp::Gt, s(r), s(r_prev))]),
        flag(Cmp::Gt, s(halpern), mul(k(RESTART_SHARE), s(total))),
        Stmt::Set(total, add(s(total), k(1.0))),
        Stmt::Set(r_prev, s(r)),
    ]);
    // A restart: the primal weight balances how far each side moved since the last one
    // (PDLP's update, smoothed geometrically), and z = z₀ = T(z).
    let (dw, du) = (b.local("Δw²"), b.local("Δu²"));
    let mut restart_body = vec![
        Stmt::Set(dw, k(0.0)),
        each(Range::Upto(Len::Features), vec![Stmt::Set(dw, add(s(dw), moved(at(w, j), at(w0, j))))]),
        Stmt::Set(du, k(0.0)),
        each(Range::Upto(Len::Rows), vec![Stmt::Set(du, add(s(du), weighted(moved(at(u, i), at(u0, i)))))]),
    ];
    if let Some(m) = &intercept {
        restart_body.push(Stmt::Set(dw, add(s(dw), moved(s(m.slot), s(m.anchor)))));
    }
    restart_body.extend([
        Stmt::Set(du, mul(s(cm), s(du))),
        Stmt::If(
            Cmp::Gt,
            s(dw),
            k(0.0),
            vec![Stmt::If(
                Cmp::Gt,
                s(du),
                k(0.0),
                [
                    vec![Stmt::Set(
                        omega,
                        call(Func::Sqrt, vec![mul(s(omega), call(Func::Sqrt, vec![div(s(du), s(dw))]))]),
                    )],
                    set_steps,
                ]
                .concat(),
            )],
        ),
        each(
            Range::Upto(Len::Features),
            vec![
                Stmt::Store(zw, j, at(w, j)),
                Stmt::Store(w0, j, at(w, j)),
                Stmt::Store(g, j, at(gn, j)),
                Stmt::Store(g0, j, at(gn, j)),
            ],
        ),
        each(Range::Upto(Len::Rows), vec![Stmt::Store(zu, i, at(u, i)), Stmt::Store(u0, i, at(u, i))]),
        Stmt::Set(halpern, k(0.0)),
        Stmt::Set(r_start, k(-1.0)),
    ]);
    if let Some(m) = &intercept {
        restart_body.extend([
            Stmt::Set(m.z, s(m.slot)),
            Stmt::Set(m.anchor, s(m.slot)),
            Stmt::Set(m.grad, s(m.next)),
            Stmt::Set(m.grad0, s(m.next)),
        ]);
    }
    // Otherwise the reflected Halpern step z = k₁·((1 + ρ)·T(z) − ρ·z) + k₂·z₀, with
    // k₁ = (k + 1)/(k + 2) and k₂ = 1/(k + 2).
    let mix = |t: Expr, z: Expr, z0: Expr| {
        add(mul(s(k1), sub(mul(k(1.0 + REFLECTION), t), mul(k(REFLECTION), z))), mul(s(k2), z0))
    };
    let mut halpern_body = vec![
        Stmt::Set(k1, div(add(s(halpern), k(1.0)), add(s(halpern), k(2.0)))),
        Stmt::Set(k2, div(k(1.0), add(s(halpern), k(2.0)))),
        each(
            Range::Upto(Len::Features),
            vec![
                Stmt::Store(zw, j, mix(at(w, j), at(zw, j), at(w0, j))),
                Stmt::Store(g, j, mix(at(gn, j), at(g, j), at(g0, j))),
            ],
        ),
        each(Range::Upto(Len::Rows), vec![Stmt::Store(zu, i, mix(at(u, i), at(zu, i), at(u0, i)))]),
        Stmt::Set(halpern, add(s(halpern), k(1.0))),
    ];
    if let Some(m) = &intercept {
        halpern_body.extend([
            Stmt::Set(m.z, mix(s(m.slot), s(m.z), s(m.anchor))),
            Stmt::Set(m.grad, mix(s(m.next), s(m.grad), s(m.grad0))),
        ]);
    }
    epoch.extend([
        Stmt::If(Cmp::Gt, s(restart), k(0.5), restart_body),
        Stmt::If(Cmp::Lt, s(restart), k(0.5), halpern_body),
    ]);
    b.plan.epoch = epoch;
    b.report(model, st, w, y, a);
    // u is the dual point itself: in dom ℓ*, in ℓ′'s units. Without curvature ℓ′ at the
    // margins is a subgradient and no better a point, so the check evaluates u alone.
    b.plan.objective.dual = Some(at(u, i));
    b.plan.objective.dual_only = b.plan.certificate.is_some_and(|c| !c.conjugate.has_curvature());
    b.plan
}

/// The uniform steps' slots: L, and τ = γ/(ω√L) with its inverse.
struct Uniform {
    gram: ScalarId,
    tau: ScalarId,
    inverse_tau: ScalarId,
}

/// The intercept's slots in the plan: b of T(z), its step at ω = 1, its Halpern iterate, anchor
/// and extrapolated point, and the sums Σᵢ zuᵢ, Σᵢ uᵢ and Σᵢ u0ᵢ its steps read.
struct Intercept {
    slot: ScalarId,
    tau_hat: ScalarId,
    z: ScalarId,
    anchor: ScalarId,
    bar: ScalarId,
    grad: ScalarId,
    next: ScalarId,
    grad0: ScalarId,
}
