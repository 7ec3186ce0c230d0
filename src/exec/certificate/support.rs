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

use super::refine::{moves_freely, refined_point, Refined, Rows, Subspace, REFINE_RESIDUAL};
use super::{dot, dual_at};
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
) -> Option<Refined> {
    let cols: Vec<usize> = (0..w.len()).filter(|&j| moves_freely(cert, w[j])).collect();
    if cols.is_empty() || margins.is_empty() {
        return None;
    }
    let (kind, labels) = (cert.conjugate, data.labels);
    let scale = c / margins.len() as f64;
    let sub = Subspace::new(data, w.len(), &cols);
    let cg_steps = CG_STEPS.min(BUDGET_PASSES * data.values.len() / (2 * STEPS * sub.value.len()).max(1));
    if cg_steps < CG_LEAST {
        return None;
    }
    let n = cols.len();
    let sign: Vec<f64> = cols.iter().map(|&j| w[j].signum()).collect();
    let mut v: Vec<f64> = cols.iter().map(|&j| w[j]).collect();
    // A coordinate a step takes to zero or to a bound stays there: its sign is no longer kept.
    let mut free = vec![true; n];
    let mut now = Rows::at(kind, labels, margins, None, sub.threads);
    let mut best = f64::NEG_INFINITY;
    let mut last_gradient = None;
    for _ in 0..STEPS {
        let loss_gradient: Vec<f64> = sub.transpose_times(&now.u).iter().map(|x| scale * x).collect();
        // ∇ of F on the free coordinates, with sign(v) for ∂|v|.
        let g: Vec<f64> =
            (0..n).map(|k| if free[k] { loss_gradient[k] + cert.l1 * sign[k] + cert.l2 * v[k] } else { 0.0 }).collect();
        let unit = if cert.l1 > 0.0 { cert.l1 } else { loss_gradient.iter().fold(0.0_f64, |x, g| x.max(g.abs())) };
        if g.iter().all(|x| x.abs() <= REFINE_RESIDUAL * unit) {
            break;
        }
        let Some(d) = newton_direction(&sub, &now.curvature, scale, cert.l2, &g, &free, cg_steps) else { break };
        let slope = dot(&g, &d);
        if slope.is_nan() || slope >= 0.0 {
            break;
        }
        // The step projected back into the orthant of v (and the box): a coordinate whose sign
        // the step would flip stops at zero and stays there for the rest of the refinement.
        let project = |t: f64| -> Vec<f64> {
            (0..n)
                .map(|k| {
                    let x = (v[k] + t * d[k]).clamp(cert.lo, cert.hi);
                    if free[k] && x * sign[k] <= 0.0 {
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
            t *= 0.5;
        };
        let Some((point, trial)) = step else { break };
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
    let moved = last_gradient.map(|gradient| {
        let mut x = w.to_vec();
        for (&j, &vj) in cols.iter().zip(&v) {
            x[j] = vj;
        }
        (x, gradient)
    });
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
