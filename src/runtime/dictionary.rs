//! Dictionary learning (Mairal 2013, §4.3): the sparse code of a signal, and SMM's step on the
//! dictionary from a mini-batch of signals.
//!
//! The cost of a signal x ∈ ℝᵐ under a dictionary D = [d₁ … d_K] is the value of an elastic net,
//!
//!   ℓ(x, D) = min over α of ½‖x − Dα‖² + λ₁‖α‖₁ + (λ₂/2)‖α‖²,
//!
//! whose minimiser α* is unique for λ₂ > 0, so ∇_D ℓ = (Dα* − x)·α*ᵀ (Danskin). SMM averages
//! proximal-gradient surrogates of the batches' costs (his eq. 5). The batch's cost, with its
//! codes held, is a quadratic in D of Hessian Mₙ ⊗ I, Mₙ = mean αα*ᵀ; its surrogate here takes a
//! curvature per atom, L_k = Σ_l |M_kl| (M ⪯ diag(L) by diagonal dominance, so it majorizes),
//! rather than one λ_max(M) for all: an atom few codes use then moves as far as its own
//! curvature allows, as in online dictionary learning's block updates (Mairal et al. 2010).
//! Per atom k,
//!
//!   A_k ← (1 − wₙ)·A_k + wₙ·L_k,   B_k ← (1 − wₙ)·B_k + wₙ·(L_k·d_k − ∇_k),   d_k ← prox_{ϕ/A_k}(B_k/A_k),
//!
//! the exact minimiser of the weighted average of the surrogates, ϕ applied atom by atom. The
//! atoms are stored as the rows of a K × m array: an atom is one contiguous slice, as the prox
//! and the column constraint take it.

/// The coder stops once no coordinate of a sweep moves the correlation it sees by more than
/// this, relative to 1 + ‖Dᵀx‖∞: the largest KKT violation left. For the costs a run reports
/// and `optc predict`'s codes.
pub const CODE_TOL: f64 = 1e-9;
/// The same for the codes of a training step, whose gradient in D needs less: on 20×20 image
/// patches with K = 64 and λ₂ = 0, coding to 1e-12 was 91% of a run.
pub const TRAIN_CODE_TOL: f64 = 1e-4;
/// Sweeps of one code, at most: coordinate descent on a K × K system converges linearly, and
/// a bound keeps a degenerate dictionary (duplicate atoms, λ₂ = 0) from looping.
pub const CODE_SWEEPS: usize = 100_000;

/// argmin over α of ½‖x − Dα‖² + λ₁‖α‖₁ + (λ₂/2)‖α‖², from G = DᵀD (K × K, row-major) and
/// c = Dᵀx, by cyclic coordinate descent with s = Gα kept: each step is O(K). Sweeps over the
/// non-zero coordinates alternate with full sweeps until a full sweep moves nothing (glmnet's
/// active set). `alpha` is the start (a warm start, or 0) and the result; the sweeps made.
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
        let active: Vec<usize> = (0..k).filter(|&j| alpha[j] != 0.0).collect();
        while sweeps < CODE_SWEEPS {
            let worst = active.iter().map(|&j| step(j, alpha, &mut s)).fold(0.0, f64::max);
            sweeps += 1;
            if worst <= tol {
                break;
            }
        }
    }
    sweeps
}

/// The dictionary and SMM's averaged surrogate: the atoms (K rows of m), A (one curvature per
/// atom) and B.
#[derive(Clone, Debug, PartialEq)]
pub struct Dictionary {
    pub atoms: usize,
    pub dim: usize,
    /// K × m, row k the atom d_k.
    pub d: Vec<f64>,
    pub a: Vec<f64>,
    /// K × m, as `d`.
    pub b: Vec<f64>,
}

/// Signals as sparse rows (CSR), the way the data is held.
#[derive(Clone, Copy)]
pub struct Signals<'a> {
    pub indptr: &'a [usize],
    pub indices: &'a [u32],
    pub values: &'a [f64],
}

impl Signals<'_> {
    /// Row i's indices and values.
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let (a, b) = (self.indptr[i], self.indptr[i + 1]);
        (&self.indices[a..b], &self.values[a..b])
    }
}

/// What a batch's step saw: Σ ℓ(x, D) over its signals at the dictionary it started from, and
/// the non-zero codes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepReport {
    pub cost: f64,
    pub nonzeros: usize,
}

impl Dictionary {
    /// Atoms from `rows` signals, each normalised (a zero signal gives a zero atom).
    pub fn from_signals(x: Signals, rows: &[usize], dim: usize) -> Dictionary {
        let atoms = rows.len();
        let mut d = vec![0.0; atoms * dim];
        for (k, &i) in rows.iter().enumerate() {
            let (idx, val) = x.row(i);
            let norm = val.iter().map(|v| v * v).sum::<f64>().sqrt();
            for (&j, &v) in idx.iter().zip(val) {
                if (j as usize) < dim && norm > 0.0 {
                    d[k * dim + j as usize] = v / norm;
                }
            }
        }
        Dictionary { atoms, dim, d, a: vec![0.0; atoms], b: vec![0.0; atoms * dim] }
    }

    /// G = DᵀD, K × K.
    pub fn gram(&self) -> Vec<f64> {
        let (k, m) = (self.atoms, self.dim);
        let mut g = vec![0.0; k * k];
        for a in 0..k {
            for b in 0..=a {
                let v: f64 =
                    self.d[a * m..(a + 1) * m].iter().zip(&self.d[b * m..(b + 1) * m]).map(|(x, y)| x * y).sum();
                g[a * k + b] = v;
                g[b * k + a] = v;
            }
        }
        g
    }

    /// c = Dᵀx for a sparse signal.
    pub fn correlations(&self, idx: &[u32], val: &[f64]) -> Vec<f64> {
        let m = self.dim;
        (0..self.atoms)
            .map(|k| {
                let atom = &self.d[k * m..(k + 1) * m];
                idx.iter().zip(val).filter(|(j, _)| (**j as usize) < m).map(|(&j, &v)| v * atom[j as usize]).sum()
            })
            .collect()
    }

    /// The code of one signal and its cost ℓ(x, D), given G, to [`CODE_TOL`].
    pub fn code(&self, gram: &[f64], idx: &[u32], val: &[f64], l1: f64, l2: f64) -> (Vec<f64>, f64) {
        self.code_to(gram, idx, val, (l1, l2), CODE_TOL)
    }

    /// [`Dictionary::code`] to a KKT violation of `rel_tol` (see [`sparse_code`]).
    pub fn code_to(
        &self,
        gram: &[f64],
        idx: &[u32],
        val: &[f64],
        (l1, l2): (f64, f64),
        rel_tol: f64,
    ) -> (Vec<f64>, f64) {
        let c = self.correlations(idx, val);
        let mut alpha = vec![0.0; self.atoms];
        sparse_code(gram, &c, (l1, l2), rel_tol, &mut alpha);
        let k = self.atoms;
        // ½‖x − Dα‖² = ½‖x‖² − αᵀc + ½αᵀGα.
        let mut quad = 0.0;
        for a in (0..k).filter(|&a| alpha[a] != 0.0) {
            let row = &gram[a * k..(a + 1) * k];
            quad += alpha[a] * (0..k).filter(|&b| alpha[b] != 0.0).map(|b| row[b] * alpha[b]).sum::<f64>();
        }
        let xx: f64 = val.iter().map(|v| v * v).sum();
        let ac: f64 = alpha.iter().zip(&c).map(|(a, c)| a * c).sum();
        let pen: f64 = alpha.iter().map(|a| l1 * a.abs() + 0.5 * l2 * a * a).sum();
        let cost = 0.5 * xx - ac + 0.5 * quad + pen;
        (alpha, cost.max(0.0))
    }

    /// SMM's step on the signals `rows` with weight w (w = 1 the first step): codes at the
    /// current dictionary, the batch's gradient and curvatures, the averaged surrogate, then
    /// each atom ← `prox`(B_k/A_k, 1/A_k), the prox of ϕ/A_k on one atom. An atom no code has
    /// used yet (A_k = 0) stays where it is.
    pub fn step(
        &mut self,
        x: Signals,
        rows: &[usize],
        l1: f64,
        l2: f64,
        weight: f64,
        prox: &mut dyn FnMut(&mut [f64], f64),
    ) -> StepReport {
        let (k, m) = (self.atoms, self.dim);
        let n = rows.len().max(1) as f64;
        let gram = self.gram();
        // M = mean ααᵀ (K × K) and P = mean αxᵀ (K × m), from each code's non-zeros.
        let mut big_m = vec![0.0; k * k];
        let mut p = vec![0.0; k * m];
        let mut report = StepReport::default();
        for &i in rows {
            let (idx, val) = x.row(i);
            let (alpha, cost) = self.code_to(&gram, idx, val, (l1, l2), TRAIN_CODE_TOL);
            report.cost += cost;
            let support: Vec<usize> = (0..k).filter(|&a| alpha[a] != 0.0).collect();
            report.nonzeros += support.len();
            for &a in &support {
                for &b in &support {
                    big_m[a * k + b] += alpha[a] * alpha[b] / n;
                }
                for (&j, &v) in idx.iter().zip(val).filter(|(j, _)| (**j as usize) < m) {
                    p[a * m + j as usize] += alpha[a] * v / n;
                }
            }
        }
        // L_k = Σ_l |M_kl| ≥ the curvature along atom k of any move (diagonal dominance).
        let curvature: Vec<f64> = (0..k).map(|a| big_m[a * k..(a + 1) * k].iter().map(|v| v.abs()).sum()).collect();
        // ∇_k = Σ_l M_kl d_l − P_k; the surrogate's point L_k·d_k − ∇_k.
        let mut target = vec![0.0; k * m];
        for a in 0..k {
            let t = &mut target[a * m..(a + 1) * m];
            for (tj, (dj, pj)) in t.iter_mut().zip(self.d[a * m..(a + 1) * m].iter().zip(&p[a * m..(a + 1) * m])) {
                *tj = curvature[a] * dj + pj;
            }
            for b in (0..k).filter(|&b| big_m[a * k + b] != 0.0) {
                let mab = big_m[a * k + b];
                for (tj, db) in t.iter_mut().zip(&self.d[b * m..(b + 1) * m]) {
                    *tj -= mab * db;
                }
            }
        }
        for (ak, lk) in self.a.iter_mut().zip(&curvature) {
            *ak = (1.0 - weight) * *ak + weight * lk;
        }
        for (b, t) in self.b.iter_mut().zip(&target) {
            *b = (1.0 - weight) * *b + weight * t;
        }
        for a in 0..k {
            let ak = self.a[a];
            if !(ak > 0.0 && ak.is_finite()) {
                continue;
            }
            let atom = &mut self.d[a * m..(a + 1) * m];
            for (dj, bj) in atom.iter_mut().zip(&self.b[a * m..(a + 1) * m]) {
                *dj = bj / ak;
            }
            prox(atom, 1.0 / ak);
        }
        report
    }
}

/// The Picard prox of a group term on an atom: its stopping rule and cap (the composite
/// plans' own).
const PICARD_TOL: f64 = 1e-10;
const PICARD_CAP: u32 = 10_000;

/// atom ← prox_{t·ϕ}(atom), ϕ = l1·‖·‖₁ + (l2/2)‖·‖² + γ·ω(B·), then the projection on the ball:
/// prox_{t(R + (l2/2)‖·‖²)}(v) = prox_{tR/(1+t·l2)}(v/(1 + t·l2)), and the ball's projection
/// after the prox of a positively homogeneous R (Yu 2013). The analysis allows l1 or one group
/// term, not both (their proxes do not compose).
pub fn prox_atom(
    atom: &mut [f64],
    t: f64,
    penalty: &crate::plan::AtomPenalty,
    op: Option<&crate::runtime::picard::Operator>,
) {
    let shrink = 1.0 + t * penalty.l2;
    let t = t / shrink;
    atom.iter_mut().for_each(|v| *v /= shrink);
    if penalty.l1 > 0.0 {
        let tau = t * penalty.l1;
        atom.iter_mut().for_each(|v| *v = v.signum() * (v.abs() - tau).max(0.0));
    }
    if let (Some((omega, gamma)), Some(op)) = (penalty.group, op) {
        let mut dual = vec![0.0; op.rows];
        crate::runtime::picard::prox(op, omega, atom, &mut dual, t * gamma, PICARD_TOL, PICARD_CAP);
    }
    if let Some(r) = penalty.ball {
        project_ball(atom, r);
    }
}

/// The mutable state one epoch of [`epoch`] moves: D and B as the plan holds them (mat[m, k],
/// column c the atom c), A (a vec[k]) and the steps n.
pub struct EpochState<'a> {
    pub atoms: &'a mut [f64],
    pub surrogate: &'a mut [f64],
    pub curvature: &'a mut [f64],
    pub steps: &'a mut f64,
}

/// One epoch of SMM on the dictionary over `order`, in batches of `call.batch`; both back ends
/// call it, so they agree to the bit. At n = 0 the atoms start from the first k non-zero
/// signals of the order, normalised.
pub fn epoch(
    state: EpochState,
    x: Signals,
    order: &[u32],
    (dim, k): (usize, usize),
    call: &crate::plan::DictionaryCall,
    op: Option<&crate::runtime::picard::Operator>,
) {
    if dim == 0 || k == 0 || state.atoms.len() < dim * k || state.surrogate.len() < dim * k || state.curvature.len() < k
    {
        return;
    }
    let transpose = |from: &[f64]| -> Vec<f64> {
        let mut out = vec![0.0; dim * k];
        for j in 0..dim {
            for c in 0..k {
                out[c * dim + j] = from[j * k + c];
            }
        }
        out
    };
    let mut dict = Dictionary {
        atoms: k,
        dim,
        d: transpose(state.atoms),
        a: state.curvature[..k].to_vec(),
        b: transpose(state.surrogate),
    };
    let rows: Vec<usize> = order.iter().map(|&i| i as usize).filter(|&i| i + 1 < x.indptr.len()).collect();
    if *state.steps == 0.0 {
        let nonzero: Vec<usize> =
            rows.iter().copied().filter(|&i| x.row(i).1.iter().any(|v| *v != 0.0)).take(k).collect();
        let start = Dictionary::from_signals(x, &nonzero, dim);
        dict.d[..start.d.len()].copy_from_slice(&start.d);
    }
    let mut n = *state.steps;
    for batch in rows.chunks(call.batch.max(1)) {
        n += 1.0;
        let w = weight(n as usize, call.n0);
        dict.step(x, batch, call.lambda1, call.lambda2, w, &mut |atom, t| prox_atom(atom, t, &call.penalty, op));
    }
    for j in 0..dim {
        for c in 0..k {
            state.atoms[j * k + c] = dict.d[c * dim + j];
            state.surrogate[j * k + c] = dict.b[c * dim + j];
        }
    }
    state.curvature[..k].copy_from_slice(&dict.a);
    *state.steps = n;
}

/// The mean cost (1/|rows|)·Σ ℓ(xᵢ, D) of `rows` (every row for None), D a mat[m, k] as the
/// plan holds it; and ϕ(D) summed over the atoms.
pub fn cost(
    atoms: &[f64],
    x: Signals,
    rows: Option<&[u32]>,
    (dim, k): (usize, usize),
    cost: &crate::plan::DictionaryCost,
    op: Option<&crate::runtime::picard::Operator>,
) -> (f64, f64) {
    let mut dict = Dictionary { atoms: k, dim, d: vec![0.0; dim * k], a: vec![], b: vec![] };
    for j in 0..dim.min(atoms.len() / k.max(1)) {
        for c in 0..k {
            dict.d[c * dim + j] = atoms[j * k + c];
        }
    }
    let gram = dict.gram();
    let all: Vec<u32>;
    let rows = match rows {
        Some(r) => r,
        None => {
            all = (0..x.indptr.len().saturating_sub(1) as u32).collect();
            &all
        }
    };
    let total: f64 = rows
        .iter()
        .map(|&i| {
            let (idx, val) = x.row(i as usize);
            dict.code(&gram, idx, val, cost.lambda1, cost.lambda2).1
        })
        .sum();
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

/// wₙ = √((n₀ + 1)/(n + n₀)) for the n-th step (n from 1): SMM's weights (ALGORITHMS.md §7).
pub fn weight(n: usize, n0: f64) -> f64 {
    ((n0 + 1.0) / (n as f64 + n0)).sqrt().min(1.0)
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

    #[test]
    fn the_step_leaves_atoms_in_the_ball_and_lowers_the_cost_of_its_batch() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let (m, rows) = (16, 200);
        let mut indptr = vec![0];
        let (mut indices, mut values) = (vec![], vec![]);
        for _ in 0..rows {
            for j in 0..m {
                indices.push(j as u32);
                values.push(rng.gen_range(-1.0..1.0));
            }
            indptr.push(indices.len());
        }
        let x = Signals { indptr: &indptr, indices: &indices, values: &values };
        let all: Vec<usize> = (0..rows).collect();
        let mut dict = Dictionary::from_signals(x, &[0, 1, 2, 3, 4, 5], m);
        let mut costs = vec![];
        for n in 1..=20 {
            let r = dict.step(x, &all, 0.1, 0.01, weight(n, 0.0), &mut |atom, _| project_ball(atom, 1.0));
            costs.push(r.cost);
            for a in 0..dict.atoms {
                let norm = dict.d[a * m..(a + 1) * m].iter().map(|v| v * v).sum::<f64>().sqrt();
                assert!(norm <= 1.0 + 1e-12);
            }
        }
        assert!(costs[19] < 0.9 * costs[0], "{costs:?}");
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
        let x = Signals { indptr: &indptr, indices: &indices, values: &values };
        let mut order: Vec<usize> = (0..rows).collect();
        let mut dict = Dictionary::from_signals(x, &order[..k], m);
        let mut n = 0;
        for _ in 0..5 {
            for i in (1..rows).rev() {
                order.swap(i, rng.gen_range(0..=i));
            }
            for batch in order.chunks(100) {
                n += 1;
                dict.step(x, batch, 0.1, 0.01, weight(n, 10.0), &mut |atom, _| project_ball(atom, 1.0));
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
