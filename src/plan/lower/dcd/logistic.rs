//! Dual coordinate descent for ℓ2-logistic regression (Yu, Huang & Lin 2011; LIBLINEAR's
//! `-s 7`). LIBLINEAR's primal ½‖w‖² + C·Σᵢ log(1 + e^{−yᵢ⟨xᵢ, w⟩}) has the dual
//!
//!   min over 0 < α < C of  ½·αᵀQα + Σᵢ αᵢ·log αᵢ + (C − αᵢ)·log(C − αᵢ),
//!
//! and one step minimises it along one αᵢ by a safeguarded 1-D Newton method. As LIBLINEAR does,
//! the step works on z = αᵢ or z = C − αᵢ, whichever the gradient moves away from its bound
//! (the other side's log term then stays well conditioned), starting z at a tenth of itself
//! when it sits in the upper half, and a Newton step that would leave (0, C) shrinks z tenfold
//! instead. The inner tolerance starts at 10⁻² and tightens tenfold whenever an epoch needed
//! few Newton steps (at most one row in ten), down to 10⁻⁸; optc stops on the certificate.
//!
//! The driver checks once LIBLINEAR's own test passes, which on text is 7 epochs in with a
//! relative gap near 10⁻⁶ whatever `--tol` asked. So the epoch also estimates the gap a check
//! would find (`Plan::estimate`), from what it knows at no extra pass. The dual's value
//! ½‖w(α)‖² + Σᵢ h(αᵢ), h(a) = a·log(a/C) + (C − a)·log(1 − a/C), is exact at the epoch's
//! end (each h(αᵢ) is taken at the αᵢ the row's step left). It falls linearly, by ΔD_t an
//! epoch at a rate ρ = ΔD_t/ΔD_{t−1} < 1, so what is left of it is about ΔD_t·ρ/(1 − ρ). A row
//! the inner tolerance left unmoved keeps what its own step could gain, its Newton decrement
//! g′²/(2g″), which the rate does not see while the tolerance holds the rows back. The
//! estimate is twice the larger of the two (the primal's share of the gap comes on top of the
//! dual's) over the primal, whose loss is taken at the margins the epoch visited the rows
//! with. Without a rate (the first two epochs, a fall that is not a fall, ρ ≥ 1 after the
//! inner tolerance tightened and the rows caught up) it is ∞. On debian-desc it reads 0.8–2×
//! the gap a check then finds at C = 1 and 0.01, 0.1–1.3× at C = 100: an estimate, never a bound, it only says when a check is worth
//! its pass, and the cadence's checks happen whatever it says.

use super::super::super::build::*;
use super::super::super::{Cadence, Expr, Index, Len, ParamInit, Range, ScalarId, ScalarRole, Stmt, VecId};
use super::super::Builder;
use super::select;
use crate::symbolic::{Cmp, Func};

/// LIBLINEAR's η: a Newton step that would leave (0, C) multiplies z by this instead.
const SHRINK_Z: f64 = 0.1;
/// Newton steps per αᵢ, at most (LIBLINEAR's max_inner_iter).
const MAX_NEWTON: u32 = 100;
/// The inner tolerance's first value and its floor.
const INNER_START: f64 = 1e-2;
const INNER_FLOOR: f64 = 1e-8;
/// The estimate's dual part (the tail ΔD·ρ/(1 − ρ) or the rows' decrements) times this: the
/// primal's share of the gap comes on top of the dual's.
const ESTIMATE_FACTOR: f64 = 2.0;

/// What the epoch reads and writes of the plan [`super::lower`] builds.
pub(super) struct Steps {
    pub alpha: VecId,
    pub q: VecId,
    pub cap: ScalarId,
    /// ⟨xᵢ, w⟩ (+ b), computed by the row's dot product.
    pub g: ScalarId,
    pub next: ScalarId,
    /// The change of αᵢ times yᵢ: w += step·xᵢ.
    pub step: ScalarId,
    pub y: VecId,
    pub w: VecId,
    /// b and t² = λ/μ, when b is `μ·l2sq(b)`: b = t·β with β a weight of the dual's rows.
    pub bias: Option<(ScalarId, ScalarId)>,
    /// A free b's centre b₀ (its augmented Lagrangian, see [`super::lower`]): b − b₀ is then
    /// the penalised part.
    pub center: Option<ScalarId>,
    /// The rows' weights ωᵢ: row i's dual lives on (0, C·ωᵢ), its loss counts ωᵢ times, and a
    /// row of weight 0 is not visited (its αᵢ stays 0).
    pub weight: Option<VecId>,
}

/// The epoch, and when the driver checks it: once the inner tolerance tightened (the point
/// LIBLINEAR's own test looks at), or after a few passes.
/// Also the statements init adds: the first inner tolerance, no visits yet, no dual value or
/// estimate yet (a warm start or a path's next λ starts its rate afresh); and the state that
/// holds the dual's value at the epoch's end, which a free b's multiplier step re-bases
/// ([`rebase`]).
pub(super) fn epoch(
    b: &mut Builder,
    st: Steps,
    dot: Vec<Stmt>,
    axpy: Vec<Stmt>,
) -> (Vec<Stmt>, Vec<Stmt>, Cadence, ScalarId) {
    let i = Index::Row;
    let state =
        |b: &mut Builder, name: &str, v: f64, note: &str| b.scalar(name, ScalarRole::State, ParamInit::Value(v), note);
    let inner = state(b, "ε_in", INNER_START, "the inner Newton tolerance on |g′(z)|");
    let newton = b.local("newton");
    let estimate = b.scalar(
        "gap≈",
        ScalarRole::State,
        ParamInit::Value(f64::INFINITY),
        "the relative gap a check would find, from the dual's fall and the rows the inner tolerance left",
    );
    b.plan.estimate = Some(estimate);
    let (losses, entropy, norm) = (b.local("Σℓ"), b.local("Σh"), b.local("‖w‖²"));
    let dual = state(b, "D", f64::INFINITY, "½‖w‖² + Σᵢ h(αᵢ) (+ a free b's terms) at the last epoch's end");
    let fell = state(b, "ΔD", f64::INFINITY, "how much the last epoch lowered it");
    let (now, drop, decrement) = (b.local("D⁺"), b.local("ΔD⁺"), b.local("Σδ"));
    let own = b.local("δ");
    let visits = b.state("visits", "rows visited so far: the driver checks at least every few passes' worth");
    let ready = b.state("ready", "1 after an epoch that tightened the inner tolerance: check then");
    let inv_m = b.scalar("1/m", ScalarRole::Param, ParamInit::PerRow { scale: 1.0 }, "to count Newton steps per row");
    let (flip, sign, zold, z, gp, gpp, trial) =
        (b.local("flip"), b.local("σ"), b.local("z₀"), b.local("z"), b.local("g′"), b.local("g″"), b.local("zt"));
    let a = at(st.q, i);
    // Row i's C: C·ωᵢ with the rows' weights.
    let c = match st.weight {
        Some(sw) => mul(s(st.cap), at(sw, i)),
        None => s(st.cap),
    };
    let yg = mul(at(st.y, i), s(st.g));
    // g′(z) = a·(z − z₀) + σ·y⟨x, w⟩ + log(z/(C − z))
    let derivative = || {
        add(
            add(mul(a.clone(), sub(s(z), s(zold))), mul(s(sign), yg.clone())),
            call(Func::Log, vec![div(s(z), sub(c.clone(), s(z)))]),
        )
    };
    let mut visit = vec![Stmt::Set(visits, add(s(visits), k(1.0)))];
    visit.extend(dot);
    visit.extend([
        Stmt::Guard(s(st.g), "the margin ⟨xᵢ, w⟩".into()),
        // Work on C − αᵢ when ½a·(C − 2αᵢ) + y⟨x, w⟩ < 0 (LIBLINEAR's choice of side).
        Stmt::Set(
            flip,
            select(
                add(mul(mul(k(0.5), a.clone()), sub(c.clone(), mul(k(2.0), at(st.alpha, i)))), yg.clone()),
                Cmp::Lt,
                k(0.0),
                k(1.0),
                k(0.0),
            ),
        ),
        Stmt::Set(sign, sub(k(1.0), mul(k(2.0), s(flip)))),
        Stmt::Set(zold, select(s(flip), Cmp::Gt, k(0.5), sub(c.clone(), at(st.alpha, i)), at(st.alpha, i))),
        // The Newton decrement of the row's own dual at αᵢ, g′(z₀)²/(2g″(z₀)): what its step
        // could gain. A row the inner tolerance leaves where it is keeps it to the epoch's end.
        Stmt::Set(gp, add(mul(s(sign), yg.clone()), call(Func::Log, vec![div(s(zold), sub(c.clone(), s(zold)))]))),
        Stmt::Set(gpp, add(a.clone(), div(c.clone(), mul(sub(c.clone(), s(zold)), s(zold))))),
        Stmt::Set(own, div(mul(s(gp), s(gp)), mul(k(2.0), s(gpp)))),
        Stmt::Set(z, select(sub(c.clone(), s(zold)), Cmp::Lt, mul(k(0.5), c.clone()), mul(k(0.1), s(zold)), s(zold))),
        Stmt::Set(gp, derivative()),
    ]);
    let newton_step = vec![
        Stmt::Set(gpp, add(a.clone(), div(c.clone(), mul(sub(c.clone(), s(z)), s(z))))),
        Stmt::Set(trial, sub(s(z), div(s(gp), s(gpp)))),
        Stmt::Set(z, select(s(trial), Cmp::Gt, k(0.0), s(trial), mul(k(SHRINK_Z), s(z)))),
        Stmt::Set(gp, derivative()),
        Stmt::Guard(s(gp), "the logistic dual's derivative along αᵢ".into()),
        Stmt::Set(newton, add(s(newton), k(1.0))),
    ];
    let mut moved = vec![
        Stmt::Repeat(MAX_NEWTON, Cmp::Lt, call(Func::Abs, vec![s(gp)]), s(inner), newton_step),
        Stmt::Set(st.next, select(s(flip), Cmp::Gt, k(0.5), sub(c.clone(), s(z)), s(z))),
        Stmt::Set(st.step, mul(sub(s(st.next), at(st.alpha, i)), at(st.y, i))),
        Stmt::Store(st.alpha, i, s(st.next)),
    ];
    moved.push(if_moved(st.step, axpy));
    // LIBLINEAR moves αᵢ only when its Newton method ran.
    visit.extend([
        Stmt::Set(
            decrement,
            add(s(decrement), select(call(Func::Abs, vec![s(gp)]), Cmp::Gt, s(inner), k(0.0), s(own))),
        ),
        Stmt::If(Cmp::Gt, call(Func::Abs, vec![s(gp)]), s(inner), moved),
    ]);
    let row_weighted = |e: Expr| match st.weight {
        Some(sw) => mul(at(sw, i), e),
        None => e,
    };
    // h(αᵢ), its 0·log 0 taken as 0 should αᵢ round to 0 or C.
    let log_share = |v: Expr| call(Func::Log, vec![call(Func::Max, vec![div(v, c.clone()), k(f64::MIN_POSITIVE)])]);
    visit.extend([
        Stmt::Set(losses, add(s(losses), row_weighted(call(Func::Softplus, vec![Expr::Neg(Box::new(yg.clone()))])))),
        Stmt::Set(
            entropy,
            add(
                s(entropy),
                add(
                    mul(at(st.alpha, i), log_share(at(st.alpha, i))),
                    mul(sub(c.clone(), at(st.alpha, i)), log_share(sub(c.clone(), at(st.alpha, i)))),
                ),
            ),
        ),
    ]);
    // ‖w‖², with b's β² = b²/t² when b is penalised.
    let mut norm_w = vec![
        Stmt::Set(norm, k(0.0)),
        each(
            Range::Upto(Len::Features),
            vec![Stmt::Set(norm, add(s(norm), mul(at(st.w, Index::Feature), at(st.w, Index::Feature))))],
        ),
    ];
    if let Some((slot, t2)) = st.bias {
        let beta = st.center.map_or(s(slot), |b0| sub(s(slot), s(b0)));
        norm_w.push(Stmt::Set(norm, add(s(norm), div(mul(beta.clone(), beta), s(t2)))));
    }
    let primal = add(mul(k(0.5), s(norm)), mul(s(st.cap), s(losses)));
    let mut epoch = vec![
        Stmt::Set(ready, k(0.0)),
        Stmt::Set(newton, k(0.0)),
        Stmt::Set(losses, k(0.0)),
        Stmt::Set(entropy, k(0.0)),
        Stmt::Set(decrement, k(0.0)),
        each(
            Range::Perm(Len::Rows),
            match st.weight {
                Some(sw) => vec![Stmt::If(Cmp::Gt, at(sw, i), k(0.0), visit)],
                None => visit,
            },
        ),
        // Few Newton steps this epoch: the inner problems are solved; tighten them.
        Stmt::If(
            Cmp::Lt,
            mul(s(newton), s(inv_m)),
            k(0.1 + 1e-12),
            vec![
                Stmt::If(Cmp::Gt, s(inner), k(INNER_FLOOR * 1.5), vec![Stmt::Set(ready, k(1.0))]),
                Stmt::Set(inner, call(Func::Max, vec![k(INNER_FLOOR), mul(k(0.1), s(inner))])),
            ],
        ),
    ];
    epoch.extend(norm_w);
    // Two epochs' falls, both positive, the second smaller, make a rate; else the estimate is ∞.
    let rate = div(s(drop), s(fell));
    let tail = div(mul(s(drop), rate.clone()), sub(k(1.0), rate.clone()));
    let left = mul(k(ESTIMATE_FACTOR), call(Func::Max, vec![tail, s(decrement)]));
    let value = div(left, call(Func::Max, vec![primal, k(f64::MIN_POSITIVE)]));
    let inf = || k(f64::INFINITY);
    let with_rate = select(
        s(fell),
        Cmp::Lt,
        k(f64::MAX),
        select(
            s(fell),
            Cmp::Gt,
            k(0.0),
            select(s(drop), Cmp::Gt, k(0.0), select(rate, Cmp::Lt, k(1.0), value, inf()), inf()),
            inf(),
        ),
        inf(),
    );
    epoch.extend([
        Stmt::Set(now, {
            let plain = add(mul(k(0.5), s(norm)), s(entropy));
            match (st.bias, st.center) {
                (Some((slot, t2)), Some(b0)) => add(plain, linear_term(slot, t2, b0)),
                _ => plain,
            }
        }),
        Stmt::Set(drop, sub(s(dual), s(now))),
        Stmt::Set(estimate, with_rate),
        Stmt::Set(dual, s(now)),
        Stmt::Set(fell, select(s(drop), Cmp::Lt, k(f64::MAX), s(drop), k(f64::INFINITY))),
    ]);
    let reset = vec![
        Stmt::Set(inner, k(INNER_START)),
        Stmt::Set(visits, k(0.0)),
        Stmt::Set(dual, k(f64::INFINITY)),
        Stmt::Set(fell, k(f64::INFINITY)),
        Stmt::Set(estimate, k(f64::INFINITY)),
    ];
    (reset, epoch, Cadence { visits, ready }, dual)
}

/// A free b's multiplier step (`intercept.rs`) moves the centre b₀ and t², and with them the
/// problem the next epoch's dual belongs to: its value at the same αᵢ differs by the change of
/// ½(b − b₀)²/t² + b₀(b − b₀)/t². Without this (and the linear term in the value), the next
/// epoch's fall compared values of two problems and was no fall at all (or a rise), the rate
/// was lost and the estimate ∞: ℓ2-logistic + b on debian-desc at C = 1 had none from its
/// fourth epoch on, and was first checked after seven epochs where five certify it (five
/// without b). `before` is a local; returns the statements before and after the step.
pub(super) fn rebase(dual: ScalarId, (slot, t2): (ScalarId, ScalarId), b0: ScalarId, before: ScalarId) -> (Stmt, Stmt) {
    let term =
        || add(mul(k(0.5), div(mul(sub(s(slot), s(b0)), sub(s(slot), s(b0))), s(t2))), linear_term(slot, t2, b0));
    (Stmt::Set(before, term()), Stmt::Set(dual, add(s(dual), sub(term(), s(before)))))
}

/// The linear term b₀·Σᵢ σᵢ of a free b's dual (`intercept.rs`), as b₀·(b − b₀)/t²: with it
/// the value is that of the problem the epoch's steps minimise, which falls at every step
/// (without it debian-desc's fourth to sixth epochs seemed to rise).
fn linear_term(slot: ScalarId, t2: ScalarId, b0: ScalarId) -> Expr {
    div(mul(s(b0), sub(s(slot), s(b0))), s(t2))
}
