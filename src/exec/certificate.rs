//! The duality-gap certificate of ALGORITHMS.md §10: for any u ∈ ℝᵐ in the domain of ℓ*,
//!
//!   F(w) ≥ F* ≥ D(u) = −(c/m)·Σᵢ ℓ*(yᵢ, uᵢ) − Σⱼ r*(−(c/m)·(Xᵀu)ⱼ),
//!
//! so gap = F(w) − D(u) bounds F(w) − F* from above whatever u is. The dual point is the loss
//! derivative at the current margins, uᵢ = ℓ′(yᵢ, ⟨xᵢ, w⟩), scaled by s ∈ (0, 1] into the domain
//! of r* where that domain is bounded (ℓ1 without ½‖·‖² in an unbounded direction). Scaling
//! keeps u in the domain of ℓ* for the three losses here, whose domains are intervals holding 0.
//!
//! Three more dual points tighten the bound, each valid for the same reason (any u in the
//! domain bounds F* from below): the extrapolation of the last checks' points ([`DualHistory`]),
//! the point at a Newton-refined primal ([`refined_dual`]), and the best D of the earlier checks
//! of the run (D(u) ≤ F* does not expire when w moves on).

mod groups;
mod intercept;

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
pub struct DualHistory {
    points: std::collections::VecDeque<Vec<f64>>,
    /// The largest D of the run so far: a lower bound on F* whatever the later iterates.
    best: f64,
    /// F at the last check.
    objective: Option<f64>,
    /// Refine at every check, not only once F stalls: a column solver continues from the
    /// refined point ([`Assessment::polished`]), so the refinement is a step of the solver too.
    eager: bool,
}

impl Default for DualHistory {
    fn default() -> Self {
        DualHistory { points: Default::default(), best: f64::NEG_INFINITY, objective: None, eager: false }
    }
}

impl DualHistory {
    /// Whether the next checks refine eagerly: a run that polishes its iterate with the
    /// refinement does at the checks that pick its working set.
    pub fn set_eager(&mut self, eager: bool) {
        self.eager = eager;
    }
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
    let xtu = if width == 1 {
        transpose_times(data, features, u)
    } else {
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
        xtu
    };
    let z: Vec<f64> = xtu.iter().map(|g| -c / m as f64 * g).collect();
    // A group term's blocks are the operator's, which `assess` made sure is bound.
    let (s, reg_conj) = match (cert.vector, cert.groups.zip(data.operator)) {
        // Disjoint groups, alone or beside ½‖·‖² (the analysis allows nothing else beside them).
        (None, Some((gamma, op))) => groups::conjugate(cert.l2, gamma, op, &z),
        (None, None) => {
            let s = domain_scale(cert, &z);
            (s, z.iter().map(|zj| reg_conjugate(cert, s * zj)).sum())
        }
        (Some(term), _) if width == 1 => vector_conjugate(cert, term, &z, 1),
        (Some(term), _) if term.whole_matrix() => vector_conjugate(cert, term, &z, width),
        (Some(term), _) => {
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

/// Xᵀu over the first `features` columns: by columns when the plan keeps the CSC copy (a
/// gather from u, which fits in cache, instead of a scatter over d entries), else by rows.
fn transpose_times(data: &DataView, features: usize, u: &[f64]) -> Vec<f64> {
    if let Some(csc) = data.csc.filter(|c| c.count() == features) {
        return super::passes::map(features, data.threads, |j| {
            (csc.ptr[j]..csc.ptr[j + 1]).map(|k| csc.values[k] * u[csc.rows[k] as usize]).sum()
        });
    }
    let mut xtu = vec![0.0; features];
    for (i, &ui) in u.iter().enumerate() {
        for k in data.indptr[i]..data.indptr[i + 1] {
            if let Some(x) = xtu.get_mut(data.indices[k] as usize) {
                *x += data.values[k] * ui;
            }
        }
    }
    xtu
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
    /// The weights the Newton refinement moved w to, when it ran and moved, and ∇f there: F is
    /// no higher at them (its steps descend F), so a column solver may continue from them.
    pub polished: Option<(Vec<f64>, Vec<f64>)>,
}

/// The certified bound on F(w) − F* at flushed weights, given F(w) (None when the plan has no
/// closed-form dual, or a group term that leaves a feature unpenalised; never negative:
/// rounding can make F − D dip below 0 at the optimum), and ∇f(w), which the working-set
/// driver ranks features by.
/// `margins` are ⟨xᵢ, w⟩ for every row, as [`super::evaluate::evaluate_with_margins`] gives them.
/// `target` is the gap the caller stops at: once the cheap dual points reach it, the Newton-refined
/// one is not computed.
pub fn assess(
    plan: &Plan,
    state: &State,
    data: &DataView,
    objective: f64,
    margins: &[f64],
    history: Option<&mut DualHistory>,
    target: f64,
) -> Option<Assessment> {
    let cert = plan.certificate?;
    let w = state.weights(plan);
    if cert.groups.is_some() && !data.operator.is_some_and(|op| groups::applies(cert.l2, op, w.len())) {
        return None;
    }
    let m = data.rows();
    if m == 0 {
        return Some(Assessment { gap: 0.0, gradient: vec![0.0; w.len()], polished: None });
    }
    let obj = &plan.objective;
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
        let parts = super::passes::blocks_with(
            m,
            data.threads,
            || scratch.clone(),
            |scratch, rows| {
                rows.map(|i| {
                    scratch.scalars[obj.margin.0] = margins[i];
                    eval_at(&env, &obj.dloss, scratch, i, 0)
                })
                .collect::<Vec<f64>>()
            },
        );
        parts.concat()
    };
    let u = if cert.intercept { feasible_for_intercept(&cert, data.labels, margins, u) } else { u };
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
    let gradient: Vec<f64> = z.iter().map(|v| -v).collect();
    let mut history = history;
    if let Some(h) = history.as_deref_mut() {
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
                if cert.intercept {
                    intercept::balance(cert.conjugate, data.labels, &mut extrapolated);
                }
            }
            let (d, _) = dual_at(&cert, data, c, features, width, &extrapolated);
            if d.is_finite() {
                dual = dual.max(d);
            }
        }
    }
    let earlier = history.as_ref().map_or(f64::NEG_INFINITY, |h| h.best);
    let gap = objective - dual.max(earlier);
    // Without a history (a one-off gap), always; in a run, once F has stalled against the gap.
    let stalled = history.as_ref().is_none_or(|h| {
        h.eager
            || match h.objective {
                Some(f) => f - objective < REFINE_STALL * gap,
                None => gap <= REFINE_FIRST * objective.abs(),
            }
    });
    let mut polished = None;
    if gap > target && stalled {
        let eager = history.as_ref().is_some_and(|h| h.eager);
        let rounds = if eager { REFINE_ROUNDS_EAGER } else { REFINE_ROUNDS };
        if let Some(refined) =
            refined_dual(&cert, data, c, w, margins, &gradient, Budget { enough: objective - target, rounds })
        {
            dual = dual.max(refined.dual);
            polished = refined.moved;
        }
    }
    if let Some(h) = history {
        h.best = h.best.max(dual);
        h.objective = Some(objective);
    }
    let gap = objective - dual.max(earlier);
    let gap = if gap.is_nan() { f64::INFINITY } else { gap.max(0.0) };
    Some(Assessment { gap, gradient, polished })
}

/// With an intercept, the dual point of the margins `a`: ℓ′ where b is optimal for this w (for
/// the losses with ℓ″; hinge keeps the plan's subgradient `u`), balanced to Σᵢ uᵢ = 0 inside the
/// domain (see [`intercept`]).
fn feasible_for_intercept(cert: &Certificate, labels: &[f64], a: &[f64], u: Vec<f64>) -> Vec<f64> {
    let mut u: Vec<f64> = if matches!(cert.conjugate, LossConjugate::Logistic | LossConjugate::Squared) {
        let mut shifted = a.to_vec();
        intercept::shift_to_optimal_offset(cert.conjugate, labels, &mut shifted);
        shifted
            .iter()
            .zip(labels)
            .map(|(&ai, &y)| into_loss_domain(cert.conjugate, y, loss_derivatives(cert.conjugate, y, ai).0))
            .collect()
    } else {
        u.iter().zip(labels).map(|(&ui, &y)| into_loss_domain(cert.conjugate, y, ui)).collect()
    };
    intercept::balance(cert.conjugate, labels, &mut u);
    u
}

/// In a run, the refinement is tried when F went down by less than this fraction of the gap
/// since the last check: while F still falls fast the primal is what the gap waits for (and
/// the signs of w, which the Newton steps keep, are not yet those of the optimum); once F
/// stalls against the gap, the dual point is.
const REFINE_STALL: f64 = 0.1;
/// At the first check of a run (nothing to compare F with), the refinement is tried when the
/// gap is within this fraction of F already: after a warm start near the optimum, not after a
/// cold one.
const REFINE_FIRST: f64 = 1e-2;
/// Most coordinates a Newton refinement solves for: its Cholesky factorisation costs n³/3.
const REFINE_MAX: usize = 1500;
/// Rounds of a refinement, at most: each picks V again (the non-zero coordinates of its point
/// and the zero ones that violate optimality there) and factorises the Hessian on it.
const REFINE_ROUNDS: usize = 5;
/// Rounds of a refinement at a check whose point the solver continues from: each round adds
/// only a few entering coordinates, and the epochs that follow add the rest more cheaply.
const REFINE_ROUNDS_EAGER: usize = 2;
/// Newton steps per round, at most (each a pass over the rows of X_V and two over the rows).
const REFINE_STEPS: usize = 20;
/// Coordinates a round holds at zero, at most (each costs a solve with the factor; the next
/// round drops the ones that stay optimal at zero from V instead).
const REFINE_HELD: usize = 32;
/// A round has converged when no coordinate of V is further than this fraction of l1 (or of
/// the largest gradient, without l1) from its optimality condition: the scaling s of the dual
/// point then costs at most this fraction of l1‖w‖₁.
const REFINE_RESIDUAL: f64 = 1e-9;

/// The dual point at a primal point refined by Newton steps on F restricted to a small set V of
/// coordinates (the rest of w fixed): the best D over the refinement's rounds, or None. Each
/// dual point is ℓ′ at the refined margins, scaled into the domain as usual, so it is a valid
/// bound whatever the steps did: nothing about them needs to be right for the gap to be true,
/// only for it to be tight. Stops once D reaches `enough`.
///
/// Why: on text data with near-duplicate columns (debian-files: dense columns that differ in
/// 1e-4 of their mass) F is nearly flat along their differences, and coordinate descent crawls
/// along them: for some 70 epochs after F is within 1e-4 of F* the gradient of such a column is
/// still 1–5% above l1, the scaling s = l1/‖∇f‖∞ costs (1 − s)·l1‖w‖₁ ≈ 1e-3·F of the bound,
/// and the run cannot certify what it has already reached. Newton steps solve those directions:
/// the restricted problem (a thousand coordinates) is solved to the precision the certificate
/// needs in a few dozen of them, and the gap drops to the true suboptimality of w.
///
/// A round: V = the non-zero coordinates and the zero ones that violate optimality, the Hessian
/// of f on V factorised once (chord steps), an active set on the signs: each coordinate keeps
/// its sign σⱼ (a zero one: −sign(∇ⱼf)), a step stops where a coordinate reaches zero, which is
/// then held there (a Schur complement on the factor), and a line search on the sign of the
/// directional derivative (exact where differences of F near its minimum are lost to rounding).
fn refined_dual(
    cert: &Certificate,
    data: &DataView,
    c: f64,
    w: &[f64],
    margins: &[f64],
    gradient: &[f64],
    Budget { enough, rounds }: Budget,
) -> Option<Refined> {
    let twice_differentiable = matches!(cert.conjugate, LossConjugate::Logistic | LossConjugate::Squared);
    if cert.vector.is_some() || cert.groups.is_some() || !twice_differentiable {
        return None;
    }
    let scale = c / margins.len() as f64;
    let mut v = w.to_vec();
    let mut a = margins.to_vec();
    let mut gradient = gradient.to_vec();
    let mut best = f64::NEG_INFINITY;
    let mut moved_any = false;
    let mut last_gradient = None;
    for _ in 0..rounds {
        let mut round = Round { cols: vec![], sign: vec![], v: vec![] };
        let mut entering = vec![];
        for (j, (&vj, &gj)) in v.iter().zip(&gradient).enumerate() {
            if vj != 0.0 && cert.lo < vj && vj < cert.hi {
                round.push(j, vj.signum(), vj);
            } else if vj == 0.0 && violation(cert, vj, gj) > 0.0 {
                entering.push((violation(cert, vj, gj), j));
            }
        }
        // The zero coordinates that violate optimality most, as many as a round can hold at zero
        // again if the direction would move them the wrong way: the next round looks at the
        // violations again.
        let room = REFINE_MAX.saturating_sub(round.cols.len()).min(REFINE_HELD / 2);
        if entering.len() > room {
            if room == 0 {
                break;
            }
            entering.select_nth_unstable_by(room - 1, |a, b| b.0.total_cmp(&a.0));
            entering.truncate(room);
        }
        for (_, j) in entering {
            round.push(j, -gradient[j].signum(), 0.0);
        }
        let n = round.cols.len();
        if n == 0 {
            break;
        }
        let curvature: Vec<f64> =
            a.iter().zip(data.labels).map(|(&ai, &y)| loss_derivatives(cert.conjugate, y, ai).1).collect();
        let sub = Subspace::new(data, w.len(), &round.cols);
        let mut h = sub.hessian(&curvature, scale, cert.l2);
        if !cholesky(&mut h, n) {
            break;
        }
        let moved = round.newton(cert, scale, &sub, &h, data.labels, &mut a);
        moved_any |= moved;
        for (&j, &x) in round.cols.iter().zip(&round.v) {
            v[j] = x;
        }
        let mut at = a.clone();
        if cert.intercept {
            intercept::shift_to_optimal_offset(cert.conjugate, data.labels, &mut at);
        }
        let mut u: Vec<f64> = at
            .iter()
            .zip(data.labels)
            .map(|(&ai, &y)| into_loss_domain(cert.conjugate, y, loss_derivatives(cert.conjugate, y, ai).0))
            .collect();
        if cert.intercept {
            intercept::balance(cert.conjugate, data.labels, &mut u);
        }
        let (d, z) = dual_at(cert, data, c, w.len(), 1, &u);
        if d.is_finite() {
            best = best.max(d);
        }
        if best >= enough || !moved {
            break;
        }
        gradient = z.iter().map(|x| -x).collect();
        last_gradient = Some(gradient.clone());
    }
    let moved = match (moved_any, last_gradient) {
        (true, Some(g)) => Some((v, g)),
        _ => None,
    };
    best.is_finite().then_some(Refined { dual: best, moved })
}

/// When a refinement stops: once its dual value reaches `enough`, or after `rounds` rounds.
struct Budget {
    enough: f64,
    rounds: usize,
}

/// What a refinement found: the best dual value, and the primal point its steps reached with
/// ∇f there (from the pass that gave its dual point).
struct Refined {
    dual: f64,
    moved: Option<(Vec<f64>, Vec<f64>)>,
}

/// The coordinates V of a refinement round, their signs σ and values v.
struct Round {
    cols: Vec<usize>,
    sign: Vec<f64>,
    v: Vec<f64>,
}

impl Round {
    fn push(&mut self, j: usize, sign: f64, value: f64) {
        self.cols.push(j);
        self.sign.push(sign);
        self.v.push(value);
    }

    /// Active-set Newton steps on F restricted to V, `l` the Cholesky factor of its Hessian at
    /// the start; moves `self.v` and the margins `a` along. Whether it moved at all.
    fn newton(
        &mut self,
        cert: &Certificate,
        scale: f64,
        sub: &Subspace,
        l: &[f64],
        labels: &[f64],
        a: &mut Vec<f64>,
    ) -> bool {
        let n = self.cols.len();
        // The coordinates held at zero, and H⁻¹·eₖ for each.
        let (mut held, mut held_cols): (Vec<usize>, Vec<Vec<f64>>) = (vec![], vec![]);
        let mut is_held = vec![false; n];
        let unit = |k: usize| {
            let mut e = vec![0.0; n];
            e[k] = 1.0;
            cholesky_solve(l, n, &mut e);
            e
        };
        let mut moved = false;
        let derivative = |a: &[f64]| -> Vec<f64> {
            a.iter().zip(labels).map(|(&ai, &y)| loss_derivatives(cert.conjugate, y, ai).0).collect()
        };
        let mut u = derivative(a);
        for _ in 0..REFINE_STEPS {
            // ∇F on the orthant of the signs (zero on the held coordinates).
            let xtu = sub.transpose_times(&u);
            let r: Vec<f64> = (0..n)
                .map(|k| if is_held[k] { 0.0 } else { scale * xtu[k] + cert.l2 * self.v[k] + cert.l1 * self.sign[k] })
                .collect();
            let unit_of_residual =
                if cert.l1 > 0.0 { cert.l1 } else { xtu.iter().fold(0.0_f64, |x, g| x.max(scale * g.abs())) };
            if r.iter().all(|x| x.abs() <= REFINE_RESIDUAL * unit_of_residual) {
                break;
            }
            // The Newton direction with the held coordinates at zero; an entering coordinate (at
            // zero) that it would move out of its orthant is held too.
            let beta = loop {
                let mut beta: Vec<f64> = r.iter().map(|x| -x).collect();
                cholesky_solve(l, n, &mut beta);
                if !held.is_empty() {
                    // β = −H⁻¹(r + E·μ), β = 0 on the held set: (H⁻¹)_held·μ = (−H⁻¹r)_held.
                    let schur: Vec<Vec<f64>> =
                        held.iter().map(|&ka| held_cols.iter().map(|col| col[ka]).collect()).collect();
                    let Some(mu) = solve(schur, held.iter().map(|&k| beta[k]).collect()) else { return moved };
                    for (col, mu_b) in held_cols.iter().zip(&mu) {
                        for (b, x) in beta.iter_mut().zip(col) {
                            *b -= mu_b * x;
                        }
                    }
                    for &k in &held {
                        beta[k] = 0.0;
                    }
                }
                let leaving: Vec<usize> =
                    (0..n).filter(|&k| !is_held[k] && self.v[k] == 0.0 && beta[k] * self.sign[k] < 0.0).collect();
                if leaving.is_empty() {
                    break beta;
                }
                if held.len() + leaving.len() > REFINE_HELD {
                    return moved;
                }
                for k in leaving {
                    is_held[k] = true;
                    held.push(k);
                    held_cols.push(unit(k));
                }
            };
            // The longest step before a moving coordinate reaches zero; then halve it until F
            // still decreases at its end (F is convex along the step: it decreased all the way).
            let (mut longest, mut hit) = (1.0, None);
            for (k, (&vk, &bk)) in self.v.iter().zip(&beta).enumerate() {
                if vk != 0.0 && (vk + bk) * self.sign[k] < 0.0 && -vk / bk < longest {
                    (longest, hit) = (-vk / bk, Some(k));
                }
            }
            let dm = sub.times(&beta);
            let mut t = longest;
            let (at, ut) = loop {
                let at: Vec<f64> = a.iter().zip(&dm).map(|(x, d)| x + t * d).collect();
                let ut = derivative(&at);
                let loss_slope: f64 = ut.iter().zip(&dm).map(|(x, d)| x * d).sum();
                let reg_slope: f64 =
                    (0..n).map(|k| (cert.l1 * self.sign[k] + cert.l2 * (self.v[k] + t * beta[k])) * beta[k]).sum();
                if scale * loss_slope + reg_slope <= 0.0 {
                    break (at, ut);
                }
                t *= 0.5;
                if t < 1e-12 * longest {
                    return moved;
                }
            };
            for (x, b) in self.v.iter_mut().zip(&beta) {
                *x += t * b;
            }
            if let (Some(k), true) = (hit, t == longest) {
                // At zero up to rounding: exactly there, and held.
                self.v[k] = 0.0;
                is_held[k] = true;
                held.push(k);
                held_cols.push(unit(k));
            }
            (*a, u, moved) = (at, ut, true);
        }
        moved
    }
}

/// ℓ′(y, a) and ℓ″(y, a) of the twice-differentiable losses the certificate knows (the name of
/// ℓ* names ℓ: a model cannot redefine the stdlib's losses), in closed form: a refinement
/// evaluates them tens of times per row, where the plan's formula through the interpreter costs
/// several times more. Hinge (not differentiable) and softmax (k scores a row) are never refined.
fn loss_derivatives(kind: LossConjugate, y: f64, a: f64) -> (f64, f64) {
    match kind {
        LossConjugate::Logistic => {
            let p = 1.0 / (1.0 + (y * a).exp());
            (-y * p, p * (1.0 - p))
        }
        LossConjugate::Squared | LossConjugate::Hinge | LossConjugate::Softmax => (a - y, 1.0),
    }
}

/// The columns V of X, stored by rows (k-th entry of row i: the position in V and the value).
struct Subspace {
    ptr: Vec<usize>,
    slot: Vec<u32>,
    value: Vec<f64>,
    n: usize,
}

impl Subspace {
    fn new(data: &DataView, features: usize, cols: &[usize]) -> Self {
        if let Some(csc) = data.csc.filter(|c| c.count() == features) {
            // A counting sort of V's columns by row: O(nnz of X_V), not O(nnz of X).
            let mut ptr = vec![0usize; data.rows() + 1];
            for &j in cols {
                for &i in &csc.rows[csc.ptr[j]..csc.ptr[j + 1]] {
                    ptr[i as usize + 1] += 1;
                }
            }
            for i in 0..data.rows() {
                ptr[i + 1] += ptr[i];
            }
            let mut next = ptr.clone();
            let (mut slot, mut value) = (vec![0u32; ptr[data.rows()]], vec![0.0; ptr[data.rows()]]);
            for (k, &j) in cols.iter().enumerate() {
                for p in csc.ptr[j]..csc.ptr[j + 1] {
                    let i = csc.rows[p] as usize;
                    slot[next[i]] = k as u32;
                    value[next[i]] = csc.values[p];
                    next[i] += 1;
                }
            }
            return Subspace { ptr, slot, value, n: cols.len() };
        }
        let mut position = vec![u32::MAX; features];
        for (k, &j) in cols.iter().enumerate() {
            position[j] = k as u32;
        }
        let (mut ptr, mut slot, mut value) = (vec![0], vec![], vec![]);
        for i in 0..data.rows() {
            for k in data.indptr[i]..data.indptr[i + 1] {
                if let Some(&p) = position.get(data.indices[k] as usize) {
                    if p != u32::MAX {
                        slot.push(p);
                        value.push(data.values[k]);
                    }
                }
            }
            ptr.push(slot.len());
        }
        Subspace { ptr, slot, value, n: cols.len() }
    }

    /// The lower triangle (row-major n×n) of scale·X_Vᵀ·diag(d)·X_V + (l2 + ν)·I, ν a
    /// relative 1e-12 of the largest diagonal entry: exactly duplicated columns make the
    /// matrix singular, and along such a null direction the gradient vanishes too.
    fn hessian(&self, d: &[f64], scale: f64, l2: f64) -> Vec<f64> {
        let n = self.n;
        let mut h = vec![0.0; n * n];
        for (i, &di) in d.iter().enumerate() {
            let di = scale * di;
            if di == 0.0 {
                continue;
            }
            let range = self.ptr[i]..self.ptr[i + 1];
            for k in range.clone() {
                let (a, fa) = (self.slot[k] as usize, di * self.value[k]);
                let row = &mut h[a * n..a * n + n];
                for q in range.clone() {
                    let b = self.slot[q] as usize;
                    if b <= a {
                        row[b] += fa * self.value[q];
                    }
                }
            }
        }
        let largest = (0..n).map(|a| h[a * n + a]).fold(0.0, f64::max);
        for a in 0..n {
            h[a * n + a] += l2 + 1e-12 * largest;
        }
        h
    }

    /// X_V·β, one entry per row.
    fn times(&self, beta: &[f64]) -> Vec<f64> {
        (0..self.ptr.len() - 1)
            .map(|i| (self.ptr[i]..self.ptr[i + 1]).map(|k| self.value[k] * beta[self.slot[k] as usize]).sum())
            .collect()
    }

    /// X_Vᵀ·u.
    fn transpose_times(&self, u: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.n];
        for (i, &ui) in u.iter().enumerate() {
            for k in self.ptr[i]..self.ptr[i + 1] {
                out[self.slot[k] as usize] += self.value[k] * ui;
            }
        }
        out
    }
}

/// In-place Cholesky factorisation L·Lᵀ of the lower triangle of a row-major n×n matrix;
/// false when it is not numerically positive definite.
fn cholesky(h: &mut [f64], n: usize) -> bool {
    for a in 0..n {
        for b in 0..=a {
            let sum = h[a * n + b] - dot(&h[a * n..a * n + b], &h[b * n..b * n + b]);
            if a == b {
                if !(sum > 0.0 && sum.is_finite()) {
                    return false;
                }
                h[a * n + a] = sum.sqrt();
            } else {
                h[a * n + b] = sum / h[b * n + b];
            }
        }
    }
    true
}

/// Solves L·Lᵀ·x = b in place, L from [`cholesky`].
fn cholesky_solve(l: &[f64], n: usize, x: &mut [f64]) {
    for a in 0..n {
        x[a] = (x[a] - dot(&l[a * n..a * n + a], &x[..a])) / l[a * n + a];
    }
    for a in (0..n).rev() {
        let mut sum = x[a];
        for k in a + 1..n {
            sum -= l[k * n + a] * x[k];
        }
        x[a] = sum / l[a * n + a];
    }
}

/// Σ xᵢ·yᵢ in four independent sums (the factorisation's inner loop).
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (xc, yc) = (x.chunks_exact(4), y.chunks_exact(4));
    let tail: f64 = xc.remainder().iter().zip(yc.remainder()).map(|(a, b)| a * b).sum();
    for (a, b) in xc.zip(yc) {
        for k in 0..4 {
            acc[k] += a[k] * b[k];
        }
    }
    acc[0] + acc[1] + acc[2] + acc[3] + tail
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
fn vector_conjugate(cert: &Certificate, term: VectorTerm, z: &[f64], width: usize) -> (f64, f64) {
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
        Certificate { conjugate: LossConjugate::Squared, l1, l2, lo, hi, vector: None, groups: None, intercept: false }
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

    /// The refinement's factorisation: L·Lᵀ·x = b solves an SPD system, and a singular matrix
    /// (what exactly duplicated columns give without the ridge) is refused, not divided by zero.
    #[test]
    fn cholesky_solves_spd_systems_and_refuses_singular_ones() {
        let n = 7;
        let b: Vec<f64> = (0..n * n).map(|k| ((k * 37 % 11) as f64 - 5.0) / 3.0).collect();
        // A = BᵀB + I, lower triangle row-major.
        let mut a = vec![0.0; n * n];
        for r in 0..n {
            for c in 0..=r {
                a[r * n + c] =
                    (0..n).map(|k| b[k * n + r] * b[k * n + c]).sum::<f64>() + if r == c { 1.0 } else { 0.0 };
            }
        }
        let full = |r: usize, c: usize| if c <= r { a[r * n + c] } else { a[c * n + r] };
        let rhs: Vec<f64> = (0..n).map(|k| k as f64 - 2.5).collect();
        let mut l = a.clone();
        assert!(cholesky(&mut l, n));
        let mut x = rhs.clone();
        cholesky_solve(&l, n, &mut x);
        for (r, want) in rhs.iter().enumerate() {
            let ax: f64 = x.iter().enumerate().map(|(c, xc)| full(r, c) * xc).sum();
            assert!((ax - want).abs() < 1e-10, "row {r}: {ax} vs {want}");
        }
        let mut singular = vec![1.0, 0.0, 1.0, 1.0]; // [[1, 1], [1, 1]], lower triangle
        assert!(!cholesky(&mut singular, 2));
    }

    /// ℓ′ and ℓ″ in closed form agree with finite differences of ℓ, far into the tails too.
    #[test]
    fn loss_derivatives_match_finite_differences() {
        let logistic = |y: f64, a: f64| (1.0 + (-y * a).exp()).ln();
        for y in [-1.0, 1.0] {
            for a in [-30.0, -3.0, -0.2, 0.0, 0.7, 5.0, 30.0] {
                let (d1, d2) = loss_derivatives(LossConjugate::Logistic, y, a);
                let h = 1e-5;
                let fd1 = (logistic(y, a + h) - logistic(y, a - h)) / (2.0 * h);
                let (e1, _) = loss_derivatives(LossConjugate::Logistic, y, a + h);
                let (e0, _) = loss_derivatives(LossConjugate::Logistic, y, a - h);
                assert!((d1 - fd1).abs() < 1e-8, "ℓ′ y = {y} a = {a}: {d1} vs {fd1}");
                assert!((d2 - (e1 - e0) / (2.0 * h)).abs() < 1e-8, "ℓ″ y = {y} a = {a}");
            }
        }
        assert_eq!(loss_derivatives(LossConjugate::Squared, 0.5, 2.0), (1.5, 1.0));
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
