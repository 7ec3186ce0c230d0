//! The duality-gap certificate of ALGORITHMS.md §10: for any u ∈ ℝᵐ in the domain of ℓ*,
//!
//!   F(w) ≥ F* ≥ D(u) = −(c/m)·Σᵢ ℓ*(yᵢ, uᵢ) − Σⱼ r*(−(c/m)·(Xᵀu)ⱼ),
//!
//! so gap = F(w) − D(u) bounds F(w) − F* from above whatever u is. The dual point is the loss
//! derivative at the current margins, uᵢ = ℓ′(yᵢ, ⟨xᵢ, w⟩), scaled by s ∈ (0, 1] into the domain
//! of r* where that domain is bounded (ℓ1 without ½‖·‖² in an unbounded direction). Scaling
//! keeps u in the domain of ℓ* for the three losses here, whose domains are intervals holding 0.

use super::evaluate::margin;
use super::interp::eval_at;
use super::{DataView, State};
use crate::plan::{Certificate, LossConjugate, Plan};

/// The certified bound on F(w) − F* at flushed weights, given F(w); None when the plan has no
/// closed-form dual. Never negative (rounding can make F − D dip below 0 at the optimum).
pub fn duality_gap(plan: &Plan, state: &State, data: &DataView, objective: f64) -> Option<f64> {
    let cert = plan.certificate?;
    let w = state.weights(plan);
    let obj = &plan.objective;
    let m = data.rows();
    if m == 0 {
        return Some(0.0);
    }
    let c = obj.loss_weight;
    let mut scratch = State { scalars: state.scalars.clone(), vectors: plan.vectors.iter().map(|_| vec![]).collect() };
    if let Some(y) = plan.labels() {
        scratch.vectors[y.0] = data.labels.to_vec();
    }
    // u and Xᵀu in one pass over the rows.
    let mut u = vec![0.0; m];
    let mut xtu = vec![0.0; w.len()];
    for (i, slot) in u.iter_mut().enumerate() {
        scratch.scalars[obj.margin.0] = margin(data, w, i);
        let ui = eval_at(&obj.dloss, &scratch, i, 0);
        *slot = ui;
        for k in data.indptr[i]..data.indptr[i + 1] {
            let j = data.indices[k] as usize;
            if j < xtu.len() {
                xtu[j] += data.values[k] * ui;
            }
        }
    }
    let z: Vec<f64> = xtu.iter().map(|g| -c / m as f64 * g).collect();
    let s = domain_scale(&cert, &z);
    let loss_conj: f64 = (0..m).map(|i| loss_conjugate(cert.conjugate, data.labels[i], s * u[i])).sum();
    let reg_conj: f64 = z.iter().map(|zj| reg_conjugate(&cert, s * zj)).sum();
    let dual = -c / m as f64 * loss_conj - reg_conj;
    let gap = objective - dual;
    if gap.is_nan() {
        return Some(f64::INFINITY);
    }
    Some(gap.max(0.0))
}

/// The largest s ≤ 1 that puts every s·zⱼ where r* is finite.
fn domain_scale(cert: &Certificate, z: &[f64]) -> f64 {
    if cert.l2 > 0.0 {
        return 1.0;
    }
    let mut s: f64 = 1.0;
    for &zj in z {
        if zj > cert.l1 && cert.hi == f64::INFINITY {
            s = s.min(cert.l1 / zj);
        }
        if zj < -cert.l1 && cert.lo == f64::NEG_INFINITY {
            s = s.min(cert.l1 / -zj);
        }
    }
    // s·zⱼ must not round above l1: a hair inside the domain costs nothing measurable.
    if s < 1.0 {
        s * (1.0 - 1e-12)
    } else {
        s
    }
}

/// ℓ*(y, u), +∞ outside its domain.
pub fn loss_conjugate(kind: LossConjugate, y: f64, u: f64) -> f64 {
    match kind {
        LossConjugate::Logistic => {
            let p = -y * u;
            if !(0.0..=1.0).contains(&p) {
                return f64::INFINITY;
            }
            xlogx(p) + xlogx(1.0 - p)
        }
        LossConjugate::Squared => 0.5 * u * u + u * y,
        LossConjugate::Hinge => {
            let yu = y * u;
            if (-1.0..=0.0).contains(&yu) {
                yu
            } else {
                f64::INFINITY
            }
        }
    }
}

fn xlogx(p: f64) -> f64 {
    if p > 0.0 {
        p * p.ln()
    } else {
        0.0
    }
}

/// r*(z) = sup over w ∈ [lo, hi] of z·w − l1·|w| − (l2/2)·w².
pub fn reg_conjugate(c: &Certificate, z: f64) -> f64 {
    let value = |w: f64| z * w - c.l1 * w.abs() - 0.5 * c.l2 * w * w;
    if c.l2 > 0.0 {
        // Concave: the constrained maximiser is the clamp of the unconstrained one.
        let w = crate::plan::clamp(crate::plan::soft(z, c.l1) / c.l2, c.lo, c.hi);
        return value(w);
    }
    // Piecewise linear: the sup is at an end, at 0, or +∞ along an unbounded direction.
    if (c.hi == f64::INFINITY && z > c.l1) || (c.lo == f64::NEG_INFINITY && z < -c.l1) {
        return f64::INFINITY;
    }
    let mut best = f64::NEG_INFINITY;
    for w in [c.lo, c.hi, 0.0] {
        if w.is_finite() && (c.lo..=c.hi).contains(&w) {
            best = best.max(value(w));
        }
    }
    if best == f64::NEG_INFINITY {
        0.0 // [lo, hi] = ℝ with |z| ≤ l1: the sup is 0, at w = 0 (covered above); kept for safety
    } else {
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert(l1: f64, l2: f64, lo: f64, hi: f64) -> Certificate {
        Certificate { conjugate: LossConjugate::Squared, l1, l2, lo, hi }
    }

    /// r* by brute force over a fine grid of w.
    fn brute(c: &Certificate, z: f64) -> f64 {
        let (lo, hi) = (c.lo.max(-50.0), c.hi.min(50.0));
        (0..=200_000)
            .map(|k| lo + (hi - lo) * k as f64 / 200_000.0)
            .map(|w| z * w - c.l1 * w.abs() - 0.5 * c.l2 * w * w)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    #[test]
    fn regularizer_conjugates_match_brute_force() {
        for c in [
            cert(0.3, 0.0, f64::NEG_INFINITY, f64::INFINITY),
            cert(0.3, 0.5, f64::NEG_INFINITY, f64::INFINITY),
            cert(0.0, 2.0, f64::NEG_INFINITY, f64::INFINITY),
            cert(0.3, 0.0, -1.0, 2.0),
            cert(0.3, 0.5, 0.0, f64::INFINITY),
            cert(0.1, 0.0, 0.5, 1.5),
        ] {
            for z in [-2.0, -0.3, -0.1, 0.0, 0.2, 0.3, 1.7] {
                let exact = reg_conjugate(&c, z);
                if exact.is_infinite() {
                    assert!(brute(&c, z) > 10.0, "{c:?} z = {z}: finite by brute force");
                    continue;
                }
                // The grid brackets the maximiser to within its step (1.5e-5 on [-1, 2]).
                assert!((exact - brute(&c, z)).abs() < 1e-4, "{c:?} z = {z}: {exact} vs {}", brute(&c, z));
                assert!(exact >= brute(&c, z) - 1e-12, "{c:?} z = {z}: below a grid point");
            }
        }
    }

    #[test]
    fn loss_conjugates_satisfy_fenchel_young_with_equality_at_the_gradient() {
        // ℓ(a) + ℓ*(u) = a·u exactly when u = ℓ′(a).
        for a in [-3.0f64, -0.5, 0.0, 0.7, 4.0] {
            for y in [-1.0f64, 1.0] {
                let u = -y / (1.0 + (y * a).exp());
                let l = (1.0 + (-y * a).exp()).ln();
                let lhs = l + loss_conjugate(LossConjugate::Logistic, y, u);
                assert!((lhs - a * u).abs() < 1e-12, "logistic a = {a}, y = {y}");
            }
            let (y, u) = (0.4, a - 0.4);
            let lhs = 0.5 * (a - y) * (a - y) + loss_conjugate(LossConjugate::Squared, y, u);
            assert!((lhs - a * u).abs() < 1e-12, "squared a = {a}");
        }
        assert_eq!(loss_conjugate(LossConjugate::Hinge, 1.0, 0.5), f64::INFINITY);
        assert_eq!(loss_conjugate(LossConjugate::Logistic, 1.0, 0.5), f64::INFINITY);
    }
}
