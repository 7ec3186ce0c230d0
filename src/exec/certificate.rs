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
//! the point at a Newton-refined primal (`refined_dual`), and the best D of the earlier checks
//! of the run (D(u) ≤ F* does not expire when w moves on).

mod groups;
mod intercept;
mod support;

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
    // `μ·l2sq(b)`: b is one more coordinate whose column is all ones, so R* adds the
    // conjugate of μ·½b² at z_b = −(c/m)·Σᵢ uᵢ (scaled as every z).
    let reg_conj = if cert.intercept && cert.intercept_l2 > 0.0 && width == 1 {
        let zb = -c / m as f64 * u.iter().sum::<f64>() * s;
        reg_conj + zb * zb / (2.0 * cert.intercept_l2)
    } else {
        reg_conj
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
            (csc.ptr()[j]..csc.ptr()[j + 1]).map(|k| csc.values()[k] * u[csc.rows()[k] as usize]).sum()
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
        // y·u ≤ 0
        LossConjugate::SquaredHinge => -y * (-y * u).max(0.0),
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
    /// Empty at the check of a dual method, whose features nothing ranks.
    pub gradient: Vec<f64>,
    /// The weights the Newton refinement moved w to, when it ran and moved, and ∇f there: F is
    /// no higher at them (its steps descend F), so a column solver may continue from them.
    pub polished: Option<(Vec<f64>, Vec<f64>)>,
    /// D at the dual point whose correlations `gradient` holds (ℓ′ of the margins, scaled into
    /// the domain): Gap Safe screening's ball is centred there. −∞ at a dual method's check.
    pub plain_dual: f64,
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
        return Some(Assessment {
            gap: 0.0,
            gradient: vec![0.0; w.len()],
            polished: None,
            plain_dual: f64::NEG_INFINITY,
        });
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
    if let (Some(e), true) = (&obj.dual, obj.dual_only) {
        return Some(dual_iterate(plan, &cert, state, data, objective, e, features, history));
    }
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
    let u = match (free_intercept(&cert), obj.softmax) {
        (true, true) => intercept::balance_classes(data.labels, u, width),
        (true, false) => feasible_for_intercept(&cert, data.labels, margins, u),
        (false, _) => u,
    };
    let (mut dual, z) = dual_at(&cert, data, c, features, width, &u);
    let plain_dual = dual;
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
                if free_intercept(&cert) {
                    extrapolated = intercept::balance_classes(data.labels, extrapolated, width);
                }
            } else {
                for (ui, &y) in extrapolated.iter_mut().zip(data.labels) {
                    *ui = into_loss_domain(cert.conjugate, y, *ui);
                }
                if free_intercept(&cert) {
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
        if let Some(refined) = refined_dual(
            &cert,
            data,
            c,
            w,
            margins,
            &gradient,
            Budget { enough: objective - target, slack: target, rounds },
        ) {
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
    Some(Assessment { gap, gradient, polished, plain_dual })
}

/// The gap at the dual iterate of a dual method ([`crate::plan::Objective::dual_only`]): D at
/// its point, or the best D of the run's earlier checks, which bounds F* all the same. No
/// refinement and no gradient: nothing ranks the features of a dual method's run.
#[allow(clippy::too_many_arguments)]
fn dual_iterate(
    plan: &Plan,
    cert: &Certificate,
    state: &State,
    data: &DataView,
    objective: f64,
    dual: &crate::plan::Expr,
    features: usize,
    history: Option<&mut DualHistory>,
) -> Assessment {
    let env = Env::new(plan, data.dims());
    let m = data.rows();
    let own: Vec<f64> =
        (0..m).map(|i| into_loss_domain(cert.conjugate, data.labels[i], eval_at(&env, dual, state, i, 0))).collect();
    let (d, _) = dual_at(cert, data, plan.objective.loss_weight, features, 1, &own);
    let d = if d.is_nan() { f64::NEG_INFINITY } else { d };
    let best = match history {
        Some(h) => {
            h.best = h.best.max(d);
            h.objective = Some(objective);
            h.best
        }
        None => d,
    };
    let gap = objective - best;
    let gap = if gap.is_nan() { f64::INFINITY } else { gap.max(0.0) };
    Assessment { gap, gradient: vec![], polished: None, plain_dual: f64::NEG_INFINITY }
}

/// An unregularized intercept, whose dual point must satisfy Σᵢ uᵢ = 0.
fn free_intercept(cert: &Certificate) -> bool {
    cert.intercept && cert.intercept_l2 == 0.0
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
/// Most coordinates a Newton refinement solves for: its dense Hessian holds n² entries, and every
/// step of its model's minimisation costs up to n² a sweep or a conjugate-gradient iteration.
const REFINE_MAX: usize = 1500;
/// Rounds of a refinement, at most: each picks V again (the non-zero coordinates of its point
/// and the zero ones that violate optimality there) and solves F restricted to V.
const REFINE_ROUNDS: usize = 5;
/// Rounds of a refinement at a check whose point the solver continues from: the epochs that
/// follow bring in the remaining violators more cheaply than a wider V would.
const REFINE_ROUNDS_EAGER: usize = 2;
/// A round ends once the duality gap of F restricted to V is this fraction of the gap asked
/// for: the rest of the gap is left to the coordinates outside V.
const REFINE_SLACK: f64 = 0.1;
/// Proximal Newton steps per round, at most (each a Hessian on V, a pass over the rows of X_V
/// and a line search over the rows).
const REFINE_STEPS: usize = 20;
/// A round takes every violating coordinate when V then holds at most this many.
const REFINE_ALL: usize = 512;
/// Violating coordinates a round brings into V, at least (at most as many as V holds already,
/// so V at most doubles a round: the Hessian costs Σᵢ nnz(xᵢ restricted to V)²).
const REFINE_ENTER: usize = 32;
/// A round has converged when no coordinate of V is further than this fraction of l1 (or of
/// the largest gradient, without l1) from its optimality condition: the scaling s of the dual
/// point then costs at most this fraction of l1‖w‖₁.
const REFINE_RESIDUAL: f64 = 1e-9;
/// What placing an entry of X_V by a counting sort costs, in entries of X scanned in order.
const SCATTER_COST: usize = 8;
/// Runs of rows the Hessian of a Newton step is summed in (one a thread, on two cores).
const HESSIAN_PARTS: usize = 2;
/// Rounds of a model's minimisation, at most: coordinate-descent sweeps, then conjugate
/// gradients on the non-zero coordinates until they stop at no wall. On near-duplicate columns
/// (debian-files at λ 1.03e-5, V of 700–1,100) the first models of a new V zig-zag: every run
/// of conjugate gradients hits a wall at its first step and the next sweep undoes it, so 100
/// rounds of n² sweeps ended unconverged all the same, at 130–480 ms a model. A step from 20
/// rounds is as good to the line search, and the run takes 2.9 s instead of 3.5 s. Of the
/// peer benchmark's other models only a9a at λ 1.13e-5 (n = 122: cheap rounds) and
/// debian-files at λ 1.28e-4 pass 20 rounds, and their times do not move.
const MODEL_ROUNDS: usize = 20;
/// The model is minimised once no coordinate violates its optimality condition by more than
/// this fraction of the worst violation at v: an inexact Newton step whose forcing term is
/// relative to the optimality of v keeps Newton's fast rate. A rule relative to the model's
/// first gain does not: on a9a at λ ≈ 1e-5 it stopped at violations of several l1, and each
/// step then moved F by 1e-6 while the gap stayed at half of F.
const MODEL_FORCING: f64 = 0.1;
/// Coordinate-descent sweeps of a round.
const MODEL_SWEEPS: usize = 2;
/// Conjugate-gradient iterations of a round, at most (and at most twice the coordinates).
const MODEL_CG_STEPS: usize = 200;
/// Conjugate gradients stop once the residual is this fraction of the first.
const MODEL_CG_TOL: f64 = 1e-6;
/// A step of conjugate gradients that lowers the model by less than this fraction of what its
/// first round did ends them: on nearly singular H they go on for hundreds of steps gaining
/// nothing.
const MODEL_TOL: f64 = 1e-3;
/// Armijo's constant: a step is taken when F falls by this fraction of Δ = ∇ᵀd + l1·(‖x‖₁ − ‖v‖₁).
const ARMIJO: f64 = 1e-2;

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
/// needs in a handful of them, and the gap drops to the true suboptimality of w.
///
/// A round: V = the non-zero coordinates and the ones that violate optimality most, then
/// proximal Newton steps on F restricted to V ([`Round::newton`]).
fn refined_dual(
    cert: &Certificate,
    data: &DataView,
    c: f64,
    w: &[f64],
    margins: &[f64],
    gradient: &[f64],
    Budget { enough, slack, rounds }: Budget,
) -> Option<Refined> {
    let twice_differentiable = matches!(cert.conjugate, LossConjugate::Logistic | LossConjugate::Squared);
    if cert.vector.is_some() || cert.groups.is_some() || !twice_differentiable {
        return None;
    }
    let support = w.iter().filter(|&&x| moves_freely(cert, x)).count();
    if support > REFINE_MAX {
        return support::refine(cert, data, c, w, margins, enough);
    }
    let scale = c / margins.len() as f64;
    let mut v = w.to_vec();
    let mut a = margins.to_vec();
    let mut gradient = gradient.to_vec();
    let mut best = f64::NEG_INFINITY;
    // ∇f at the last point a round moved to (None: no round moved).
    let mut last_gradient = None;
    for _ in 0..rounds {
        let mut inside = vec![];
        let mut entering = vec![];
        for (j, (&vj, &gj)) in v.iter().zip(&gradient).enumerate() {
            if moves_freely(cert, vj) {
                inside.push(j);
            } else if violation(cert, vj, gj) > 0.0 {
                entering.push((violation(cert, vj, gj), j));
            }
        }
        // A support wider than a dense Hessian can hold is not near an optimum's (a stochastic
        // iterate's: FOBOS on debian-files after two epochs has 16,665 non-zeros, a 2.2 GB
        // Hessian and a minute of steps); the plain dual point is all such a check gets.
        if inside.len() > REFINE_MAX {
            break;
        }
        // The coordinates that violate optimality most: the next round looks at the violations
        // again, at the point this one reaches.
        // Every violator when V stays small: any one left out keeps the scale s of the dual
        // point below 1 and the gap far from the truth (w8a at λ 7.08e-6: two rounds on 200
        // and 286 of its 300 columns, each solved to 1e-5 on V, left gaps of 94% and 76% of
        // F, and the run needed a second check; with every violator it needs one).
        let room = if inside.len() + entering.len() <= REFINE_ALL {
            entering.len()
        } else {
            REFINE_MAX.saturating_sub(inside.len()).min(REFINE_ENTER.max(inside.len()))
        };
        if entering.len() > room {
            if room > 0 {
                entering.select_nth_unstable_by(room - 1, |a, b| b.0.total_cmp(&a.0));
            }
            entering.truncate(room);
        }
        inside.extend(entering.into_iter().map(|(_, j)| j));
        // In column order, so every row of X_V lists its entries by position in V.
        inside.sort_unstable();
        let mut round = Round { v: inside.iter().map(|&j| v[j]).collect(), cols: inside };
        let n = round.cols.len();
        if n == 0 {
            break;
        }
        let sub = Subspace::new(data, w.len(), &round.cols);
        let moved = round.newton(cert, scale, &sub, data.labels, &mut a, REFINE_SLACK * slack);
        for (&j, &x) in round.cols.iter().zip(&round.v) {
            v[j] = x;
        }
        let (d, z) = dual_at(cert, data, c, w.len(), 1, &refined_point(cert, data.labels, &a));
        if d.is_finite() {
            best = best.max(d);
        }
        gradient = z.iter().map(|x| -x).collect();
        if moved {
            last_gradient = Some(gradient.clone());
        }
        if best >= enough || !moved {
            break;
        }
    }
    best.is_finite().then_some(Refined { dual: best, moved: last_gradient.map(|g| (v, g)) })
}

/// The dual point at a refinement's margins a: ℓ′ into the domain of ℓ*, balanced to Σᵢ uᵢ = 0
/// with a free intercept. The refinement's losses have ℓ″: the plan's own point (for hinge) is
/// not read.
fn refined_point(cert: &Certificate, labels: &[f64], a: &[f64]) -> Vec<f64> {
    if free_intercept(cert) {
        return feasible_for_intercept(cert, labels, a, vec![]);
    }
    a.iter()
        .zip(labels)
        .map(|(&ai, &y)| into_loss_domain(cert.conjugate, y, loss_derivatives(cert.conjugate, y, ai).0))
        .collect()
}

/// Whether x is a coordinate the refinements move freely: non-zero and strictly inside the box
/// (where r is differentiable).
fn moves_freely(cert: &Certificate, x: f64) -> bool {
    x != 0.0 && cert.lo < x && x < cert.hi
}

/// When a refinement stops: once its dual value reaches `enough`, or after `rounds` rounds.
/// A round ends early once its gap on V is a small fraction of `slack`, the gap the caller asks
/// for: the dual point needs no more.
struct Budget {
    enough: f64,
    slack: f64,
    rounds: usize,
}

/// What a refinement found: the best dual value, and the primal point its steps reached with
/// ∇f there (from the pass that gave its dual point).
struct Refined {
    dual: f64,
    moved: Option<(Vec<f64>, Vec<f64>)>,
}

/// The coordinates V of a refinement round (in column order) and their values v.
struct Round {
    cols: Vec<usize>,
    v: Vec<f64>,
}

impl Round {
    /// Proximal Newton steps on F restricted to V (newGLMNET's outer iteration: Yuan, Ho & Lin,
    /// "An improved GLMNET for L1-regularized logistic regression", 2012). Each step minimises
    /// the quadratic model of f at v plus the l1 term and the box ([`Round::model_minimiser`]),
    /// then searches along the direction. The model's coordinate descent runs on the dense
    /// Hessian of V, with no pass over the data, and sets coordinates to zero and back as the
    /// l1 term asks: no active set to grow one coordinate a step. Moves `self.v` and the
    /// margins `a` along; whether it moved at all.
    /// The round ends once the gap on V is at most `negligible`.
    fn newton(
        &mut self,
        cert: &Certificate,
        scale: f64,
        sub: &Subspace,
        labels: &[f64],
        a: &mut Vec<f64>,
        negligible: f64,
    ) -> bool {
        let n = self.cols.len();
        let kind = cert.conjugate;
        let mut moved = false;
        // The margins with ℓ′, ℓ″ and Σᵢ ℓ there: after a step, its line search's accepted trial.
        let mut now = Rows::at(kind, labels, a, None, sub.threads);
        for _ in 0..REFINE_STEPS {
            let loss_gradient: Vec<f64> = sub.transpose_times(&now.u).iter().map(|x| scale * x).collect();
            let unit_of_residual =
                if cert.l1 > 0.0 { cert.l1 } else { loss_gradient.iter().fold(0.0_f64, |x, g| x.max(g.abs())) };
            if (0..n).all(|k| violation(cert, self.v[k], loss_gradient[k]) <= REFINE_RESIDUAL * unit_of_residual) {
                break;
            }
            let gap_on_v = self.restricted_gap(cert, scale, labels, &now, &loss_gradient, sub.threads);
            // No rule on a stall: from a cold point the first steps may take a tenth of the gap
            // in four steps, then all of it in three (a9a at λ 1.13e-5), and any rule tried
            // there cut them short and cost an epoch.
            if gap_on_v <= negligible {
                break;
            }
            let h = sub.hessian(&now.curvature, scale, cert.l2);
            let gradient: Vec<f64> = (0..n).map(|k| loss_gradient[k] + cert.l2 * self.v[k]).collect();
            let x = self.model_minimiser(cert, &h, &gradient, MODEL_FORCING);
            let d: Vec<f64> = x.iter().zip(&self.v).map(|(x, v)| x - v).collect();
            let l1_norm = |z: &[f64]| z.iter().map(|v| v.abs()).sum::<f64>();
            let squared = |z: &[f64]| z.iter().map(|v| v * v).sum::<f64>();
            let predicted = dot(&gradient, &d) + cert.l1 * (l1_norm(&x) - l1_norm(&self.v));
            if predicted.is_nan() || predicted >= 0.0 {
                break;
            }
            let dm = sub.times(&d);
            let reg_now = cert.l1 * l1_norm(&self.v) + 0.5 * cert.l2 * squared(&self.v);
            // Armijo's sufficient decrease (Δ = ∇ᵀd + l1·(‖x‖₁ − ‖v‖₁), as LIBLINEAR), or where
            // differences of F near its minimum are lost to rounding, a non-positive slope of F
            // at the end of the step: F is convex along it, so it decreased all the way.
            let mut t = 1.0;
            let step = loop {
                let point: Vec<f64> =
                    if t == 1.0 { x.clone() } else { self.v.iter().zip(&d).map(|(v, d)| v + t * d).collect() };
                let trial = Rows::at(kind, labels, &now.a, Some((&dm, t)), sub.threads);
                let change =
                    scale * (trial.loss - now.loss) + cert.l1 * l1_norm(&point) + 0.5 * cert.l2 * squared(&point)
                        - reg_now;
                if change <= ARMIJO * t * predicted {
                    break Some((point, trial));
                }
                // The slope from the left at the end: a coordinate the step took to zero counts
                // with the sign it had before.
                let reg_slope: f64 = (0..n)
                    .map(|k| {
                        let side = match (point[k] != 0.0, self.v[k] != 0.0) {
                            (true, _) => point[k].signum(),
                            (false, true) => self.v[k].signum(),
                            (false, false) => 0.0,
                        };
                        (cert.l1 * side + cert.l2 * point[k]) * d[k]
                    })
                    .sum();
                if scale * dot(&trial.u, &dm) + reg_slope <= 0.0 {
                    break Some((point, trial));
                }
                t *= 0.5;
                if t < 1e-12 {
                    break None;
                }
            };
            let Some((point, trial)) = step else { break };
            (self.v, now, moved) = (point, trial, true);
        }
        *a = now.a;
        moved
    }

    /// The duality gap of F restricted to V (the other coordinates fixed, their part of the
    /// margins a constant) at v and the dual point ℓ′(a) scaled into the domain of r* on V:
    /// Σᵢ c/m·[ℓ(aᵢ) + ℓ*(s·uᵢ) − s·uᵢ·a⁰ᵢ] + Σ_{j∈V} [r(vⱼ) + r*(s·zⱼ)] with a⁰ = a − X_V·v and
    /// z = −∇_V f. It measures what a round is for: on a9a at λ ≈ 1e-5, F on V is within 1e-6
    /// of its minimum while ∇f still exceeds l1 by a few l1 on some coordinate, and scaling the
    /// dual point by s ≈ 1/4 costs ~2/3 of F in the bound (ℓ* is steep at the rows misclassified
    /// by a wide margin, where uᵢ is near the end of its domain): the decrease F's model
    /// predicts says the round is done long before the dual point is.
    fn restricted_gap(
        &self,
        cert: &Certificate,
        scale: f64,
        labels: &[f64],
        Rows { a, u, loss, .. }: &Rows,
        loss_gradient: &[f64],
        threads: usize,
    ) -> f64 {
        let kind = cert.conjugate;
        let z: Vec<f64> = loss_gradient.iter().map(|g| -g).collect();
        let s = domain_scale(cert, &z);
        // Σᵢ uᵢ·(X_V v)ᵢ = −⟨z, v⟩/scale turns a⁰ into a.
        let conjugates: f64 = super::passes::blocks(a.len(), threads, |rows| {
            rows.map(|i| {
                let su = into_loss_domain(kind, labels[i], s * u[i]);
                loss_conjugate(kind, labels[i], su) - su * a[i]
            })
            .sum::<f64>()
        })
        .into_iter()
        .sum();
        let regularizer: f64 = self
            .v
            .iter()
            .zip(&z)
            .map(|(&v, &zj)| cert.l1 * v.abs() + 0.5 * cert.l2 * v * v + reg_conjugate(cert, s * zj))
            .sum();
        scale * (loss + conjugates) - s * dot(&z, &self.v) + regularizer
    }

    /// The minimiser over lo ≤ x ≤ hi of ∇ᵀ(x − v) + ½(x − v)ᵀH(x − v) + l1‖x‖₁, H dense and
    /// symmetric (row-major), until no coordinate violates its optimality condition by more
    /// than `forcing` times the worst violation at v.
    /// Coordinate descent finds which coordinates are zero or at a bound (a closed-form soft
    /// threshold and clip per coordinate), conjugate gradients then solve the model on the
    /// others with their signs kept: on one-hot or near-duplicate columns H is nearly singular,
    /// and coordinate descent alone crawls along its flat directions as the solver's epochs do.
    fn model_minimiser(&self, cert: &Certificate, h: &[f64], gradient: &[f64], forcing: f64) -> Vec<f64> {
        let n = gradient.len();
        let mut model = Model { h, n, gradient, x: self.v.clone(), hd: vec![0.0; n], cert };
        let enough = forcing * model.violation();
        let mut first = None;
        for _ in 0..MODEL_ROUNDS {
            let mut gain = 0.0;
            for _ in 0..MODEL_SWEEPS {
                gain += model.sweep();
            }
            let negligible = MODEL_TOL * first.unwrap_or(gain);
            // Every wall a run of conjugate gradients stops at takes a coordinate out of their
            // set, and they go on without it: on one-hot groups many reach zero together.
            for _ in 0..n {
                let (more, hit) = model.conjugate_gradients(negligible);
                gain += more;
                if !hit {
                    break;
                }
            }
            first.get_or_insert(gain);
            if model.violation() <= enough {
                break;
            }
        }
        model.x
    }
}

/// The quadratic model of a Newton step at x: ∇ᵀ(x − v) + ½(x − v)ᵀH(x − v) + l1‖x‖₁ on the
/// box, with H·(x − v) kept up to date.
struct Model<'a> {
    h: &'a [f64],
    n: usize,
    gradient: &'a [f64],
    x: Vec<f64>,
    hd: Vec<f64>,
    cert: &'a Certificate,
}

impl Model<'_> {
    /// The largest distance of a coordinate from the model's optimality condition.
    fn violation(&self) -> f64 {
        (0..self.n).map(|k| violation(self.cert, self.x[k], self.gradient[k] + self.hd[k])).fold(0.0, f64::max)
    }

    /// Sets xₖ, keeping H·(x − v) up to date.
    fn move_to(&mut self, k: usize, value: f64) {
        let (n, change) = (self.n, value - self.x[k]);
        self.x[k] = value;
        for (acc, hk) in self.hd.iter_mut().zip(&self.h[k * n..k * n + n]) {
            *acc += change * hk;
        }
    }

    /// One cyclic sweep of coordinate descent; what it took off the model.
    fn sweep(&mut self) -> f64 {
        let (n, l1) = (self.n, self.cert.l1);
        let mut gain = 0.0;
        for k in 0..n {
            let hkk = self.h[k * n + k];
            if hkk.is_nan() || hkk <= 0.0 {
                continue;
            }
            let g = self.gradient[k] + self.hd[k];
            let z = self.x[k] - g / hkk;
            let target = (z.signum() * (z.abs() - l1 / hkk).max(0.0)).clamp(self.cert.lo, self.cert.hi);
            let delta = target - self.x[k];
            if delta != 0.0 {
                gain -= g * delta + 0.5 * hkk * delta * delta + l1 * (target.abs() - self.x[k].abs());
                self.move_to(k, target);
            }
        }
        gain
    }

    /// Conjugate gradients on the model over S, the coordinates that are non-zero and inside
    /// the box, each keeping its sign: there the l1 term is linear and the model a quadratic.
    /// A step that would take a coordinate to zero or to a bound stops there (the model is
    /// convex along it: it decreased all the way), and the next sweeps decide where it goes.
    /// What the iterations took off the model, and whether they stopped at a wall.
    fn conjugate_gradients(&mut self, negligible: f64) -> (f64, bool) {
        let (n, cert) = (self.n, self.cert);
        let support: Vec<usize> = (0..n).filter(|&k| moves_freely(cert, self.x[k])).collect();
        let s = support.len();
        if s == 0 {
            return (0.0, false);
        }
        let h = self.h;
        // H·p on S: from a copy of H restricted to S (s² to copy, s² a product), or, when S
        // holds most of V, from the rows of H with p spread over all n coordinates (s·n a
        // product, nothing to copy): a run stopped by a wall after a step or two paid the copy
        // for little (the models of a debian-desc run at λ 9.56e-6, V up to ~1000: 0.39–0.43 s
        // with copies, 0.23–0.29 s without).
        let compact = 2 * s < n;
        let hs: Vec<f64> = if compact {
            support.iter().flat_map(|&a| support.iter().map(move |&b| h[a * n + b])).collect()
        } else {
            vec![]
        };
        let mut spread = if compact { vec![] } else { vec![0.0; n] };
        let sign: Vec<f64> = support.iter().map(|&k| self.x[k].signum()).collect();
        // The negative gradient of the model on S, and the direction.
        let mut residual: Vec<f64> =
            support.iter().zip(&sign).map(|(&k, sg)| -(self.gradient[k] + self.hd[k] + cert.l1 * sg)).collect();
        let mut direction = residual.clone();
        let mut delta = vec![0.0; s];
        let mut rr = dot(&residual, &residual);
        let stop = rr * MODEL_CG_TOL * MODEL_CG_TOL;
        let mut gain = 0.0;
        let mut stopped_at = None;
        for _ in 0..MODEL_CG_STEPS.min(2 * s) {
            let hp: Vec<f64> = if compact {
                hs.chunks_exact(s).map(|row| dot(row, &direction)).collect()
            } else {
                for (&k, &p) in support.iter().zip(&direction) {
                    spread[k] = p;
                }
                support.iter().map(|&a| dot(&h[a * n..(a + 1) * n], &spread)).collect()
            };
            let php = dot(&direction, &hp);
            if php.is_nan() || php <= 0.0 {
                break;
            }
            let mut alpha = rr / php;
            // The first coordinate to reach zero or a bound along the direction.
            let mut hit = None;
            for (q, &k) in support.iter().enumerate() {
                let (xk, pk) = (self.x[k] + delta[q], direction[q]);
                let wall = if xk * pk < 0.0 {
                    0.0
                } else if pk > 0.0 {
                    cert.hi
                } else if pk < 0.0 {
                    cert.lo
                } else {
                    continue;
                };
                let reach = (wall - xk) / pk;
                if reach < alpha {
                    (alpha, hit) = (reach.max(0.0), Some((q, wall)));
                }
            }
            let step_gain = alpha * dot(&residual, &direction) - 0.5 * alpha * alpha * php;
            gain += step_gain;
            for q in 0..s {
                delta[q] += alpha * direction[q];
                residual[q] -= alpha * hp[q];
            }
            if let Some((q, wall)) = hit {
                stopped_at = Some((q, wall));
                break;
            }
            let next = dot(&residual, &residual);
            if next <= stop || step_gain < negligible {
                break;
            }
            let beta = next / rr;
            rr = next;
            for (p, r) in direction.iter_mut().zip(&residual) {
                *p = r + beta * *p;
            }
        }
        for (q, &k) in support.iter().enumerate() {
            // The coordinate a step stopped at lands on its wall exactly.
            let moved_to = match stopped_at {
                Some((at, wall)) if at == q => wall,
                _ => self.x[k] + delta[q],
            };
            if moved_to != self.x[k] {
                self.move_to(k, moved_to);
            }
        }
        (gain, stopped_at.is_some())
    }
}

/// What a Newton step needs of every row at margins a (or a + t·Δa, a line search's trial):
/// ℓ′ and ℓ″ per row, and Σᵢ ℓ.
struct Rows {
    a: Vec<f64>,
    u: Vec<f64>,
    curvature: Vec<f64>,
    loss: f64,
}

impl Rows {
    /// In blocks of rows on `threads` threads, the sum added in block order: the same numbers
    /// for any thread count.
    fn at(kind: LossConjugate, labels: &[f64], a: &[f64], step: Option<(&[f64], f64)>, threads: usize) -> Rows {
        let blocks = super::passes::blocks(a.len(), threads, |rows| {
            let mut block = Rows { a: vec![], u: vec![], curvature: vec![], loss: 0.0 };
            for i in rows {
                let ai = step.map_or(a[i], |(da, t)| a[i] + t * da[i]);
                let (loss, u, curvature) = loss_terms(kind, labels[i], ai);
                block.a.push(ai);
                block.u.push(u);
                block.curvature.push(curvature);
                block.loss += loss;
            }
            block
        });
        let mut all = Rows { a: vec![], u: vec![], curvature: vec![], loss: 0.0 };
        for block in blocks {
            all.a.extend(block.a);
            all.u.extend(block.u);
            all.curvature.extend(block.curvature);
            all.loss += block.loss;
        }
        all
    }
}

/// ℓ, ℓ′ and ℓ″ at a; for logistic from one exponential, e^−|y·a|, which cannot overflow
/// (a line search's trials and the next step's Hessian take all three at every row).
fn loss_terms(kind: LossConjugate, y: f64, a: f64) -> (f64, f64, f64) {
    match kind {
        LossConjugate::Logistic => {
            let ya = y * a;
            let e = (-ya.abs()).exp();
            // p = 1/(1 + e^{y·a}), the probability of the other label.
            let p = if ya >= 0.0 { e / (1.0 + e) } else { 1.0 / (1.0 + e) };
            ((-ya).max(0.0) + e.ln_1p(), -y * p, e / ((1.0 + e) * (1.0 + e)))
        }
        _ => {
            let (u, curvature) = loss_derivatives(kind, y, a);
            (loss_value(kind, y, a), u, curvature)
        }
    }
}

/// ℓ(y, a) of the losses [`loss_derivatives`] knows, in closed form for the line search.
fn loss_value(kind: LossConjugate, y: f64, a: f64) -> f64 {
    match kind {
        LossConjugate::Logistic => {
            let z = -y * a;
            // log(1 + eᶻ) without overflow for large z.
            if z > 0.0 {
                z + (-z).exp().ln_1p()
            } else {
                z.exp().ln_1p()
            }
        }
        LossConjugate::SquaredHinge => (1.0 - y * a).max(0.0).powi(2),
        LossConjugate::Squared | LossConjugate::Hinge | LossConjugate::Softmax => 0.5 * (a - y) * (a - y),
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
        // Its generalized second derivative, 2 where the hinge is active.
        LossConjugate::SquaredHinge => {
            let slack = (1.0 - y * a).max(0.0);
            (-2.0 * y * slack, if slack > 0.0 { 2.0 } else { 0.0 })
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
    /// How many threads sum the Hessian (the data's `--threads`).
    threads: usize,
}

impl Subspace {
    fn new(data: &DataView, features: usize, cols: &[usize]) -> Self {
        // A counting sort of V's columns by row costs O(nnz of X_V), not O(nnz of X), but every
        // entry it places is a cache miss (each column sweeps the whole output): it pays when
        // X_V holds a small part of X (text data: a thousand of a million columns), and a scan
        // of the rows in order does when V holds most of the mass (w8a: 13 ms against 2 ms).
        let csc = data.csc.filter(|c| c.count() == features);
        // nnz of X_V when the columns are at hand, else a bound.
        let entries = csc.map_or(data.values.len(), |c| cols.iter().map(|&j| c.ptr()[j + 1] - c.ptr()[j]).sum());
        if let Some(csc) = csc.filter(|_| entries * SCATTER_COST < data.values.len()) {
            let mut ptr = vec![0usize; data.rows() + 1];
            for &j in cols {
                for &i in &csc.rows()[csc.ptr()[j]..csc.ptr()[j + 1]] {
                    ptr[i as usize + 1] += 1;
                }
            }
            for i in 0..data.rows() {
                ptr[i + 1] += ptr[i];
            }
            let mut next = ptr.clone();
            let (mut slot, mut value) = (vec![0u32; ptr[data.rows()]], vec![0.0; ptr[data.rows()]]);
            for (k, &j) in cols.iter().enumerate() {
                for p in csc.ptr()[j]..csc.ptr()[j + 1] {
                    let i = csc.rows()[p] as usize;
                    slot[next[i]] = k as u32;
                    value[next[i]] = csc.values()[p];
                    next[i] += 1;
                }
            }
            return Subspace { ptr, slot, value, n: cols.len(), threads: data.threads };
        }
        // Every entry is written and the cursor advances only for V's: a branch on membership
        // mispredicts at every other entry when V holds half the columns (12 ms against 1.5 ms
        // on w8a).
        let mut position = vec![u32::MAX; data.columns.max(features)];
        for (k, &j) in cols.iter().enumerate() {
            position[j] = k as u32;
        }
        let (mut ptr, mut slot, mut value) =
            (vec![0; data.rows() + 1], vec![0u32; entries + 1], vec![0.0; entries + 1]);
        let mut next = 0;
        for i in 0..data.rows() {
            for k in data.indptr[i]..data.indptr[i + 1] {
                let p = position[data.indices[k] as usize];
                slot[next] = p;
                value[next] = data.values[k];
                next += usize::from(p != u32::MAX);
            }
            ptr[i + 1] = next;
        }
        slot.truncate(next);
        value.truncate(next);
        Subspace { ptr, slot, value, n: cols.len(), threads: data.threads }
    }

    /// scale·X_Vᵀ·diag(d)·X_V + (l2 + ν)·I, dense and row-major, ν a relative 1e-12 of the
    /// largest diagonal entry: exactly duplicated columns make the matrix singular. Every row
    /// lists its entries by position in V, so a row's products below the diagonal are a prefix.
    fn hessian(&self, d: &[f64], scale: f64, l2: f64) -> Vec<f64> {
        let n = self.n;
        // The lower triangle of the rows' outer products, in HESSIAN_PARTS fixed runs of rows
        // added in order: the same sums for any thread count.
        let m = d.len();
        let part = |k: usize| {
            let mut h = vec![0.0; n * n];
            let first = m * k / HESSIAN_PARTS;
            for (i, &di) in d.iter().enumerate().take(m * (k + 1) / HESSIAN_PARTS).skip(first) {
                let di = scale * di;
                if di == 0.0 {
                    continue;
                }
                let (slots, values) =
                    (&self.slot[self.ptr[i]..self.ptr[i + 1]], &self.value[self.ptr[i]..self.ptr[i + 1]]);
                for (p, (&a, &va)) in slots.iter().zip(values).enumerate() {
                    // A row of H as its own slice: its bounds check is against n, cheaper than
                    // against n² after an add (8.1M products: 15.8 ms → 13.9 ms).
                    let (fa, row) = (di * va, &mut h[a as usize * n..(a as usize + 1) * n]);
                    for (&b, &vb) in slots[..=p].iter().zip(&values[..=p]) {
                        row[b as usize] += fa * vb;
                    }
                }
            }
            h
        };
        let mut h = super::passes::add_in_order(super::passes::each(HESSIAN_PARTS, self.threads, part));
        for a in 0..n {
            for b in 0..a {
                h[b * n + a] = h[a * n + b];
            }
        }
        let largest = (0..n).map(|a| h[a * n + a]).fold(0.0, f64::max);
        for a in 0..n {
            h[a * n + a] += l2 + 1e-12 * largest;
        }
        h
    }

    /// Σᵢ dᵢ·x²ᵢₖ for every k of V: the diagonal of X_Vᵀ·diag(d)·X_V.
    fn weighted_squares(&self, d: &[f64]) -> Vec<f64> {
        super::passes::add_in_order(super::passes::blocks(d.len(), self.threads, |rows| {
            let mut out = vec![0.0; self.n];
            for i in rows {
                for k in self.ptr[i]..self.ptr[i + 1] {
                    out[self.slot[k] as usize] += d[i] * self.value[k] * self.value[k];
                }
            }
            out
        }))
    }

    /// X_V·β, one entry per row.
    fn times(&self, beta: &[f64]) -> Vec<f64> {
        super::passes::map(self.ptr.len() - 1, self.threads, |i| {
            (self.ptr[i]..self.ptr[i + 1]).map(|k| self.value[k] * beta[self.slot[k] as usize]).sum()
        })
    }

    /// X_Vᵀ·u, by blocks of rows added in block order.
    fn transpose_times(&self, u: &[f64]) -> Vec<f64> {
        // u has a row at least (the caller has checked m > 0), so there is a block.
        super::passes::add_in_order(super::passes::blocks(u.len(), self.threads, |rows| {
            let mut out = vec![0.0; self.n];
            for i in rows {
                for k in self.ptr[i]..self.ptr[i + 1] {
                    out[self.slot[k] as usize] += self.value[k] * u[i];
                }
            }
            out
        }))
    }
}

/// Σ xᵢ·yᵢ in four independent sums.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cert(l1: f64, l2: f64, lo: f64, hi: f64) -> Certificate {
        Certificate {
            conjugate: LossConjugate::Squared,
            l1,
            l2,
            lo,
            hi,
            vector: None,
            groups: None,
            intercept: false,
            intercept_l2: 0.0,
        }
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

    /// The minimiser of a Newton step's model satisfies the model's optimality condition on
    /// every coordinate (the distance from −∇q to ∂(l1|·| + ι[lo, hi]) is ~0), including on a
    /// singular H: one-hot groups (a9a) make columns sum to the same, and coordinate descent
    /// alone crawls along that flat direction.
    #[test]
    fn the_newton_model_minimiser_meets_the_model_optimality_condition() {
        let n = 10;
        // X (rows × n) with columns 0..3 and 3..6 two one-hot groups: their sums are equal.
        let rows = 40;
        let mut x = vec![0.0; rows * n];
        for i in 0..rows {
            x[i * n + i % 3] = 1.0;
            x[i * n + 3 + (i * 7 + 1) % 3] = 1.0;
            for k in 6..n {
                x[i * n + k] = (((i * 31 + k * 17) % 13) as f64 - 6.0) / 4.0;
            }
        }
        let mut h = vec![0.0; n * n];
        for i in 0..rows {
            let d = 0.05 + 0.2 * ((i * 11 % 7) as f64) / 7.0;
            for a in 0..n {
                for b in 0..n {
                    h[a * n + b] += d * x[i * n + a] * x[i * n + b] / rows as f64;
                }
            }
        }
        let largest = (0..n).map(|a| h[a * n + a]).fold(0.0, f64::max);
        for a in 0..n {
            h[a * n + a] += 1e-12 * largest;
        }
        // ∇f = Xᵀr/m lies in the row space of X, as every loss gradient does: orthogonal to the
        // flat direction, so the model is bounded below.
        let r: Vec<f64> = (0..rows).map(|i| ((i * 7 % 5) as f64 - 2.0) * 0.1).collect();
        let gradient: Vec<f64> =
            (0..n).map(|k| (0..rows).map(|i| x[i * n + k] * r[i]).sum::<f64>() / rows as f64).collect();
        let v: Vec<f64> = (0..n).map(|k| if k % 3 == 0 { 0.0 } else { (k as f64 - 4.5) * 0.05 }).collect();
        for c in [
            cert(0.01, 0.0, f64::NEG_INFINITY, f64::INFINITY),
            cert(0.002, 0.0, -0.1, 0.15),
            cert(0.0, 0.0, 0.0, f64::INFINITY),
        ] {
            let round = Round { cols: (0..n).collect(), v: v.iter().map(|x| x.clamp(c.lo, c.hi)).collect() };
            let m = round.model_minimiser(&c, &h, &gradient, 1e-12);
            let model = |z: &[f64]| {
                let d: Vec<f64> = z.iter().zip(&round.v).map(|(z, v)| z - v).collect();
                let hd: Vec<f64> = (0..n).map(|a| (0..n).map(|b| h[a * n + b] * d[b]).sum()).collect();
                dot(&gradient, &d) + 0.5 * dot(&d, &hd) + c.l1 * z.iter().map(|z| z.abs()).sum::<f64>()
            };
            for k in 0..n {
                assert!(c.lo <= m[k] && m[k] <= c.hi, "{k}: {} outside the box", m[k]);
                let slope = gradient[k] + (0..n).map(|b| h[k * n + b] * (m[b] - round.v[b])).sum::<f64>();
                assert!(violation(&c, m[k], slope) < 1e-7, "coordinate {k}: violation {}", violation(&c, m[k], slope));
            }
            assert!(model(&m) < model(&round.v), "no decrease");
        }
    }

    /// ℓ′ and ℓ″ in closed form agree with finite differences of ℓ, far into the tails too.
    /// With V every column, the restricted problem is F itself: its gap must be F − D of the
    /// certificate's own dual point ℓ′(Xw) (`dual_at`), whatever the loss, the penalty, the
    /// box, and whether s < 1 scales the point.
    #[test]
    fn the_gap_on_v_is_the_certificates_gap_when_v_holds_every_column() {
        let (m, d) = (30, 6);
        let (mut indptr, mut indices, mut values) = (vec![0], vec![], vec![]);
        for i in 0..m {
            for j in 0..d {
                if (i * 5 + j * 3) % 4 != 0 {
                    indices.push(j as u32);
                    values.push((((i * 13 + j * 7) % 11) as f64 - 5.0) / 3.0);
                }
            }
            indptr.push(indices.len());
        }
        let labels: Vec<f64> = (0..m).map(|i| if (i * 7) % 3 == 0 { 1.0 } else { -1.0 }).collect();
        let data = DataView::new(&indptr, &indices, &values, &labels, d);
        let w = [0.4, 0.0, -0.25, 0.1, 0.0, -0.6];
        let sub = Subspace::new(&data, d, &(0..d).collect::<Vec<_>>());
        let a = sub.times(&w);
        let c = 1.0;
        let scale = c / m as f64;
        for kind in [LossConjugate::Logistic, LossConjugate::Squared] {
            for (l1, l2, lo, hi) in
                [(0.05, 0.0, f64::NEG_INFINITY, f64::INFINITY), (0.001, 0.0, -1.0, 1.0), (0.02, 0.3, -0.7, 2.0)]
            {
                let cert = Certificate { conjugate: kind, ..cert(l1, l2, lo, hi) };
                let u: Vec<f64> = a.iter().zip(&labels).map(|(&ai, &y)| loss_derivatives(kind, y, ai).0).collect();
                let loss: f64 = a.iter().zip(&labels).map(|(&ai, &y)| loss_value(kind, y, ai)).sum();
                let f = scale * loss + w.iter().map(|v| l1 * v.abs() + 0.5 * l2 * v * v).sum::<f64>();
                let (dual, _) = dual_at(&cert, &data, c, d, 1, &u);
                let loss_gradient: Vec<f64> = sub.transpose_times(&u).iter().map(|g| scale * g).collect();
                let round = Round { cols: (0..d).collect(), v: w.to_vec() };
                let rows = Rows { a: a.clone(), u: u.clone(), curvature: vec![], loss };
                let on_v = round.restricted_gap(&cert, scale, &labels, &rows, &loss_gradient, 1);
                assert!(on_v >= -1e-12, "{kind:?} {l1} {l2}: negative gap {on_v}");
                assert!(
                    (on_v - (f - dual)).abs() <= 1e-10 * (1.0 + f.abs()),
                    "{kind:?} l1 {l1} l2 {l2}: gap on V {on_v} against F − D {}",
                    f - dual
                );
            }
        }
    }

    /// A support wider than REFINE_MAX would need a dense Hessian of its square (FOBOS on
    /// debian-files after two epochs: 16,665 non-zeros, 2.2 GB and 80 s): it is refined by
    /// Newton steps through Hessian-vector products instead. Here the rows share no column, so
    /// F separates by rows and F* has a closed form: row i's columns add up to one margin sᵢ,
    /// whose cheapest split costs λ|sᵢ|, and min_s ℓ(y s) + 4λ|s| (4 rows: the mean's weight)
    /// is at y·s = log(1/(4λ) − 1). The refined dual value must bound F* from below, and come
    /// within 1e-6 of it from a start the scaled dual point alone certifies only to 1e-3.
    #[test]
    fn a_support_wider_than_a_dense_hessian_is_refined_without_one() {
        let d = REFINE_MAX + 1;
        let m = 4;
        let (mut indptr, mut indices, mut values) = (vec![0], vec![], vec![]);
        for i in 0..m {
            for j in (i..d).step_by(m) {
                indices.push(j as u32);
                values.push(1.0);
            }
            indptr.push(indices.len());
        }
        let labels = [1.0, -1.0, 1.0, -1.0];
        let data = DataView::new(&indptr, &indices, &values, &labels, d);
        let l1 = 1e-3;
        let cert =
            Certificate { conjugate: LossConjugate::Logistic, ..cert(l1, 0.0, f64::NEG_INFINITY, f64::INFINITY) };
        // Every row's term, (1/4)·(ℓ(t) + 4λt) at t = y·s optimal; four of them.
        let t = (1.0 / (4.0 * l1) - 1.0_f64).ln();
        let f_star = (-t).exp().ln_1p() + 4.0 * l1 * t;
        // Every coordinate non-zero, with its row's sign at the optimum.
        let w: Vec<f64> = (0..d).map(|j| 1.3e-2 * labels[j % m]).collect();
        let a = Subspace::new(&data, d, &(0..d).collect::<Vec<_>>()).times(&w);
        let u: Vec<f64> = a.iter().zip(&labels).map(|(&ai, &y)| loss_derivatives(cert.conjugate, y, ai).0).collect();
        let gradient: Vec<f64> = transpose_times(&data, d, &u).iter().map(|g| g / m as f64).collect();
        let plain = dual_at(&cert, &data, 1.0, d, 1, &u).0;
        assert!(f_star - plain > 1e-3 * f_star, "the plain dual point is already tight: {plain} against F* {f_star}");
        let budget = Budget { enough: f64::INFINITY, slack: 1e-9, rounds: 1 };
        let refined = refined_dual(&cert, &data, 1.0, &w, &a, &gradient, budget).expect("a refinement");
        assert!(refined.dual <= f_star + 1e-12, "D = {} above F* = {f_star}", refined.dual);
        assert!(f_star - refined.dual <= 1e-6 * f_star, "D = {} not within 1e-6 of F* = {f_star}", refined.dual);
        let (moved, _) = refined.moved.expect("the refinement moved w");
        let f_moved = Subspace::new(&data, d, &(0..d).collect::<Vec<_>>())
            .times(&moved)
            .iter()
            .zip(&labels)
            .map(|(&ai, &y)| (-y * ai).exp().ln_1p() / m as f64)
            .sum::<f64>()
            + l1 * moved.iter().map(|x| x.abs()).sum::<f64>();
        assert!(f_moved >= f_star - 1e-12 && f_moved - f_star <= 1e-6 * f_star, "F = {f_moved} against F* = {f_star}");
    }

    #[test]
    fn loss_terms_from_one_exponential_match_the_separate_formulas() {
        for kind in [LossConjugate::Logistic, LossConjugate::Squared] {
            for y in [-1.0, 1.0] {
                for a in [-800.0, -40.0, -3.5, -1e-9, 0.0, 2e-7, 0.7, 12.0, 36.0, 750.0] {
                    let (loss, u, curvature) = loss_terms(kind, y, a);
                    let (u0, c0) = loss_derivatives(kind, y, a);
                    let loss0 = loss_value(kind, y, a);
                    let close = |x: f64, x0: f64| (x - x0).abs() <= 1e-14 * x0.abs() + 1e-300;
                    assert!(close(loss, loss0), "{kind:?} y {y} a {a}: ℓ {loss} against {loss0}");
                    assert!(close(u, u0), "{kind:?} y {y} a {a}: ℓ′ {u} against {u0}");
                    // p(1 − p) loses 1 − p to rounding as p nears 1 (1e-12 of it at |a| = 12,
                    // all of it past 37); e/(1 + e)² keeps it.
                    let curvature_ok = if kind == LossConjugate::Squared || a.abs() <= 30.0 {
                        (curvature - c0).abs() <= 1e-10 * c0
                    } else {
                        (0.0..1e-13).contains(&curvature)
                    };
                    assert!(curvature_ok, "{kind:?} y {y} a {a}: ℓ″ {curvature} against {c0}");
                }
            }
        }
    }

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
            for y in [-1.0f64, 1.0] {
                let (u, _) = loss_derivatives(LossConjugate::SquaredHinge, y, a);
                let l = loss_value(LossConjugate::SquaredHinge, y, a);
                let lhs = l + loss_conjugate(LossConjugate::SquaredHinge, y, u);
                assert!((lhs - a * u).abs() < 1e-12, "squared hinge a = {a}, y = {y}");
                // and ℓ(a) + ℓ*(v) ≥ a·v for any v in the domain (Fenchel–Young)
                for v in [0.0, -0.3 * y, -2.0 * y, -7.5 * y] {
                    assert!(l + loss_conjugate(LossConjugate::SquaredHinge, y, v) >= a * v - 1e-12);
                }
            }
        }
        assert_eq!(loss_conjugate(LossConjugate::SquaredHinge, 1.0, 0.5), f64::INFINITY);
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
