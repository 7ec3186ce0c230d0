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

use super::conjugates::into_loss_domain;
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
    let m = data.rows();
    // Inside the domain, not balanced: balancing would move the rows held at 0 off their bound,
    // and the correction would take them for free rows.
    let mut u: Vec<f64> = (0..m).map(|i| into_loss_domain(cert.conjugate, data.labels[i], u[i])).collect();
    let support = Support { cols: support, position, free_b };
    let mut best: Option<f64> = None;
    for _ in 0..ROUNDS {
        if !correct(cert, data, c, w, &support, &mut u) {
            break;
        }
        let point = dual_point(cert, data.labels, None, 1, Entries::Any(u.clone()));
        let (d, _) = dual_at(cert, data, c, w.len(), 1, &point);
        if d.is_finite() {
            best = Some(best.map_or(d, |b: f64| b.max(d)));
        }
    }
    best
}

/// The support S of w (its columns, each column's place in S or `usize::MAX`), and whether b
/// is free: the equalities number |S| + 1 then.
struct Support {
    cols: Vec<usize>,
    position: Vec<usize>,
    free_b: bool,
}

/// One correction of `u` (inside dom ℓ*): its free rows moved by the least change δ = Aᵀx with
/// A·Aᵀx = r, A the free rows' columns of (c/m)·X_S (and a row of ones with b), r what the
/// equalities ask, then clipped into the domain. False when no row is free or the system has
/// no factor.
fn correct(cert: &Certificate, data: &DataView, c: f64, w: &[f64], support: &Support, u: &mut [f64]) -> bool {
    let Support { cols, position, free_b } = support;
    let (m, scale) = (data.rows(), c / data.rows() as f64);
    let n = cols.len() + usize::from(*free_b);
    let free: Vec<bool> = (0..m)
        .map(|i| {
            let (lo, hi) = domain(cert.conjugate, data.labels[i]);
            u[i] > lo && u[i] < hi
        })
        .collect();
    // What the equalities ask of the free rows: r = target − (c/m)·X_Sᵀu, and −Σᵢ uᵢ.
    let mut residual: Vec<f64> = cols.iter().map(|&j| -(cert.l1 * w[j].signum() + cert.l2 * w[j])).collect();
    let mut gram = crate::exec::linalg::zeros(n * n);
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
        if *free_b {
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
    if *free_b {
        residual.push(-u.iter().sum::<f64>());
    }
    let trace: f64 = (0..n).map(|p| gram[p * n + p]).sum();
    if trace.is_nan() || trace <= 0.0 {
        return false;
    }
    for p in 0..n {
        gram[p * n + p] += RIDGE * trace / n as f64;
    }
    let Some(factor) = Factor::new(gram, n) else { return false };
    let x = factor.solve(faer::MatRef::from_column_major_slice(&residual, n, 1));
    for i in (0..m).filter(|&i| free[i]) {
        let mut delta = if *free_b { x[(n - 1, 0)] } else { 0.0 };
        for k in data.indptr[i]..data.indptr[i + 1] {
            let p = position[data.indices[k] as usize];
            if p != usize::MAX {
                delta += scale * data.values[k] * x[(p, 0)];
            }
        }
        u[i] = into_loss_domain(cert.conjugate, data.labels[i], u[i] + delta);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::LossConjugate;

    /// From a point near one that meets the equalities, one correction meets them: (c/m)·X_Sᵀu =
    /// −(l1·sign w_S + l2·w_S) and Σᵢ uᵢ = 0, every row staying inside dom ℓ* (the step needs no
    /// clipping). w is made so that u = −y/2 meets them exactly; u starts off it by 2%.
    #[test]
    fn a_correction_meets_the_support_equalities() {
        let m = 8;
        let x: Vec<Vec<f64>> =
            (0..m).map(|i| vec![1.0 + (i % 3) as f64, if i % 4 < 2 { 0.5 } else { -1.0 }, (i as f64) / 4.0]).collect();
        let labels: Vec<f64> = (0..m).map(|i| if i % 2 == 0 { -1.0 } else { 1.0 }).collect();
        let (indptr, indices, values) = super::super::tests::rows_of(&x);
        let data = DataView::new(&indptr, &indices, &values, &labels, 3);
        let cert = Certificate {
            conjugate: LossConjugate::Hinge,
            intercept: true,
            ..super::super::tests::cert(0.01, 1.0, f64::NEG_INFINITY, f64::INFINITY)
        };
        let c = 1.0;
        let xtu = |u: &[f64], j: usize| (0..m).map(|i| x[i][j] * u[i]).sum::<f64>() * c / m as f64;
        let meets: Vec<f64> = labels.iter().map(|y| -0.5 * y).collect();
        // −(l1·sign wⱼ + l2·wⱼ) = zⱼ: wⱼ = −zⱼ − l1·sign(−zⱼ) when |zⱼ| > l1.
        let w: Vec<f64> =
            (0..3).map(|j| if j < 2 { -xtu(&meets, j) + cert.l1 * xtu(&meets, j).signum() } else { 0.0 }).collect();
        assert!(w[0] != 0.0 && w[1] != 0.0 && (w[0] < 0.0) == (xtu(&meets, 0) > 0.0), "w = {w:?}");
        let mut u: Vec<f64> =
            meets.iter().enumerate().map(|(i, u)| u * (1.0 + 0.02 * ((i * 5 % 7) as f64 - 3.0) / 3.0)).collect();
        let support = Support { cols: vec![0, 1], position: vec![0, 1, usize::MAX], free_b: true };
        assert!(correct(&cert, &data, c, &w, &support, &mut u));
        for (i, (&ui, &y)) in u.iter().zip(&labels).enumerate() {
            assert!(y * ui > -1.0 && y * ui < 0.0, "row {i} stayed inside the domain: y·u = {}", y * ui);
        }
        for &j in &support.cols {
            let target = -(cert.l1 * w[j].signum() + cert.l2 * w[j]);
            assert!((xtu(&u, j) - target).abs() <= 1e-9, "column {j}: (c/m)·Xⱼᵀu = {}, not {target}", xtu(&u, j));
        }
        assert!(u.iter().sum::<f64>().abs() <= 1e-9, "Σu = {}", u.iter().sum::<f64>());
    }
}
