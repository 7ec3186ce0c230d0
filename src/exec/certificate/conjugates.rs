//! The conjugates the duality gap evaluates, in closed form: ℓ* of each loss (softmax's on a row
//! of k scores), the nearest point of its domain, and R* of the regularizers (per coordinate, a
//! vector term, disjoint groups in `groups.rs`) with the scale that puts a dual point where R*
//! is finite. Later losses add their conjugates here.

pub(super) mod groups;

use crate::plan::{Certificate, LossConjugate, VectorTerm};

/// ℓ*(y, s·u) of one row's dual entries (k of them for softmax).
pub(crate) fn row_conjugate(kind: LossConjugate, y: f64, u: &[f64], s: f64) -> f64 {
    match kind {
        LossConjugate::Softmax => softmax_conjugate(y, u, s),
        kind => loss_conjugate(kind, y, s * u[0]),
    }
}

/// The largest s ≤ 1 that puts s·z in the domain of R*, and R*(s·z), for z of `width` columns
/// (softmax's d × k, row-major like W). A group term's blocks are `operator`'s, which the
/// caller made sure is bound.
pub(crate) fn reg_part(
    cert: &Certificate,
    z: &[f64],
    width: usize,
    operator: Option<&crate::runtime::picard::Operator>,
) -> (f64, f64) {
    match (cert.vector, cert.groups.zip(operator)) {
        // Disjoint groups, alone or beside ½‖·‖² (the analysis allows nothing else beside them).
        (None, Some((gamma, op))) => groups::conjugate(cert.l2, gamma, op, z),
        (None, None) => scaled_reg_conjugate(cert, z),
        (Some(_), _) if width == 1 => scaled_reg_conjugate(cert, z),
        (Some(term), _) if term.whole_matrix() => vector_conjugate(cert, term, z, width),
        (Some(term), _) => {
            // A norm on each row (the analysis allows no set there): with ½‖·‖² every row's
            // conjugate is finite (s = 1, the values add); without, each row's dual ball bounds
            // the common scale and the conjugates are 0 inside.
            let rows: Vec<(f64, f64)> = z.chunks(width).map(|row| vector_conjugate(cert, term, row, 1)).collect();
            let s = rows.iter().map(|r| r.0).fold(1.0, f64::min);
            (s, if cert.l2 > 0.0 { rows.iter().map(|r| r.1).sum() } else { 0.0 })
        }
    }
}

/// For one weight vector's R without groups (their blocks are the operator's): the largest
/// s ≤ 1 that puts s·z where R* is finite, and R*(s·z) — per coordinate, or with a vector term.
pub(crate) fn scaled_reg_conjugate(cert: &Certificate, z: &[f64]) -> (f64, f64) {
    match cert.vector {
        Some(term) => vector_conjugate(cert, term, z, 1),
        None => {
            let s = domain_scale(cert, z);
            (s, z.iter().map(|zj| reg_conjugate(cert, s * zj)).sum())
        }
    }
}

/// ℓ*(y, s·u) for softmax: Σ_c q_c·log q_c with q = s·u + e_y, which is in the simplex when
/// u + e_y is and s ∈ [0, 1] (a convex combination of u + e_y and e_y). Entries below 0 by
/// rounding only count as 0.
pub(super) fn softmax_conjugate(y: f64, u: &[f64], s: f64) -> f64 {
    let mut total = 0.0;
    for (c, uc) in u.iter().enumerate() {
        let q = s * uc + if c as f64 == y { 1.0 } else { 0.0 };
        if q < -1e-9 {
            return f64::INFINITY;
        }
        total += xlogx(q.max(0.0));
    }
    total
}

/// The nearest point of the domain of ℓ*(y, ·).
pub(crate) fn into_loss_domain(kind: LossConjugate, y: f64, u: f64) -> f64 {
    match kind {
        // p = −y·u ∈ [0, 1], y = ±1
        // logistic: p = −y·u ∈ [0, 1]; hinge: y·u ∈ [−1, 0], the same interval (y = ±1)
        LossConjugate::Logistic | LossConjugate::Hinge => -y * (-y * u).clamp(0.0, 1.0),
        // y·u ≤ 0
        LossConjugate::SquaredHinge => -y * (-y * u).max(0.0),
        LossConjugate::Squared => u,
        // |u| ≤ δ
        LossConjugate::Huber(delta) => u.clamp(-delta, delta),
        LossConjugate::Quantile(tau) => u.clamp(-tau, 1.0 - tau),
        LossConjugate::EpsInsensitive(_) => u.clamp(-1.0, 1.0),
        LossConjugate::SquaredEpsInsensitive(_) => u,
        // u ≥ −y
        LossConjugate::Poisson => u.max(-y),
        LossConjugate::Softmax => unreachable!("softmax points are projected row by row"),
    }
}

/// The largest s ≤ 1 that puts every s·zⱼ where r* is finite.
pub(crate) fn domain_scale(cert: &Certificate, z: &[f64]) -> f64 {
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

/// For R = l1‖·‖₁ + (l2/2)‖·‖² + T with T a vector term (no box): the scale s ≤ 1 that puts
/// s·z in the domain of R*, and R*(s·z).
///
/// With l2 > 0, R* is finite everywhere and its sup is attained at w⁺ = prox_{(l1‖·‖₁ + T)/l2}(z/l2)
/// (complete the square), which the runtime routine computes exactly. With l2 = 0, a norm's
/// conjugate is the indicator of its dual ball (ℓ2 ↔ ℓ2, ℓ∞ ↔ ℓ1; with ℓ1 added, of
/// {‖soft(z, l1)‖₂ ≤ λ}), so z is scaled into it; a set's conjugate is its support function.
///
/// `width` is the row width of z for the nuclear norm (whose dual ball is the spectral norm's).
pub(super) fn vector_conjugate(cert: &Certificate, term: VectorTerm, z: &[f64], width: usize) -> (f64, f64) {
    use crate::runtime::{norm1, norm2, norm_inf};
    if cert.l2 > 0.0 {
        let mut w: Vec<f64> = z.iter().map(|zj| crate::plan::soft(zj / cert.l2, cert.l1 / cert.l2)).collect();
        term.routine().apply_shaped(&mut w, width, term.arg(1.0 / cert.l2));
        let inner: f64 = z.iter().zip(&w).map(|(a, b)| a * b).sum();
        let value = inner - cert.l1 * norm1(&w) - 0.5 * cert.l2 * norm2(&w).powi(2) - term.value_shaped(&w, width);
        return (1.0, value);
    }
    let inside = |s: f64| if s < 1.0 { s * (1.0 - 1e-12) } else { s };
    match term {
        VectorTerm::Norm2(lambda) if cert.l1 > 0.0 => {
            let excess = |s: f64| z.iter().map(|zj| crate::plan::soft(s * zj, cert.l1).powi(2)).sum::<f64>().sqrt();
            if excess(1.0) <= lambda {
                return (1.0, 0.0);
            }
            // ‖soft(s·z, l1)‖₂ grows with s: bisect, keeping the lower end inside.
            let (mut lo, mut hi) = (0.0, 1.0);
            for _ in 0..100 {
                let mid = 0.5 * (lo + hi);
                if excess(mid) <= lambda {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            (inside(lo), 0.0)
        }
        VectorTerm::Norm2(lambda) => (inside((lambda / norm2(z)).min(1.0)), 0.0),
        VectorTerm::NormInf(lambda) => (inside((lambda / norm1(z)).min(1.0)), 0.0),
        VectorTerm::Nuclear(lambda) => {
            let top = crate::runtime::singular_values(z, width).into_iter().fold(0.0, f64::max);
            (inside((lambda / top).min(1.0)), 0.0)
        }
        // R* = ι{Z = ZP, ‖Z‖₂ ≤ λ}: softmax's dual points have rows of U summing to 0, so Z's
        // rows do too (Z = ZP up to rounding) and only the spectral norm of ZP bounds s.
        VectorTerm::CenteredNuclear(lambda) => {
            let zp = crate::runtime::centered(z, width);
            let top = crate::runtime::singular_values(&zp, width).into_iter().fold(0.0, f64::max);
            (inside((lambda / top).min(1.0)), 0.0)
        }
        VectorTerm::L1Ball(r) => (1.0, r * norm_inf(z)),
        VectorTerm::L2Ball(r) => (1.0, r * norm2(z)),
        VectorTerm::Simplex => (1.0, z.iter().copied().fold(f64::NEG_INFINITY, f64::max).max(f64::MIN)),
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
        // sup over a of u·a − h_δ(a − y) = u·y + h_δ*(u), h_δ* = ½u² on [−δ, δ].
        LossConjugate::Huber(delta) => {
            if u.abs() <= delta {
                0.5 * u * u + u * y
            } else {
                f64::INFINITY
            }
        }
        LossConjugate::Softmax => unreachable!("softmax's conjugate takes k scores: softmax_conjugate"),
        // sup over a of u·a − pinball: u·y on [−τ, 1 − τ].
        LossConjugate::Quantile(tau) => {
            if (-tau..=1.0 - tau).contains(&u) {
                u * y
            } else {
                f64::INFINITY
            }
        }
        LossConjugate::EpsInsensitive(eps) => {
            if u.abs() <= 1.0 {
                u * y + eps * u.abs()
            } else {
                f64::INFINITY
            }
        }
        LossConjugate::SquaredEpsInsensitive(eps) => u * y + eps * u.abs() + 0.25 * u * u,
        // sup over a of u·a − exp(a) + y·a: at exp(a) = u + y.
        LossConjugate::Poisson => {
            let t = u + y;
            if t >= 0.0 {
                xlogx(t) - t
            } else {
                f64::INFINITY
            }
        }
        LossConjugate::Hinge => {
            let yu = y * u;
            if (-1.0..=0.0).contains(&yu) {
                yu
            } else {
                f64::INFINITY
            }
        }
        // sup over a of u·a − max(0, 1 − y·a)²: at y·a = 1 − β/2 with β = −y·u ≥ 0.
        LossConjugate::SquaredHinge => {
            let yu = y * u;
            if yu <= 0.0 {
                yu + 0.25 * u * u
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
