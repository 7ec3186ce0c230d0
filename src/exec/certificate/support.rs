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
//! `EXACT_MAX` coordinates gets exact steps instead: the dense Hessian, formed once a step and
//! factored by Cholesky, in the face where the coordinates that leave the support sit at zero,
//! then the zero coordinates that still violate optimality enter. CG stops short on
//! near-duplicate columns, and the support's largest violation, which scales the dual point,
//! stays near 1e-3 of λ; two exact steps close it.

use super::refine::{moves_freely, refined_point, Refined, Rows, Subspace, REFINE_RESIDUAL};
use super::{dot, dual_at, violation};
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
/// Exact Newton steps of a round, at most.
const EXACT_STEPS: usize = 6;
/// Rounds of exact steps: the support, then the support with the zero coordinates that violate
/// optimality at the point it reached (on debian-desc at C = 10 a single one kept the gap at
/// 9.1e-5 of F; with it, 2.9e-9).
const EXACT_ROUNDS: usize = 3;
/// Violating zero coordinates a round brings in, at most.
const EXACT_ENTER: usize = 64;
/// Fewer CG iterations a step than this, within the budget, and the refinement is not tried.
const CG_LEAST: usize = 10;
/// CG stops once the preconditioned residual rᵀM⁻¹r is this fraction of the first.
const CG_TOL: f64 = 1e-6;
/// Armijo's constant, as the dense refinement's.
const ARMIJO: f64 = 1e-2;
/// The line search halves the step down to this, at most twenty trials.
const MIN_STEP: f64 = 1e-6;

/// Newton steps on F restricted to the support of w (the non-zero coordinates inside the box),
/// each coordinate keeping its sign; the best dual value of the points they reach, and the
/// point with ∇f there when a step moved. Stops once D reaches `enough`. None when the support
/// is empty or no dual value is finite.
pub(super) fn refine(
    cert: &Certificate,
    data: &DataView,
    c: f64,
    w: &[f64],
    margins: &[f64],
    enough: f64,
    exact: bool,
) -> Option<Refined> {
    if margins.is_empty() {
        return None;
    }
    let (kind, labels) = (cert.conjugate, data.labels);
    let scale = c / margins.len() as f64;
    // The refined point, and the zero coordinates a round brings in with the sign ∇f asks for.
    let mut x = w.to_vec();
    let mut entering: Vec<(usize, f64)> = vec![];
    let mut now = Rows::at(kind, labels, margins, None, data.threads);
    let mut best = f64::NEG_INFINITY;
    let mut last_gradient: Option<Vec<f64>> = None;
    for round in 0..EXACT_ROUNDS {
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
        let exact = exact && n <= EXACT_MAX;
        for _ in 0..if exact { EXACT_STEPS } else { STEPS } {
            let loss_gradient: Vec<f64> = sub.transpose_times(&now.u).iter().map(|x| scale * x).collect();
            // ∇ of F on the free coordinates, with sign(v) for ∂|v|.
            let g: Vec<f64> = (0..n)
                .map(|k| if free[k] { loss_gradient[k] + cert.l1 * sign[k] + cert.l2 * v[k] } else { 0.0 })
                .collect();
            let unit = if cert.l1 > 0.0 { cert.l1 } else { loss_gradient.iter().fold(0.0_f64, |x, g| x.max(g.abs())) };
            if g.iter().all(|x| x.abs() <= REFINE_RESIDUAL * unit) {
                break;
            }
            // An exact step whose line search fails (a direction along exactly duplicated
            // columns, which only the ridge bounds) is taken again by conjugate gradients.
            let mut attempt = 0;
            let found = loop {
                let use_exact = exact && attempt == 0;
                attempt += 1;
                let direction = if use_exact {
                    exact_direction(&sub, &now.curvature, scale, cert.l2, &g, &free, &v, &sign)
                } else {
                    newton_direction(&sub, &now.curvature, scale, cert.l2, &g, &free, cg_steps)
                };
                let Some(d) = direction else {
                    if use_exact {
                        continue;
                    }
                    break None;
                };
                let slope = dot(&g, &d);
                if slope.is_nan() || slope >= 0.0 {
                    if use_exact {
                        continue;
                    }
                    break None;
                }
                // Where the first non-zero free coordinate reaches zero, when that comes before t = 1.
                // When the full step fails, the next one tried stops there, with that coordinate at zero
                // for good. Projecting it to zero at every step instead failed Armijo: on debian-desc at
                // C = 10 one coordinate asked for a step of 11 across zero at each Newton step, the
                // search halved to t = 1/32, and the gap stayed at 1.9e-4 of F; stopping at its crossing
                // once let the next steps take t = 1 (numpy, exact steps).
                let (crossing, first) = (0..n)
                    .filter(|&k| use_exact && free[k] && v[k] != 0.0 && d[k] * sign[k] < 0.0)
                    .map(|k| (-v[k] / d[k], k))
                    .fold((1.0_f64, None), |(t, at), (tk, k)| if tk < t { (tk, Some(k)) } else { (t, at) });
                // The step projected back into the orthant of v (and the box): a coordinate whose sign
                // the step would flip stops at zero and stays there for the rest of the refinement.
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
                let regularizer = |x: &[f64]| x.iter().map(|v| cert.l1 * v.abs() + 0.5 * cert.l2 * v * v).sum::<f64>();
                let reg_now = regularizer(&v);
                let mut t = 1.0_f64;
                let step = loop {
                    if t < MIN_STEP {
                        break None;
                    }
                    let point = project(t);
                    let moved: Vec<f64> = point.iter().zip(&v).map(|(x, v)| x - v).collect();
                    let predicted = dot(&g, &moved);
                    let dm = sub.times(&moved);
                    let trial = Rows::at(kind, labels, &now.a, Some((&dm, 1.0)), sub.threads);
                    let change = scale * (trial.loss - now.loss) + regularizer(&point) - reg_now;
                    // Armijo, or where differences of F near its minimum are lost to rounding, a
                    // non-positive slope of F at the end of the step, from the left: F is convex along
                    // the path, so it decreased all the way.
                    let slope_at_end = scale * dot(&trial.u, &dm)
                        + (0..n).map(|k| (cert.l1 * sign[k] + cert.l2 * point[k]) * moved[k]).sum::<f64>();
                    if predicted < 0.0 && (change <= ARMIJO * predicted || slope_at_end <= 0.0) {
                        break Some((point, trial));
                    }
                    t = if t == 1.0 && crossing < 1.0 { crossing.max(MIN_STEP) } else { t * 0.5 };
                };
                match step {
                    Some(found) => break Some(found),
                    None if use_exact => continue,
                    None => break None,
                }
            };

            let Some((point, trial)) = found else { break };
            for k in 0..n {
                if point[k] == 0.0 || point[k] == cert.lo || point[k] == cert.hi {
                    free[k] = false;
                }
            }
            (v, now) = (point, trial);
            let (dual, z) = dual_at(cert, data, c, w.len(), 1, &refined_point(cert, labels, &now.a));
            if dual.is_finite() {
                best = best.max(dual);
            }
            last_gradient = Some(z.iter().map(|x| -x).collect::<Vec<f64>>());
            if best >= enough {
                break;
            }
        }
        for (&j, &vj) in cols.iter().zip(&v) {
            x[j] = vj;
        }
        // Once the support is solved, the zero coordinates that still violate optimality come in
        // (exact steps only: a conjugate-gradient round has not solved its support).
        let Some(gradient) = last_gradient.as_ref().filter(|_| exact && best < enough && round + 1 < EXACT_ROUNDS)
        else {
            break;
        };
        let mut violators: Vec<(f64, usize)> = (0..x.len())
            .filter(|&j| x[j] == 0.0)
            .map(|j| (violation(cert, 0.0, gradient[j]), j))
            .filter(|&(e, _)| e > 0.0)
            .collect();
        if violators.is_empty() {
            break;
        }
        if violators.len() > EXACT_ENTER {
            violators.select_nth_unstable_by(EXACT_ENTER - 1, |a, b| b.0.total_cmp(&a.0));
            violators.truncate(EXACT_ENTER);
        }
        entering = violators.into_iter().map(|(_, j)| (j, -gradient[j].signum())).collect();
    }
    let moved = last_gradient.map(|gradient| (x, gradient));
    best.is_finite().then_some(Refined { dual: best, moved })
}

/// d ≈ −H⁻¹g on the free coordinates, H = scale·X_Vᵀ·diag(curvature)·X_V + l2·I, by conjugate
/// gradients preconditioned by H's diagonal; None when H has no curvature along g.
fn newton_direction(
    sub: &Subspace,
    curvature: &[f64],
    scale: f64,
    l2: f64,
    g: &[f64],
    free: &[bool],
    cg_steps: usize,
) -> Option<Vec<f64>> {
    let n = g.len();
    let diagonal = sub.weighted_squares(curvature);
    let largest = diagonal.iter().fold(0.0_f64, |x, &h| x.max(h));
    // A relative 1e-12 keeps exactly duplicated columns (a singular H) from dividing by 0.
    let m: Vec<f64> = (0..n).map(|k| scale * diagonal[k] + l2 + 1e-12 * scale * largest).collect();
    let product = |p: &[f64]| -> Vec<f64> {
        let xp = sub.times(p);
        let weighted: Vec<f64> = xp.iter().zip(curvature).map(|(x, d)| x * d).collect();
        let mut hp = sub.transpose_times(&weighted);
        for k in 0..n {
            hp[k] = if free[k] { scale * hp[k] + l2 * p[k] + 1e-12 * scale * largest * p[k] } else { 0.0 };
        }
        hp
    };
    let mut d = vec![0.0; n];
    let mut r: Vec<f64> = g.iter().map(|x| -x).collect();
    let mut z: Vec<f64> = r.iter().zip(&m).map(|(r, m)| r / m).collect();
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    let stop = CG_TOL * rz;
    for _ in 0..cg_steps {
        if rz.is_nan() || rz <= stop {
            break;
        }
        let hp = product(&p);
        let curv = dot(&p, &hp);
        if curv.is_nan() || curv <= 0.0 {
            break;
        }
        let alpha = rz / curv;
        for k in 0..n {
            d[k] += alpha * p[k];
            r[k] -= alpha * hp[k];
            z[k] = r[k] / m[k];
        }
        let next = dot(&r, &z);
        let beta = next / rz;
        rz = next;
        for k in 0..n {
            p[k] = z[k] + beta * p[k];
        }
    }
    d.iter().any(|&x| x != 0.0).then_some(d)
}

/// The exact Newton step on the free coordinates, H = scale·X_Vᵀ·diag(curvature)·X_V + l2·I
/// (plus a relative 1e-12 on the diagonal, as [`Subspace::hessian`] adds), by Cholesky, in the
/// face where every coordinate the step would carry across zero is at zero: such coordinates
/// move to zero (d_c = −v_c) and the others solve H_FF·d_F = −g_F − H_FC·d_C, again until none
/// crosses. One step so drops every coordinate that leaves the support; stopping at each
/// crossing in turn took 14 steps of t ≤ 1e-2 on debian-files at C = 10. A larger ridge when
/// rounding leaves H not positive definite (exactly duplicated columns). None when no ridge up
/// to 1e-6 of the largest diagonal entry works.
#[allow(clippy::too_many_arguments)]
fn exact_direction(
    sub: &Subspace,
    curvature: &[f64],
    scale: f64,
    l2: f64,
    g: &[f64],
    free: &[bool],
    v: &[f64],
    sign: &[f64],
) -> Option<Vec<f64>> {
    let n = g.len();
    let h = sub.hessian(curvature, scale, l2);
    let mut to_zero = vec![false; n];
    let mut d = vec![0.0_f64; n];
    for _ in 0..FACE_SOLVES {
        let idx: Vec<usize> = (0..n).filter(|&k| free[k] && !to_zero[k]).collect();
        let zeroed: Vec<usize> = (0..n).filter(|&k| to_zero[k]).collect();
        if idx.is_empty() {
            return None;
        }
        let solved = solve_face(&h, n, &idx, &zeroed, g, v)?;
        d.iter_mut().for_each(|x| *x = 0.0);
        for &c in &zeroed {
            d[c] = -v[c];
        }
        for (&k, &x) in idx.iter().zip(&solved) {
            d[k] = x;
        }
        let crossing: Vec<usize> = idx.iter().copied().filter(|&k| (v[k] + d[k]) * sign[k] < 0.0).collect();
        if crossing.is_empty() {
            break;
        }
        for k in crossing {
            to_zero[k] = true;
        }
    }
    d.iter().any(|&x| x != 0.0).then_some(d)
}

/// Solves of a step's face, at most: each refactors H on the coordinates left.
const FACE_SOLVES: usize = 4;

/// x = −H_II⁻¹·(g_I − H_IZ·v_Z) on the coordinates I, the coordinates Z moving to zero.
fn solve_face(h: &[f64], n: usize, idx: &[usize], zeroed: &[usize], g: &[f64], v: &[f64]) -> Option<Vec<f64>> {
    let f = idx.len();
    let largest = idx.iter().map(|&k| h[k * n + k]).fold(0.0_f64, f64::max);
    let rhs = faer::Mat::<f64>::from_fn(f, 1, |r, _| {
        let k = idx[r];
        -g[k] + zeroed.iter().map(|&c| h[k * n + c] * v[c]).sum::<f64>()
    });
    for ridge in [0.0, 1e-10, 1e-8, 1e-6] {
        let a =
            faer::Mat::<f64>::from_fn(f, f, |r, c| h[idx[r] * n + idx[c]] + if r == c { ridge * largest } else { 0.0 });
        let Ok(factor) = a.llt(faer::Side::Lower) else { continue };
        let x = faer::linalg::solvers::Solve::solve(&factor, &rhs);
        let x: Vec<f64> = (0..f).map(|r| x[(r, 0)]).collect();
        if x.iter().all(|v| v.is_finite()) {
            return Some(x);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact step solves the Newton system in its face: coordinates the plain step would
    /// carry across zero land exactly at zero, and on the rest H·d = −g holds, with H formed
    /// here from X directly.
    #[test]
    fn an_exact_step_lands_the_coordinates_that_leave_the_support_at_zero() {
        let (m, d) = (7, 4);
        let x: Vec<Vec<f64>> =
            (0..m).map(|i| (0..d).map(|j| (((i * 7 + j * 3) % 5) as f64 - 1.5) / (1 + j) as f64).collect()).collect();
        let (mut indptr, mut indices, mut values) = (vec![0], vec![], vec![]);
        for row in &x {
            for (j, &v) in row.iter().enumerate() {
                indices.push(j as u32);
                values.push(v);
            }
            indptr.push(indices.len());
        }
        let labels = vec![1.0; m];
        let data = DataView::new(&indptr, &indices, &values, &labels, d);
        let cols: Vec<usize> = (0..d).collect();
        let sub = Subspace::new(&data, d, &cols);
        let curvature: Vec<f64> = (0..m).map(|i| 0.05 + 0.03 * i as f64).collect();
        let (scale, l2) = (1.0 / m as f64, 1e-3);
        let h = |r: usize, c: usize| {
            let sum: f64 = (0..m).map(|i| scale * curvature[i] * x[i][r] * x[i][c]).sum();
            sum + if r == c { l2 } else { 0.0 }
        };
        let v = [0.8, 0.01, -0.02, 0.5];
        let sign = [1.0, 1.0, -1.0, 1.0];
        let g = [0.01, 0.2, -0.15, -0.02];
        let free = [true; 4];
        // The plain Newton step flips a sign: the face matters.
        let full = nalgebra::DMatrix::from_fn(d, d, &h)
            .cholesky()
            .expect("H is positive definite")
            .solve(&nalgebra::DVector::from_iterator(d, g.iter().map(|x| -x)));
        assert!((0..d).any(|k| (v[k] + full[k]) * sign[k] < 0.0), "no coordinate crosses zero: {full}");

        let step = exact_direction(&sub, &curvature, scale, l2, &g, &free, &v, &sign).expect("a step");
        let zeroed: Vec<usize> = (0..d).filter(|&k| v[k] + step[k] == 0.0).collect();
        assert!(!zeroed.is_empty(), "nothing landed at zero: {step:?}");
        for k in 0..d {
            assert!((v[k] + step[k]) * sign[k] >= 0.0, "coordinate {k} crossed zero: {step:?}");
            if !zeroed.contains(&k) {
                let residual = (0..d).map(|c| h(k, c) * step[c]).sum::<f64>() + g[k];
                assert!(residual.abs() <= 1e-9 * g[k].abs().max(1e-3), "row {k} of H·d + g is {residual}");
            }
        }
    }
}
