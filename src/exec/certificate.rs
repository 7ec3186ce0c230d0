//! The duality-gap certificate of docs/algorithms.md §10: for any u ∈ ℝᵐ in the domain of ℓ*,
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
//! the point at a Newton-refined primal (`refined_dual`; softmax's in `softmax.rs`), and the
//! best D of the earlier checks of the run (D(u) ≤ F* does not expire when w moves on).

mod groups;
mod intercept;
mod loss;
pub(crate) mod reduced;
pub mod refine;
pub mod refinement;
mod settle;
mod softmax;
mod support;

use crate::exec::linalg::dot;
pub(crate) use crate::exec::linalg::{conjugate_gradients, transpose_times};
pub(crate) use intercept::{class_offsets, intercept_only};
use loss::loss_derivatives;
pub(crate) use loss::loss_terms;
use refine::{REFINE_FIRST, REFINE_STALL};

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
#[derive(Clone)]
pub struct DualHistory {
    points: std::collections::VecDeque<Vec<f64>>,
    /// The largest D of the run so far: a lower bound on F* whatever the later iterates.
    best: f64,
    /// F at the last check.
    objective: Option<f64>,
    /// F had stalled against the gap at the last check.
    stalled: bool,
    /// Refine at every check, not only once F stalls, where that is cheap or the gap is near
    /// ([`EAGER_GAP`]): a column solver continues from the refined point
    /// ([`Assessment::polished`]), so the refinement is a step of the solver too.
    eager: bool,
}

/// An eager run refines at a check whatever F did once the gap is within this fraction of F,
/// or while the support is small enough (at most `REFINE_ALL` non-zeros) for the dense
/// refinement to cost little. Before that the Newton epochs gain more for their time: on
/// debian-desc at C = 10 the first checks (gaps of 0.6–0.9·F, 1,000–3,000 non-zeros) spent
/// 1.5–4.7 s each refining a point the next epochs left far behind; refining only where F
/// stalls there took a `--tol 0.1` run from 8.2 s to 5.8 s and `--tol 1e-4` from 12.1 s to 9.7 s.
const EAGER_GAP: f64 = 0.1;

impl Default for DualHistory {
    fn default() -> Self {
        DualHistory {
            points: Default::default(),
            best: f64::NEG_INFINITY,
            objective: None,
            stalled: false,
            eager: false,
        }
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

/// D(s·u) for u in the domain of ℓ*, with s ≤ 1 the scale that puts −(c/m)·XᵀΩ(s·u) in the
/// domain of r*; also z = −(c/m)·XᵀΩu, unscaled (−z is the gradient of the loss part when
/// u = ℓ′). Ω holds the rows' weights (the identity without them): D(u) =
/// −(c/m)·Σᵢ ωᵢ·ℓ*(yᵢ, uᵢ) − R*(z).
///
/// `u` has `width` entries per row: 1 for a scalar loss, k for softmax (then z is d×k, row-major
/// like W, and a vector term applies to each of its rows).
fn dual_at(cert: &Certificate, data: &DataView, c: f64, features: usize, width: usize, u: &[f64]) -> (f64, Vec<f64>) {
    let m = data.rows();
    let weighted = row_weighted(data, width, u);
    let wu = weighted.as_deref().unwrap_or(u);
    let z: Vec<f64> = xtu(data, features, width, wu).iter().map(|g| -c / m as f64 * g).collect();
    let (s, reg_conj) = reg_part(cert, &z, width, data.operator);
    // `μ·l2sq(b)`: b is one more coordinate whose column is all ones, so R* adds the
    // conjugate of μ·½b² at z_b = −(c/m)·Σᵢ uᵢ (scaled as every z).
    let reg_conj = if cert.intercept && cert.intercept_l2 > 0.0 && width == 1 {
        let zb = -c / m as f64 * wu.iter().sum::<f64>() * s;
        reg_conj + zb * zb / (2.0 * cert.intercept_l2)
    } else {
        reg_conj
    };
    let loss_conj: f64 = u
        .chunks(width)
        .zip(data.labels)
        .enumerate()
        .map(|(i, (ui, &y))| match data.weight(i) {
            // A row of weight 0 is out of the sum, whatever its dual entry.
            0.0 => 0.0,
            wi => wi * row_conjugate(cert.conjugate, y, ui, s),
        })
        .sum();
    (-c / m as f64 * loss_conj - reg_conj, z)
}

/// ωᵢ·uᵢ for a view with the rows' weights (`width` entries a row), None without them.
fn row_weighted(data: &DataView, width: usize, u: &[f64]) -> Option<Vec<f64>> {
    data.weights.map(|s| u.chunks(width).zip(s).flat_map(|(ui, &wi)| ui.iter().map(move |x| wi * x)).collect())
}

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

/// Xᵀu for `u` of `width` entries per row: d × width, row-major like W.
fn xtu(data: &DataView, features: usize, width: usize, u: &[f64]) -> Vec<f64> {
    if width == 1 {
        return transpose_times(data, features, u);
    }
    let mut xtu = vec![0.0; features * width];
    for (i, ui) in u.chunks(width).enumerate() {
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
}

/// The loss derivatives at `margins`, uᵢ = ℓ′(yᵢ, aᵢ) (softmax: the k entries p − e_y of each row).
fn derivatives(plan: &Plan, state: &State, data: &DataView, margins: &[f64]) -> Vec<f64> {
    let obj = &plan.objective;
    let m = data.rows();
    if obj.softmax {
        return softmax_dual_point(data.labels, margins, margins.len() / m.max(1));
    }
    let env = Env::new(plan, data.dims());
    let mut scratch = State { scalars: state.scalars.clone(), vectors: plan.vectors.iter().map(|_| vec![]).collect() };
    if let Some(y) = plan.labels() {
        scratch.vectors[y.0] = data.labels.to_vec();
    }
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
}

/// ∇ of the loss part, (c/m)·Xᵀℓ′ at `margins` (d × k, row-major like W, for softmax), whether
/// or not the plan has a certificate: `optc path` takes a dual norm of it at its start.
pub fn loss_gradient(plan: &Plan, state: &State, data: &DataView, margins: &[f64]) -> Vec<f64> {
    let m = data.rows();
    let features = state.weights(plan).len() / (margins.len() / m.max(1)).max(1);
    if m == 0 {
        return vec![0.0; state.weights(plan).len()];
    }
    let width = margins.len() / m;
    let u = derivatives(plan, state, data, margins);
    let u = row_weighted(data, width, &u).unwrap_or(u);
    let c = plan.objective.loss_weight;
    xtu(data, features, width, &u).iter().map(|g| c / m as f64 * g).collect()
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

/// l1·‖x‖₁ + ½·l2·‖x‖² (the box holds by construction): R of the coordinates `x`.
pub(crate) fn regularizer(cert: &Certificate, x: &[f64]) -> f64 {
    x.iter().map(|v| cert.l1 * v.abs() + 0.5 * cert.l2 * v * v).sum()
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
        LossConjugate::Softmax => unreachable!("softmax points are projected row by row"),
    }
}

/// The scores' gradients uᵢ = softmax(aᵢ) − e_{yᵢ}, k per row, from the k scores per row.
pub(crate) fn softmax_dual_point(labels: &[f64], scores: &[f64], k: usize) -> Vec<f64> {
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

/// Where the Newton refinement moved the iterate: F is no higher there (its steps descend F).
pub struct Polished {
    pub weights: Vec<f64>,
    /// How far it moved a free intercept (0 without one): b is one more coordinate of its steps.
    pub intercept_shift: f64,
    /// How far it moved softmax's free per-class offsets (empty without them).
    pub class_shift: Vec<f64>,
    /// ∇f at the new point, from the pass that gave its dual point.
    pub gradient: Vec<f64>,
}

/// The gap and, from the same pass, the gradient of the loss part, ∇f(w) = (c/m)·Xᵀu.
pub struct Assessment {
    pub gap: f64,
    /// Empty at the check of a dual method, whose features nothing ranks.
    pub gradient: Vec<f64>,
    /// The weights the Newton refinement moved w to, when it ran and moved, and ∇f there: F is
    /// no higher at them (its steps descend F), so a column solver may continue from them.
    pub polished: Option<Polished>,
    /// D at the dual point whose correlations `gradient` holds (ℓ′ of the margins, scaled into
    /// the domain): Gap Safe screening's ball is centred there. −∞ at a dual method's check.
    pub plain_dual: f64,
    /// The best D of this check's dual points, and of the run's earlier checks: the gap is F
    /// minus the larger.
    dual: f64,
    earlier: f64,
    /// F stalled against the gap since the last check (or there is no run to compare with):
    /// the Newton refinement ([`refinement::refine`]) is due if the gap is short of the target.
    stalled: bool,
    /// F stalled at the check before this one too (or there is no run): a wide support's
    /// conjugate-gradient refinement waits for that ([`refine::Budget`]'s `stalled_again`).
    stalled_again: bool,
    /// The run refines at every check ([`DualHistory`]'s `eager`).
    eager: bool,
}

impl Assessment {
    /// F minus the best dual value, never negative (rounding can make F − D dip below 0 at the
    /// optimum) and ∞ where it is not a number.
    fn settle(&mut self, objective: f64) {
        let gap = objective - self.dual.max(self.earlier);
        self.gap = if gap.is_nan() { f64::INFINITY } else { gap.max(0.0) };
    }
}

/// Records a check in the run's history: its best dual value, which bounds F* at every later
/// check too, and F, which the next check's stall test compares with. Called after the
/// refinement, whose dual value counts.
pub fn record(history: Option<&mut DualHistory>, assessment: Option<&Assessment>, objective: f64) {
    if let (Some(h), Some(a)) = (history, assessment) {
        h.best = h.best.max(a.dual);
        h.objective = Some(objective);
        h.stalled = a.stalled;
    }
}

/// The certified bound on F(w) − F* at flushed weights, given F(w) (None when the plan has no
/// closed-form dual, or a group term that leaves a feature unpenalised; never negative:
/// rounding can make F − D dip below 0 at the optimum), and ∇f(w), which the working-set
/// driver ranks features by.
/// `margins` are ⟨xᵢ, w⟩ for every row, as [`super::evaluate::evaluate_with_margins`] gives them.
/// The dual points are the closed-form ones (the plain point, the plan's own, the extrapolation
/// of `history`'s); a run then calls [`refinement::refine`] and [`record`].
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
            dual: f64::NEG_INFINITY,
            earlier: f64::NEG_INFINITY,
            stalled: false,
            stalled_again: false,
            eager: false,
        });
    }
    let obj = &plan.objective;
    let c = obj.loss_weight;
    let env = Env::new(plan, data.dims());
    let width = margins.len() / m;
    let features = w.len() / width;
    if let (Some(e), true) = (&obj.dual, obj.dual_only) {
        return Some(dual_iterate(plan, &cert, state, data, objective, e, features, history));
    }
    let u = derivatives(plan, state, data, margins);
    let u = match (free_intercept(&cert), obj.softmax) {
        (true, true) => intercept::balance_classes(data.labels, data.weights, u, width),
        (true, false) => feasible_for_intercept(&cert, data.labels, data.weights, margins, u),
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
                    extrapolated = intercept::balance_classes(data.labels, data.weights, extrapolated, width);
                }
            } else {
                for (ui, &y) in extrapolated.iter_mut().zip(data.labels) {
                    *ui = into_loss_domain(cert.conjugate, y, *ui);
                }
                if free_intercept(&cert) {
                    intercept::balance(cert.conjugate, data.labels, data.weights, &mut extrapolated);
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
        (h.eager
            && (gap <= EAGER_GAP * objective.abs() || w.iter().filter(|v| **v != 0.0).count() <= refine::REFINE_ALL))
            || match h.objective {
                Some(f) => f - objective < REFINE_STALL * gap,
                None => gap <= REFINE_FIRST * objective.abs(),
            }
    });
    let stalled_again = stalled && history.as_ref().is_none_or(|h| h.stalled);
    let eager = history.as_ref().is_some_and(|h| h.eager);
    let mut a = Assessment { gap, gradient, polished: None, plain_dual, dual, earlier, stalled, stalled_again, eager };
    a.settle(objective);
    Some(a)
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
    let mut own: Vec<f64> =
        (0..m).map(|i| into_loss_domain(cert.conjugate, data.labels[i], eval_at(&env, dual, state, i, 0))).collect();
    // Dual CD with a free intercept keeps Σ αᵢyᵢ = 0 only in the limit (its augmented
    // Lagrangian): balanced, the point bounds F* at every check.
    if free_intercept(cert) {
        intercept::balance(cert.conjugate, data.labels, data.weights, &mut own);
    }
    let (d, _) = dual_at(cert, data, plan.objective.loss_weight, features, 1, &own);
    let d = if d.is_nan() { f64::NEG_INFINITY } else { d };
    let earlier = history.map_or(f64::NEG_INFINITY, |h| h.best);
    let mut a = Assessment {
        gap: f64::INFINITY,
        gradient: vec![],
        polished: None,
        plain_dual: f64::NEG_INFINITY,
        dual: d,
        earlier,
        stalled: false,
        stalled_again: false,
        eager: false,
    };
    a.settle(objective);
    a
}

/// An unregularized intercept, whose dual point must satisfy Σᵢ uᵢ = 0.
fn free_intercept(cert: &Certificate) -> bool {
    cert.intercept && cert.intercept_l2 == 0.0
}

/// With an intercept, the dual point of the margins `a`: ℓ′ where b is optimal for this w (for
/// the losses with ℓ″; hinge keeps the plan's subgradient `u`), balanced to Σᵢ uᵢ = 0 inside the
/// domain (see [`intercept`]).
fn feasible_for_intercept(
    cert: &Certificate,
    labels: &[f64],
    weights: Option<&[f64]>,
    a: &[f64],
    u: Vec<f64>,
) -> Vec<f64> {
    let mut u: Vec<f64> = if cert.conjugate.has_curvature() {
        let mut shifted = a.to_vec();
        intercept::shift_to_optimal_offset(cert.conjugate, labels, weights, &mut shifted);
        shifted
            .iter()
            .zip(labels)
            .map(|(&ai, &y)| into_loss_domain(cert.conjugate, y, loss_derivatives(cert.conjugate, y, ai).0))
            .collect()
    } else {
        u.iter().zip(labels).map(|(&ui, &y)| into_loss_domain(cert.conjugate, y, ui)).collect()
    };
    intercept::balance(cert.conjugate, labels, weights, &mut u);
    u
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
pub(crate) mod tests;
