//! SMIDAS, stochastic mirror descent made sparse (Shalev-Shwartz & Tewari 2009, Algorithm 3;
//! docs/algorithms.md §6). The iterate is the dual (mirror) vector θ; the weights are
//! w = f⁻¹(θ), f⁻¹ⱼ(θ) = sign(θⱼ)·|θⱼ|^{p−1}/‖θ‖_p^{p−2}, with p = max(2, 2·ln d). A step
//! samples a row, takes the gradient step θ̃ = θ − η·ℓ′(yᵢ, ⟨w, xᵢ⟩)·xᵢ in the dual, then
//! truncates every coordinate toward 0 by η·λ.
//!
//! The step is O(d), and exact. The truncation of θ alone would compose lazily as FOBOS's does
//! (θⱼ after k missed steps is soft(θⱼ, Σ η·λ)), but every weight wⱼ read from a row divides
//! by ‖θ‖_p, and that norm changes with each truncated coordinate: after a shrink by Λ it is
//! (Σⱼ max(0, aⱼ − Λ)^p)^{1/p} over per-coordinate keys aⱼ, which no running sum tracks for a
//! non-integer p (an integer one would need p + 1 power sums of keys that grow with Λ, and
//! their differences cancel catastrophically). The paper's O(sᵢ) bookkeeping of Σ|θⱼ|^p visits
//! the row's non-zeros only, so it leaves the norm of the truncated coordinates stale: it is a
//! different algorithm. Zero coordinates stay zero under the truncation, so the O(d) pass
//! costs its transcendentals only where θⱼ ≠ 0.
//!
//! ‖θ‖_p is kept as s·ξ^{1/p} with ξ = Σ (|θⱼ|/s)^p, the scale s an upper bound of every |θⱼ|
//! when the sum is taken: every term is at most 1 and the largest close to it, so ξ neither
//! overflows nor underflows for any p, and wⱼ = sign(θⱼ)·exp((p−1)·log|θⱼ| − (p−2)·log‖θ‖_p)
//! is read in logs.
//!
//! The step: the paper's analysis takes a constant η ∝ ‖w*‖₁/√T for a horizon T, and its
//! experiments pick a constant η from a grid by the objective reached. A run here stops on
//! the certificate, so T is unknown: η₀ is tuned like FOBOS's (one pass over a sample per
//! candidate, the paper's grid criterion on a sample), held through the first epoch — the
//! horizon the tuning measured — and then decays as η₀/√e over epochs e, the anytime form of
//! η ∝ 1/√T. `step = ...` replaces it by any formula of t (a constant gives the paper's).

use super::super::build::*;
use super::super::{Expr, Index, Len, ParamInit, Plan, Range, ScalarId, ScalarRole, Stmt, VecRole};
use super::{formula, Builder};
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::symbolic::{Cmp, Func};

/// The η₀ candidates `optc run` tries on its sample: half decades, wide because the step in θ
/// scales with ‖w*‖₁ (0.3–1 on a dense 200 × 50 fixture with ‖w*‖₁ ≈ 6, 300–1000 on a sparse
/// 2000 × 5000 one with ‖w*‖₁ ≈ 2300).
pub const ETA0_GRID: [f64; 15] =
    [1e-3, 3.16e-3, 1e-2, 3.16e-2, 0.1, 0.316, 1.0, 3.16, 10.0, 31.6, 100.0, 316.0, 1e3, 3.16e3, 1e4];
const ETA0_DEFAULT: f64 = 1.0;

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx) -> Plan {
    let mut b = Builder::new(model, SolverKind::Smidas, false, prox, None);
    b.plan.info.summary.push_str(
        "; mirror descent on θ with w = f⁻¹(θ), p-norm link; eager O(d) steps, exact: the ℓ1 truncation moves every \
         non-zero θⱼ and ‖θ‖_p, which every wⱼ reads, sums over all of them (no closed-form catch-up keeps it in O(nnz))",
    );
    let (y, w) = b.labels_and_weights();
    let theta = b.vector("θ", Len::Features, VecRole::State, 0.0);
    let l1 = (prox.l1 > 0.0).then(|| b.param("l1", prox.l1, "λ: θ is truncated toward 0 by η·λ each step"));
    let p = b.scalar(
        "p",
        ScalarRole::Param,
        ParamInit::NormExponent,
        "the p-norm link's exponent (q = p/(p − 1) on w): ‖x‖_p ≤ √e·‖x‖_∞",
    );
    let eta0 = match st.settings.eta0 {
        Some(v) => b.param("η0", v, "from `solve with smidas(eta0 = ...)`"),
        None => b.scalar(
            "η0",
            ScalarRole::Param,
            ParamInit::Tuned { default: ETA0_DEFAULT, grid: &ETA0_GRID },
            "η = η0/√e in epoch e; `optc run` tunes it on a sample",
        ),
    };
    let t = b.state("t", "step counter");
    b.plan.step_counter = Some(t);
    let xi = b.state("ξ", "Σ (|θⱼ|/s)^p: ‖θ‖_p = s·ξ^(1/p)");
    let scale = b.state("s", "the scale of ξ, ≥ every |θⱼ| when ξ was summed");
    let top = b.state("μ", "max |θⱼ| after the last step");
    let eta = b.local("η");
    let tau = l1.map(|_| b.local("τ"));
    let log_norm = b.local("lnN");
    let a = b.local("a");
    let g = b.local("g");
    let eta_g = b.local("ηg");
    let r = b.local("r");
    let log_scale = b.local("lns");
    let j = Index::Feature;

    // The step size and the truncation, per epoch (η₀/√e) or per step (the user's schedule).
    let mut step_size = vec![];
    let mut epoch = vec![];
    match st.settings.step.clone() {
        Some(sched) => {
            b.plan.scalars[eta0.0].note.push_str(" (unused: `step` is given)");
            step_size.push(Stmt::Set(eta, formula(&sched, &[("t", s(t))])));
        }
        None => {
            let e = b.state("e", "epoch counter");
            epoch.push(Stmt::Set(e, add(s(e), k(1.0))));
            epoch.push(Stmt::Set(eta, div(s(eta0), call(Func::Sqrt, vec![s(e)]))));
        }
    }
    if let (Some(tau), Some(l1)) = (tau, l1) {
        let set = Stmt::Set(tau, mul(s(eta), s(l1)));
        if step_size.is_empty() {
            epoch.push(set);
        } else {
            step_size.push(set);
        }
    }

    // ---- one step
    let mut step = vec![Stmt::Set(t, add(s(t), k(1.0)))];
    step.extend(step_size);
    step.push(Stmt::Set(log_norm, norm_log(xi, scale, p)));
    // The margin ⟨w, xᵢ⟩ with wⱼ = f⁻¹ⱼ(θ) read off θ; zero coordinates contribute nothing.
    step.push(Stmt::Set(a, k(0.0)));
    step.push(each(
        Range::RowNonZeros,
        vec![Stmt::If(
            Cmp::Gt,
            call(Func::Abs, vec![at(theta, j)]),
            k(0.0),
            vec![Stmt::Set(a, add(s(a), mul(Expr::Value, primal(theta, p, log_norm))))],
        )],
    ));
    if let Some(intercept) = b.intercept() {
        step.push(Stmt::Set(a, add(s(a), s(intercept))));
    }
    step.push(Stmt::Set(g, b.weighted_dloss(model, st, y, s(a))));
    step.push(Stmt::Guard(s(g), "the loss derivative ℓ′".into()));
    step.push(Stmt::Set(eta_g, mul(s(eta), s(g))));
    // The intercept is outside the p-norm link (its own Euclidean coordinate, unpenalized):
    // a plain gradient step.
    step.extend(b.intercept_step(s(eta_g)));
    // θ̃ = θ − η·ℓ′·xᵢ on the row; the scale of this step's sum covers the moved coordinates.
    step.push(Stmt::Set(scale, s(top)));
    step.push(each(
        Range::RowNonZeros,
        vec![
            Stmt::Store(theta, j, sub(at(theta, j), mul(s(eta_g), Expr::Value))),
            Stmt::Set(scale, call(Func::Max, vec![s(scale), call(Func::Abs, vec![at(theta, j)])])),
        ],
    ));
    // The truncation of every coordinate, and ‖θ‖_p of the result.
    step.push(Stmt::Set(log_scale, call(Func::Log, vec![s(scale)])));
    step.push(Stmt::Set(xi, k(0.0)));
    step.push(Stmt::Set(top, k(0.0)));
    let mut truncate = vec![];
    if let Some(tau) = tau {
        truncate.push(Stmt::Store(theta, j, soft(at(theta, j), s(tau))));
    }
    truncate.push(Stmt::Set(r, call(Func::Abs, vec![at(theta, j)])));
    truncate.push(Stmt::If(
        Cmp::Gt,
        s(r),
        k(0.0),
        vec![
            Stmt::Set(xi, add(s(xi), call(Func::Exp, vec![mul(s(p), sub(call(Func::Log, vec![s(r)]), s(log_scale)))]))),
            Stmt::Set(top, call(Func::Max, vec![s(top), s(r)])),
        ],
    ));
    step.push(each(Range::Upto(Len::Features), truncate));
    epoch.push(each(Range::Perm(Len::Rows), step));
    b.plan.epoch = epoch;

    // ---- finish: the weights w = f⁻¹(θ), every coordinate.
    b.plan.finish = vec![
        Stmt::Set(log_norm, norm_log(xi, scale, p)),
        each(
            Range::Upto(Len::Features),
            vec![Stmt::Store(
                w,
                j,
                Expr::Select(
                    Cmp::Gt,
                    Box::new(call(Func::Abs, vec![at(theta, j)])),
                    Box::new(k(0.0)),
                    Box::new(primal(theta, p, log_norm)),
                    Box::new(k(0.0)),
                ),
            )],
        ),
    ];
    b.report(model, st, w, y, a);
    b.plan
}

/// log ‖θ‖_p = log s + log(ξ)/p (−∞ while θ = 0).
fn norm_log(xi: ScalarId, scale: ScalarId, p: ScalarId) -> Expr {
    add(call(Func::Log, vec![s(scale)]), div(call(Func::Log, vec![s(xi)]), s(p)))
}

/// f⁻¹ⱼ(θ) = sign(θⱼ)·exp((p − 1)·log|θⱼ| − (p − 2)·log‖θ‖_p), for θⱼ ≠ 0.
fn primal(theta: super::super::VecId, p: ScalarId, log_norm: ScalarId) -> Expr {
    let j = Index::Feature;
    let exponent = sub(
        mul(sub(s(p), k(1.0)), call(Func::Log, vec![call(Func::Abs, vec![at(theta, j)])])),
        mul(sub(s(p), k(2.0)), s(log_norm)),
    );
    mul(call(Func::Sign, vec![at(theta, j)]), call(Func::Exp, vec![exponent]))
}
