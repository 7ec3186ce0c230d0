//! The duality-gap certificate of ALGORITHMS.md §10: for any u ∈ ℝᵐ in the domain of ℓ*,
//!
//!   F(w) ≥ F* ≥ D(u) = −(c/m)·Σᵢ ℓ*(yᵢ, uᵢ) − Σⱼ r*(−(c/m)·(Xᵀu)ⱼ),
//!
//! so gap = F(w) − D(u) bounds F(w) − F* from above whatever u is. The dual point is the loss
//! derivative at the current margins, uᵢ = ℓ′(yᵢ, ⟨xᵢ, w⟩), scaled by s ∈ (0, 1] into the domain
//! of r* where that domain is bounded (ℓ1 without ½‖·‖² in an unbounded direction). Scaling
//! keeps u in the domain of ℓ* for the three losses here, whose domains are intervals holding 0.

use super::interp::{eval_at, Env};
use super::{DataView, State};
use crate::plan::{Certificate, LossConjugate, Plan, VectorTerm};

/// The dual points of the last checks, for dual extrapolation (Massias, Gramfort & Salmon,
/// "Celer", 2018): near the optimum the iterates of a coordinate or gradient method follow a
/// linear recursion, so an affine combination of the last K+1 dual points, with weights that
/// minimise the norm of the combined differences, lands much closer to the optimal dual point
/// than the last one. On ill-conditioned data (a9a's one-hot groups) the plain rescaled point
/// certifies 1e-1 where the primal is already within 1e-5; the extrapolated one closes that.
/// Any point is a valid certificate once put in the domain, so this only ever tightens the gap.
#[derive(Default)]
pub struct DualHistory {
    points: std::collections::VecDeque<Vec<f64>>,
}

/// How many differences the extrapolation combines.
const EXTRAPOLATION_K: usize = 5;

impl DualHistory {
    fn push(&mut self, u: Vec<f64>) {
        if self.points.len() == EXTRAPOLATION_K + 1 {
            self.points.pop_front();
        }
        self.points.push_back(u);
    }

    /// Σ cₖ·uₖ over the last K points, c minimising ‖Σ cₖ(uₖ − uₖ₋₁)‖ with Σ cₖ = 1.
    fn extrapolate(&self) -> Option<Vec<f64>> {
        if self.points.len() < EXTRAPOLATION_K + 1 {
            return None;
        }
        let p: Vec<&Vec<f64>> = self.points.iter().collect();
        let diffs: Vec<Vec<f64>> =
            (1..p.len()).map(|k| p[k].iter().zip(p[k - 1]).map(|(a, b)| a - b).collect()).collect();
        let k = diffs.len();
        let mut gram = vec![vec![0.0; k]; k];
        for a in 0..k {
            for b in a..k {
                let v: f64 = diffs[a].iter().zip(&diffs[b]).map(|(x, y)| x * y).sum();
                gram[a][b] = v;
                gram[b][a] = v;
            }
        }
        let trace: f64 = (0..k).map(|a| gram[a][a]).sum();
        if !(trace > 0.0 && trace.is_finite()) {
            return None;
        }
        for (a, row) in gram.iter_mut().enumerate() {
            row[a] += 1e-10 * trace;
        }
        let z = solve(gram, vec![1.0; k])?;
        let total: f64 = z.iter().sum();
        if !(total.abs() > 0.0 && total.is_finite()) {
            return None;
        }
        let mut out = vec![0.0; p[0].len()];
        for (c, point) in z.iter().zip(&p[1..]) {
            for (o, v) in out.iter_mut().zip(point.iter()) {
                *o += c / total * v;
            }
        }
        Some(out)
    }
}

/// Gaussian elimination with partial pivoting for the small K×K system of the extrapolation.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col].clone();
        for row in col + 1..n {
            let f = a[row][col] / pivot_row[col];
            for (x, p) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let rest: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// D(s·u) for u in the domain of ℓ*, with s ≤ 1 the scale that puts −(c/m)·Xᵀ(s·u) in the domain
/// of r*; also z = −(c/m)·Xᵀu, unscaled (−z is the gradient of the loss part when u = ℓ′).
///
/// `u` has `width` entries per row: 1 for a scalar loss, k for softmax (then z is d×k, row-major
/// like W, and a vector term applies to each of its rows).
fn dual_at(cert: &Certificate, data: &DataView, c: f64, features: usize, width: usize, u: &[f64]) -> (f64, Vec<f64>) {
    let m = data.rows();
    let mut xtu = vec![0.0; features * width];
    for i in 0..m {
        let ui = &u[i * width..(i + 1) * width];
        for k in data.indptr[i]..data.indptr[i + 1] {
            let j = data.indices[k] as usize;
            if j < features {
                for (x, uc) in xtu[j * width..(j + 1) * width].iter_mut().zip(ui) {
                    *x += data.values[k] * uc;
                }
            }
        }
    }
    let z: Vec<f64> = xtu.iter().map(|g| -c / m as f64 * g).collect();
    let (s, reg_conj) = match cert.vector {
        None => {
            let s = domain_scale(cert, &z);
            (s, z.iter().map(|zj| reg_conjugate(cert, s * zj)).sum())
        }
        Some(term) if width == 1 => vector_conjugate(cert, term, &z, 1),
        Some(term) if term.whole_matrix() => vector_conjugate(cert, term, &z, width),
        Some(term) => {
            // A norm on each row (the analysis allows no set there): with ½‖·‖² every row's
            // conjugate is finite (s = 1, the values add); without, each row's dual ball bounds
            // the common scale and the conjugates are 0 inside.
            let rows: Vec<(f64, f64)> = z.chunks(width).map(|row| vector_conjugate(cert, term, row, 1)).collect();
            let s = rows.iter().map(|r| r.0).fold(1.0, f64::min);
            (s, if cert.l2 > 0.0 { rows.iter().map(|r| r.1).sum() } else { 0.0 })
        }
    };
    let loss_conj: f64 = match cert.conjugate {
        LossConjugate::Softmax => {
            (0..m).map(|i| softmax_conjugate(data.labels[i], &u[i * width..(i + 1) * width], s)).sum()
        }
        kind => (0..m).map(|i| loss_conjugate(kind, data.labels[i], s * u[i])).sum(),
    };
    (-c / m as f64 * loss_conj - reg_conj, z)
}

/// ℓ*(y, s·u) for softmax: Σ_c q_c·log q_c with q = s·u + e_y, which is in the simplex when
/// u + e_y is and s ∈ [0, 1] (a convex combination of u + e_y and e_y). Entries below 0 by
/// rounding only count as 0.
fn softmax_conjugate(y: f64, u: &[f64], s: f64) -> f64 {
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
fn into_loss_domain(kind: LossConjugate, y: f64, u: f64) -> f64 {
    match kind {
        // p = −y·u ∈ [0, 1], y = ±1
        // logistic: p = −y·u ∈ [0, 1]; hinge: y·u ∈ [−1, 0], the same interval (y = ±1)
        LossConjugate::Logistic | LossConjugate::Hinge => -y * (-y * u).clamp(0.0, 1.0),
        LossConjugate::Squared => u,
        LossConjugate::Softmax => unreachable!("softmax points are projected row by row"),
    }
}

/// The scores' gradients uᵢ = softmax(aᵢ) − e_{yᵢ}, k per row, from the k scores per row.
fn softmax_dual_point(labels: &[f64], scores: &[f64], k: usize) -> Vec<f64> {
    let mut u = scores.to_vec();
    for (row, &y) in u.chunks_mut(k).zip(labels) {
        let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut total = 0.0;
        for x in row.iter_mut() {
            *x = (*x - top).exp();
            total += *x;
        }
        for (c, x) in row.iter_mut().enumerate() {
            *x = *x / total - if c as f64 == y { 1.0 } else { 0.0 };
        }
    }
    u
}

/// The gap and, from the same pass, the gradient of the loss part, ∇f(w) = (c/m)·Xᵀu.
pub struct Assessment {
    pub gap: f64,
    pub gradient: Vec<f64>,
}

/// See [`duality_gap`]; also hands back ∇f(w), which the working-set driver ranks features by.
/// `margins` are ⟨xᵢ, w⟩ for every row, as [`super::evaluate::evaluate_with_margins`] gives them.
pub fn assess(
    plan: &Plan,
    state: &State,
    data: &DataView,
    objective: f64,
    margins: &[f64],
    history: Option<&mut DualHistory>,
) -> Option<Assessment> {
    let cert = plan.certificate?;
    let w = state.weights(plan);
    let obj = &plan.objective;
    let m = data.rows();
    if m == 0 {
        return Some(Assessment { gap: 0.0, gradient: vec![0.0; w.len()] });
    }
    let c = obj.loss_weight;
    let env = Env::new(plan, data.dims());
    let mut scratch = State { scalars: state.scalars.clone(), vectors: plan.vectors.iter().map(|_| vec![]).collect() };
    if let Some(y) = plan.labels() {
        scratch.vectors[y.0] = data.labels.to_vec();
    }
    let width = margins.len() / m;
    let features = w.len() / width;
    let u: Vec<f64> = if obj.softmax {
        softmax_dual_point(data.labels, margins, width)
    } else {
        margins
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                scratch.scalars[obj.margin.0] = a;
                eval_at(&env, &obj.dloss, &scratch, i, 0)
            })
            .collect()
    };
    let (mut dual, z) = dual_at(&cert, data, c, features, width, &u);
    // A dual point the plan keeps itself (the Picard SVM's): any point in the domain bounds F*.
    if let (Some(e), false) = (&obj.dual, obj.softmax) {
        let own: Vec<f64> =
            (0..m).map(|i| into_loss_domain(cert.conjugate, data.labels[i], eval_at(&env, e, state, i, 0))).collect();
        let (d, _) = dual_at(&cert, data, c, features, width, &own);
        if d.is_finite() {
            dual = dual.max(d);
        }
    }
    if let Some(h) = history {
        h.push(u);
        if let Some(mut extrapolated) = h.extrapolate() {
            if obj.softmax {
                // Into the domain: q = u + e_y projected onto the simplex, row by row.
                for (row, &y) in extrapolated.chunks_mut(width).zip(data.labels) {
                    row[y as usize] += 1.0;
                    crate::runtime::Routine::ProjSimplex.apply(row, 0.0);
                    row[y as usize] -= 1.0;
                }
            } else {
                for (ui, &y) in extrapolated.iter_mut().zip(data.labels) {
                    *ui = into_loss_domain(cert.conjugate, y, *ui);
                }
            }
            let (d, _) = dual_at(&cert, data, c, features, width, &extrapolated);
            if d.is_finite() {
                dual = dual.max(d);
            }
        }
    }
    let gap = objective - dual;
    let gap = if gap.is_nan() { f64::INFINITY } else { gap.max(0.0) };
    Some(Assessment { gap, gradient: z.iter().map(|v| -v).collect() })
}

/// How far coordinate j is from optimal: the distance from −∇ⱼf to the subdifferential of
/// r + ι[lo, hi] at wⱼ (0 exactly when the KKT condition of coordinate j holds).
pub fn violation(c: &Certificate, w: f64, grad: f64) -> f64 {
    // ∂r(w) as an interval [a, b]: l2·w plus l1·sign(w), or [−l1, l1] at 0.
    let (mut a, mut b) = if w > 0.0 {
        (c.l2 * w + c.l1, c.l2 * w + c.l1)
    } else if w < 0.0 {
        (c.l2 * w - c.l1, c.l2 * w - c.l1)
    } else {
        (-c.l1, c.l1)
    };
    // The normal cone of the box: at the lower bound anything ≤ 0 is added, at the upper ≥ 0.
    if w <= c.lo {
        a = f64::NEG_INFINITY;
    }
    if w >= c.hi {
        b = f64::INFINITY;
    }
    let target = -grad;
    if target < a {
        a - target
    } else if target > b {
        target - b
    } else {
        0.0
    }
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

/// For R = l1‖·‖₁ + (l2/2)‖·‖² + T with T a vector term (no box): the scale s ≤ 1 that puts
/// s·z in the domain of R*, and R*(s·z).
///
/// With l2 > 0, R* is finite everywhere and its sup is attained at w⁺ = prox_{(l1‖·‖₁ + T)/l2}(z/l2)
/// (complete the square), which the runtime routine computes exactly. With l2 = 0, a norm's
/// conjugate is the indicator of its dual ball (ℓ2 ↔ ℓ2, ℓ∞ ↔ ℓ1; with ℓ1 added, of
/// {‖soft(z, l1)‖₂ ≤ λ}), so z is scaled into it; a set's conjugate is its support function.
///
/// `width` is the row width of z for the nuclear norm (whose dual ball is the spectral norm's).
fn vector_conjugate(cert: &Certificate, term: VectorTerm, z: &[f64], width: usize) -> (f64, f64) {
    use crate::runtime::{norm1, norm2, norm_inf};
    if cert.l2 > 0.0 {
        let mut w: Vec<f64> = z.iter().map(|zj| crate::plan::soft(zj / cert.l2, cert.l1 / cert.l2)).collect();
        term.routine().apply_shaped(&mut w, width, term.arg(1.0 / cert.l2));
        let inner: f64 = z.iter().zip(&w).map(|(a, b)| a * b).sum();
        let penalty = if term.whole_matrix() { term.value_shaped(&w, width) } else { term.value(&w) };
        let value = inner - cert.l1 * norm1(&w) - 0.5 * cert.l2 * norm2(&w).powi(2) - penalty;
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
        LossConjugate::Softmax => unreachable!("softmax's conjugate takes k scores: softmax_conjugate"),
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
        Certificate { conjugate: LossConjugate::Squared, l1, l2, lo, hi, vector: None }
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

    /// The working sets rank features by this: 0 exactly at the optimality condition of the
    /// coordinate, and the distance to it otherwise.
    #[test]
    fn violation_is_the_distance_to_the_subdifferential() {
        let l1 = cert(0.1, 0.0, f64::NEG_INFINITY, f64::INFINITY);
        assert_eq!(violation(&l1, 0.0, 0.05), 0.0, "|g| ≤ λ at w = 0");
        assert!((violation(&l1, 0.0, 0.25) - 0.15).abs() < 1e-15);
        assert_eq!(violation(&l1, 2.0, -0.1), 0.0, "g = −λ·sign(w)");
        assert!((violation(&l1, 2.0, 0.1) - 0.2).abs() < 1e-15);
        let elastic = cert(0.1, 0.5, f64::NEG_INFINITY, f64::INFINITY);
        assert!(violation(&elastic, 1.0, -0.6).abs() < 1e-15, "g = −(λ + l2·w)");
        let nonneg = cert(0.1, 0.0, 0.0, f64::INFINITY);
        assert_eq!(violation(&nonneg, 0.0, 5.0), 0.0, "at the bound, pushing outward is optimal");
        assert!((violation(&nonneg, 0.0, -0.3) - 0.2).abs() < 1e-15, "pulling inward is not");
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

    /// sup over a grid of w ∈ [−4, 4]² of ⟨z, w⟩ − R(w), R = l1‖w‖₁ + (l2/2)‖w‖² + T(w).
    fn brute_vector(c: &Certificate, t: VectorTerm, z: [f64; 2]) -> f64 {
        let n = 800;
        let mut best = f64::NEG_INFINITY;
        for a in 0..=n {
            for b in 0..=n {
                let w = [-4.0 + 8.0 * a as f64 / n as f64, -4.0 + 8.0 * b as f64 / n as f64];
                let r = c.l1 * (w[0].abs() + w[1].abs()) + 0.5 * c.l2 * (w[0] * w[0] + w[1] * w[1]) + t.value(&w);
                best = best.max(z[0] * w[0] + z[1] * w[1] - r);
            }
        }
        best
    }

    /// The vector conjugates against brute force: with ½‖·‖² the value itself; without, the
    /// scaled point is inside the domain (the sup is 0 for a norm) and barely so (5% further
    /// out it is not), and a set's support function matches.
    #[test]
    fn vector_conjugates_match_brute_force() {
        let terms = [
            VectorTerm::Norm2(0.7),
            VectorTerm::NormInf(0.7),
            VectorTerm::L1Ball(1.5),
            VectorTerm::L2Ball(1.5),
            VectorTerm::Simplex,
        ];
        let zs = [[0.3, -0.2], [2.0, 1.0], [-1.5, 0.4], [0.0, 0.0]];
        for t in terms {
            for (l1, l2) in [(0.0, 0.8), (0.0, 0.0), (0.3, 0.0), (0.3, 0.8)] {
                if l1 > 0.0 && !matches!(t, VectorTerm::Norm2(_)) {
                    continue;
                }
                let c = Certificate { vector: Some(t), ..cert(l1, l2, f64::NEG_INFINITY, f64::INFINITY) };
                for z in zs {
                    let (s, value) = vector_conjugate(&c, t, &z, 1);
                    let scaled = [s * z[0], s * z[1]];
                    let brute = brute_vector(&c, t, scaled);
                    // The grid step is 0.01: the sup is bracketed to within |z|·0.01.
                    assert!((value - brute).abs() < 0.03, "{t:?} l1 {l1} l2 {l2} z {z:?}: {value} vs {brute}");
                    assert!(value >= brute - 1e-9, "{t:?} l1 {l1} l2 {l2} z {z:?}: below a grid point");
                    if t.is_norm() && l2 == 0.0 && s < 1.0 {
                        let out = brute_vector(&c, t, [1.05 * scaled[0], 1.05 * scaled[1]]);
                        assert!(out > 1e-3, "{t:?} z {z:?}: s = {s} is not the largest scale");
                    }
                }
            }
        }
    }
}
