//! The refinement of [`super::refined_dual`] for a support too wide for a dense Hessian: Newton
//! steps on the non-zero coordinates of w with their signs kept, the Newton system solved by
//! preconditioned conjugate gradients from Hessian-vector products through X_V, so nothing of
//! size |V|² is formed.
//!
//! Why: at weak ℓ1 regularization on text (debian-desc at C = 10, λ = 1.93e-6) the support holds
//! 3,345 coordinates. There the primal is within 1e-7 of F* after 30 epochs, but ∇f still
//! exceeds λ by 0.3% on a few near-duplicate non-zero columns. Scaling the dual point by
//! s = λ/‖∇f‖∞ then costs 6e-4 of F, and the run spent 20 s more certifying 1e-4. The dense
//! refinement fixes the same directions in one step, but its Hessian on 3,300 coordinates took
//! 33 s. With the signs fixed, the ℓ1 term is linear on the support and F is smooth there.
//! A Newton step through CG costs two passes over X_V per iteration and takes the
//! near-duplicate directions as they come.
//!
//! Near the optimum (the gap within [`super::refine::EXACT_GAP`] of F) a support of up to
//! `EXACT_MAX` coordinates gets exact steps instead: the dense Hessian factored by Cholesky at a
//! round's first step, and the round's later steps solved by conjugate gradients preconditioned
//! with that factor, each in the face where the coordinates that leave the support sit at zero.
//! Once the support is solved, the zero coordinates that still violate optimality enter and the
//! next round begins, its steps preconditioned by the same factor bordered with the entering
//! columns. CG stops short on near-duplicate columns, and the support's largest
//! violation, which scales the dual point, stays near 1e-3 of λ; exact steps close it.

use super::cholesky::Factor;
use super::hessian::{hessian_times, lower_hessian};
use super::refine::{dual_and_gradient, moves_freely, Budget, Refined, Rows, Subspace, ARMIJO, REFINE_RESIDUAL};
use super::settle;
use super::{dot, regularizer, violation, Polished};
use crate::data::Copies;
use crate::exec::DataView;
use crate::plan::Certificate;

/// Newton steps of a refinement, at most.
const STEPS: usize = 4;
/// Conjugate-gradient iterations of one Newton step, at most. On debian-desc at C = 10, a cap
/// of 50 certified 1e-4 in 4.4–4.8 s, 100 in 6.2 s, 250 in 8.6 s, and 15 or 30 in 5.6–15 s:
/// an inexact step the next epochs continue from is worth more than an exact one.
const CG_STEPS: usize = 50;
/// What a refinement may cost, in passes over X: its Hessian-vector products cost two passes
/// over X_V each, and a wide support of a stochastic iterate (FOBOS on debian-files after two
/// epochs: 16,665 non-zeros, most of X) would otherwise cost a thousand passes a check. On
/// debian-desc at C = 10 (X_V a fifth of X or less), 60 cut the steps short and the run took
/// 9.2 s; 150 leaves them whole, 4.3 s.
const BUDGET_PASSES: usize = 150;
/// Supports up to this many coordinates get exact Newton steps: the dense Hessian on them
/// (8·n² bytes: 288 MB at the bound) factored by Cholesky. On near-duplicate columns conjugate
/// gradients stop far from the Newton step, and the support's largest violation, which sets the
/// scale of the dual point, stays at 1e-3 of λ; exact steps take it below 1e-7 of λ in two or
/// three. faer factors a 3,344-column matrix in 0.27 s here (nalgebra's unblocked Cholesky took
/// 5.4 s).
const EXACT_MAX: usize = 6000;
/// A support wider than `EXACT_MAX`, up to this, is settled by [`settle`]'s ADMM steps near the
/// optimum, and then gets exact steps: debian-files at C = 100 holds 6,500–6,650 columns there.
/// The dense H on it takes 8·n² bytes (648 MB at the bound), and its factor as much again.
const SETTLE_MAX: usize = 9000;
/// Exact Newton steps of a round, at most.
const EXACT_STEPS: usize = 6;
/// Exact Newton steps of a refinement, at most, over all its rounds. Far from the optimum's
/// support a step costs up to 8 s at 5,000 columns (hundreds of coordinates crossing zero, and a
/// line search that halves): on debian-files at C = 10 unbounded rounds made one check 35 s.
const EXACT_BUDGET: usize = 10;
/// Rounds of exact steps: the support, then the support with the zero coordinates that violate
/// optimality at the point it reached. On debian-files at C = 10 each Newton step on the support
/// brings out 30–200 new violators, and four or five rounds end the run.
const EXACT_ROUNDS: usize = 5;
/// A round of exact steps that leaves more than this fraction of the gap the round before left
/// ends the check's rounds. Near the optimum's support each round takes 4–10 times off the gap
/// (debian-desc at C = 100: 6.3e-3, 1.6e-3, 2.9e-4, 3.5e-5, then below 1e-7). At debian-files'
/// first exact check at C = 10 the rounds took 4.9e-2 to 4.1e-2, 2.7e-2, 2.7e-2 and 1.9e-2, each
/// bringing in and dropping 200 columns, for 0.5 s a round; the next check certified in three.
/// Ending such a check after its second round, paired whole runs: debian-files at C = 10
/// 0.89×, debian-desc at C = 100 and 10 1.00×.
///
/// A round whose exact step the line search shortened ends the rounds too: Newton's model does
/// not yet hold there, and the violators a next round would bring in move the point further
/// from it. On debian-desc at C = 100 the first exact check (gap 0.29 of F, epoch 12) took a
/// half step; its second round brought in 215 columns, whose step carried 310 coordinates
/// across zero, and lost 1.2 s gaining nothing. The check two epochs on certified. Ending at
/// the half step: that run 0.86× (three pairs); the other debian rows at C = 1–100 take the same
/// epochs.
const SLOW_ROUND: f64 = 0.5;
/// Violating zero coordinates a round brings in, at most (the worst first).
const EXACT_ENTER: usize = 1024;
/// A round has solved its support once a step lowers F by less than this fraction of the gap
/// left at its point: the rest of the gap is the zero coordinates', and the next round brings
/// them in. Steps past that point lowered F by 1e-10 to 1e-16 on debian-files while the gap
/// stayed at 2e-3, and cost a second each. When no zero coordinate violates, the rest is the
/// support's residual after the step (F is flat there to second order), and the next round takes
/// one more step on the same support: on debian-desc at C = 100 the check after epoch 14 then
/// ends at 1.3e-6 of F instead of 2.7e-4, and certifies two epochs sooner.
///
/// Only a full step says so: a step the line search shortened has not solved the support, and
/// the round's next steps (damped Newton, preconditioned by the factor) continue from it. Ended
/// there instead, debian-files at C = 10 (seed 3, with the Newton plan's one-pass epochs left on
/// past polishing) met a check every two epochs whose one step passed at t = 1/2 to 1/16 and
/// left the gap at 0.07–0.8 of F, and took 170 epochs (82 s); continuing, that first check's
/// third step was full, and the run certified after 18 epochs (8.1 s).
const SETTLED: f64 = 1e-2;
/// Fewer CG iterations a step than this, within the budget, and the refinement is not tried.
const CG_LEAST: usize = 10;
/// CG stops once the preconditioned residual rᵀM⁻¹r is this fraction of the first.
const CG_TOL: f64 = 1e-6;
/// The line search halves the step down to this, at most twenty trials.
const MIN_STEP: f64 = 1e-6;

/// Newton steps on F restricted to the support of w (the non-zero coordinates inside the box),
/// each coordinate keeping its sign; the best dual value of the points they reach, and the
/// point with ∇f there when a step moved. Stops once F at the point reached is within `slack`
/// of D: the run continues from that point when F is lower there, and its gap is F there minus
/// the best D. Measured from F at w instead (`enough`), the gap counted the refinement's own
/// drop of F: on debian-desc at C = 10 a last round took the gap from 4.5e-7 to 3.7e-9 for a
/// slack of 5.7e-6, because the steps had lowered F by 9.5e-5. `gradient` is ∇f at w,
/// from which a support past `EXACT_MAX` is settled. None when the support is empty or no dual
/// value is finite.
pub(super) fn refine(
    cert: &Certificate,
    data: &DataView,
    c: f64,
    w: Vec<f64>,
    margins: &[f64],
    gradient: &[f64],
    Budget { slack, exact, settle, stalled_again, halt, .. }: Budget,
) -> Option<Refined> {
    if margins.is_empty() {
        return None;
    }
    // `w` has its copies folded (see `refined_dual`); they stay out of every round.
    let copies = crate::exec::copies::foldable(cert, data);
    let labels = data.labels;
    let scale = c / margins.len() as f64;
    // The refined point and F there, and the zero coordinates a round brings in with the sign
    // ∇f asks for.
    let mut entering: Vec<(usize, f64)> = vec![];
    let mut now = Rows::at(cert.conjugate, labels, data.weights, margins, None, data.threads);
    // The caller's copy of w, moved here rather than copied again.
    let (mut f, mut x) = (scale * now.loss + regularizer(cert, &w), w);
    let mut best = f64::NEG_INFINITY;
    let mut last_gradient: Option<Vec<f64>> = None;
    let mut exact = Exact { near: exact, left: EXACT_BUDGET };
    let mut held: Option<FaceSystem> = None;
    let mut round_gap = f64::INFINITY;
    let done = |f: f64, best: f64| f - best <= slack;
    // A support just past EXACT_MAX is settled by ADMM steps first; the rounds then take exact
    // steps on up to SETTLE_MAX columns.
    let mut exact_max = EXACT_MAX;
    let settles = || (EXACT_MAX + 1..=SETTLE_MAX).contains(&x.iter().filter(|&&v| moves_freely(cert, v)).count());
    if settle && settle::applies(cert) && settles() {
        if let Some(settled) = settle::settle(cert, data, c, &mut x, &mut now, gradient, copies, SETTLE_MAX, halt) {
            f = settled.f;
            best = best.max(settled.dual);
            exact_max = SETTLE_MAX;
            exact.near = true;
            entering = violators(cert, &x, &settled.gradient, copies, EXACT_ENTER);
            last_gradient = Some(settled.gradient);
            if done(f, best) {
                return Some(Refined {
                    dual: best,
                    moved: last_gradient.map(|gradient| Polished {
                        weights: x,
                        intercept_shift: 0.0,
                        class_shift: vec![],
                        gradient,
                    }),
                });
            }
        }
    }
    // Conjugate-gradient steps wait until F has stalled at two checks in a row. At the first
    // stall the support is still moving, and its steps (0.6–0.9 s at 4,000–6,000 columns) leave
    // the gap where it was: on debian-desc at C = 100 the check after epoch 10 (gap 0.71 of F)
    // moved it nowhere, and without it the run certifies after the same 14 epochs in 6.4 s of
    // solving instead of 7.2 s. debian-files takes the same epochs at C = 10, and the same time
    // at C = 100 (two epochs more).
    // (A settling that ran leaves `exact.near` set, so nothing is dropped here.)
    if !exact.near && !stalled_again {
        return None;
    }
    for _ in 0..EXACT_ROUNDS {
        if halt() {
            break;
        }
        let mut columns: Vec<(usize, f64)> =
            (0..x.len()).filter(|&j| moves_freely(cert, x[j])).map(|j| (j, x[j].signum())).collect();
        columns.append(&mut entering);
        // In column order, as the Hessian of `Subspace` needs.
        columns.sort_unstable_by_key(|&(j, _)| j);
        let cols: Vec<usize> = columns.iter().map(|&(j, _)| j).collect();
        let sign: Vec<f64> = columns.iter().map(|&(_, s)| s).collect();
        if cols.is_empty() {
            break;
        }
        let sub = Subspace::new(data, x.len(), &cols);
        let cg_steps = CG_STEPS.min(BUDGET_PASSES * data.values.len() / (2 * STEPS * sub.value.len()).max(1));
        if cg_steps < CG_LEAST {
            break;
        }
        let n = cols.len();
        let mut v: Vec<f64> = cols.iter().map(|&j| x[j]).collect();
        // A coordinate a step takes to zero or to a bound stays there: its sign is no longer kept.
        let mut free = vec![true; n];
        // Whether an exact step of this round took less than its full length.
        let mut damped = false;
        let round_exact = exact.near && n <= exact_max;
        // The factor of this round's first exact step, which preconditions the next ones; a
        // factor from an earlier round is carried onto this V.
        if let Some(old) = held.take() {
            held = old.carried(&cols);
        }
        for _ in 0..if round_exact { EXACT_STEPS } else { STEPS } {
            if halt() {
                break;
            }
            let loss_gradient: Vec<f64> = sub.transpose_times(&now.u).iter().map(|x| scale * x).collect();
            // ∇ of F on the free coordinates, with sign(v) for ∂|v|.
            let g: Vec<f64> = (0..n)
                .map(|k| if free[k] { loss_gradient[k] + cert.l1 * sign[k] + cert.l2 * v[k] } else { 0.0 })
                .collect();
            let unit = if cert.l1 > 0.0 { cert.l1 } else { loss_gradient.iter().fold(0.0_f64, |x, g| x.max(g.abs())) };
            if g.iter().all(|x| x.abs() <= REFINE_RESIDUAL * unit) {
                break;
            }
            let system = Newton { cert, data, sub: &sub, now: &now, scale, g: &g, free: &free };
            // The exact step first; one whose line search fails (a direction along exactly
            // duplicated columns, which only the ridge bounds) is taken again by conjugate
            // gradients.
            let tries: &[bool] = if round_exact && exact.take() { &[true, false] } else { &[false] };
            let found = tries.iter().find_map(|&use_exact| {
                let d = if use_exact {
                    let d = exact_direction(&system, &mut held, &cols, &v, &sign);
                    exact.near &= d.is_some();
                    d?
                } else {
                    newton_direction(&system, cg_steps)?
                };
                line_search(&system, &v, &sign, &d, use_exact)
            });
            let Some((point, trial, full)) = found else { break };
            damped |= round_exact && !full;
            for k in 0..n {
                if point[k] == 0.0 || point[k] == cert.lo || point[k] == cert.hi {
                    free[k] = false;
                }
            }
            let change = scale * (trial.loss - now.loss) + regularizer(cert, &point) - regularizer(cert, &v);
            f += change;
            (v, now) = (point, trial);
            let (dual, gradient) = dual_and_gradient(cert, data, c, x.len(), &now.a);
            if dual.is_finite() {
                best = best.max(dual);
            }
            last_gradient = Some(gradient);
            if done(f, best) || (round_exact && full && -change < SETTLED * (f - best)) {
                break;
            }
        }
        for (&j, &vj) in cols.iter().zip(&v) {
            x[j] = vj;
        }
        // Once the support is solved, the zero coordinates that still violate optimality come in
        // (exact steps only: a conjugate-gradient round has not solved its support).
        // A round that leaves more than SLOW_ROUND of the gap the round before left, or whose
        // exact step had to be shortened, says the support is still moving: the epochs bring its
        // columns in more cheaply.
        let slow = f - best > SLOW_ROUND * round_gap || damped;
        round_gap = f - best;
        let Some(gradient) = last_gradient.as_ref().filter(|_| round_exact && exact.near && !done(f, best) && !slow)
        else {
            break;
        };
        // With no zero coordinate left violating, what keeps the gap is the support's own
        // residual, and the next round takes another step on the same columns.
        entering = violators(cert, &x, gradient, copies, EXACT_ENTER);
    }
    let moved =
        last_gradient.map(|gradient| Polished { weights: x, intercept_shift: 0.0, class_shift: vec![], gradient });
    best.is_finite().then_some(Refined { dual: best, moved })
}

/// Whether a refinement still takes exact steps, and how many it has left. An exact step that
/// cannot be taken (too many coordinates cross zero, or no ridge makes H positive definite) says
/// the point is not yet where Newton's steps pay: conjugate gradients take the rest.
struct Exact {
    near: bool,
    left: usize,
}

impl Exact {
    /// One exact step, when one is left.
    fn take(&mut self) -> bool {
        let ok = self.near && self.left > 0;
        self.left -= usize::from(ok);
        ok
    }
}

/// The point along d from v that the line search accepts, projected back into the orthant of v
/// (and the box), with the rows there and whether the step passed at its full length; None when
/// no step down to [`MIN_STEP`] passes.
///
/// A coordinate whose sign the step would flip stops at zero and stays there for the rest of
/// the refinement. An exact step (`stop_at_crossing`) whose full length fails tries next where
/// its first non-zero coordinate reaches zero, with that coordinate at zero for good: projecting
/// it to zero at every step instead failed Armijo. On debian-desc at C = 10 one coordinate asked
/// for a step of 11 across zero at each Newton step, the search halved to t = 1/32, and the gap
/// stayed at 1.9e-4 of F; stopping at its crossing once let the next steps take t = 1 (numpy,
/// exact steps). Since exact steps are solved in their face this is a fallback, for a step whose
/// face solves still left a coordinate crossing.
fn line_search(
    system: &Newton,
    v: &[f64],
    sign: &[f64],
    d: &[f64],
    stop_at_crossing: bool,
) -> Option<(Vec<f64>, Rows, bool)> {
    let Newton { cert, data, sub, now, scale, g, free } = *system;
    let labels = data.labels;
    let n = v.len();
    let slope = dot(g, d);
    if slope.is_nan() || slope >= 0.0 {
        return None;
    }
    // Where the first non-zero free coordinate reaches zero, when that comes before t = 1.
    let (crossing, first) = (0..n)
        .filter(|&k| stop_at_crossing && free[k] && v[k] != 0.0 && d[k] * sign[k] < 0.0)
        .map(|k| (-v[k] / d[k], k))
        .fold((1.0_f64, None), |(t, at), (tk, k)| if tk < t { (tk, Some(k)) } else { (t, at) });
    let project = |t: f64| -> Vec<f64> {
        (0..n)
            .map(|k| {
                let x = (v[k] + t * d[k]).clamp(cert.lo, cert.hi);
                if free[k] && (x * sign[k] <= 0.0 || (first == Some(k) && t >= crossing)) {
                    0.0
                } else {
                    x
                }
            })
            .collect()
    };
    let reg_now = regularizer(cert, v);
    let mut t = 1.0_f64;
    while t >= MIN_STEP {
        let point = project(t);
        let moved: Vec<f64> = point.iter().zip(v).map(|(x, v)| x - v).collect();
        let predicted = dot(g, &moved);
        let dm = sub.times(&moved);
        let trial = Rows::at(cert.conjugate, labels, data.weights, &now.a, Some((&dm, 1.0)), sub.threads);
        let change = scale * (trial.loss - now.loss) + regularizer(cert, &point) - reg_now;
        // Armijo, or where differences of F near its minimum are lost to rounding, a
        // non-positive slope of F at the end of the step, from the left: F is convex along the
        // path, so it decreased all the way.
        let slope_at_end = scale * dot(&trial.u, &dm)
            + (0..n).map(|k| (cert.l1 * sign[k] + cert.l2 * point[k]) * moved[k]).sum::<f64>();
        if predicted < 0.0 && (change <= ARMIJO * predicted || slope_at_end <= 0.0) {
            return Some((point, trial, t == 1.0));
        }
        t = if t == 1.0 && crossing < 1.0 { crossing.max(MIN_STEP) } else { t * 0.5 };
    }
    None
}

/// The zero coordinates of `x` that violate their optimality condition at ∇f = `gradient`, at
/// most `most` of the worst, each with the sign its gradient asks for.
fn violators(
    cert: &Certificate,
    x: &[f64],
    gradient: &[f64],
    copies: Option<&Copies>,
    most: usize,
) -> Vec<(usize, f64)> {
    let mut found: Vec<(f64, usize)> = (0..x.len())
        .filter(|&j| x[j] == 0.0 && !copies.is_some_and(|c| c.is_copy(j)))
        .map(|j| (violation(cert, 0.0, gradient[j]), j))
        .filter(|&(e, _)| e > 0.0)
        .collect();
    if found.len() > most {
        found.select_nth_unstable_by(most - 1, |a, b| b.0.total_cmp(&a.0));
        found.truncate(most);
    }
    found.into_iter().map(|(_, j)| (j, -gradient[j].signum())).collect()
}

/// d ≈ −H⁻¹g on the free coordinates by conjugate gradients preconditioned by H's diagonal;
/// None when H has no curvature along g.
fn newton_direction(system: &Newton, cg_steps: usize) -> Option<Vec<f64>> {
    let (g, free) = (system.g, system.free);
    let n = g.len();
    let curvature = &system.now.curvature;
    let diagonal = system.sub.weighted_squares(curvature);
    let largest = diagonal.iter().fold(0.0_f64, |x, &h| x.max(h));
    // A relative 1e-12 keeps exactly duplicated columns (a singular H) from dividing by 0.
    let ridge = 1e-12 * system.scale * largest;
    let m: Vec<f64> = (0..n).map(|k| system.scale * diagonal[k] + system.cert.l2 + ridge).collect();
    let product = |p: &[f64]| -> Vec<f64> {
        let mut hp = system.times(p, ridge);
        for k in 0..n {
            if !free[k] {
                hp[k] = 0.0;
            }
        }
        hp
    };
    let mut d = vec![0.0; n];
    let mut r: Vec<f64> = g.iter().map(|x| -x).collect();
    let precondition = |r: &[f64]| Some(r.iter().zip(&m).map(|(r, m)| r / m).collect());
    // Stopped short (by the step cap or no curvature), d is still a descent direction.
    conjugate_gradients(&mut d, &mut r, free, (cg_steps, CG_TOL), |p| Some(product(p)), precondition);
    d.iter().any(|&x| x != 0.0).then_some(d)
}

/// Preconditioned conjugate gradients on H·d = b from `d`, whose residual b − H·d is `r`; both
/// are updated in place, on the coordinates `moves` only. They run for at most `limit.0`
/// iterations, until rᵀM⁻¹r falls to `limit.1` of its first value; whether they got there (not
/// when H has no curvature along a direction, a product or preconditioning is not finite, or
/// `product` gives none: the ranks' products, whose reduction can fail, stop there).
pub(crate) fn conjugate_gradients(
    d: &mut [f64],
    r: &mut [f64],
    moves: &[bool],
    (steps, tol): (usize, f64),
    mut product: impl FnMut(&[f64]) -> Option<Vec<f64>>,
    precondition: impl Fn(&[f64]) -> Option<Vec<f64>>,
) -> bool {
    let Some(mut z) = precondition(r) else { return false };
    let mut p = z.clone();
    let mut rz = dot(r, &z);
    let stop = tol * rz;
    for _ in 0..steps {
        if rz.is_nan() || rz <= stop {
            return rz <= stop;
        }
        let Some(hp) = product(&p) else { return false };
        let curv = dot(&p, &hp);
        if curv.is_nan() || curv <= 0.0 {
            return false;
        }
        let alpha = rz / curv;
        for k in 0..d.len() {
            if moves[k] {
                d[k] += alpha * p[k];
                r[k] -= alpha * hp[k];
            }
        }
        let Some(next_z) = precondition(r) else { return false };
        z = next_z;
        let next = dot(r, &z);
        let beta = next / rz;
        rz = next;
        for k in 0..p.len() {
            p[k] = z[k] + beta * p[k];
        }
    }
    rz <= stop
}

/// The exact Newton step on the free coordinates, H = scale·X_Vᵀ·diag(curvature)·X_V + l2·I
/// (plus a relative 1e-12 on the diagonal, as [`Subspace::hessian`] adds), in the face where
/// every coordinate the step would carry across zero is at zero: such coordinates move to zero
/// (d_c = −v_c) and the others solve H_FF·d_F = −g_F − H_FC·d_C, again until none crosses. One
/// step so drops every coordinate that leaves the support; stopping at each crossing in turn
/// took 14 steps of t ≤ 1e-2 on debian-files at C = 10.
///
/// `held` is the Cholesky factor of an earlier step's H on the same V, when there is one: the
/// step is then solved by conjugate gradients on today's H, preconditioned by that factor. Near
/// the optimum the curvature moves little between steps, so a handful of products with X_V
/// (about 7 ms each at 4,200 columns on debian-files) replace forming H and factoring it (0.4 s
/// and 0.6 s). H is formed and factored again when they do not converge. None when no ridge up
/// to 1e-6 of the largest diagonal entry makes H positive definite.
fn exact_direction(
    system: &Newton,
    held: &mut Option<FaceSystem>,
    cols: &[usize],
    v: &[f64],
    sign: &[f64],
) -> Option<Vec<f64>> {
    let (n, free) = (system.g.len(), system.free);
    if let Some(d) = held.as_mut().and_then(|old| held_step(old, system, v, sign)) {
        return d.iter().any(|&x| x != 0.0).then_some(d);
    }
    let idx: Vec<usize> = (0..n).filter(|&k| free[k]).collect();
    let form = |idx: &[usize]| lower_hessian(system.sub, &system.now.curvature, system.scale, system.cert.l2, idx);
    let fresh = FaceSystem::factor(form, idx, cols, &system.now.curvature)?;
    let (d, _) = face_step(&fresh.idx, free, v, sign, &[], |zeroed| fresh.solve(system.g, free, v, zeroed))?;
    *held = Some(fresh);
    d.iter().any(|&x| x != 0.0).then_some(d)
}

/// The step by a held factor: its face found by direct solves with P (the factor's H, bordered
/// on the coordinates new to V), then the step in that face by conjugate gradients on today's
/// H preconditioned by P. One run of them a step: run for each face instead, a step with four
/// faces cost 1.5 s on debian-files at C = 10, as much as a fresh factor.
fn held_step(old: &mut FaceSystem, system: &Newton, v: &[f64], sign: &[f64]) -> Option<Vec<f64>> {
    if !old.take_in(system) {
        return None;
    }
    let pre = old.preconditioner();
    let (_, start) = face_step(&old.idx, system.free, v, sign, &[], |zeroed| pre.direct(system, v, zeroed))?;
    face_step(&old.idx, system.free, v, sign, &start, |zeroed| pre.refined(system, v, zeroed)).map(|(d, _)| d)
}

/// The step in its face: `solve` gives d on the factor's coordinates for a set of positions
/// sent to zero, and every coordinate it carries across zero joins that set, up to
/// [`FACE_SOLVES`] times. Coordinates of the factor that are no longer free are in that set
/// from the start, and stay put.
fn face_step(
    idx: &[usize],
    free: &[bool],
    v: &[f64],
    sign: &[f64],
    start: &[usize],
    solve: impl Fn(&[usize]) -> Option<Vec<f64>>,
) -> Option<(Vec<f64>, Vec<usize>)> {
    let mut zeroed: Vec<usize> = (0..idx.len()).filter(|&p| !free[idx[p]]).collect();
    let held = zeroed.len();
    zeroed.extend(start.iter().filter(|&&p| free[idx[p]]));
    let mut d = vec![0.0_f64; v.len()];
    for _ in 0..FACE_SOLVES {
        let solved = solve(&zeroed)?;
        d.iter_mut().for_each(|x| *x = 0.0);
        for (&k, &x) in idx.iter().zip(&solved) {
            d[k] = x;
        }
        for &p in &zeroed {
            d[idx[p]] = target(free, v, idx[p]);
        }
        let crossing: Vec<usize> =
            (0..idx.len()).filter(|&p| !zeroed.contains(&p) && (v[idx[p]] + d[idx[p]]) * sign[idx[p]] < 0.0).collect();
        if crossing.is_empty() {
            break;
        }
        if zeroed.len() + crossing.len() - held > FACE_CROSSINGS {
            return None;
        }
        zeroed.extend(crossing);
    }
    Some((d, zeroed))
}

/// Where a coordinate sent to zero moves: to zero when it is free, nowhere when it is held (at
/// zero or at a bound of the box).
fn target(free: &[bool], v: &[f64], k: usize) -> f64 {
    if free[k] {
        -v[k]
    } else {
        0.0
    }
}

/// Solves of a step's face, at most: each adds the coordinates the last one carried across zero.
const FACE_SOLVES: usize = 4;
/// A step that carries more coordinates than this across zero is not taken exactly: its point
/// is far from the optimum's support, and each face solve costs a triangular solve per such
/// coordinate. On debian-files at C = 10 steps near the end cross 0–100; far from it, 500 and more.
const FACE_CROSSINGS: usize = 256;
/// Conjugate-gradient iterations of a step preconditioned by an earlier factor, at most, and
/// where they stop: once rᵀP⁻¹r is this fraction of the first, an inexact Newton step with a
/// forcing term of 1e-2. The rounds of debian-desc at C = 100 reach the same points and gaps
/// (6.3e-3, 1.6e-3, 2.9e-4, 3.5e-5, then below 1e-7) at 1e-4 as at 1e-10, in 5–7 iterations a
/// solve instead of 11–16; the check took 3.7 s instead of 4.5 s. At 1e-2 the rounds gained
/// less each and the last left a gap 6 times the one asked for.
const HELD_STEPS: usize = 25;
const HELD_TOL: f64 = 1e-4;
/// Rows of a held factor a face holds at zero, at most (the coordinates that left V or do not
/// move): each costs a solve with the factor once a step, 10–20 ms at 4,400 columns.
const FACE_HELD: usize = 512;
/// Coordinates new to V a held factor is bordered with, at most: the border costs a solve with
/// the factor per coordinate. A round brings in 5–170 on debian-desc and debian-files at
/// C = 10–100.
const BORDER_MAX: usize = 512;

/// The Newton system of one step on V at the rows `now`: H = scale·X_Vᵀ·diag(ℓ″)·X_V + l2·I and
/// the gradient g, on the coordinates still free.
#[derive(Clone, Copy)]
struct Newton<'a> {
    cert: &'a Certificate,
    data: &'a DataView<'a>,
    sub: &'a Subspace,
    now: &'a Rows,
    scale: f64,
    g: &'a [f64],
    free: &'a [bool],
}

impl Newton<'_> {
    /// H·p, p on all of V, with `ridge` more on the diagonal.
    fn times(&self, p: &[f64], ridge: f64) -> Vec<f64> {
        hessian_times(self.sub, &self.now.curvature, self.scale, self.cert.l2 + ridge, p)
    }
}

/// H on the coordinates I, factored once: the face where the coordinates Z go to zero is
/// solved through this one factor. H_II·d = −g_I + E_Z·μ with d_Z = −v_Z fixes μ by the small
/// system (E_Zᵀ·H_II⁻¹·E_Z)·μ = −v_Z − (H_II⁻¹·(−g_I))_Z, so the rows outside Z are exactly
/// H_FF·d_F = −g_F − H_FZ·d_Z. Refactoring H_FF for each set of crossings instead cost a factor
/// apiece (0.3–0.6 s at 4,200 columns).
///
/// The factor outlives its round: on the next round's V ([`FaceSystem::carried`]) it is
/// bordered by the columns that entered ([`FaceSystem::take_in`]) and preconditions that
/// round's steps. A round takes one or two steps and brings in 5–170 columns, and a fresh
/// Hessian and factor cost 1.2–1.5 s a round at 4,400 columns.
///
/// The borders are kept too, one a round, so P grows by the columns that are new to it: a
/// round borders only the columns that entered since the last. With one border from the factor
/// instead, every round formed and solved again the 200–250 columns that had entered since
/// the factor (0.16–0.36 s a round on debian-desc at C = 100).
struct FaceSystem {
    /// The positions in V of the step's coordinates, and the row of P each one is: a row of the
    /// factor, or one of a border's after them.
    idx: Vec<usize>,
    row: Vec<usize>,
    /// The columns of X of P's rows, in order: the factor's, then each border's.
    columns: Vec<usize>,
    /// The positions in V that are not yet rows of P (the next border's, in order), and V's
    /// columns.
    new: Vec<usize>,
    cols: Vec<usize>,
    factor: Factor,
    /// The borders of the factor, in the order they were added: each holds its rows against
    /// every row before it.
    borders: Vec<Border>,
    /// Columns of P⁻¹ by row, as faces asked for them. They outlive the step: the rows that
    /// left V are held at zero in every later face (200–230 of them by the fourth round on
    /// debian-desc at C = 100, a solve with P each), and a border extends each column by its
    /// rows instead ([`FaceSystem::take_in`]).
    inverse: std::cell::RefCell<std::collections::HashMap<usize, Vec<f64>>>,
    /// The rows' curvature H was formed at: a border is formed at it too, so the bordered
    /// matrix is a Hessian, positive definite. Bordered with today's curvature instead, the
    /// Schur complement of the new coordinates went negative (−0.015 against a diagonal of
    /// 5e-8 on debian-desc at C = 100): rows that were confidently right move by orders of
    /// magnitude of ℓ″ between steps.
    curvature: Vec<f64>,
    /// About the relative ridge H carries on its diagonal (1e-12 of its largest entry, see
    /// [`Subspace::hessian`]), for the products of a later step's H.
    ridge: f64,
}

impl FaceSystem {
    /// The Cholesky factor of H_II (`form(I)`: its lower triangle, column-major, as
    /// [`lower_hessian`] forms it), with a ridge of up to 1e-6 of the largest diagonal entry
    /// when rounding leaves H_II not positive definite. The factor is made where H_II was
    /// formed, so a ridge forms H_II again.
    fn factor(form: impl Fn(&[usize]) -> Vec<f64>, idx: Vec<usize>, cols: &[usize], curvature: &[f64]) -> Option<Self> {
        if idx.is_empty() {
            return None;
        }
        let f = idx.len();
        let h = form(&idx);
        let largest = (0..f).map(|p| h[p * f + p]).fold(0.0_f64, f64::max);
        let ridge = 1e-12 / (1.0 + 1e-12) * largest;
        let mut first = Some(h);
        let factor = [0.0, 1e-10, 1e-8, 1e-6].into_iter().find_map(|extra| {
            let mut a = first.take().unwrap_or_else(|| form(&idx));
            for p in 0..f {
                a[p * f + p] += extra * largest;
            }
            Factor::new(a, f)
        })?;
        let columns = idx.iter().map(|&k| cols[k]).collect();
        let row = (0..f).collect();
        let cols = cols.to_vec();
        let curvature = curvature.to_vec();
        let (new, borders, inverse) = (vec![], vec![], Default::default());
        Some(FaceSystem { idx, row, columns, new, cols, factor, borders, inverse, ridge, curvature })
    }

    /// This system on another V (`cols`, in column order): its coordinates still in V keep
    /// their rows, and the coordinates new to V get the next border's rows after them. None
    /// when V keeps none of them or brings in more than [`BORDER_MAX`].
    fn carried(self, cols: &[usize]) -> Option<Self> {
        let f = self.columns.len();
        let rows: std::collections::HashMap<usize, usize> =
            self.columns.iter().enumerate().map(|(q, &j)| (j, q)).collect();
        let mut row = Vec::with_capacity(cols.len());
        let mut new = vec![];
        for (k, j) in cols.iter().enumerate() {
            match rows.get(j) {
                Some(&r) => row.push(r),
                None => {
                    row.push(f + new.len());
                    new.push(k);
                }
            }
        }
        let idx = (0..cols.len()).collect();
        let cols = cols.to_vec();
        (new.len() < cols.len() && new.len() <= BORDER_MAX).then_some(FaceSystem { idx, row, new, cols, ..self })
    }

    /// The step on I by this factor's H: d_Z = −v_Z, H_FF·d_F = −g_F − H_FZ·d_Z (a factor
    /// just made, whose rows are `idx`).
    fn solve(&self, g: &[f64], free: &[bool], v: &[f64], zeroed: &[usize]) -> Option<Vec<f64>> {
        let rhs: Vec<f64> = self.idx.iter().map(|&k| -g[k]).collect();
        let plain = self.preconditioner();
        let face = plain.face(zeroed.to_vec());
        plain.solve_in(&face, &rhs, |p| target(free, v, self.idx[p]))
    }

    /// Borders P once more by the columns new to V, at the curvature the factor was formed
    /// at, so that P is the Hessian there on all of its rows. false, and this system
    /// unchanged, when rounding leaves the new Schur complement indefinite.
    fn take_in(&mut self, system: &Newton) -> bool {
        if self.new.is_empty() {
            return true;
        }
        use faer::linalg::solvers::Solve;
        let Some(border) = self.border(system) else { return false };
        // P⁻¹·e_q on the bordered P: x₂ = −S⁻¹·Bᵀ·y and x₁ = y − P⁻¹·B·x₂ for y = P⁻¹·e_q.
        let inverse = self.inverse.get_mut();
        if !inverse.is_empty() {
            let (f, k) = (self.columns.len(), self.new.len());
            // In order: a product's rounding can depend on a column's place in the batch, and
            // the same run gives the same numbers.
            let mut rows: Vec<usize> = inverse.keys().copied().collect();
            rows.sort_unstable();
            let y = faer::Mat::<f64>::from_fn(f, rows.len(), |r, c| inverse[&rows[c]][r]);
            let x2 = border.s.solve(-(border.b.transpose() * &y));
            let x1 = y - &border.z * &x2;
            for (c, q) in rows.into_iter().enumerate() {
                inverse.insert(q, (0..f + k).map(|r| if r < f { x1[(r, c)] } else { x2[(r - f, c)] }).collect());
            }
        }
        self.columns.extend(self.new.iter().map(|&p| self.cols[p]));
        self.borders.push(border);
        self.new.clear();
        true
    }

    /// P, to solve with: the factor and its borders.
    fn preconditioner(&self) -> Bordered<'_> {
        Bordered { base: self }
    }

    /// The border of P's rows by the columns new to V: B (P's rows against them), P⁻¹·B, and
    /// the factor of S = C − Bᵀ·P⁻¹·B.
    fn border(&self, system: &Newton) -> Option<Border> {
        let (f, k) = (self.columns.len(), self.new.len());
        // Every row of P by column of X: P's columns (those that left V too: their entries of
        // B keep P a Hessian), then the new ones.
        let mut place = vec![u32::MAX; system.data.features];
        for (q, &j) in self.columns.iter().enumerate() {
            place[j] = q as u32;
        }
        for (c, &p) in self.new.iter().enumerate() {
            place[self.cols[p]] = (f + c) as u32;
        }
        let cross = cross(system.data, &self.curvature, system.scale, &place, f, k);
        let b = faer::Mat::<f64>::from_fn(f, k, |q, c| cross[c * (f + k) + q]);
        let z = self.solve_rows(b.as_ref(), self.borders.len());
        let diagonal = system.cert.l2 + self.ridge;
        let bz = b.transpose() * &z;
        // S is H's Schur complement, positive semi-definite; near-duplicate columns leave it
        // near zero, and rounding then a ridge of up to 1e-6 of C's largest diagonal entry.
        let largest = (0..k).map(|r| cross[r * (f + k) + f + r]).fold(0.0_f64, f64::max);
        let s = [0.0, 1e-10, 1e-8, 1e-6].into_iter().find_map(|extra| {
            let s = faer::Mat::<f64>::from_fn(k, k, |r, c| {
                cross[c * (f + k) + f + r] - bz[(r, c)] + if r == c { diagonal + extra * largest } else { 0.0 }
            });
            s.llt(faer::Side::Lower).ok()
        })?;
        Some(Border { b, z, s })
    }

    /// P⁻¹·rhs for P made of the factor and its first `borders` borders (rhs has their rows),
    /// each border solved through the ones before it: t = A⁻¹·b₁, x₂ = S⁻¹·(b₂ − Bᵀ·t),
    /// x₁ = t − A⁻¹·B·x₂, with A the factor and the borders before.
    fn solve_rows(&self, rhs: faer::MatRef<'_, f64>, borders: usize) -> faer::Mat<f64> {
        use faer::linalg::solvers::Solve;
        let Some(border) = borders.checked_sub(1).map(|last| &self.borders[last]) else {
            return self.factor.solve(rhs);
        };
        let (f, k) = (border.b.nrows(), border.b.ncols());
        let t = self.solve_rows(rhs.subrows(0, f), borders - 1);
        let u = rhs.subrows(f, k).to_owned() - border.b.transpose() * &t;
        let x2 = border.s.solve(&u);
        let x1 = t - &border.z * &x2;
        faer::Mat::from_fn(f + k, rhs.ncols(), |r, c| if r < f { x1[(r, c)] } else { x2[(r - f, c)] })
    }
}

/// scale·Σᵢ dᵢ·xᵢ_P·xᵢ_Nᵀ: the rows of X by `place` (column of X → row of P, u32::MAX for none),
/// against the last `k` of P's `f + k` rows; column-major (f + k) × k. A row of X costs its
/// entries times its entries among those k.
///
/// By new column: one pass over X finds each new column's rows, and each column is then summed
/// from them into its own run of the output, a thread taking the next column when it is free.
/// Summed by blocks of rows instead, every block of 4,096 rows filled a whole (f + k) × k matrix
/// of its own, and the blocks were added: on debian-desc at C = 100, 161 new columns against
/// 4,336 rows took 0.23 s, most of it zeroing and adding 25 matrices of 5.8 MB.
fn cross(data: &DataView, d: &[f64], scale: f64, place: &[u32], f: usize, k: usize) -> Vec<f64> {
    let row_of = |e: usize| place.get(data.indices[e] as usize).copied().filter(|&q| q != u32::MAX);
    // The new columns' entries (column, row, value), in row order.
    let found: Vec<Vec<(u32, u32, f64)>> = crate::exec::passes::blocks(d.len(), data.threads, |rows| {
        let mut out = vec![];
        for i in rows.filter(|&i| d[i] != 0.0) {
            for e in data.indptr[i]..data.indptr[i + 1] {
                if let Some(q) = row_of(e).filter(|&q| q as usize >= f) {
                    out.push((q - f as u32, i as u32, data.values[e]));
                }
            }
        }
        out
    });
    // By column, each column's rows still in row order.
    let mut ptr = vec![0usize; k + 1];
    for &(c, _, _) in found.iter().flatten() {
        ptr[c as usize + 1] += 1;
    }
    for c in 0..k {
        ptr[c + 1] += ptr[c];
    }
    let mut next = ptr.clone();
    let mut rows = vec![(0u32, 0.0); ptr[k]];
    for &(c, i, v) in found.iter().flatten() {
        rows[next[c as usize]] = (i, v);
        next[c as usize] += 1;
    }
    crate::exec::passes::queued(k, data.threads, |c| {
        let mut out = vec![0.0; f + k];
        for &(i, x) in &rows[ptr[c]..ptr[c + 1]] {
            let i = i as usize;
            let a = scale * d[i] * x;
            for e in data.indptr[i]..data.indptr[i + 1] {
                if let Some(q) = row_of(e) {
                    out[q as usize] += a * data.values[e];
                }
            }
        }
        out
    })
    .concat()
}

/// A held factor of A with its borders: P = [A B; Bᵀ C] for each border in turn, solved
/// through the factor and the Schur complements S = C − Bᵀ·A⁻¹·B ([`FaceSystem::solve_rows`]).
struct Bordered<'a> {
    base: &'a FaceSystem,
}

/// A border's B (the rows before it against its columns), P⁻¹·B and the factor of S.
struct Border {
    b: faer::Mat<f64>,
    z: faer::Mat<f64>,
    s: faer::linalg::solvers::Llt<f64>,
}

impl Bordered<'_> {
    /// The step in the face `zeroed` (positions in `idx`) for P instead of today's H, by
    /// direct solves: where a step with today's H will land, near enough.
    fn direct(&self, system: &Newton, v: &[f64], zeroed: &[usize]) -> Option<Vec<f64>> {
        let (moves, face) = self.layout(zeroed)?;
        let mut at = vec![None; self.rows()];
        for (p, &q) in self.base.row.iter().enumerate() {
            at[q] = Some(p);
        }
        let rhs: Vec<f64> = at.iter().map(|a| a.map_or(0.0, |p| -system.g[self.base.idx[p]])).collect();
        let fixed = |q: usize| at[q].filter(|&p| !moves[p]).map_or(0.0, |p| target(system.free, v, self.base.idx[p]));
        let x = self.solve_in(&face, &rhs, fixed)?;
        Some(self.base.row.iter().map(|&q| x[q]).collect())
    }

    /// Which positions of `idx` move, and the face of P that holds the rest at zero with the
    /// rows no position is (the factor's coordinates that left V). None past [`FACE_HELD`].
    fn layout(&self, zeroed: &[usize]) -> Option<(Vec<bool>, Face)> {
        let mut moves = vec![true; self.base.idx.len()];
        for &p in zeroed {
            moves[p] = false;
        }
        let mut held = vec![true; self.rows()];
        for (p, &q) in self.base.row.iter().enumerate() {
            held[q] = !moves[p];
        }
        let held: Vec<usize> = (0..held.len()).filter(|&q| held[q]).collect();
        (held.len() <= FACE_HELD).then(|| (moves, self.face(held)))
    }

    /// The step for today's H (`system`'s), by conjugate gradients in the face `zeroed`
    /// preconditioned by P's solve in the same face. None when they do not converge within
    /// [`HELD_STEPS`]. The coordinates no longer free are among `zeroed`.
    fn refined(&self, system: &Newton, v: &[f64], zeroed: &[usize]) -> Option<Vec<f64>> {
        let (f, n) = (self.base.idx.len(), system.g.len());
        let (moves, face) = self.layout(zeroed)?;
        let spread = |x: &[f64]| -> Vec<f64> {
            let mut full = vec![0.0; n];
            for (&k, &xk) in self.base.idx.iter().zip(x) {
                full[k] = xk;
            }
            full
        };
        let product = |x: &[f64]| -> Vec<f64> {
            let hx = system.times(&spread(x), self.base.ridge);
            self.base.idx.iter().map(|&k| hx[k]).collect()
        };
        let mut d: Vec<f64> =
            (0..f).map(|p| if moves[p] { 0.0 } else { target(system.free, v, self.base.idx[p]) }).collect();
        let hd = product(&d);
        let mut r: Vec<f64> =
            (0..f).map(|p| if moves[p] { -system.g[self.base.idx[p]] - hd[p] } else { 0.0 }).collect();
        let precondition = |r: &[f64]| {
            let mut rhs = vec![0.0; self.rows()];
            for (p, &q) in self.base.row.iter().enumerate() {
                if moves[p] {
                    rhs[q] = r[p];
                }
            }
            let x = self.solve_in(&face, &rhs, |_| 0.0)?;
            Some((0..f).map(|p| if moves[p] { x[self.base.row[p]] } else { 0.0 }).collect())
        };
        let ok =
            conjugate_gradients(&mut d, &mut r, &moves, (HELD_STEPS, HELD_TOL), |p| Some(product(p)), precondition);
        ok.then_some(d)
    }

    /// P's order: the factor's rows and its borders'.
    fn rows(&self) -> usize {
        self.base.columns.len()
    }

    /// P⁻¹·rhs.
    fn solve(&self, rhs: faer::Mat<f64>) -> faer::Mat<f64> {
        self.base.solve_rows(rhs.as_ref(), self.base.borders.len())
    }

    /// The face of P where its rows `zeroed` are held: Y = P⁻¹·E_Z and the LU of E_Zᵀ·Y,
    /// computed once for every solve in that face.
    fn face(&self, zeroed: Vec<usize>) -> Face {
        let (f, z) = (self.rows(), zeroed.len());
        if z == 0 {
            return Face { zeroed, y: faer::Mat::zeros(f, 0), lu: None };
        }
        // The columns of P⁻¹ a face needs, solved once: a step's later faces add the
        // coordinates its last solve carried across zero to the same rows, and later steps hold
        // the same rows that left V.
        let mut solved = self.base.inverse.borrow_mut();
        let missing: Vec<usize> = zeroed.iter().copied().filter(|q| !solved.contains_key(q)).collect();
        if !missing.is_empty() {
            let y =
                self.solve(faer::Mat::<f64>::from_fn(f, missing.len(), |r, c| if missing[c] == r { 1.0 } else { 0.0 }));
            for (c, &q) in missing.iter().enumerate() {
                solved.insert(q, (0..f).map(|r| y[(r, c)]).collect());
            }
        }
        let columns: Vec<&Vec<f64>> = zeroed.iter().map(|q| &solved[q]).collect();
        let y = faer::Mat::<f64>::from_fn(f, z, |r, c| columns[c][r]);
        let s = faer::Mat::<f64>::from_fn(z, z, |r, c| y[(zeroed[r], c)]);
        let lu = Some(s.partial_piv_lu());
        Face { zeroed, y, lu }
    }

    /// x over P's rows with x_Z = `fixed` on the face's rows Z, and P_FF·x_F = rhs_F − P_FZ·x_Z
    /// on the rest.
    fn solve_in(&self, face: &Face, rhs: &[f64], fixed: impl Fn(usize) -> f64) -> Option<Vec<f64>> {
        use faer::linalg::solvers::Solve;
        let f = self.rows();
        let x0 = self.solve(faer::Mat::<f64>::from_fn(f, 1, |r, _| rhs[r]));
        let mut x: Vec<f64> = (0..f).map(|r| x0[(r, 0)]).collect();
        if let Some(lu) = &face.lu {
            let z = face.zeroed.len();
            let b = faer::Mat::<f64>::from_fn(z, 1, |r, _| fixed(face.zeroed[r]) - x[face.zeroed[r]]);
            let mu = lu.solve(&b);
            for (r, v) in x.iter_mut().enumerate() {
                *v += (0..z).map(|c| face.y[(r, c)] * mu[(c, 0)]).sum::<f64>();
            }
        }
        x.iter().all(|v| v.is_finite()).then_some(x)
    }
}

/// A face of P, ready for solves (see [`Bordered::face`]).
struct Face {
    zeroed: Vec<usize>,
    y: faer::Mat<f64>,
    lu: Option<faer::linalg::solvers::PartialPivLu<f64>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small problem whose plain Newton step flips a sign, and H formed from X directly. X has
    /// a column more than V = 0..D, which an earlier V held.
    struct Case {
        x: Vec<Vec<f64>>,
        indptr: Vec<usize>,
        indices: Vec<u32>,
        values: Vec<f64>,
        labels: Vec<f64>,
    }

    const M: usize = 7;
    const D: usize = 4;
    const SCALE: f64 = 1.0 / M as f64;
    const L2: f64 = 1e-3;
    const V: [f64; D] = [0.8, 0.01, -0.02, 0.5];
    const SIGN: [f64; D] = [1.0, 1.0, -1.0, 1.0];
    const G: [f64; D] = [0.01, 0.2, -0.15, -0.02];

    impl Case {
        fn new() -> Case {
            let x: Vec<Vec<f64>> = (0..M)
                .map(|i| (0..=D).map(|j| (((i * 7 + j * 3) % 5) as f64 - 1.5) / (1 + j) as f64).collect())
                .collect();
            let (indptr, indices, values) = super::super::tests::rows_of(&x);
            Case { x, indptr, indices, values, labels: vec![1.0; M] }
        }

        fn data(&self) -> DataView<'_> {
            DataView::new(&self.indptr, &self.indices, &self.values, &self.labels, D + 1)
        }

        fn h(&self, curvature: &[f64], r: usize, c: usize) -> f64 {
            let sum: f64 = (0..M).map(|i| SCALE * curvature[i] * self.x[i][r] * self.x[i][c]).sum();
            sum + if r == c { L2 } else { 0.0 }
        }

        /// P is the Hessian at `curvature` on the columns of X its rows are, in `order`:
        /// P⁻¹·H·x gives x back.
        fn assert_inverts(&self, pre: &Bordered, curvature: &[f64], order: &[usize]) {
            let n = order.len();
            let x: Vec<f64> = (1..=n).map(|k| k as f64).collect();
            let hx = faer::Mat::<f64>::from_fn(n, 1, |r, _| {
                (0..n).map(|c| self.h(curvature, order[r], order[c]) * x[c]).sum::<f64>()
            });
            let back = pre.solve(hx);
            for (r, &xr) in x.iter().enumerate() {
                assert!((back[(r, 0)] - xr).abs() < 1e-8 * xr, "P⁻¹·H·x = {back:?}, not x");
            }
        }

        /// Asserts that `step` keeps every sign, lands at least one coordinate at zero, and
        /// solves H·d = −g on the rest.
        fn assert_face_step(&self, curvature: &[f64], step: &[f64], tol: f64) {
            let zeroed: Vec<usize> = (0..D).filter(|&k| V[k] + step[k] == 0.0).collect();
            assert!(!zeroed.is_empty(), "nothing landed at zero: {step:?}");
            for k in 0..D {
                assert!((V[k] + step[k]) * SIGN[k] >= 0.0, "coordinate {k} crossed zero: {step:?}");
                if !zeroed.contains(&k) {
                    let residual = (0..D).map(|c| self.h(curvature, k, c) * step[c]).sum::<f64>() + G[k];
                    assert!(residual.abs() <= tol * G[k].abs().max(1e-3), "row {k} of H·d + g is {residual}");
                }
            }
        }
    }

    fn curvature(shift: f64) -> Vec<f64> {
        (0..M).map(|i| 0.05 + shift + 0.03 * i as f64).collect()
    }

    /// Rows whose ℓ″ is `curvature` (nothing else of them is read by a Newton system's solves).
    fn rows(curvature: Vec<f64>) -> Rows {
        Rows { a: vec![0.0; M], u: vec![0.0; M], curvature, loss: 0.0 }
    }

    /// The Newton system of a step on `sub` at `now`, scaled as every case here is.
    fn system<'a>(
        cert: &'a Certificate,
        data: &'a DataView<'a>,
        sub: &'a Subspace,
        now: &'a Rows,
        g: &'a [f64],
        free: &'a [bool],
    ) -> Newton<'a> {
        Newton { cert, data, sub, now, scale: SCALE, g, free }
    }

    fn ridge_only() -> Certificate {
        super::super::tests::cert(0.0, L2, f64::NEG_INFINITY, f64::INFINITY)
    }

    /// The line search says whether the step passed at its full length: a step of an exact round
    /// that had to be shortened ends the check's rounds. On squared loss a short step along −g
    /// passes whole, and one ten thousand times the length of −g overshoots the minimum along it
    /// and is shortened, yet lowers F.
    #[test]
    fn the_line_search_says_whether_it_shortened_the_step() {
        let case = Case::new();
        let data = case.data();
        let cert = ridge_only();
        let cols: Vec<usize> = (0..D).collect();
        let sub = Subspace::new(&data, D + 1, &cols);
        let now = Rows::at(cert.conjugate, &case.labels, None, &sub.times(&V), None, 1);
        let g: Vec<f64> = sub.transpose_times(&now.u).iter().zip(&V).map(|(x, v)| SCALE * x + L2 * v).collect();
        let free = [true; D];
        let system = system(&cert, &data, &sub, &now, &g, &free);
        let f = |rows: &Rows, v: &[f64]| SCALE * rows.loss + regularizer(&cert, v);
        for (length, whole) in [(1e-3, true), (1e4, false)] {
            let d: Vec<f64> = g.iter().map(|x| -length * x).collect();
            let (point, trial, full) = line_search(&system, &V, &SIGN, &d, false).expect("a descent direction");
            assert_eq!(full, whole, "a step of {length} times −g");
            assert!(f(&trial, &point) < f(&now, &V), "F did not fall along {length} times −g");
        }
    }

    /// H_II summed by columns is the Hessian the rows' outer products give, on any positions I
    /// of V, with one thread or two: its lower triangle, the upper left at zero.
    #[test]
    fn the_hessian_by_columns_is_the_hessian_by_rows() {
        let case = Case::new();
        let data = case.data();
        let cols: Vec<usize> = (0..=D).collect();
        let mut sub = Subspace::new(&data, D + 1, &cols);
        let d = curvature(0.0);
        let by_rows = sub.hessian(&d, SCALE, L2);
        for threads in [1, 2] {
            sub.threads = threads;
            assert!(lower_hessian(&sub, &d, SCALE, L2, &[]).is_empty());
            for idx in [vec![0, 1, 2, 3, 4], vec![1, 3, 4], vec![2]] {
                let f = idx.len();
                let h = lower_hessian(&sub, &d, SCALE, L2, &idx);
                for c in 0..f {
                    for r in 0..f {
                        let want = if r >= c { by_rows[idx[r] * (D + 1) + idx[c]] } else { 0.0 };
                        let got = h[c * f + r];
                        assert!(
                            (got - want).abs() <= 1e-12 * want.abs().max(1e-3),
                            "H[{r}, {c}] on {idx:?}: {got} against {want}"
                        );
                    }
                }
            }
        }
    }

    /// The exact step solves the Newton system in its face: coordinates the plain step would
    /// carry across zero land exactly at zero, and on the rest H·d = −g holds.
    #[test]
    fn an_exact_step_lands_the_coordinates_that_leave_the_support_at_zero() {
        let case = Case::new();
        let data = case.data();
        let cols: Vec<usize> = (0..D).collect();
        let sub = Subspace::new(&data, D + 1, &cols);
        let curvature = curvature(0.0);
        // The plain Newton step flips a sign: the face matters.
        let full = nalgebra::DMatrix::from_fn(D, D, |r, c| case.h(&curvature, r, c))
            .cholesky()
            .expect("H is positive definite")
            .solve(&nalgebra::DVector::from_iterator(D, G.iter().map(|x| -x)));
        assert!((0..D).any(|k| (V[k] + full[k]) * SIGN[k] < 0.0), "no coordinate crosses zero: {full}");

        let (free, cert, now) = ([true; D], ridge_only(), rows(curvature.clone()));
        let system = system(&cert, &data, &sub, &now, &G, &free);
        let mut held = None;
        let step = exact_direction(&system, &mut held, &cols, &V, &SIGN).expect("a step");
        assert!(held.is_some(), "the step's factor is not kept for the next one");
        case.assert_face_step(&curvature, &step, 1e-9);
    }

    /// A later step on the same V solves its own H, by conjugate gradients preconditioned with
    /// the factor an earlier step's H left: the same face conditions, to the same accuracy.
    #[test]
    fn a_held_factor_preconditions_the_next_exact_step() {
        let case = Case::new();
        let data = case.data();
        let cols: Vec<usize> = (0..D).collect();
        let sub = Subspace::new(&data, D + 1, &cols);
        let (free, cert) = ([true; D], ridge_only());
        let before = rows(curvature(0.0));
        let mut held = None;
        let first = system(&cert, &data, &sub, &before, &G, &free);
        exact_direction(&first, &mut held, &cols, &V, &SIGN).expect("a first step");
        let mut old = held.expect("a factor");

        let after = curvature(0.02);
        let now = rows(after.clone());
        let next = system(&cert, &data, &sub, &now, &G, &free);
        let step = held_step(&mut old, &next, &V, &SIGN).expect("conjugate gradients converge on the held factor");
        case.assert_face_step(&after, &step, 1e-7);
    }

    /// A factor carried onto the next round's V, where a column of its own has left and one
    /// has entered, preconditions the step there once bordered with the new column: the face
    /// found by its direct solves, then conjugate gradients on today's H, give the same face
    /// conditions as a step solved from H built from X.
    #[test]
    fn a_factor_carried_to_the_next_support_preconditions_its_step() {
        let case = Case::new();
        let data = case.data();
        let (cert, before) = (ridge_only(), rows(curvature(0.0)));
        // The earlier round: V = {0, 1, 3, D}, column 2 not yet in it.
        let earlier: Vec<usize> = vec![0, 1, 3, D];
        let sub = Subspace::new(&data, D + 1, &earlier);
        let (g, v, sign) = ([G[0], G[1], G[3], 0.05], [V[0], V[1], V[3], 0.3], [1.0; 4]);
        let first = system(&cert, &data, &sub, &before, &g, &[true; 4]);
        let mut held = None;
        exact_direction(&first, &mut held, &earlier, &v, &sign).expect("a first step");

        let cols: Vec<usize> = (0..D).collect();
        let mut old = held.expect("a factor").carried(&cols).expect("V keeps three of its columns");
        assert_eq!((old.new.as_slice(), old.row.as_slice()), (&[2][..], &[0, 1, 4, 2][..]));
        let sub = Subspace::new(&data, D + 1, &cols);
        let after = curvature(0.02);
        let (now, free) = (rows(after.clone()), [true; D]);
        let next = system(&cert, &data, &sub, &now, &G, &free);
        // P is the Hessian at the factor's curvature on its columns and the new one.
        assert!(old.take_in(&next), "the border is not positive definite");
        let pre = old.preconditioner();
        case.assert_inverts(&pre, &before.curvature, &[0, 1, 3, D, 2]);
        let step = held_step(&mut old, &next, &V, &SIGN).expect("conjugate gradients converge on the bordered factor");
        case.assert_face_step(&after, &step, 1e-7);
    }

    /// Borders pile up one a round: a factor on {0, 3, D}, bordered by column 1 on the next
    /// V and by column 2 on the one after (which column D has left), is the Hessian at the
    /// factor's curvature on all five rows, and the last step keeps its face conditions.
    #[test]
    fn a_factor_bordered_twice_is_the_hessian_on_all_its_rows() {
        let case = Case::new();
        let data = case.data();
        let (cert, before) = (ridge_only(), rows(curvature(0.0)));
        let first: Vec<usize> = vec![0, 3, D];
        let sub = Subspace::new(&data, D + 1, &first);
        let (g, v, sign) = ([G[0], G[3], 0.05], [V[0], V[3], 0.3], [1.0; 3]);
        let mut held = None;
        exact_direction(&system(&cert, &data, &sub, &before, &g, &[true; 3]), &mut held, &first, &v, &sign)
            .expect("a first step");

        let second: Vec<usize> = vec![0, 1, 3, D];
        let mut old = held.expect("a factor").carried(&second).expect("V keeps three of its columns");
        let sub = Subspace::new(&data, D + 1, &second);
        let (g, v, sign) = ([G[0], G[1], G[3], 0.05], [V[0], V[1], V[3], 0.3], [1.0; 4]);
        let now = rows(curvature(0.01));
        let step = held_step(&mut old, &system(&cert, &data, &sub, &now, &g, &[true; 4]), &v, &sign);
        assert!(step.is_some(), "no step on the first border");
        assert_eq!((old.borders.len(), old.columns.as_slice()), (1, &[0, 3, D, 1][..]));

        // Two columns of P⁻¹ a face asked for, which the next border extends.
        old.preconditioner().face(vec![0, 2]);

        let cols: Vec<usize> = (0..D).collect();
        let mut old = old.carried(&cols).expect("V keeps three of its columns");
        assert_eq!((old.new.as_slice(), old.row.as_slice()), (&[2][..], &[0, 3, 4, 1][..]));
        let sub = Subspace::new(&data, D + 1, &cols);
        let after = curvature(0.02);
        let (now, free) = (rows(after.clone()), [true; D]);
        let next = system(&cert, &data, &sub, &now, &G, &free);
        assert!(old.take_in(&next), "the second border is not positive definite");
        let pre = old.preconditioner();
        assert_eq!(pre.base.borders.len(), 2, "the first border was formed again");
        case.assert_inverts(&pre, &before.curvature, &[0, 3, D, 1, 2]);
        for q in [0, 2] {
            let column = pre.solve(faer::Mat::<f64>::from_fn(5, 1, |r, _| if r == q { 1.0 } else { 0.0 }));
            let kept = &pre.base.inverse.borrow()[&q];
            for r in 0..5 {
                let tol = 1e-9 * column[(r, 0)].abs().max(1.0);
                assert!((kept[r] - column[(r, 0)]).abs() < tol, "kept P⁻¹·e_{q} {kept:?}, solved {column:?}");
            }
        }
        let step = held_step(&mut old, &next, &V, &SIGN).expect("conjugate gradients converge on the bordered factor");
        case.assert_face_step(&after, &step, 1e-7);
    }
}
