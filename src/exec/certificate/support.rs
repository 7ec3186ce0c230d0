//! The refinement of [`super::refinement::refined_dual`] for a support too wide for a dense Hessian: Newton
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
//! Near the optimum (the gap within `TUNING.exact_gap` of F) a support of up to
//! `TUNING.support_exact_max` coordinates gets exact steps instead: the dense Hessian factored by Cholesky at a
//! round's first step, and the round's later steps solved by conjugate gradients preconditioned
//! with that factor, each in the face where the coordinates that leave the support sit at zero.
//! Once the support is solved, the zero coordinates that still violate optimality enter and the
//! next round begins, its steps preconditioned by the same factor bordered with the entering
//! columns. CG stops short on near-duplicate columns, and the support's largest
//! violation, which scales the dual point, stays near 1e-3 of λ; exact steps close it.

use super::refine::{dual_and_gradient, moves_freely, Budget, Refined, Rows};
use super::search::{Search, Trial};
use super::settle;
use super::tuning::TUNING;
use super::{dot, regularizer, violation, Polished};
use crate::data::Copies;
use crate::exec::linalg::cholesky::Factor;
use crate::exec::linalg::conjugate_gradients;
use crate::exec::linalg::hessian::{hessian_times, lower_hessian};
use crate::exec::linalg::Subspace;
use crate::exec::DataView;
use crate::plan::Certificate;
use face::{exact_direction, FaceSystem, Newton};

mod face;

/// Newton steps on F restricted to the support of w (the non-zero coordinates inside the box),
/// each coordinate keeping its sign; the best dual value of the points they reach, and the
/// point with ∇f there when a step moved. Stops once F at the point reached is within `slack`
/// of D: the run continues from that point when F is lower there, and its gap is F there minus
/// the best D. Measured from F at w instead (`enough`), the gap counted the refinement's own
/// drop of F: on debian-desc at C = 10 a last round took the gap from 4.5e-7 to 3.7e-9 for a
/// slack of 5.7e-6, because the steps had lowered F by 9.5e-5. `gradient` is ∇f at w,
/// from which a support past `TUNING.support_exact_max` is settled. None when the support is empty or no dual
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
    let mut exact = Exact { near: exact, left: TUNING.support_exact_budget };
    let mut held: Option<FaceSystem> = None;
    let mut round_gap = f64::INFINITY;
    let done = |f: f64, best: f64| f - best <= slack;
    // A support just past TUNING.support_exact_max is settled by ADMM steps first; the rounds then take exact
    // steps on up to TUNING.support_settle_max columns.
    let mut exact_max = TUNING.support_exact_max;
    let settles = || {
        (TUNING.support_exact_max + 1..=TUNING.support_settle_max)
            .contains(&x.iter().filter(|&&v| moves_freely(cert, v)).count())
    };
    if settle && settle::applies(cert) && settles() {
        if let Some(settled) =
            settle::settle(cert, data, c, &mut x, &mut now, gradient, copies, TUNING.support_settle_max, halt)
        {
            f = settled.f;
            best = best.max(settled.dual);
            exact_max = TUNING.support_settle_max;
            exact.near = true;
            entering = violators(cert, &x, &settled.gradient, copies, TUNING.support_exact_enter);
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
    for _ in 0..TUNING.support_exact_rounds {
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
        let cg_steps = TUNING.support_cg_steps.min(
            TUNING.support_budget_passes * data.values.len() / (2 * TUNING.support_steps * sub.value.len()).max(1),
        );
        if cg_steps < TUNING.support_cg_least {
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
        for _ in 0..if round_exact { TUNING.support_exact_steps } else { TUNING.support_steps } {
            if halt() {
                break;
            }
            let loss_gradient: Vec<f64> = sub.transpose_times(&now.u).iter().map(|x| scale * x).collect();
            // ∇ of F on the free coordinates, with sign(v) for ∂|v|.
            let g: Vec<f64> = (0..n)
                .map(|k| if free[k] { loss_gradient[k] + cert.l1 * sign[k] + cert.l2 * v[k] } else { 0.0 })
                .collect();
            let unit = if cert.l1 > 0.0 { cert.l1 } else { loss_gradient.iter().fold(0.0_f64, |x, g| x.max(g.abs())) };
            if g.iter().all(|x| x.abs() <= TUNING.refine_residual * unit) {
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
            if done(f, best) || (round_exact && full && -change < TUNING.support_settled * (f - best)) {
                break;
            }
        }
        for (&j, &vj) in cols.iter().zip(&v) {
            x[j] = vj;
        }
        // Once the support is solved, the zero coordinates that still violate optimality come in
        // (exact steps only: a conjugate-gradient round has not solved its support).
        // A round that leaves more than TUNING.support_slow_round of the gap the round before left, or whose
        // exact step had to be shortened, says the support is still moving: the epochs bring its
        // columns in more cheaply.
        let slow = f - best > TUNING.support_slow_round * round_gap || damped;
        round_gap = f - best;
        let Some(gradient) = last_gradient.as_ref().filter(|_| round_exact && exact.near && !done(f, best) && !slow)
        else {
            break;
        };
        // With no zero coordinate left violating, what keeps the gap is the support's own
        // residual, and the next round takes another step on the same columns.
        entering = violators(cert, &x, gradient, copies, TUNING.support_exact_enter);
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
/// no step down to `TUNING.support_min_step` passes.
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
    let search = Search { cert, scale, v, loss: now.loss, least: TUNING.support_min_step, after_full: crossing };
    // The path bends where coordinates stop at zero: each trial takes its own product X_V·(x − v).
    let trial = |t: f64| {
        let point = project(t);
        let moved: Vec<f64> = point.iter().zip(v).map(|(x, v)| x - v).collect();
        let dm = sub.times(&moved);
        let rows = Rows::at(cert.conjugate, labels, data.weights, &now.a, Some((&dm, 1.0)), sub.threads);
        Trial { predicted: dot(g, &moved), point, loss: rows.loss, rows: (rows, dm, moved) }
    };
    // Or a non-positive slope of F at the end of the step, from the left.
    let flat_end = |at: &Trial<(Rows, Vec<f64>, Vec<f64>)>| {
        let (rows, dm, moved) = &at.rows;
        let reg_slope = (0..n).map(|k| (cert.l1 * sign[k] + cert.l2 * at.point[k]) * moved[k]).sum::<f64>();
        scale * dot(&rows.u, dm) + reg_slope <= 0.0
    };
    search.run(trial, flat_end).map(|(at, t)| (at.point, at.rows.0, t == 1.0))
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
    conjugate_gradients(&mut d, &mut r, free, (cg_steps, TUNING.support_cg_tol), |p| Some(product(p)), precondition);
    d.iter().any(|&x| x != 0.0).then_some(d)
}
