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
//!
//! A run's check is one call, [`check`]: [`assess`] evaluates the closed-form points (the plain
//! one, the plan's own, the extrapolation) and decides from the run's history whether the check
//! refines (`Gate`: F stalled against the gap, or an eager run); `refinement::refine` picks
//! the refinement that fits the support and runs it when the gap is short of the target; the
//! check is then recorded in the history. Every dual point is made by `dual_point`
//! (`point.rs`), every conjugate lives in `conjugates.rs`, every refinement's step is taken by
//! the one line search of `search.rs`, and the linear algebra below them lives in `exec/linalg`.

mod conjugates;
mod intercept;
mod loss;
mod point;
pub(crate) mod reduced;
pub mod refine;
pub mod refinement;
mod search;
mod settle;
mod softmax;
mod support;
mod support_dual;
mod tuning;

use crate::exec::linalg::dot;
pub(crate) use crate::exec::linalg::{conjugate_gradients, transpose_times};
use conjugates::groups;
pub(crate) use conjugates::{domain_scale, into_loss_domain, reg_part, row_conjugate, scaled_reg_conjugate};
pub use conjugates::{loss_conjugate, reg_conjugate};
pub(crate) use intercept::{class_offsets, intercept_only};
pub(crate) use loss::loss_terms;
use point::free_intercept;
pub(crate) use point::{dual_point, Entries};

use super::interp::{eval_at, Env};
use super::{DataView, State};
use crate::plan::{Certificate, LossConjugate, Plan};
use tuning::TUNING;

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
    /// The run's epochs at this check ([`DualHistory::at_epoch`]).
    epochs: usize,
    /// The last two checks' gaps at their closed-form dual points (before any refinement) and
    /// the epochs then, the later last: with this check's, the pace of the run's own epochs
    /// ([`Gate::pace`]).
    plain: [Option<(f64, usize)>; 2],
}

impl Default for DualHistory {
    fn default() -> Self {
        DualHistory {
            points: Default::default(),
            best: f64::NEG_INFINITY,
            objective: None,
            stalled: false,
            epochs: 0,
            plain: [None; 2],
        }
    }
}

impl DualHistory {
    /// The run has made `epochs` epochs by the next check.
    pub fn at_epoch(&mut self, epochs: usize) {
        self.epochs = epochs;
    }

    fn push(&mut self, u: Vec<f64>) {
        if self.points.len() == TUNING.extrapolation_k + 1 {
            self.points.pop_front();
        }
        self.points.push_back(u);
    }

    /// Σ cₖ·uₖ over the last K points, c minimising ‖Σ cₖ(uₖ − uₖ₋₁)‖ with Σ cₖ = 1.
    fn extrapolate(&self) -> Option<Vec<f64>> {
        if self.points.len() < TUNING.extrapolation_k + 1 {
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

/// Xᵀu for `u` of `width` entries per row: d × width, row-major like W.
fn xtu(data: &DataView, features: usize, width: usize, u: &[f64]) -> Vec<f64> {
    if width == 1 {
        return transpose_times(data, features, u);
    }
    let mut xtu = crate::exec::linalg::zeros(features * width);
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

/// l1·‖x‖₁ + ½·l2·‖x‖² (the box holds by construction): R of the coordinates `x`.
pub(crate) fn regularizer(cert: &Certificate, x: &[f64]) -> f64 {
    x.iter().map(|v| cert.l1 * v.abs() + 0.5 * cert.l2 * v * v).sum()
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
}

/// When a check refines, decided in one place from the run's history ([`assess_gated`]) and
/// read only by [`refinement::refine`], within this module: no flag of it leaves [`check`].
#[derive(Clone, Copy, Default)]
pub(super) struct Gate {
    /// F stalled against the gap since the last check (or there is no run to compare with):
    /// the Newton refinement is due if the gap is short of the target.
    pub(super) stalled: bool,
    /// F stalled at the check before this one too (or there is no run): a wide support's
    /// conjugate-gradient refinement waits for that ([`refine::Budget`]'s `stalled_again`).
    pub(super) stalled_again: bool,
    /// The run refines at every check, not only once F stalls, where that is cheap or the gap
    /// is near (`TUNING.eager_gap`): a column solver continues from the refined point
    /// ([`Assessment::polished`]), so the refinement is a step of the solver too.
    pub(super) eager: bool,
    /// The factor the closed-form gap fell by per epoch since the last check, or the one
    /// before it where that was slower (None at a run's first check, or with no epoch
    /// between): how near the run's own epochs are to the target, which an expensive
    /// refinement weighs itself against (`refinement::refine`).
    pub(super) pace: Option<f64>,
    /// The run's epochs at this check (0 before the first, or outside a run).
    pub(super) epochs: usize,
}

impl Assessment {
    /// F minus the best dual value, never negative (rounding can make F − D dip below 0 at the
    /// optimum) and ∞ where it is not a number.
    fn settle(&mut self, objective: f64) {
        let gap = objective - self.dual.max(self.earlier);
        self.gap = if gap.is_nan() { f64::INFINITY } else { gap.max(0.0) };
    }
}

/// One check of a run: the gap at the closed-form dual points ([`assess`]), the Newton
/// refinement when the run's history says it is due and the gap is short of `target`
/// (`refinement::refine`; `halt` ends it early), and the check recorded in `history`: its
/// best dual value, which bounds F* at every later check too, and F, which the next check's
/// stall test compares with. `eager`: the run refines at every check where that is cheap or
/// the gap is near (it polishes its iterate with the refinement). The one call that owns the
/// history; "when do we refine" is decided here and in `refinement::refine`, nowhere else.
#[allow(clippy::too_many_arguments)]
pub fn check(
    plan: &Plan,
    state: &State,
    data: &DataView,
    objective: f64,
    margins: &[f64],
    mut history: Option<&mut DualHistory>,
    eager: bool,
    target: f64,
    halt: &dyn Fn() -> bool,
) -> Option<Assessment> {
    let (mut a, gate) = assess_gated(plan, state, data, objective, margins, history.as_deref_mut(), eager)?;
    let plain = a.gap;
    refinement::refine(plan, data, state, margins, &mut a, gate, objective, target, halt);
    if let Some(h) = history {
        h.best = h.best.max(a.dual);
        h.objective = Some(objective);
        h.stalled = gate.stalled;
        h.plain = [h.plain[1], Some((plain, h.epochs))];
    }
    Some(a)
}

/// The certified bound on F(w) − F* at flushed weights, given F(w) (None when the plan has no
/// closed-form dual, or a group term that leaves a feature unpenalised; never negative:
/// rounding can make F − D dip below 0 at the optimum), and ∇f(w), which the working-set
/// driver ranks features by.
/// `margins` are ⟨xᵢ, w⟩ for every row, as [`super::evaluate::evaluate_with_margins`] gives them.
/// The dual points are the closed-form ones (the plain point, the plan's own, the extrapolation
/// of `history`'s); a run's checks go through [`check`], which refines and records.
pub fn assess(
    plan: &Plan,
    state: &State,
    data: &DataView,
    objective: f64,
    margins: &[f64],
    history: Option<&mut DualHistory>,
) -> Option<Assessment> {
    assess_gated(plan, state, data, objective, margins, history, false).map(|(a, _)| a)
}

/// [`assess`], and whether the check's refinement is due ([`Gate`]).
fn assess_gated(
    plan: &Plan,
    state: &State,
    data: &DataView,
    objective: f64,
    margins: &[f64],
    history: Option<&mut DualHistory>,
    eager: bool,
) -> Option<(Assessment, Gate)> {
    let cert = plan.certificate?;
    let w = state.weights(plan);
    if cert.groups.is_some() && !data.operator.is_some_and(|op| groups::applies(cert.l2, op, w.len())) {
        return None;
    }
    let m = data.rows();
    if m == 0 {
        let a = Assessment {
            gap: 0.0,
            gradient: vec![0.0; w.len()],
            polished: None,
            plain_dual: f64::NEG_INFINITY,
            dual: f64::NEG_INFINITY,
            earlier: f64::NEG_INFINITY,
        };
        return Some((a, Gate::default()));
    }
    let obj = &plan.objective;
    let c = obj.loss_weight;
    let env = Env::new(plan, data.dims());
    let width = margins.len() / m;
    let features = w.len() / width;
    if let (Some(e), true) = (&obj.dual, obj.dual_only) {
        return Some((dual_iterate(plan, &cert, state, data, objective, e, features, history), Gate::default()));
    }
    // ℓ′ at the iterate; with a free scalar intercept, at the offset optimal for w where the
    // loss has ℓ″ (the hinge keeps the plan's subgradient, put into the domain).
    let entries = match (free_intercept(&cert) && !obj.softmax, cert.conjugate.has_curvature()) {
        (true, true) => Entries::Margins(margins),
        (true, false) => Entries::Any(derivatives(plan, state, data, margins)),
        (false, _) => Entries::InDomain(derivatives(plan, state, data, margins)),
    };
    let u = dual_point(&cert, data.labels, data.weights, width, entries);
    let (mut dual, z) = dual_at(&cert, data, c, features, width, &u);
    let plain_dual = dual;
    // A dual point the plan keeps itself (the Picard SVM's): any point in the domain bounds F*.
    if let (Some(e), false) = (&obj.dual, obj.softmax) {
        let own = Entries::Any((0..m).map(|i| eval_at(&env, e, state, i, 0)).collect());
        let (d, _) = dual_at(&cert, data, c, features, width, &dual_point(&cert, data.labels, data.weights, 1, own));
        if d.is_finite() {
            dual = dual.max(d);
        }
    }
    let gradient: Vec<f64> = z.iter().map(|v| -v).collect();
    let mut history = history;
    if let Some(h) = history.as_deref_mut() {
        h.push(u);
        if let Some(extrapolated) = h.extrapolate() {
            let extrapolated = dual_point(&cert, data.labels, data.weights, width, Entries::Any(extrapolated));
            let (d, _) = dual_at(&cert, data, c, features, width, &extrapolated);
            if d.is_finite() {
                dual = dual.max(d);
            }
        }
    }
    let earlier = history.as_ref().map_or(f64::NEG_INFINITY, |h| h.best);
    let gap = objective - dual.max(earlier);
    // Without a history (a one-off gap), always; in a run, once F has stalled against the gap.
    // An eager refinement buys the epochs it saves; on dense rows it is left to them once a
    // round costs more than `TUNING.refine_eager_epochs` of them.
    let support = w.iter().filter(|v| **v != 0.0).count();
    let affordable = || refine::round_epochs(data, features, support).is_none_or(|e| e <= TUNING.refine_eager_epochs);
    let stalled = history.as_ref().is_none_or(|h| {
        (eager && (gap <= TUNING.eager_gap * objective.abs() || support <= TUNING.refine_all) && affordable())
            || match h.objective {
                Some(f) => f - objective < TUNING.refine_stall * gap,
                None => gap <= TUNING.refine_first * objective.abs(),
            }
    });
    let stalled_again = stalled && history.as_ref().is_none_or(|h| h.stalled);
    let eager = eager && history.is_some();
    let mut a = Assessment { gap, gradient, polished: None, plain_dual, dual, earlier };
    a.settle(objective);
    // The slower of this pace and the last check's: a gap that halves once and then stalls
    // (debian-desc's ℓ1 squared hinge + b at C = 1, checks at 0.60 and 0.47 an epoch, then
    // 1.0) is not one about to finish.
    let pace = history.as_ref().and_then(|h| {
        let now = pace_between(h.plain[1]?, (a.gap, h.epochs))?;
        Some(h.plain[0].and_then(|before| pace_between(before, h.plain[1]?)).map_or(now, |last| last.max(now)))
    });
    let epochs = history.as_ref().map_or(0, |h| h.epochs);
    Some((a, Gate { stalled, stalled_again, eager, pace, epochs }))
}

/// The factor a gap fell by per epoch from one check, (gap, epochs), to a later one: None with
/// no epoch between them or no gap to fall from.
fn pace_between((before, at): (f64, usize), (gap, epochs): (f64, usize)) -> Option<f64> {
    (epochs > at && before > 0.0).then(|| (gap / before).powf(1.0 / (epochs - at) as f64))
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
    // Dual CD with a free intercept keeps Σ αᵢyᵢ = 0 only in the limit (its augmented
    // Lagrangian): balanced, the point bounds F* at every check.
    let raw: Vec<f64> = (0..m).map(|i| eval_at(&env, dual, state, i, 0)).collect();
    let c = plan.objective.loss_weight;
    // The hinge beside ℓ1: the point moved onto the support's equalities, too.
    let corrected = support_dual::best_dual(cert, data, c, state.weights(plan), &raw);
    let own = dual_point(cert, data.labels, data.weights, 1, Entries::Any(raw));
    let (d, _) = dual_at(cert, data, c, features, 1, &own);
    let d = if d.is_nan() { f64::NEG_INFINITY } else { d };
    let d = corrected.map_or(d, |s| d.max(s));
    let earlier = history.map_or(f64::NEG_INFINITY, |h| h.best);
    let mut a = Assessment {
        gap: f64::INFINITY,
        gradient: vec![],
        polished: None,
        plain_dual: f64::NEG_INFINITY,
        dual: d,
        earlier,
    };
    a.settle(objective);
    a
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

#[cfg(test)]
pub(crate) mod tests;
