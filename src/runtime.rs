//! The runtime library: vector kernels that are not per coordinate (docs/algorithms.md §2), called
//! on a whole buffer by `call` statements of a plan. The interpreter calls [`Routine::apply`];
//! the JIT emits a call to the C-ABI entry point of the same routine (`exec/jit/abi.rs`), so
//! both back ends run the same code and produce the same bits. The duality-gap certificate uses
//! them too (R* of a vector term is evaluated at a prox).
//!
//! Each routine is the exact prox of a closed convex function, so each is tested by its
//! optimality condition v − prox(v) ∈ τ∂R(prox(v)) (see the tests below).

pub mod dictionary;
pub mod groups;
mod indices;
pub mod picard;
pub mod smm;

pub use indices::Indices;

/// sign(v)·max(|v| − τ, 0), written so that τ = 0 returns v exactly.
pub fn soft(v: f64, tau: f64) -> f64 {
    if v > tau {
        v - tau
    } else if v < -tau {
        v + tau
    } else {
        0.0
    }
}

/// A prox or projection on a whole vector, with one scalar argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Routine {
    /// prox of τ‖·‖₂: max(0, 1 − τ/‖v‖)·v.
    ShrinkL2,
    /// prox of τ‖·‖∞: v − Π_{‖·‖₁ ≤ τ}(v) (Moreau's decomposition).
    ProxLinf,
    /// Π onto {‖w‖₁ ≤ r}.
    ProjL1Ball,
    /// Π onto {‖w‖₂ ≤ r}: v·min(1, r/‖v‖).
    ProjL2Ball,
    /// Π onto {w ≥ 0, Σw = 1}; the argument is unused.
    ProjSimplex,
    /// prox of τ‖·‖_* on a row-major matrix: singular values soft-thresholded (SVD).
    Svt,
    /// prox of τ‖W(I − 11ᵀ/k)‖_*: each row's mean kept, the centred rest thresholded.
    SvtCentered,
}

impl Routine {
    pub const ALL: [Routine; 7] = [
        Routine::ShrinkL2,
        Routine::ProxLinf,
        Routine::ProjL1Ball,
        Routine::ProjL2Ball,
        Routine::ProjSimplex,
        Routine::Svt,
        Routine::SvtCentered,
    ];

    /// The name in the plan dump and the JIT's symbol table (prefixed `optc_`).
    pub fn name(self) -> &'static str {
        match self {
            Routine::ShrinkL2 => "shrink_l2",
            Routine::ProxLinf => "prox_linf",
            Routine::ProjL1Ball => "proj_l1ball",
            Routine::ProjL2Ball => "proj_l2ball",
            Routine::ProjSimplex => "proj_simplex",
            Routine::Svt => "svt",
            Routine::SvtCentered => "svt_centered",
        }
    }

    /// Replaces `v` by the routine's result. A NaN or negative argument leaves `v` as it is
    /// for the projections (no set) and thresholds by 0 for the proxes: the plan's guards
    /// report the non-finite values this leads to, never the routine.
    pub fn apply(self, v: &mut [f64], arg: f64) {
        match self {
            Routine::ShrinkL2 => shrink_l2(v, arg),
            Routine::ProxLinf => prox_linf(v, arg),
            Routine::ProjL1Ball => proj_l1ball(v, arg),
            Routine::ProjL2Ball => proj_l2ball(v, arg),
            Routine::ProjSimplex => proj_simplex(v),
            Routine::Svt | Routine::SvtCentered => svt(v, 1, arg),
        }
    }

    /// As [`Routine::apply`], on a buffer whose rows have `width` entries (the SVT sees the
    /// matrix; the other routines the flat buffer).
    pub fn apply_shaped(self, v: &mut [f64], width: usize, arg: f64) {
        match self {
            Routine::Svt => svt(v, width, arg),
            Routine::SvtCentered => svt_centered(v, width, arg),
            _ => self.apply(v, arg),
        }
    }
}

/// The eigen-decomposition of the smaller Gram matrix of a row-major n × width matrix M:
/// MᵀM (width ≤ n) or MMᵀ, whose eigenvalues are the squared singular values. nalgebra's
/// `svd` loses accuracy on nearly rank-deficient tall matrices (a reconstruction error of 0.18
/// on a 180 × 3 iterate of the dna example, rank 2), while its symmetric eigensolver on the
/// small side is accurate, and W's small side is the k classes.
fn gram_eigen(
    v: &[f64],
    width: usize,
) -> Option<(nalgebra::DMatrix<f64>, nalgebra::SymmetricEigen<f64, nalgebra::Dyn>, bool)> {
    if v.is_empty() || width == 0 || !v.len().is_multiple_of(width) || v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let m = nalgebra::DMatrix::from_row_slice(v.len() / width, width, v);
    let tall = m.nrows() >= m.ncols();
    let gram = if tall { m.transpose() * &m } else { &m * m.transpose() };
    Some((m, gram.symmetric_eigen(), tall))
}

/// prox_{τ‖·P‖_*}(V) with P = I − 11ᵀ/k: the norm sees only VP (each row minus its mean), and
/// V = VP + V(I − P) splits orthogonally, so the prox is V(I − P) + SVT_τ(VP).
fn svt_centered(v: &mut [f64], width: usize, tau: f64) {
    if width == 0 || !v.len().is_multiple_of(width) {
        return;
    }
    let means: Vec<f64> = v.chunks(width).map(|row| row.iter().sum::<f64>() / width as f64).collect();
    for (row, m) in v.chunks_mut(width).zip(&means) {
        row.iter_mut().for_each(|x| *x -= m);
    }
    svt(v, width, tau);
    for (row, m) in v.chunks_mut(width).zip(&means) {
        row.iter_mut().for_each(|x| *x += m);
    }
}

/// Each row minus its mean: W(I − 11ᵀ/k).
pub fn centered(v: &[f64], width: usize) -> Vec<f64> {
    let mut out = v.to_vec();
    if width > 0 {
        for row in out.chunks_mut(width) {
            let m = row.iter().sum::<f64>() / width as f64;
            row.iter_mut().for_each(|x| *x -= m);
        }
    }
    out
}

/// The singular values of a row-major matrix with rows of `width` entries (unsorted). An
/// eigenvalue of the Gram within rounding of 0 (n·ε·λ_max) is a zero singular value: its
/// square root would otherwise be √ε·σ_max of noise in ‖W‖_* of a rank-deficient W.
pub fn singular_values(v: &[f64], width: usize) -> Vec<f64> {
    let Some((m, eig, _)) = gram_eigen(v, width) else { return vec![] };
    let top = eig.eigenvalues.iter().copied().fold(0.0, f64::max);
    let floor = (m.nrows().max(m.ncols()) as f64) * f64::EPSILON * top;
    eig.eigenvalues.iter().map(|&l| if l > floor { l.sqrt() } else { 0.0 }).collect()
}

/// W ← U·max(Σ − τ, 0)·Vᵀ: the prox of τ‖·‖_* (Cai, Candès & Shen's singular-value
/// thresholding), as W·V·diag(max(σ − τ, 0)/σ)·Vᵀ from the Gram's eigenvectors V (or
/// U·diag(·)·Uᵀ·W for a wide W). A non-finite entry leaves the matrix as it is, for the plan's
/// guards to see.
fn svt(v: &mut [f64], width: usize, tau: f64) {
    let Some((m, eig, tall)) = gram_eigen(v, width) else { return };
    let shrink = nalgebra::DVector::from_iterator(
        eig.eigenvalues.len(),
        eig.eigenvalues.iter().map(|l| {
            let s = l.max(0.0).sqrt();
            if s > tau.max(0.0) {
                (s - tau.max(0.0)) / s
            } else {
                0.0
            }
        }),
    );
    let q = &eig.eigenvectors;
    let filter = q * nalgebra::DMatrix::from_diagonal(&shrink) * q.transpose();
    let back = if tall { &m * filter } else { filter * &m };
    for (r, row) in v.chunks_mut(width).enumerate() {
        for (c, x) in row.iter_mut().enumerate() {
            *x = back[(r, c)];
        }
    }
}

/// A term of R on the whole weight vector whose prox is one [`Routine`]: a norm λ‖w‖ or the
/// indicator of a set. The certificate needs its value and conjugate; the plan, its prox.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VectorTerm {
    /// λ‖w‖₂
    Norm2(f64),
    /// λ‖w‖∞
    NormInf(f64),
    /// ι{‖w‖₁ ≤ r}
    L1Ball(f64),
    /// ι{‖w‖₂ ≤ r}
    L2Ball(f64),
    /// ι{w ≥ 0, Σw = 1}
    Simplex,
    /// λ‖W‖_*, the sum of W's singular values: on the whole matrix, never row by row.
    Nuclear(f64),
    /// λ‖W(I − 11ᵀ/k)‖_*, the centred trace norm (multi-task learning, Argyriou et al. §3).
    CenteredNuclear(f64),
}

/// How far outside a set rounding may leave a projected point before its value counts as +∞.
const FEASIBILITY: f64 = 1e-9;

impl VectorTerm {
    pub fn routine(self) -> Routine {
        match self {
            VectorTerm::Norm2(_) => Routine::ShrinkL2,
            VectorTerm::NormInf(_) => Routine::ProxLinf,
            VectorTerm::L1Ball(_) => Routine::ProjL1Ball,
            VectorTerm::L2Ball(_) => Routine::ProjL2Ball,
            VectorTerm::Simplex => Routine::ProjSimplex,
            VectorTerm::Nuclear(_) => Routine::Svt,
            VectorTerm::CenteredNuclear(_) => Routine::SvtCentered,
        }
    }

    /// Whether it acts on a whole matrix rather than on each row of one.
    pub fn whole_matrix(self) -> bool {
        matches!(self, VectorTerm::Nuclear(_) | VectorTerm::CenteredNuclear(_))
    }

    /// Its value at a row-major matrix with rows of `width` entries: a whole-matrix term on
    /// the matrix, any other on each row.
    pub fn value_shaped(self, w: &[f64], width: usize) -> f64 {
        match self {
            VectorTerm::Nuclear(l) => l * singular_values(w, width).iter().sum::<f64>(),
            VectorTerm::CenteredNuclear(l) => l * singular_values(&centered(w, width), width).iter().sum::<f64>(),
            _ if width > 1 => w.chunks(width).map(|row| self.value(row)).sum(),
            _ => self.value(w),
        }
    }

    /// The routine's argument for the prox of τ·term: τλ for a norm, the radius for a set.
    pub fn arg(self, tau: f64) -> f64 {
        match self {
            VectorTerm::Norm2(l) | VectorTerm::NormInf(l) | VectorTerm::Nuclear(l) | VectorTerm::CenteredNuclear(l) => {
                tau * l
            }
            VectorTerm::L1Ball(r) | VectorTerm::L2Ball(r) => r,
            VectorTerm::Simplex => 0.0,
        }
    }

    /// Whether the term is a norm (scaled by τ in a prox) rather than a set.
    pub fn is_norm(self) -> bool {
        matches!(
            self,
            VectorTerm::Norm2(_) | VectorTerm::NormInf(_) | VectorTerm::Nuclear(_) | VectorTerm::CenteredNuclear(_)
        )
    }

    /// Its value at w: the norm, or 0 on the set (+∞ off it, beyond rounding).
    pub fn value(self, w: &[f64]) -> f64 {
        let off = |excess: f64, scale: f64| if excess > FEASIBILITY * (1.0 + scale) { f64::INFINITY } else { 0.0 };
        match self {
            VectorTerm::Norm2(l) => l * norm2(w),
            VectorTerm::Nuclear(l) | VectorTerm::CenteredNuclear(l) => l * singular_values(w, 1).iter().sum::<f64>(),
            VectorTerm::NormInf(l) => l * norm_inf(w),
            VectorTerm::L1Ball(r) => off(norm1(w) - r, r),
            VectorTerm::L2Ball(r) => off(norm2(w) - r, r),
            VectorTerm::Simplex => {
                let negative = w.iter().fold(0.0f64, |m, x| m.max(-x));
                off(negative.max((w.iter().sum::<f64>() - 1.0).abs()), 1.0)
            }
        }
    }

    /// The term as the plan dump and `optc check` print it.
    pub fn describe(self) -> String {
        let num = crate::symbolic::fmt_num;
        match self {
            VectorTerm::Norm2(l) => format!("{}·‖w‖₂", num(l)),
            VectorTerm::NormInf(l) => format!("{}·‖w‖∞", num(l)),
            VectorTerm::L1Ball(r) => format!("ι{{‖w‖₁ ≤ {}}}", num(r)),
            VectorTerm::L2Ball(r) => format!("ι{{‖w‖₂ ≤ {}}}", num(r)),
            VectorTerm::Simplex => "ι{w ≥ 0, Σw = 1}".into(),
            VectorTerm::Nuclear(l) => format!("{}·‖W‖_*", num(l)),
            VectorTerm::CenteredNuclear(l) => format!("{}·‖W(I − 11ᵀ/k)‖_*", num(l)),
        }
    }
}

pub fn norm2(v: &[f64]) -> f64 {
    // The plain sum of squares, unless it overflowed or may have lost entries to underflow
    // (each lost square is below 1e-307, negligible beside a sum above 1e-200); then the
    // sum again scaled by the largest entry. The fast path matters: the lazy FOBOS plans
    // shrink two short rows per non-zero, and the scaled sum divides once per entry.
    let sq: f64 = v.iter().map(|x| x * x).sum();
    if sq.is_finite() && sq > 1e-200 {
        return sq.sqrt();
    }
    let scale = norm_inf(v);
    if scale == 0.0 || !scale.is_finite() {
        return scale;
    }
    scale * v.iter().map(|x| (x / scale) * (x / scale)).sum::<f64>().sqrt()
}

pub fn norm1(v: &[f64]) -> f64 {
    v.iter().map(|x| x.abs()).sum()
}

pub fn norm_inf(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m: f64, x| if x.abs() > m || x.is_nan() { x.abs() } else { m })
}

fn shrink_l2(v: &mut [f64], tau: f64) {
    let n = norm2(v);
    let factor = if n > tau { 1.0 - tau.max(0.0) / n } else { 0.0 };
    v.iter_mut().for_each(|x| *x *= factor);
}

fn proj_l2ball(v: &mut [f64], r: f64) {
    let n = norm2(v);
    if n > r && r >= 0.0 {
        let factor = r / n;
        v.iter_mut().for_each(|x| *x *= factor);
    }
}

fn proj_l1ball(v: &mut [f64], r: f64) {
    if r.is_nan() || r < 0.0 || norm1(v) <= r {
        return;
    }
    // The ball is {0}; the threshold search below assumes a positive radius.
    if r == 0.0 {
        v.fill(0.0);
        return;
    }
    let mut mags: Vec<f64> = v.iter().map(|x| x.abs()).collect();
    let theta = simplex_threshold(&mut mags, r);
    for x in v.iter_mut() {
        *x = x.signum() * (x.abs() - theta).max(0.0);
    }
}

fn prox_linf(v: &mut [f64], tau: f64) {
    let mut p = v.to_vec();
    proj_l1ball(&mut p, tau.max(0.0));
    for (x, q) in v.iter_mut().zip(p) {
        *x -= q;
    }
}

fn proj_simplex(v: &mut [f64]) {
    if v.is_empty() || v.iter().any(|x| x.is_nan()) {
        return;
    }
    let mut scratch = v.to_vec();
    let theta = simplex_threshold(&mut scratch, 1.0);
    for x in v.iter_mut() {
        *x = (*x - theta).max(0.0);
    }
}

/// The θ with Σ max(uᵢ − θ, 0) = z (z > 0), in expected linear time: Duchi, Shalev-Shwartz,
/// Singer & Chandra (2008), fig. 2 — a quickselect on the pivot uₖ that keeps the running sum
/// and count of the entries known to lie above θ. `u` is scratch space and is reordered. The
/// pivots come from a fixed xorshift sequence, so the result does not depend on the run.
fn simplex_threshold(u: &mut [f64], z: f64) -> f64 {
    let (mut lo, mut hi) = (0usize, u.len());
    let (mut sum, mut count) = (0.0f64, 0usize);
    let mut rng: u64 = 0x9E37_79B9_7F4A_7C15;
    while lo < hi {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let pick = lo + (rng % (hi - lo) as u64) as usize;
        u.swap(lo, pick);
        let pivot = u[lo];
        // Partition u[lo+1..hi]: entries ≥ pivot to the front.
        let mut ge = lo + 1;
        let mut part_sum = pivot;
        for k in lo + 1..hi {
            if u[k] >= pivot {
                part_sum += u[k];
                u.swap(ge, k);
                ge += 1;
            }
        }
        let part_count = ge - lo;
        if (sum + part_sum) - (count + part_count) as f64 * pivot < z {
            // θ < pivot: every entry ≥ pivot is above θ; look among the smaller ones.
            sum += part_sum;
            count += part_count;
            lo = ge;
        } else {
            // θ ≥ pivot: look among the larger ones (the pivot itself excluded).
            lo += 1;
            hi = ge;
        }
    }
    (sum - z) / count.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The subdifferential tests below allow this much rounding, relative to the data's scale.
    const TOL: f64 = 1e-9;

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// p = prox_{τ‖·‖₂}(v) ⇔ g = v − p has ‖g‖ ≤ τ, and g = τ·p/‖p‖ when p ≠ 0.
    fn check_shrink(v: &[f64], tau: f64) {
        let mut p = v.to_vec();
        Routine::ShrinkL2.apply(&mut p, tau);
        let g: Vec<f64> = v.iter().zip(&p).map(|(a, b)| a - b).collect();
        let scale = 1.0 + norm2(v);
        assert!(norm2(&g) <= tau + TOL * scale, "‖v − p‖ = {} > τ = {tau}", norm2(&g));
        let np = norm2(&p);
        if np > 0.0 {
            for (gi, pi) in g.iter().zip(&p) {
                assert!((gi - tau * pi / np).abs() <= TOL * scale);
            }
        }
    }

    /// p = prox_{τ‖·‖∞}(v) ⇔ g = v − p has ‖g‖₁ ≤ τ and ⟨g, p⟩ = τ‖p‖∞ (g is in τ∂‖·‖∞(p)).
    fn check_linf(v: &[f64], tau: f64) {
        let mut p = v.to_vec();
        Routine::ProxLinf.apply(&mut p, tau);
        let g: Vec<f64> = v.iter().zip(&p).map(|(a, b)| a - b).collect();
        let scale = 1.0 + norm1(v);
        assert!(norm1(&g) <= tau + TOL * scale, "‖g‖₁ = {} > τ = {tau}", norm1(&g));
        assert!((dot(&g, &p) - tau * norm_inf(&p)).abs() <= TOL * scale * scale, "⟨g, p⟩ ≠ τ‖p‖∞");
    }

    /// p = Π_C(v) ⇔ p ∈ C and ⟨v − p, q − p⟩ ≤ 0 for every q ∈ C; checked at the vertices of
    /// the ℓ1 ball / the simplex (enough: the inequality is linear in q) and at p's own extremes.
    fn check_projection(v: &[f64], p: &[f64], vertices: &[Vec<f64>]) {
        let scale = 1.0 + norm1(v);
        let g: Vec<f64> = v.iter().zip(p).map(|(a, b)| a - b).collect();
        for q in vertices {
            let d: Vec<f64> = q.iter().zip(p).map(|(a, b)| a - b).collect();
            assert!(dot(&g, &d) <= TOL * scale * scale, "⟨v − p, q − p⟩ = {} > 0", dot(&g, &d));
        }
    }

    fn l1_vertices(n: usize, r: f64) -> Vec<Vec<f64>> {
        let mut out = vec![];
        for k in 0..n {
            for s in [-r, r] {
                let mut q = vec![0.0; n];
                q[k] = s;
                out.push(q);
            }
        }
        out
    }

    fn check_l1ball(v: &[f64], r: f64) {
        let mut p = v.to_vec();
        Routine::ProjL1Ball.apply(&mut p, r);
        assert!(norm1(&p) <= r * (1.0 + TOL) + TOL || norm1(v) <= r, "outside the ball: {}", norm1(&p));
        check_projection(v, &p, &l1_vertices(v.len(), r));
    }

    fn check_simplex(v: &[f64]) {
        let mut p = v.to_vec();
        Routine::ProjSimplex.apply(&mut p, 0.0);
        assert!(p.iter().all(|x| *x >= 0.0));
        assert!((p.iter().sum::<f64>() - 1.0).abs() <= TOL * (1.0 + norm1(v)));
        let vertices: Vec<Vec<f64>> = (0..v.len())
            .map(|k| {
                let mut q = vec![0.0; v.len()];
                q[k] = 1.0;
                q
            })
            .collect();
        check_projection(v, &p, &vertices);
    }

    fn check_l2ball(v: &[f64], r: f64) {
        let mut p = v.to_vec();
        Routine::ProjL2Ball.apply(&mut p, r);
        assert!(norm2(&p) <= r * (1.0 + TOL) || norm2(v) <= r);
        // v − p is a non-negative multiple of p (the normal cone of the ball at p).
        let g: Vec<f64> = v.iter().zip(&p).map(|(a, b)| a - b).collect();
        let scale = 1.0 + norm2(v);
        assert!(dot(&g, &p) >= -TOL * scale * scale);
        let (ng, np) = (norm2(&g), norm2(&p));
        assert!((dot(&g, &p) - ng * np).abs() <= TOL * scale * scale, "v − p not parallel to p");
    }

    #[test]
    fn hand_computed_cases() {
        let mut v = vec![3.0, 4.0];
        Routine::ShrinkL2.apply(&mut v, 1.0);
        assert_eq!(v, vec![3.0 * 0.8, 4.0 * 0.8]);
        let mut v = vec![3.0, 4.0];
        Routine::ShrinkL2.apply(&mut v, 6.0);
        assert_eq!(v, vec![0.0, 0.0]);
        // ℓ1 ball from (2, 0.5, −1): r = 1.5 gives θ = 0.75, r = 2 gives θ = 0.5.
        let mut v = vec![2.0, 0.5, -1.0];
        Routine::ProjL1Ball.apply(&mut v, 1.5);
        assert_eq!(v, vec![1.25, 0.0, -0.25]);
        let mut v = vec![2.0, 0.5, -1.0];
        Routine::ProjL1Ball.apply(&mut v, 2.0);
        assert_eq!(v, vec![1.5, 0.0, -0.5]);
        // prox of ‖·‖∞ with τ = 1 at (3, −1, 0.5): the largest entry comes down to 2.
        let mut v = vec![3.0, -1.0, 0.5];
        Routine::ProxLinf.apply(&mut v, 1.0);
        assert_eq!(v, vec![2.0, -1.0, 0.5]);
        // τ ≥ ‖v‖₁: everything goes to 0.
        let mut v = vec![3.0, -1.0, 0.5];
        Routine::ProxLinf.apply(&mut v, 10.0);
        assert_eq!(v, vec![0.0, 0.0, 0.0]);
        let mut v = vec![0.2, 0.9, -1.0];
        Routine::ProjSimplex.apply(&mut v, 0.0);
        assert!((v[0] - 0.15).abs() < 1e-15 && (v[1] - 0.85).abs() < 1e-15 && v[2] == 0.0, "{v:?}");
        let mut v = vec![0.0, 0.0];
        Routine::ProjSimplex.apply(&mut v, 0.0);
        assert_eq!(v, vec![0.5, 0.5]);
        let mut v = vec![6.0, 8.0];
        Routine::ProjL2Ball.apply(&mut v, 5.0);
        assert_eq!(v, vec![3.0, 4.0]);
    }

    #[test]
    fn ties_and_inside_points_are_exact() {
        let mut v = vec![1.0, 1.0, 1.0, 1.0];
        Routine::ProjL1Ball.apply(&mut v, 2.0);
        assert_eq!(v, vec![0.5; 4]);
        let mut v = vec![0.1, -0.2];
        Routine::ProjL1Ball.apply(&mut v, 1.0);
        assert_eq!(v, vec![0.1, -0.2], "inside the ball: unchanged");
        let mut v: Vec<f64> = vec![];
        for r in Routine::ALL {
            r.apply(&mut v, 1.0);
        }
    }

    /// Both paths of the ℓ2 norm: the plain sum, and the scaled one where squares overflow or
    /// underflow.
    #[test]
    fn norm2_is_accurate_at_every_scale() {
        assert_eq!(norm2(&[3.0, 4.0]), 5.0);
        for scale in [1e-300, 1e-160, 1e-100, 1.0, 1e100, 1e160, 1e300] {
            let n = norm2(&[3.0 * scale, -4.0 * scale]);
            assert!((n / (5.0 * scale) - 1.0).abs() < 1e-15, "scale {scale}: {n}");
        }
        assert_eq!(norm2(&[0.0, 0.0]), 0.0);
        assert!(norm2(&[f64::NAN, 1.0]).is_nan());
    }

    /// The lazy FOBOS plans call a norm's prox with the weight a row missed, often exactly 0
    /// (a row touched by consecutive examples): that must be the identity.
    #[test]
    fn a_zero_weight_is_the_identity_and_a_zero_radius_the_origin() {
        let v = vec![3.0, -1.0, 0.5];
        for r in [Routine::ShrinkL2, Routine::ProxLinf] {
            let mut p = v.clone();
            r.apply(&mut p, 0.0);
            assert_eq!(p, v, "{}", r.name());
        }
        for r in [Routine::ProjL1Ball, Routine::ProjL2Ball] {
            let mut p = v.clone();
            r.apply(&mut p, 0.0);
            assert_eq!(p, vec![0.0; 3], "{}", r.name());
        }
    }

    fn vector() -> impl Strategy<Value = Vec<f64>> {
        (1usize..40, -3i32..4).prop_flat_map(|(n, e)| {
            let s = 10f64.powi(e);
            proptest::collection::vec(-1.0f64..1.0, n).prop_map(move |v| v.into_iter().map(|x| x * s).collect())
        })
    }

    /// P = prox_{τ‖·‖_*}(V) ⇔ G = (V − P)/τ has spectral norm ≤ 1 and ⟨G, P⟩ = ‖P‖_*.
    fn check_svt(v: &[f64], width: usize, tau: f64) {
        let mut p = v.to_vec();
        Routine::Svt.apply_shaped(&mut p, width, tau);
        let g: Vec<f64> = v.iter().zip(&p).map(|(a, b)| (a - b) / tau).collect();
        let spectral = singular_values(&g, width).into_iter().fold(0.0, f64::max);
        let nuclear: f64 = singular_values(&p, width).iter().sum();
        let scale = 1.0 + norm2(v);
        assert!(spectral <= 1.0 + 1e-9 * scale / tau, "‖G‖₂ = {spectral} > 1");
        assert!((dot(&g, &p) - nuclear).abs() <= 1e-9 * scale * scale / tau, "⟨G, P⟩ ≠ ‖P‖_*");
    }

    /// P = prox_{τ‖·C‖_*}(V), C = I − 11ᵀ/k ⇔ G = (V − P)/τ has rows summing to 0, spectral
    /// norm ≤ 1 and ⟨G, P⟩ = ‖PC‖_*.
    fn check_svt_centered(v: &[f64], width: usize, tau: f64) {
        let mut p = v.to_vec();
        Routine::SvtCentered.apply_shaped(&mut p, width, tau);
        let g: Vec<f64> = v.iter().zip(&p).map(|(a, b)| (a - b) / tau).collect();
        let scale = 1.0 + norm2(v);
        for row in g.chunks(width) {
            assert!(row.iter().sum::<f64>().abs() <= 1e-9 * scale / tau, "a row of G does not sum to 0");
        }
        let spectral = singular_values(&g, width).into_iter().fold(0.0, f64::max);
        let nuclear: f64 = singular_values(&centered(&p, width), width).iter().sum();
        assert!(spectral <= 1.0 + 1e-9 * scale / tau, "‖G‖₂ = {spectral} > 1");
        assert!((dot(&g, &p) - nuclear).abs() <= 1e-9 * scale * scale / tau, "⟨G, P⟩ ≠ ‖PC‖_*");
    }

    #[test]
    fn svt_by_hand() {
        // diag(3, 1) with τ = 2 → diag(1, 0).
        let mut v = vec![3.0, 0.0, 0.0, 1.0];
        Routine::Svt.apply_shaped(&mut v, 2, 2.0);
        assert!(v.iter().zip([1.0, 0.0, 0.0, 0.0]).all(|(a, b)| (a - b).abs() < 1e-12), "{v:?}");
    }

    proptest! {
        #[test]
        fn svt_meets_its_optimality_condition(
            (rows, width, v) in (1usize..8, 1usize..5).prop_flat_map(|(r, c)| {
                (Just(r), Just(c), proptest::collection::vec(-2.0f64..2.0, r * c))
            }),
            tau in 0.05f64..2.0,
        ) {
            let _ = rows;
            check_svt(&v, width, tau);
            check_svt_centered(&v, width, tau);
        }

        #[test]
        fn shrink_l2_meets_its_optimality_condition(v in vector(), tau in 0.0f64..5.0) {
            check_shrink(&v, tau * norm2(&v).max(1e-3));
        }

        #[test]
        fn prox_linf_meets_its_optimality_condition(v in vector(), tau in 0.0f64..1.5) {
            check_linf(&v, tau * norm1(&v).max(1e-3));
        }

        #[test]
        fn l1_projection_meets_its_optimality_condition(v in vector(), r in 0.01f64..1.5) {
            check_l1ball(&v, r * norm1(&v).max(1e-3));
        }

        #[test]
        fn l2_projection_meets_its_optimality_condition(v in vector(), r in 0.01f64..1.5) {
            check_l2ball(&v, r * norm2(&v).max(1e-3));
        }

        #[test]
        fn simplex_projection_meets_its_optimality_condition(v in vector()) {
            check_simplex(&v);
        }

        /// Duchi & Singer's Proposition 4, which the lazy per-row FOBOS plans rest on: two
        /// proxes of the ℓ2 or ℓ∞ norm compose into one with the summed weight.
        #[test]
        fn norm_proxes_compose_by_adding_weights(v in vector(), a in 0.0f64..0.6, b in 0.0f64..0.6) {
            for (r, norm) in [(Routine::ShrinkL2, norm2(&v)), (Routine::ProxLinf, norm1(&v))] {
                let (a, b) = (a * norm, b * norm);
                let mut twice = v.clone();
                r.apply(&mut twice, a);
                r.apply(&mut twice, b);
                let mut once = v.clone();
                r.apply(&mut once, a + b);
                let scale = 1.0 + norm1(&v);
                for (x, y) in twice.iter().zip(&once) {
                    prop_assert!((x - y).abs() <= TOL * scale, "{}: {x} vs {y}", r.name());
                }
            }
        }

        /// Ties are where a quickselect goes wrong: few distinct values.
        #[test]
        fn l1_projection_with_many_ties(v in proptest::collection::vec(-2i32..3, 1..30), r in 0.1f64..3.0) {
            let v: Vec<f64> = v.into_iter().map(f64::from).collect();
            check_l1ball(&v, r);
            check_simplex(&v);
        }
    }
}

#[cfg(test)]
mod svt_regression {
    /// A nearly rank-deficient tall matrix, where nalgebra's `svd` reconstructs with an error of
    /// 0.18: the Gram route must give an exact prox (checked by its optimality condition).
    #[test]
    fn nearly_rank_deficient_tall_matrices() {
        let rows = 60;
        // Columns 0 and 1 independent, column 2 = column 0 − column 1 (+ 1e-15 noise).
        let mut v = vec![0.0; rows * 3];
        for r in 0..rows {
            let a = ((r * 37 % 17) as f64 - 8.0) / 10.0;
            let b = ((r * 11 % 13) as f64 - 6.0) / 10.0;
            v[r * 3] = a;
            v[r * 3 + 1] = b;
            v[r * 3 + 2] = a - b + if r == 7 { 1e-15 } else { 0.0 };
        }
        let tau = 0.05;
        let mut p = v.clone();
        super::Routine::Svt.apply_shaped(&mut p, 3, tau);
        let g: Vec<f64> = v.iter().zip(&p).map(|(a, b)| (a - b) / tau).collect();
        let spectral = super::singular_values(&g, 3).into_iter().fold(0.0, f64::max);
        let nuclear: f64 = super::singular_values(&p, 3).iter().sum();
        let inner: f64 = g.iter().zip(&p).map(|(a, b)| a * b).sum();
        assert!(spectral <= 1.0 + 1e-6, "‖G‖₂ = {spectral}");
        assert!((inner - nuclear).abs() <= 1e-6 * (1.0 + nuclear), "⟨G, P⟩ = {inner} vs ‖P‖_* = {nuclear}");
    }
}
