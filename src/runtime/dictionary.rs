//! Dictionary learning (Mairal 2013, §4.3): the sparse code of a signal, and SMM's step on the
//! dictionary from a mini-batch of signals.
//!
//! The cost of a signal x ∈ ℝᵐ under a dictionary D = [d₁ … d_K] is the value of an elastic net,
//!
//!   ℓ(x, D) = min over α of ½‖x − Dα‖² + λ₁‖α‖₁ + (λ₂/2)‖α‖²,
//!
//! whose minimiser α* is unique for λ₂ > 0, so ∇_D ℓ = (Dα* − x)·α*ᵀ (Danskin). SMM averages
//! majorizers of the batches' costs, each tight at the dictionary the batch was coded with, and
//! minimises the average plus ϕ (see [`Dictionary::step`]). Two majorizers are built: the
//! batch's own cost at its codes (the default; the quadratic online dictionary learning keeps,
//! Mairal et al. 2010), and the proximal-gradient surrogate of Mairal 2013's eq. 5. The atoms
//! are stored as the rows of a K × m array: an atom is one contiguous slice, as the prox and the
//! column constraint take it.

use super::Indices;
pub use settings::{AtomPenalty, DictionaryCost, EpochSettings, Majorizer};

mod settings;

/// The coder stops once no coordinate of a sweep moves the correlation it sees by more than
/// this, relative to 1 + ‖Dᵀx‖∞: the largest KKT violation left. For the costs a run reports
/// and `optc predict`'s codes.
pub const CODE_TOL: f64 = 1e-9;
/// The same for the codes of a training step, whose majorizer needs less: on 20×20 image
/// patches with K = 64 and λ₂ = 0, coding to 1e-12 was 91% of a run, and 1e-4 left the
/// held-out cost where it was; at K = 128, 1e-3 took a pass from 1.9 s to 1.4 s.
pub const TRAIN_CODE_TOL: f64 = 1e-3;
/// Sweeps of one code, at most: coordinate descent on a K × K system converges linearly, and
/// a bound keeps a degenerate dictionary (duplicate atoms, λ₂ = 0) from looping.
pub const CODE_SWEEPS: usize = 100_000;

/// argmin over α of ½‖x − Dα‖² + λ₁‖α‖₁ + (λ₂/2)‖α‖², from G = DᵀD (K × K, row-major) and
/// c = Dᵀx, by cyclic coordinate descent with s = Gα kept: each step is O(K). Sweeps over the
/// non-zero coordinates alternate with full sweeps until a full sweep moves nothing (glmnet's
/// active set). Coordinate descent converges linearly, slowly where atoms are correlated, so
/// once a few sweeps have settled the support S its signs σ are trusted and the code jumps
/// toward the minimiser of the quadratic on that orthant, (G_SS + λ₂I)⁻¹(c_S − λ₁σ), as far as
/// the signs hold (a feature-sign step, Lee et al. 2007; the cost falls all along that segment).
/// `alpha` is the start (a warm start, or 0) and the result; the sweeps made.
pub fn sparse_code(gram: &[f64], c: &[f64], (l1, l2): (f64, f64), rel_tol: f64, alpha: &mut [f64]) -> usize {
    let k = c.len();
    let mut s = vec![0.0; k];
    for j in 0..k {
        if alpha[j] != 0.0 {
            for (sl, g) in s.iter_mut().zip(&gram[j * k..(j + 1) * k]) {
                *sl += alpha[j] * g;
            }
        }
    }
    let tol = rel_tol * (1.0 + c.iter().fold(0.0_f64, |m, x| m.max(x.abs())));
    let mut sweeps = 0;
    let step = |j: usize, alpha: &mut [f64], s: &mut [f64]| -> f64 {
        let gjj = gram[j * k + j];
        let h = gjj + l2;
        if h <= 0.0 || h.is_nan() {
            // An atom of zeros with no ridge: its coefficient does nothing; keep it at 0.
            return 0.0;
        }
        let r = c[j] - s[j] + gjj * alpha[j];
        let next = r.signum() * (r.abs() - l1).max(0.0) / h;
        let delta = next - alpha[j];
        if delta != 0.0 {
            alpha[j] = next;
            for (sl, g) in s.iter_mut().zip(&gram[j * k..(j + 1) * k]) {
                *sl += delta * g;
            }
        }
        delta.abs() * h
    };
    while sweeps < CODE_SWEEPS {
        let worst = (0..k).map(|j| step(j, alpha, &mut s)).fold(0.0, f64::max);
        sweeps += 1;
        if worst <= tol {
            break;
        }
        let mut active: Vec<usize> = (0..k).filter(|&j| alpha[j] != 0.0).collect();
        let mut last = f64::INFINITY;
        while sweeps < CODE_SWEEPS {
            let worst = active.iter().map(|&j| step(j, alpha, &mut s)).fold(0.0, f64::max);
            sweeps += 1;
            if worst <= tol {
                break;
            }
            // The sweeps' own linear rate predicts how many more they need; a feature-sign
            // step (a factor of G_SS, ~|S|³/3) is taken when those would cost more.
            let rate = worst / last;
            last = worst;
            let n = active.len() as f64;
            if rate < 1.0 && (tol / worst).ln() / rate.ln() * n * k as f64 > n * n * n / 3.0 {
                match feature_sign_step(gram, c, l2, l1, &active, alpha, &mut s) {
                    Some(true) => break,
                    Some(false) => {
                        active.retain(|&j| alpha[j] != 0.0);
                        last = f64::INFINITY;
                    }
                    None => {}
                }
            }
        }
    }
    sweeps
}

/// The feature-sign step on the support `active` (see [`sparse_code`]): α_S moves toward
/// β = (G_SS + λ₂I)⁻¹(c_S − λ₁·sign(α_S)), to β itself when every sign holds (Some(true)),
/// else to where the first coordinate reaches 0, which is set to 0 (Some(false)). s = Gα
/// follows. A singular G_SS + λ₂I (dependent atoms and no ridge) or an empty support leaves α
/// as it is (None).
fn feature_sign_step(
    gram: &[f64],
    c: &[f64],
    l2: f64,
    l1: f64,
    active: &[usize],
    alpha: &mut [f64],
    s: &mut [f64],
) -> Option<bool> {
    let (k, n) = (c.len(), active.len());
    if n == 0 || active.iter().any(|&j| alpha[j] == 0.0) {
        return None;
    }
    let h = nalgebra::DMatrix::from_fn(n, n, |a, b| gram[active[a] * k + active[b]] + if a == b { l2 } else { 0.0 });
    let rhs = nalgebra::DVector::from_fn(n, |a, _| c[active[a]] - l1 * alpha[active[a]].signum());
    let beta = nalgebra::linalg::Cholesky::new(h)?.solve(&rhs);
    if beta.iter().any(|v| !v.is_finite()) {
        return None;
    }
    // The largest t ≤ 1 keeping every sign of α_S + t(β − α_S).
    let mut t = 1.0_f64;
    let mut crossing = None;
    for (a, &j) in active.iter().enumerate() {
        if beta[a] * alpha[j].signum() <= 0.0 {
            let tj = alpha[j] / (alpha[j] - beta[a]);
            if tj < t {
                t = tj;
                crossing = Some(j);
            }
        }
    }
    for (a, &j) in active.iter().enumerate() {
        let next = if Some(j) == crossing { 0.0 } else { alpha[j] + t * (beta[a] - alpha[j]) };
        let delta = next - alpha[j];
        if delta != 0.0 {
            alpha[j] = next;
            for (sl, g) in s.iter_mut().zip(&gram[j * k..(j + 1) * k]) {
                *sl += delta * g;
            }
        }
    }
    Some(crossing.is_none())
}

/// The dictionary and SMM's averaged surrogate: the atoms (K rows of m), A and B. Under the
/// variational majorizer A is the weighted mean of ααᵀ (K × K) and B of αxᵀ (K rows of m); under
/// eq. 5's, A's diagonal holds each atom's averaged curvature and B the averaged points.
#[derive(Clone, Debug, PartialEq)]
pub struct Dictionary {
    pub atoms: usize,
    pub dim: usize,
    /// K × m, row k the atom d_k.
    pub d: Vec<f64>,
    /// K × K.
    pub a: Vec<f64>,
    /// K × m, as `d`.
    pub b: Vec<f64>,
}

/// Signals as sparse rows (CSR), the way the data is held.
#[derive(Clone, Copy)]
pub struct Signals<'a> {
    pub indptr: &'a [usize],
    pub indices: Indices<'a>,
    pub values: &'a [f64],
}

impl<'a> Signals<'a> {
    /// Row i's indices and values.
    pub fn row(&self, i: usize) -> (Indices<'a>, &'a [f64]) {
        let (a, b) = (self.indptr[i], self.indptr[i + 1]);
        (self.indices.range(a..b), &self.values[a..b])
    }
}

/// What a batch's step saw: Σ ℓ(x, D) over its signals at the dictionary it started from, and
/// the non-zero codes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepReport {
    pub cost: f64,
    pub nonzeros: usize,
}

/// D as the coder reads it: G = DᵀD (K × K) and D by feature (m rows of K), so that Dᵀx of a
/// sparse x adds one contiguous row of K per non-zero.
pub struct Coder {
    pub atoms: usize,
    pub dim: usize,
    pub gram: Vec<f64>,
    by_feature: Vec<f64>,
}

impl Coder {
    /// c = Dᵀx for a sparse signal (features past m are ignored).
    pub fn correlations(&self, idx: Indices, val: &[f64]) -> Vec<f64> {
        let k = self.atoms;
        let mut c = vec![0.0; k];
        for (j, &v) in idx.iter().zip(val) {
            let j = j as usize;
            if j < self.dim {
                for (cl, dl) in c.iter_mut().zip(&self.by_feature[j * k..(j + 1) * k]) {
                    *cl += v * dl;
                }
            }
        }
        c
    }

    /// The code of one signal and its cost ℓ(x, D), to a KKT violation of `rel_tol` (see
    /// [`sparse_code`]).
    pub fn code(&self, idx: Indices, val: &[f64], (l1, l2): (f64, f64), rel_tol: f64) -> (Vec<f64>, f64) {
        let c = self.correlations(idx, val);
        let mut alpha = vec![0.0; self.atoms];
        sparse_code(&self.gram, &c, (l1, l2), rel_tol, &mut alpha);
        let k = self.atoms;
        // ½‖x − Dα‖² = ½‖x‖² − αᵀc + ½αᵀGα.
        let support: Vec<usize> = (0..k).filter(|&a| alpha[a] != 0.0).collect();
        let mut quad = 0.0;
        for &a in &support {
            let row = &self.gram[a * k..(a + 1) * k];
            quad += alpha[a] * support.iter().map(|&b| row[b] * alpha[b]).sum::<f64>();
        }
        let xx: f64 = idx.iter().zip(val).filter(|(j, _)| (*j as usize) < self.dim).map(|(_, v)| v * v).sum();
        let ac: f64 = support.iter().map(|&a| alpha[a] * c[a]).sum();
        let pen: f64 = support.iter().map(|&a| l1 * alpha[a].abs() + 0.5 * l2 * alpha[a] * alpha[a]).sum();
        let cost = 0.5 * xx - ac + 0.5 * quad + pen;
        (alpha, cost.max(0.0))
    }

    /// The codes and costs of `rows`, in their order, on up to `threads` threads (each code is
    /// computed alone, so the result does not depend on the threads).
    pub fn codes(
        &self,
        x: Signals,
        rows: &[usize],
        lambdas: (f64, f64),
        rel_tol: f64,
        threads: usize,
    ) -> Vec<(Vec<f64>, f64)> {
        let one = |&i: &usize| {
            let (idx, val) = x.row(i);
            self.code(idx, val, lambdas, rel_tol)
        };
        let threads = threads.clamp(1, rows.len().max(1));
        if threads == 1 {
            return rows.iter().map(one).collect();
        }
        let per = rows.len().div_ceil(threads);
        std::thread::scope(|s| {
            let workers: Vec<_> =
                rows.chunks(per).map(|chunk| s.spawn(move || chunk.iter().map(one).collect::<Vec<_>>())).collect();
            workers.into_iter().flat_map(|w| w.join().expect("a coder thread does not panic")).collect()
        })
    }
}

impl Dictionary {
    /// A dictionary of K atoms of m (row k of `d` the atom k) with an empty surrogate.
    pub fn new(atoms: usize, dim: usize, d: Vec<f64>) -> Dictionary {
        Dictionary { atoms, dim, d, a: vec![0.0; atoms * atoms], b: vec![0.0; atoms * dim] }
    }

    /// Atoms from `rows` signals, each normalised (a zero signal gives a zero atom).
    pub fn from_signals(x: Signals, rows: &[usize], dim: usize) -> Dictionary {
        let atoms = rows.len();
        let mut d = vec![0.0; atoms * dim];
        for (k, &i) in rows.iter().enumerate() {
            let (idx, val) = x.row(i);
            let norm = val.iter().map(|v| v * v).sum::<f64>().sqrt();
            for (j, &v) in idx.iter().zip(val) {
                if (j as usize) < dim && norm > 0.0 {
                    d[k * dim + j as usize] = v / norm;
                }
            }
        }
        Dictionary::new(atoms, dim, d)
    }

    /// G = DᵀD, K × K (a matrix product through nalgebra's blocked kernel).
    pub fn gram(&self) -> Vec<f64> {
        let (k, m) = (self.atoms, self.dim);
        let rows = nalgebra::DMatrix::from_column_slice(m, k, &self.d);
        let g = rows.transpose() * &rows;
        g.as_slice().to_vec()
    }

    /// What the coder needs of the current D.
    pub fn coder(&self) -> Coder {
        let (k, m) = (self.atoms, self.dim);
        let mut by_feature = vec![0.0; m * k];
        for c in 0..k {
            for j in 0..m {
                by_feature[j * k + c] = self.d[c * m + j];
            }
        }
        Coder { atoms: k, dim: m, gram: self.gram(), by_feature }
    }

    /// SMM's step on the signals `rows` with weight w (w = 1 the first step): codes at the
    /// current dictionary, then the batch's majorizer averaged into A and B, then the atoms.
    ///
    /// - [`Majorizer::Variational`]: the batch's own cost at its codes, a quadratic in D,
    ///   ½ tr(DᵀD M) − tr(DᵀP) with M = mean ααᵀ and P = mean αxᵀ, is tight at the current D and
    ///   above the cost everywhere (the codes are feasible, not optimal, for another D). A and
    ///   B average M and P; one sweep of block coordinate descent then minimises the average
    ///   plus ϕ atom by atom: d_k ← prox_{ϕ/A_kk}(d_k − (Σ_l A_kl d_l − B_k)/A_kk), each atom
    ///   seeing the ones already moved. An atom no code has used (A_kk = 0) stays.
    /// - [`Majorizer::Linearized`]: eq. 5's proximal-gradient surrogate with a curvature per
    ///   atom, L_k = Σ_l |M_kl| ≥ the batch's curvature along atom k (diagonal dominance):
    ///   A_kk ← (1 − w)A_kk + w·L_k, B_k ← (1 − w)B_k + w·(L_k·d_k − ∇_k), d_k ← prox(B_k/A_kk).
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        x: Signals,
        rows: &[usize],
        lambdas: (f64, f64),
        weight: f64,
        majorizer: Majorizer,
        threads: usize,
        prox: &mut dyn FnMut(usize, &mut [f64], f64),
    ) -> StepReport {
        let (k, m) = (self.atoms, self.dim);
        let n = rows.len().max(1) as f64;
        let coder = self.coder();
        let codes = coder.codes(x, rows, lambdas, TRAIN_CODE_TOL, threads);
        // M = mean ααᵀ (K × K) and P = mean αxᵀ (K × m), from each code's non-zeros.
        let mut big_m = vec![0.0; k * k];
        let mut p = vec![0.0; k * m];
        let mut report = StepReport::default();
        for (&i, (alpha, cost)) in rows.iter().zip(&codes) {
            let (idx, val) = x.row(i);
            report.cost += cost;
            let support: Vec<usize> = (0..k).filter(|&a| alpha[a] != 0.0).collect();
            report.nonzeros += support.len();
            for &a in &support {
                let s = alpha[a] / n;
                for &b in &support {
                    big_m[a * k + b] += s * alpha[b];
                }
                for (j, &v) in idx.iter().zip(val).filter(|(j, _)| (*j as usize) < m) {
                    p[a * m + j as usize] += s * v;
                }
            }
        }
        match majorizer {
            Majorizer::Variational => {
                for (a, mv) in self.a.iter_mut().zip(&big_m) {
                    *a = (1.0 - weight) * *a + weight * mv;
                }
                for (b, pv) in self.b.iter_mut().zip(&p) {
                    *b = (1.0 - weight) * *b + weight * pv;
                }
                let mut u = vec![0.0; m];
                for a in 0..k {
                    let akk = self.a[a * k + a];
                    if !(akk > 0.0 && akk.is_finite()) {
                        continue;
                    }
                    // u = d_a − (Σ_l A_al d_l − B_a)/A_aa.
                    u.copy_from_slice(&self.b[a * m..(a + 1) * m]);
                    for l in 0..k {
                        let al = self.a[a * k + l];
                        if al != 0.0 && l != a {
                            for (uj, dj) in u.iter_mut().zip(&self.d[l * m..(l + 1) * m]) {
                                *uj -= al * dj;
                            }
                        }
                    }
                    let atom = &mut self.d[a * m..(a + 1) * m];
                    for (dj, uj) in atom.iter_mut().zip(&u) {
                        *dj = uj / akk;
                    }
                    prox(a, atom, 1.0 / akk);
                }
            }
            Majorizer::Linearized => {
                let curvature: Vec<f64> =
                    (0..k).map(|a| big_m[a * k..(a + 1) * k].iter().map(|v| v.abs()).sum()).collect();
                // ∇_k = Σ_l M_kl d_l − P_k; the surrogate's point L_k·d_k − ∇_k.
                let mut target = vec![0.0; k * m];
                for a in 0..k {
                    let t = &mut target[a * m..(a + 1) * m];
                    for (tj, (dj, pj)) in
                        t.iter_mut().zip(self.d[a * m..(a + 1) * m].iter().zip(&p[a * m..(a + 1) * m]))
                    {
                        *tj = curvature[a] * dj + pj;
                    }
                    for b in (0..k).filter(|&b| big_m[a * k + b] != 0.0) {
                        let mab = big_m[a * k + b];
                        for (tj, db) in t.iter_mut().zip(&self.d[b * m..(b + 1) * m]) {
                            *tj -= mab * db;
                        }
                    }
                }
                for (a, lk) in curvature.iter().enumerate() {
                    let akk = &mut self.a[a * k + a];
                    *akk = (1.0 - weight) * *akk + weight * lk;
                }
                for (b, t) in self.b.iter_mut().zip(&target) {
                    *b = (1.0 - weight) * *b + weight * t;
                }
                for a in 0..k {
                    let akk = self.a[a * k + a];
                    if !(akk > 0.0 && akk.is_finite()) {
                        continue;
                    }
                    let atom = &mut self.d[a * m..(a + 1) * m];
                    for (dj, bj) in atom.iter_mut().zip(&self.b[a * m..(a + 1) * m]) {
                        *dj = bj / akk;
                    }
                    prox(a, atom, 1.0 / akk);
                }
            }
        }
        report
    }
}

/// The Picard prox of a group term on an atom: its stopping rule and cap (the composite
/// plans' own).
const PICARD_TOL: f64 = 1e-10;
const PICARD_CAP: u32 = 10_000;

/// atom ← prox_{t·ϕ}(atom), ϕ = l1·‖·‖₁ + (l2/2)‖·‖² + γ·ω(B·), then the projection on the ball
/// (`dual`, the atom's Picard dual of length p, warm-starts the group term's prox):
/// prox_{t(R + (l2/2)‖·‖²)}(v) = prox_{tR/(1+t·l2)}(v/(1 + t·l2)), and the ball's projection
/// after the prox of a positively homogeneous R (Yu 2013). The analysis allows l1 or one group
/// term, not both (their proxes do not compose).
pub fn prox_atom(
    atom: &mut [f64],
    t: f64,
    penalty: &AtomPenalty,
    op: Option<&crate::runtime::picard::Operator>,
    dual: &mut [f64],
) {
    let shrink = 1.0 + t * penalty.l2;
    let t = t / shrink;
    atom.iter_mut().for_each(|v| *v /= shrink);
    if penalty.l1 > 0.0 {
        let tau = t * penalty.l1;
        atom.iter_mut().for_each(|v| *v = v.signum() * (v.abs() - tau).max(0.0));
    }
    if let (Some((omega, gamma)), Some(op)) = (penalty.group, op) {
        if dual.len() == op.rows {
            crate::runtime::picard::prox(op, omega, atom, dual, t * gamma, PICARD_TOL, PICARD_CAP);
        }
    }
    if let Some(r) = penalty.ball {
        project_ball(atom, r);
    }
}

/// The mutable state one epoch of [`epoch`] moves: D and B as the plan holds them (mat[m, k],
/// column c the atom c), A (a mat[k, k]) and the steps n.
pub struct EpochState<'a> {
    pub atoms: &'a mut [f64],
    pub surrogate: &'a mut [f64],
    pub curvature: &'a mut [f64],
    pub steps: &'a mut f64,
}

/// D (or B) as the plan holds it, m rows of K, as K rows of m; and back.
fn by_atom(from: &[f64], (dim, k): (usize, usize)) -> Vec<f64> {
    let mut out = vec![0.0; dim * k];
    for j in 0..dim {
        for c in 0..k {
            out[c * dim + j] = from[j * k + c];
        }
    }
    out
}

fn by_feature(from: &[f64], to: &mut [f64], (dim, k): (usize, usize)) {
    for j in 0..dim {
        for c in 0..k {
            to[j * k + c] = from[c * dim + j];
        }
    }
}

/// One epoch of SMM on the dictionary over `order`, in batches of `call.batch`, the codes of a
/// batch on `threads` threads; both back ends call it, so they agree to the bit. At n = 0 the
/// atoms start from the first k non-zero signals of the order, normalised.
pub fn epoch(
    state: EpochState,
    x: Signals,
    order: &[u32],
    (dim, k): (usize, usize),
    call: &EpochSettings,
    op: Option<&crate::runtime::picard::Operator>,
    threads: usize,
) {
    if dim == 0
        || k == 0
        || state.atoms.len() < dim * k
        || state.surrogate.len() < dim * k
        || state.curvature.len() < k * k
    {
        return;
    }
    let mut dict = Dictionary {
        atoms: k,
        dim,
        d: by_atom(state.atoms, (dim, k)),
        a: state.curvature[..k * k].to_vec(),
        b: by_atom(state.surrogate, (dim, k)),
    };
    let rows: Vec<usize> = order.iter().map(|&i| i as usize).filter(|&i| i + 1 < x.indptr.len()).collect();
    if *state.steps == 0.0 {
        let nonzero: Vec<usize> =
            rows.iter().copied().filter(|&i| x.row(i).1.iter().any(|v| *v != 0.0)).take(k).collect();
        let start = Dictionary::from_signals(x, &nonzero, dim);
        dict.d[..start.d.len()].copy_from_slice(&start.d);
    }
    let mut n = *state.steps;
    // Each atom's Picard dual, warm from batch to batch: an atom moves little between them.
    let p = if call.penalty.group.is_some() { op.map_or(0, |op| op.rows) } else { 0 };
    let mut duals = vec![0.0; k * p];
    for batch in rows.chunks(call.batch.max(1)) {
        n += 1.0;
        let w = weight(n as usize, call.n0, call.majorizer);
        dict.step(x, batch, (call.lambda1, call.lambda2), w, call.majorizer, threads, &mut |a, atom, t| {
            prox_atom(atom, t, &call.penalty, op, &mut duals[a * p..(a + 1) * p])
        });
    }
    by_feature(&dict.d, state.atoms, (dim, k));
    by_feature(&dict.b, state.surrogate, (dim, k));
    state.curvature[..k * k].copy_from_slice(&dict.a);
    *state.steps = n;
}

/// The mean cost (1/|rows|)·Σ ℓ(xᵢ, D) of `rows` (every row for None), D a mat[m, k] as the
/// plan holds it, the codes on `threads` threads; and ϕ(D) summed over the atoms.
pub fn cost(
    atoms: &[f64],
    x: Signals,
    rows: Option<&[u32]>,
    (dim, k): (usize, usize),
    cost: &DictionaryCost,
    op: Option<&crate::runtime::picard::Operator>,
    threads: usize,
) -> (f64, f64) {
    let dim = dim.min(atoms.len() / k.max(1));
    let dict = Dictionary::new(k, dim, by_atom(atoms, (dim, k)));
    let coder = dict.coder();
    let rows: Vec<usize> = match rows {
        Some(r) => r.iter().map(|&i| i as usize).collect(),
        None => (0..x.indptr.len().saturating_sub(1)).collect(),
    };
    let total: f64 =
        coder.codes(x, &rows, (cost.lambda1, cost.lambda2), CODE_TOL, threads).iter().map(|(_, c)| c).sum();
    let mean = if rows.is_empty() { 0.0 } else { total / rows.len() as f64 };
    let p = &cost.penalty;
    let penalty: f64 = (0..k)
        .map(|c| {
            let atom = &dict.d[c * dim..(c + 1) * dim];
            let l1: f64 = atom.iter().map(|v| v.abs()).sum();
            let l2: f64 = atom.iter().map(|v| v * v).sum();
            let group = match (p.group, op) {
                (Some((omega, gamma)), Some(op)) => gamma * op.omega_value(omega, atom),
                _ => 0.0,
            };
            p.l1 * l1 + 0.5 * p.l2 * l2 + group
        })
        .sum();
    (mean, penalty)
}

/// SMM's weight of the n-th step (n from 1; w₁ = 1). Under eq. 5's surrogate the weights of
/// docs/algorithms.md §7, √((n₀ + 1)/(n + n₀)). Under the variational majorizer
/// (n₀ + 1)/(n + n₀): the quadratics are the batches' own costs, and with ρ = 1 the average
/// forgets the first, poor codes at the rate online dictionary learning does (Mairal et al.
/// 2010), while n₀ keeps the early batches from weighing as one each.
pub fn weight(n: usize, n0: f64, majorizer: Majorizer) -> f64 {
    let w = (n0 + 1.0) / (n as f64 + n0);
    match majorizer {
        Majorizer::Variational => w.min(1.0),
        Majorizer::Linearized => w.sqrt().min(1.0),
    }
}

/// Projection of an atom onto the ℓ2 ball of radius r (`columns(D) ∈ L2Ball(r)`).
pub fn project_ball(atom: &mut [f64], r: f64) {
    let norm = atom.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm > r {
        let s = r / norm;
        atom.iter_mut().for_each(|v| *v *= s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn dense_gram(d: &[Vec<f64>]) -> Vec<f64> {
        let k = d.len();
        let mut g = vec![0.0; k * k];
        for a in 0..k {
            for b in 0..k {
                g[a * k + b] = d[a].iter().zip(&d[b]).map(|(x, y)| x * y).sum();
            }
        }
        g
    }

    /// The code satisfies the elastic net's optimality condition (to the coder's 1e-9·(1 + ‖c‖∞)): cⱼ − (Gα)ⱼ − λ₂αⱼ is λ₁·sign(αⱼ)
    /// on the support and at most λ₁ in size off it.
    #[test]
    fn codes_satisfy_the_elastic_nets_optimality_condition() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (k, m) = (12, 20);
        let d: Vec<Vec<f64>> = (0..k).map(|_| (0..m).map(|_| rng.gen_range(-1.0..1.0)).collect()).collect();
        let g = dense_gram(&d);
        for (l1, l2) in [(0.1, 0.01), (0.5, 0.0), (0.01, 1.0)] {
            let x: Vec<f64> = (0..m).map(|_| rng.gen_range(-2.0..2.0)).collect();
            let c: Vec<f64> = d.iter().map(|a| a.iter().zip(&x).map(|(p, q)| p * q).sum()).collect();
            let mut alpha = vec![0.0; k];
            sparse_code(&g, &c, (l1, l2), CODE_TOL, &mut alpha);
            for j in 0..k {
                let r = c[j] - (0..k).map(|b| g[j * k + b] * alpha[b]).sum::<f64>() - l2 * alpha[j];
                if alpha[j] != 0.0 {
                    assert!((r - l1 * alpha[j].signum()).abs() < 1e-8, "λ = ({l1}, {l2}) j {j}: {r}");
                } else {
                    assert!(r.abs() <= l1 + 1e-8, "λ = ({l1}, {l2}) j {j}: {r}");
                }
            }
            assert!(alpha.iter().any(|a| *a != 0.0), "a non-trivial code");
        }
    }

    /// `rows` dense signals of m entries uniform in [−1, 1], as CSR arrays.
    fn uniform_signals(seed: u64, m: usize, rows: usize) -> (Vec<usize>, Vec<u32>, Vec<f64>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut indptr = vec![0];
        let (mut indices, mut values) = (vec![], vec![]);
        for _ in 0..rows {
            for j in 0..m {
                indices.push(j as u32);
                values.push(rng.gen_range(-1.0..1.0));
            }
            indptr.push(indices.len());
        }
        (indptr, indices, values)
    }

    /// Under either majorizer every atom stays in the ball, and 20 steps on one batch lower its
    /// cost by at least 10%.
    #[test]
    fn the_step_leaves_atoms_in_the_ball_and_lowers_the_cost_of_its_batch() {
        let (m, rows) = (16, 200);
        let (indptr, indices, values) = uniform_signals(3, m, rows);
        let x = Signals { indptr: &indptr, indices: (&indices).into(), values: &values };
        let all: Vec<usize> = (0..rows).collect();
        for majorizer in [Majorizer::Variational, Majorizer::Linearized] {
            let mut dict = Dictionary::from_signals(x, &[0, 1, 2, 3, 4, 5], m);
            let mut costs = vec![];
            for n in 1..=20 {
                let w = weight(n, 0.0, majorizer);
                let r = dict.step(x, &all, (0.1, 0.01), w, majorizer, 1, &mut |_, atom, _| project_ball(atom, 1.0));
                costs.push(r.cost);
                for a in 0..dict.atoms {
                    let norm = dict.d[a * m..(a + 1) * m].iter().map(|v| v * v).sum::<f64>().sqrt();
                    assert!(norm <= 1.0 + 1e-12);
                }
            }
            assert!(costs[19] < 0.9 * costs[0], "{majorizer:?}: {costs:?}");
        }
    }

    /// The codes of a batch, and so the step, are the same bits on one thread and on three.
    #[test]
    fn threads_do_not_change_the_step() {
        let (m, rows) = (12, 90);
        let (indptr, indices, values) = uniform_signals(5, m, rows);
        let x = Signals { indptr: &indptr, indices: (&indices).into(), values: &values };
        let all: Vec<usize> = (0..rows).collect();
        let run = |threads| {
            let mut dict = Dictionary::from_signals(x, &[0, 1, 2, 3, 4], m);
            for n in 1..=3 {
                let w = weight(n, 6.0, Majorizer::Variational);
                dict.step(x, &all, (0.1, 0.0), w, Majorizer::Variational, threads, &mut |_, a, _| project_ball(a, 1.0));
            }
            dict
        };
        assert_eq!(run(1), run(3));
    }

    /// 32 random unit atoms in ℝ⁶⁴, signals of 3 of them with N(0, 1) weights plus noise: SMM
    /// from 32 of the signals finds at least 90% of the atoms with |cos| ≥ 0.95.
    #[test]
    fn a_planted_dictionary_is_recovered() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (k, m, rows) = (32, 64, 4000);
        let normal = |rng: &mut rand_chacha::ChaCha8Rng| {
            let (u, v): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen_range(0.0..1.0));
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let mut truth = vec![0.0; k * m];
        for a in 0..k {
            let atom = &mut truth[a * m..(a + 1) * m];
            atom.iter_mut().for_each(|v| *v = normal(&mut rng));
            let norm = atom.iter().map(|v| v * v).sum::<f64>().sqrt();
            atom.iter_mut().for_each(|v| *v /= norm);
        }
        let mut indptr = vec![0];
        let (mut indices, mut values) = (vec![], vec![]);
        for _ in 0..rows {
            let mut x: Vec<f64> = (0..m).map(|_| 0.01 * normal(&mut rng)).collect();
            for _ in 0..3 {
                let (a, c) = (rng.gen_range(0..k), normal(&mut rng));
                for j in 0..m {
                    x[j] += c * truth[a * m + j];
                }
            }
            for (j, v) in x.into_iter().enumerate() {
                indices.push(j as u32);
                values.push(v);
            }
            indptr.push(indices.len());
        }
        let x = Signals { indptr: &indptr, indices: (&indices).into(), values: &values };
        let mut order: Vec<usize> = (0..rows).collect();
        let mut dict = Dictionary::from_signals(x, &order[..k], m);
        let mut n = 0;
        for _ in 0..5 {
            for i in (1..rows).rev() {
                order.swap(i, rng.gen_range(0..=i));
            }
            for batch in order.chunks(100) {
                n += 1;
                dict.step(
                    x,
                    batch,
                    (0.1, 0.01),
                    weight(n, 6.0, Majorizer::Variational),
                    Majorizer::Variational,
                    1,
                    &mut |_, atom, _| project_ball(atom, 1.0),
                );
            }
        }
        let found = (0..k)
            .filter(|&a| {
                let t = &truth[a * m..(a + 1) * m];
                (0..k).any(|b| {
                    let d = &dict.d[b * m..(b + 1) * m];
                    let norm = d.iter().map(|v| v * v).sum::<f64>().sqrt();
                    norm > 0.0 && t.iter().zip(d).map(|(p, q)| p * q).sum::<f64>().abs() / norm >= 0.95
                })
            })
            .count();
        assert!(found * 10 >= 9 * k, "found {found} of {k}");
    }
}
