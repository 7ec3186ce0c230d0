//! The dual point of a loss without curvature (the hinge) beside ℓ1, moved onto the equalities
//! the optimum's dual meets on the support of w: a crossover, in the words of LP codes.
//!
//! Why: at the optimum, (c/m)·(Xᵀu)ⱼ = −(l1·sign wⱼ + l2·wⱼ) wherever wⱼ is non-zero (and inside
//! the box), and Σᵢ uᵢ = 0 with a free intercept. A primal-dual iterate meets those only in the
//! limit, and with ℓ1 each coordinate where |(c/m)·(Xᵀu)ⱼ| exceeds l1 scales the whole dual point
//! down (§10): on a9a at λ = 1/m the hinge's F settles to 1e-6 within a few thousand iterations
//! of the primal-dual method while the scale keeps the gap near 1e-2 of F. The rows that are
//! free to move (uᵢ strictly inside dom ℓ*, the points on the margin) are corrected by the least
//! change that meets the equalities, then clipped back into the domain: a linear system of
//! |S| + 1 unknowns, S the support. On a9a's 1-norm SVM (numpy) it certified 1e-4 where the
//! iterate's own point stood at 2e-3. Any point of the domain bounds F* from below, so nothing
//! here needs to be right for the gap to be true, only for it to be tight.

use super::intercept::domain;
use super::point::free_intercept;
use super::{dual_at, dual_point, Entries};
use crate::exec::linalg::cholesky::Factor;
use crate::exec::DataView;
use crate::plan::Certificate;

/// Corrections applied in turn: each frees the rows the last one left inside the domain.
const ROUNDS: usize = 1;

/// The most support coordinates whose system (|S| + 1)² is formed.
const MOST: usize = 2000;

/// A relative ridge on the system's diagonal: rows that are copies of each other leave it
/// singular, and the least-norm correction is then the ridge's.
const RIDGE: f64 = 1e-12;

/// The best dual value of the corrected points made from `u` (the plan's dual iterate), at w with
/// `c` the loss's weight; None where this does not apply (a loss with curvature, no ℓ1, the rows'
/// weights, a vector or group term) or no correction was possible.
pub(super) fn best_dual(cert: &Certificate, data: &DataView, c: f64, w: &[f64], u: &[f64]) -> Option<f64> {
    if cert.conjugate.has_curvature()
        || cert.l1 <= 0.0
        || data.weights.is_some()
        || cert.vector.is_some()
        || cert.groups.is_some()
        || cert.intercept_l2 > 0.0
    {
        return None;
    }
    let support: Vec<usize> = (0..w.len()).filter(|&j| w[j] != 0.0 && w[j] > cert.lo && w[j] < cert.hi).collect();
    if support.len() > MOST {
        return None;
    }
    let mut position = vec![usize::MAX; w.len()];
    for (p, &j) in support.iter().enumerate() {
        position[j] = p;
    }
    let free_b = free_intercept(cert);
    let n = support.len() + usize::from(free_b);
    if n == 0 {
        return None;
    }
    let (m, scale) = (data.rows(), c / data.rows() as f64);
    // Inside the domain, not balanced: balancing would move the rows held at 0 off their bound,
    // and the correction would take them for free rows.
    let mut u: Vec<f64> = (0..m)
        .map(|i| {
            let (lo, hi) = domain(cert.conjugate, data.labels[i]);
            u[i].clamp(lo, hi)
        })
        .collect();
    let mut best: Option<f64> = None;
    for _ in 0..ROUNDS {
        let free: Vec<bool> = (0..m)
            .map(|i| {
                let (lo, hi) = domain(cert.conjugate, data.labels[i]);
                u[i] > lo && u[i] < hi
            })
            .collect();
        // What the equalities ask of the free rows: r = target − (c/m)·X_Sᵀu, and −Σᵢ uᵢ.
        let mut residual: Vec<f64> = support.iter().map(|&j| -(cert.l1 * w[j].signum() + cert.l2 * w[j])).collect();
        let mut gram = vec![0.0; n * n];
        let mut entries: Vec<(usize, f64)> = vec![];
        for i in 0..m {
            entries.clear();
            for k in data.indptr[i]..data.indptr[i + 1] {
                let p = position[data.indices[k] as usize];
                if p != usize::MAX {
                    residual[p] -= scale * data.values[k] * u[i];
                    entries.push((p, scale * data.values[k]));
                }
            }
            if !free[i] {
                continue;
            }
            if free_b {
                entries.push((n - 1, 1.0));
            }
            // The lower triangle, column-major, as the factor reads it.
            for &(p, a) in &entries {
                for &(q, b) in &entries {
                    if p >= q {
                        gram[q * n + p] += a * b;
                    }
                }
            }
        }
        if free_b {
            residual.push(-u.iter().sum::<f64>());
        }
        let trace: f64 = (0..n).map(|p| gram[p * n + p]).sum();
        if trace.is_nan() || trace <= 0.0 {
            break;
        }
        for p in 0..n {
            gram[p * n + p] += RIDGE * trace / n as f64;
        }
        let Some(factor) = Factor::new(gram, n) else { break };
        let x = factor.solve(faer::MatRef::from_column_major_slice(&residual, n, 1));
        // δᵢ = Aᵢᵀx on the free rows, then back into the domain.
        for i in (0..m).filter(|&i| free[i]) {
            let mut delta = if free_b { x[(n - 1, 0)] } else { 0.0 };
            for k in data.indptr[i]..data.indptr[i + 1] {
                let p = position[data.indices[k] as usize];
                if p != usize::MAX {
                    delta += scale * data.values[k] * x[(p, 0)];
                }
            }
            let (lo, hi) = domain(cert.conjugate, data.labels[i]);
            u[i] = (u[i] + delta).clamp(lo, hi);
        }
        let point = dual_point(cert, data.labels, None, 1, Entries::Any(u.clone()));
        let (d, _) = dual_at(cert, data, c, w.len(), 1, &point);
        if d.is_finite() {
            best = Some(best.map_or(d, |b: f64| b.max(d)));
        }
    }
    best
}
