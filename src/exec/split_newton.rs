//! Proximal Newton with working sets on rows split across ranks (`mpirun -np N optc run` on a
//! model SCD takes: a twice-differentiable loss with per-coordinate terms, ℓ1, elastic net,
//! boxes). It is the distributed form of the outer iterations SCD's certificate runs alone
//! (newGLMNET's, Yuan, Ho and Lin 2012), with the model solved on a working set:
//!
//! 1. One AllReduce of Σᵢ ℓ, Xᵀℓ′ and the errors gives F, the gradient and the training error;
//!    the duality gap follows from them and one more reduced sum (Σᵢ ℓ*), as the streamed
//!    check computes it.
//! 2. The working set V — every non-zero weight, then the coordinates that violate their
//!    optimality condition the most — is picked from the reduced gradient, so it is the same on
//!    every rank.
//! 3. The Hessian on V, (c/m)·X_Vᵀ diag(ℓ″) X_V, is summed across the ranks as a dense upper
//!    triangle of |V|(|V| + 1)/2 entries.
//! 4. Every rank solves the quadratic model on V by coordinate descent, then on the face it
//!    found (the signs of the non-zero coordinates) exactly, by a Cholesky factor of the
//!    Hessian there: coordinate descent alone crawls along near-duplicate columns (debian-files
//!    took 319 iterations to a certified 1e-4 without the face solve, 20 with it). No
//!    communication: the same inputs give the same step on every rank.
//!
//!    A set wider than 2,048 coordinates (weak ℓ1 regularization: debian-desc at C = 10
//!    grows past 9,000) forms no Hessian: Newton's step on the set's face is solved by
//!    conjugate gradients, each Hessian-vector product one pass over the rows and a reduction
//!    of |V| floats, with Levenberg's damping that the line search tunes. Capping the set instead (its largest
//!    violators, the rest of the weights held) left debian-desc at C = 10 25% above F* after
//!    40 s on 2 ranks; the face's steps bring it within 2%.
//! 5. A backtracking line search on F along the step costs one reduced sum a trial.
//!
//! FISTA, the alternative whose sums split (`plan::distribute`), needs hundreds of iterations on
//! text data where this needs tens.

use super::certificate::{
    conjugate_gradients, loss_conjugate, loss_terms, regularizer, scaled_reg_conjugate, transpose_times,
};
use super::collective::Collective;
use super::driver::{working_set, SetSize};
use super::driver::{Outcome, RunSettings};
use super::evaluate::margin;
use super::evaluate::Evaluation;
use super::stopping::{Checks, Ended};
use super::stream::{StreamOutcome, StreamStop};
use super::{DataView, State};
use crate::data::DataFacts;
use crate::plan::{Certificate, LossConjugate, Plan};
use std::time::Instant;

/// The widest working set whose Hessian is summed dense: its upper triangle is
/// 8·|V|(|V| + 1)/2 bytes a reduction (16 MB). A wider set takes Newton's step on its face by
/// Hessian-vector products ([`face_products`]).
const V_MAX: usize = 2048;
/// Sweeps of coordinate descent on the model, at most.
const SWEEPS: usize = 100;
/// The sweeps stop when no coordinate moved by more than this times the first sweep's largest
/// move.
const SWEEP_TOL: f64 = 1e-3;
/// Conjugate-gradient iterations of a step on a set wider than [`V_MAX`], at most (as one
/// process's refinement caps them: an inexact step the next iteration continues from is worth
/// more than an exact one), and the preconditioned residual's norm, relative to its first,
/// that ends them.
const CG_STEPS: usize = 50;
const CG_TOL: f64 = 1e-3;
/// The face step's first damping, and its least.
const DAMPING: f64 = 1e-2;
const DAMPING_LEAST: f64 = 1e-6;
/// Armijo's constant and the trials of the line search.
const ARMIJO: f64 = 1e-2;
const TRIALS: usize = 30;

/// The model's certificate when `plan` is SCD's and this solver takes its model; None
/// otherwise.
pub fn applies(plan: &Plan) -> Option<Certificate> {
    // The rows' weights are not carried by its steps (runs on several processes refuse them).
    if plan.info.solver != crate::solvers::SolverKind::Scd || plan.row_weights().is_some() {
        return None;
    }
    let cert = plan.certificate?;
    let obj = &plan.objective;
    let twice_differentiable =
        matches!(cert.conjugate, LossConjugate::Logistic | LossConjugate::Squared | LossConjugate::SquaredHinge);
    let one_vector = !obj.softmax && obj.intercept.is_none() && obj.class_intercept.is_none();
    let per_coordinate = cert.vector.is_none() && cert.groups.is_none() && !cert.intercept && obj.composite.is_none();
    (twice_differentiable && one_vector && per_coordinate && obj.dual.is_none()).then_some(cert)
}

/// Solves from w = 0 (clamped into the box) on this rank's rows `data`, the whole data's facts
/// in `facts`, until the rule of `settings`; every rank returns the same weights.
pub fn run(
    plan: &Plan,
    cert: &Certificate,
    data: &DataView,
    facts: &DataFacts,
    settings: &RunSettings,
    ranks: &dyn Collective,
) -> Result<StreamOutcome, StreamStop> {
    run_dense_at_most(plan, cert, data, facts, settings, ranks, V_MAX)
}

/// [`run`], a working set wider than `dense_most` stepping by Hessian-vector products (tests
/// take that path on small data).
pub fn run_dense_at_most(
    plan: &Plan,
    cert: &Certificate,
    data: &DataView,
    facts: &DataFacts,
    settings: &RunSettings,
    ranks: &dyn Collective,
    dense_most: usize,
) -> Result<StreamOutcome, StreamStop> {
    let (d, rows) = (data.features, data.rows());
    let c = plan.objective.loss_weight;
    let cm = c / facts.rows.max(1) as f64;
    let classification = plan.info.classification;
    let start = Instant::now();
    let mut w = vec![0.0f64.clamp(cert.lo, cert.hi); d];
    let mut a: Vec<f64> = (0..rows).map(|i| margin(data, &w, i)).collect();
    let mut checks = Checks::new(plan, settings);
    let mut best_dual = f64::NEG_INFINITY;
    let (mut epochs, mut passes, mut check_seconds) = (0, 0, 0.0);
    let mut start_objective = None;
    let mut last: (Evaluation, Option<f64>);
    let mut largest_set = 0;
    // The face's step gave no descent: the next iteration takes the capped dense one.
    let mut dense_after_products = false;
    // The face step's damping (relative to H's mean diagonal): quartered when the line search
    // takes half the step or more, kept when it takes a quarter, raised fourfold when less.
    let mut damping = DAMPING;
    let mut state = State::new(plan, &DataFacts { rows, ..*facts }, data.labels);
    let weights = plan.weights().map(|v| v.0).unwrap_or(0);
    loop {
        // 1. F, the gradient and the certificate from the reduced sums.
        let checking = Instant::now();
        let mut u = vec![0.0; rows];
        let mut h = vec![0.0; rows];
        let mut rest = [0.0; 3];
        for i in 0..rows {
            let y = data.labels[i];
            let (loss, ui, hi) = loss_terms(cert.conjugate, y, a[i]);
            (u[i], h[i]) = (ui, hi);
            rest[0] += loss;
            rest[1] += f64::from(u8::from((if a[i] > 0.0 { 1.0 } else { -1.0 }) != y));
            rest[2] += (a[i] - y) * (a[i] - y);
        }
        // Xᵀℓ′, then Σℓ, the errors and the squared errors: one reduction.
        let mut sums = transpose_times(data, d, &u);
        sums.extend(rest);
        ranks.sum(&mut sums)?;
        passes += 1;
        let gradient: Vec<f64> = sums[..d].iter().map(|x| cm * x).collect();
        let mean = |v: f64| v / facts.rows.max(1) as f64;
        let f = cm * sums[d] + regularizer(cert, &w);
        if !f.is_finite() {
            return Err(StreamStop::Fault {
                fault: super::Fault { what: "F".into(), value: f, step: epochs as f64, row: 0 },
                line: 0,
            });
        }
        start_objective.get_or_insert(f);
        let z: Vec<f64> = gradient.iter().map(|g| -g).collect();
        let (s, reg) = scaled_reg_conjugate(cert, &z);
        if reg.is_finite() {
            let mut conj = [(0..rows).map(|i| loss_conjugate(cert.conjugate, data.labels[i], s * u[i])).sum::<f64>()];
            ranks.sum(&mut conj)?;
            passes += 1;
            let dual = -c * mean(conj[0]) - reg;
            if dual.is_finite() {
                best_dual = best_dual.max(dual);
            }
        }
        let gap = f - best_dual;
        let gap = if gap.is_nan() { f64::INFINITY } else { gap.max(0.0) };
        let eval = Evaluation {
            objective: f,
            loss: mean(sums[d]),
            nnz: w.iter().filter(|x| **x != 0.0).count(),
            nnz_rows: None,
            error: classification.then(|| mean(sums[d + 1])),
            mse: (!classification).then(|| mean(sums[d + 2])),
        };
        state.vectors[weights].clone_from(&w);
        let converged = checks.record(epochs, &eval, Some(gap), &state, start.elapsed().as_secs_f64(), None);
        last = (eval, Some(gap));
        check_seconds += checking.elapsed().as_secs_f64();
        if checks.stop_together(ranks, converged, start.elapsed().as_secs_f64(), epochs)?
            || epochs >= settings.max_epochs
        {
            break;
        }
        // 2. The working set: as the one-process driver picks it.
        let set: Vec<usize> =
            working_set(cert, &w, &gradient, None, None, SetSize::Doubling).into_iter().map(|j| j as usize).collect();
        if set.is_empty() {
            break;
        }
        largest_set = largest_set.max(set.len());
        let wide = set.len() > dense_most;
        let point = Point { cert, w: &w, gradient: &gradient, h: &h, data, cm, ranks };
        let dense = match wide && !dense_after_products {
            // Too wide for its Hessian: Newton's step on the face, by products.
            true => {
                let (step, cg_passes) = face_products(&point, &set, damping)?;
                passes += cg_passes;
                step
            }
            false => dense_step(&point, &set, dense_most, &mut passes)?,
        };
        dense_after_products = false;
        // 5. The line search on F along the step: X·step on this rank's rows.
        let along: Vec<f64> = (0..rows).map(|i| margin(data, &dense, i)).collect();
        let moved = |t: f64| -> Vec<f64> { w.iter().zip(&dense).map(|(x, s)| x + t * s).collect() };
        let r0 = regularizer(cert, &w);
        let descent: f64 =
            set.iter().map(|&j| gradient[j] * dense[j]).sum::<f64>() + regularizer(cert, &moved(1.0)) - r0;
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..TRIALS {
            let mut trial =
                [(0..rows).map(|i| loss_terms(cert.conjugate, data.labels[i], a[i] + t * along[i]).0).sum::<f64>()];
            ranks.sum(&mut trial)?;
            passes += 1;
            let next = cm * trial[0] + regularizer(cert, &moved(t));
            if next <= f + ARMIJO * t * descent.min(0.0) {
                accepted = true;
                break;
            }
            t *= 0.5;
        }
        epochs += 1;
        if wide {
            damping = match (accepted, t) {
                (true, t) if t >= 0.5 => (damping / 4.0).max(DAMPING_LEAST),
                (true, t) if t >= 0.25 => damping,
                _ => damping * 4.0,
            };
        }
        if !accepted {
            // No decrease along the step: F is as low as rounding lets this model make it, or
            // the face's step was no descent, and the next iteration takes the dense one.
            dense_after_products = wide;
            continue;
        }
        w = moved(t);
        a.iter_mut().zip(&along).for_each(|(ai, s)| *ai += t * s);
    }
    let Ended { status, rule, trace, .. } = checks.end(epochs);
    state.vectors[weights].clone_from(&w);
    let (eval, gap) = last;
    let outcome = Outcome {
        state,
        epochs,
        seconds: start.elapsed().as_secs_f64(),
        trace,
        status,
        rule,
        eval,
        gap,
        check_seconds,
        working_set: Some(largest_set),
        screened: None,
        holdout: None,
    };
    let seconds = outcome.seconds;
    Ok(StreamOutcome { outcome, start_objective: start_objective.unwrap_or(f64::NAN), passes, epoch_seconds: seconds })
}

/// What a step on a working set reads: the model's certificate, the weights, the loss's
/// gradient at them, each of this rank's rows' curvature ℓ″ and the rows themselves, c/m, and
/// the ranks that sum what the rows give.
#[derive(Clone, Copy)]
struct Point<'a, 'd> {
    cert: &'a Certificate,
    w: &'a [f64],
    gradient: &'a [f64],
    h: &'a [f64],
    data: &'a DataView<'d>,
    cm: f64,
    ranks: &'a dyn Collective,
}

/// The step (d long) on a working set `set` of at most `most` coordinates (the largest
/// violators when it has more): the Hessian on it summed dense across the ranks, the model
/// solved by coordinate descent and then exactly on the face it found, on every rank alike.
fn dense_step(point: &Point, set: &[usize], most: usize, passes: &mut usize) -> Result<Vec<f64>, StreamStop> {
    let Point { cert, w, gradient, h, data, cm, ranks } = *point;
    let d = data.features;
    let capped: Vec<usize>;
    let set = match set.len() > most {
        true => {
            capped = working_set(cert, w, gradient, None, None, SetSize::DoublingAtMost(most))
                .into_iter()
                .map(|j| j as usize)
                .collect();
            &capped[..]
        }
        false => set,
    };
    // 3. The Hessian on V, summed across the ranks.
    let n = set.len();
    let mut place = vec![u32::MAX; d];
    set.iter().enumerate().for_each(|(k, &j)| place[j] = k as u32);
    let mut hessian = vec![0.0; n * (n + 1) / 2];
    let at = |k: usize, l: usize| k * n - k * (k + 1) / 2 + l;
    let mut row: Vec<(usize, f64)> = vec![];
    for (i, &hi) in h.iter().enumerate() {
        if hi == 0.0 {
            continue;
        }
        row.clear();
        for p in data.indptr[i]..data.indptr[i + 1] {
            if let Some(k) = slot(&place, data.indices[p]) {
                row.push((k, data.values[p]));
            }
        }
        for (q, &(k, x)) in row.iter().enumerate() {
            let hx = hi * x;
            for &(l, xl) in &row[q..] {
                hessian[at(k, l)] += hx * xl;
            }
        }
    }
    ranks.sum(&mut hessian)?;
    *passes += 1;
    hessian.iter_mut().for_each(|x| *x *= cm);
    let entry = |k: usize, l: usize| if k <= l { hessian[at(k, l)] } else { hessian[at(l, k)] };
    // 4. The model on V by coordinate descent, on every rank alike.
    let mut step = vec![0.0; n];
    let mut moved_h = vec![0.0; n];
    let mut first = None;
    for _ in 0..SWEEPS {
        let mut largest = 0.0f64;
        for k in 0..n {
            let j = set[k];
            let x = w[j] + step[k];
            let curvature = (entry(k, k) + cert.l2).max(1e-12);
            let slope = gradient[j] + moved_h[k] + cert.l2 * x;
            let next = crate::plan::soft(x - slope / curvature, cert.l1 / curvature).clamp(cert.lo, cert.hi);
            let delta = next - x;
            if delta != 0.0 {
                step[k] += delta;
                (0..n).for_each(|l| moved_h[l] += entry(l, k) * delta);
                largest = largest.max(delta.abs());
            }
        }
        let first = *first.get_or_insert(largest);
        if largest <= SWEEP_TOL * first {
            break;
        }
    }
    // Coordinate descent crawls along near-duplicate columns; on the face it found the
    // model's minimiser is one linear solve.
    // The lower of the two on the model wins.
    let model = |s: &[f64]| {
        let quadratic: f64 = (0..n).map(|k| s[k] * (0..n).map(|l| entry(k, l) * s[l]).sum::<f64>()).sum();
        let moved: Vec<f64> = set.iter().zip(s).map(|(&j, sk)| w[j] + sk).collect();
        let before: Vec<f64> = set.iter().map(|&j| w[j]).collect();
        set.iter().zip(s).map(|(&j, sk)| gradient[j] * sk).sum::<f64>() + 0.5 * quadratic + regularizer(cert, &moved)
            - regularizer(cert, &before)
    };
    if let Some(exact) = face_step(cert, set, w, gradient, &entry, &step) {
        if model(&exact) < model(&step) {
            step = exact;
        }
    }
    // The caller walks the whole set; the capped set's step, placed in it.
    let mut whole = vec![0.0; d];
    set.iter().zip(&step).for_each(|(&j, s)| whole[j] = *s);
    Ok(whole)
}

/// The step (d long) on a working set too wide for its Hessian: Newton's step on the face the
/// gradient picks, its system (H_FF + l2·I)·Δ = −(g_F + l1·σ_F + l2·w_F) solved by conjugate
/// gradients preconditioned by H's diagonal, each product H·p = (c/m)·X_Fᵀ diag(ℓ″) X_F p one
/// pass over this rank's rows and one reduction of |F| floats; then projected back onto the
/// face (a coordinate the step carries across 0 stops there, and the box clamps). The face's
/// coordinates are the set's non-zero ones, with their signs, and its zero ones whose gradient
/// exceeds l1, with the sign that lowers F; a coordinate at a bound the gradient pushes past is
/// held. Also the passes it took.
fn face_products(point: &Point, set: &[usize], damping: f64) -> Result<(Vec<f64>, usize), StreamStop> {
    let Point { cert, w, gradient, h, data, cm, ranks } = *point;
    let d = data.features;
    let mut sign = vec![0.0; d];
    let face: Vec<usize> = set
        .iter()
        .copied()
        .filter(|&j| {
            let (x, g) = (w[j], gradient[j] + cert.l2 * w[j]);
            let s = match x {
                _ if x != 0.0 => x.signum(),
                _ if g + cert.l1 < 0.0 => 1.0,
                _ if g - cert.l1 > 0.0 => -1.0,
                _ => 0.0,
            };
            // Held at a bound the gradient pushes past, or at 0 the box allows no side of.
            let pushed_out = (x <= cert.lo && g + s * cert.l1 > 0.0) || (x >= cert.hi && g + s * cert.l1 < 0.0);
            let blocked = x == 0.0 && ((s > 0.0 && cert.hi <= 0.0) || (s < 0.0 && cert.lo >= 0.0));
            sign[j] = s;
            s != 0.0 && !pushed_out && !blocked
        })
        .collect();
    let mut step = vec![0.0; d];
    if face.is_empty() {
        return Ok((step, 0));
    }
    let n = face.len();
    let mut place = vec![u32::MAX; d];
    face.iter().enumerate().for_each(|(k, &j)| place[j] = k as u32);
    let mut passes = 0;
    // H's diagonal on the face, for the preconditioner: one pass and a reduction.
    let mut diagonal = vec![0.0; n];
    for (i, &hi) in h.iter().enumerate() {
        for p in data.indptr[i]..data.indptr[i + 1] {
            if let Some(k) = slot(&place, data.indices[p]) {
                diagonal[k] += hi * data.values[p] * data.values[p];
            }
        }
    }
    ranks.sum(&mut diagonal)?;
    passes += 1;
    let diagonal: Vec<f64> = diagonal.iter().map(|x| cm * x + cert.l2).collect();
    // Levenberg's damping, relative to the diagonal's mean: a direction with almost no
    // curvature would otherwise take a Newton step of any length.
    let nu = damping * diagonal.iter().sum::<f64>() / n as f64;
    let diagonal: Vec<f64> = diagonal.iter().map(|x| (x + nu).max(1e-12)).collect();
    // H·p on the face, summed across the ranks; none, and the reduction's error kept, when
    // the ranks could not sum it.
    let mut unreduced = None;
    let product = |v: &[f64]| -> Option<Vec<f64>> {
        let mut out = vec![0.0; n];
        for (i, &hi) in h.iter().enumerate() {
            let range = data.indptr[i]..data.indptr[i + 1];
            let xv: f64 =
                range.clone().filter_map(|p| slot(&place, data.indices[p]).map(|k| data.values[p] * v[k])).sum();
            if xv == 0.0 || hi == 0.0 {
                continue;
            }
            for p in range {
                if let Some(k) = slot(&place, data.indices[p]) {
                    out[k] += data.values[p] * hi * xv;
                }
            }
        }
        if let Err(e) = ranks.sum(&mut out) {
            unreduced = Some(e);
            return None;
        }
        passes += 1;
        Some(out.iter().zip(v).map(|(x, vk)| cm * x + (cert.l2 + nu) * vk).collect())
    };
    let precondition = |r: &[f64]| Some(r.iter().zip(&diagonal).map(|(x, m)| x / m).collect());
    let mut delta = vec![0.0; n];
    let mut r: Vec<f64> = face.iter().map(|&j| -(gradient[j] + cert.l1 * sign[j] + cert.l2 * w[j])).collect();
    // Stopped short (the step cap, no curvature), Δ is still the face's step so far.
    let everyone = vec![true; n];
    conjugate_gradients(&mut delta, &mut r, &everyone, (CG_STEPS, CG_TOL * CG_TOL), product, precondition);
    if let Some(e) = unreduced {
        return Err(e.into());
    }
    for (k, &j) in face.iter().enumerate() {
        let x = w[j] + delta[k];
        // Across 0 the face ends: the coordinate stops there.
        let x = if x * sign[j] < 0.0 { 0.0 } else { x };
        step[j] = x.clamp(cert.lo, cert.hi) - w[j];
    }
    Ok((step, passes))
}

/// Column `j`'s place in a set, from `place` (the set's position of every column, u32::MAX
/// for a column outside it).
fn slot(place: &[u32], j: u32) -> Option<usize> {
    place.get(j as usize).filter(|k| **k != u32::MAX).map(|&k| k as usize)
}

/// The model's minimiser on the face of `step`, by an active-set loop of linear solves: the
/// coordinates w + step leaves non-zero and strictly inside the box keep their signs σ and solve
/// (H_FF + l2·I)·Δ_F = −(g_F + l1·σ_F + l2·w_F + H_FZ·Δ_Z), the others keep their move; a
/// coordinate the solve carries across 0 or a bound is held there and the rest solved again.
/// None when H_FF is not positive definite or the face keeps changing (coordinate descent's
/// step then stands).
fn face_step(
    cert: &Certificate,
    set: &[usize],
    w: &[f64],
    gradient: &[f64],
    entry: &dyn Fn(usize, usize) -> f64,
    step: &[f64],
) -> Option<Vec<f64>> {
    use faer::linalg::solvers::Solve;
    let mut out = step.to_vec();
    let sign: Vec<f64> = (0..set.len()).map(|k| (w[set[k]] + step[k]).signum()).collect();
    let mut inside: Vec<bool> = (0..set.len())
        .map(|k| {
            let x = w[set[k]] + step[k];
            x != 0.0 && x > cert.lo && x < cert.hi
        })
        .collect();
    for _ in 0..FACE_ROUNDS {
        let free: Vec<usize> = (0..set.len()).filter(|&k| inside[k]).collect();
        if free.is_empty() {
            return None;
        }
        let rhs = faer::Mat::<f64>::from_fn(free.len(), 1, |r, _| {
            let k = free[r];
            let j = set[k];
            let fixed: f64 =
                (0..set.len()).filter(|&l| !inside[l] && out[l] != 0.0).map(|l| entry(k, l) * out[l]).sum();
            -(gradient[j] + cert.l1 * sign[k] + cert.l2 * w[j] + fixed)
        });
        // Duplicate columns leave H_FF singular: the smallest ridge that factors it.
        let largest = free.iter().map(|&k| entry(k, k)).fold(0.0_f64, f64::max);
        let factor = [0.0, 1e-12, 1e-10, 1e-8].into_iter().find_map(|extra| {
            let a = faer::Mat::<f64>::from_fn(free.len(), free.len(), |r, c| {
                if c > r {
                    0.0
                } else {
                    entry(free[r], free[c]) + if r == c { cert.l2 + extra * largest } else { 0.0 }
                }
            });
            a.llt(faer::Side::Lower).ok()
        })?;
        let solved = factor.solve(&rhs);
        let mut left = false;
        for (r, &k) in free.iter().enumerate() {
            let delta = solved[(r, 0)];
            if !delta.is_finite() {
                return None;
            }
            let next = w[set[k]] + delta;
            if next.signum() != sign[k] || next <= cert.lo || next >= cert.hi {
                // Held where it would leave the face: at 0, or at the bound it crosses.
                let held = if next <= cert.lo {
                    cert.lo
                } else if next >= cert.hi {
                    cert.hi
                } else {
                    0.0
                };
                out[k] = held - w[set[k]];
                inside[k] = false;
                left = true;
            } else {
                out[k] = delta;
            }
        }
        if !left {
            return Some(out);
        }
    }
    None
}

/// Rounds of the face's active-set loop.
const FACE_ROUNDS: usize = 8;
