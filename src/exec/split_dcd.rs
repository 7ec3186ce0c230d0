//! Dual coordinate descent on rows split across ranks, for the models dual CD takes: the hinge
//! or the squared hinge with ½‖w‖², and an intercept regularized the same way or not at all.
//! It is CoCoA's scheme (Jaggi et al., NeurIPS 2014; Ma et al., "Adding vs. Averaging in
//! Distributed Primal-Dual Optimization", ICML 2015) with an exact step along the ranks' summed
//! moves in place of CoCoA+'s fixed safety factor.
//!
//! In LIBLINEAR's scale, F/λ = ½‖w‖² + C·Σᵢ ℓ(yᵢ, ⟨xᵢ, w⟩) with C = c/(m·λ), and its dual is
//! max over 0 ≤ αᵢ ≤ U of D(α) = Σᵢ αᵢ − ½‖w(α)‖² − Σᵢ αᵢ²/(4C)·[squared hinge],
//! w(α) = Σᵢ αᵢ yᵢ xᵢ (U = C for the hinge, ∞ for the squared hinge). Each αᵢ lives on the rank
//! that holds row i. A round is one pass of every rank over its own rows in a fresh order,
//! stepping its αᵢ exactly as LIBLINEAR does, as if its rows were all the data; one AllReduce
//! sums the ranks' moves Δw (d floats, and three scalars). The moves of several ranks can
//! overlap and overshoot together, so the round moves by t·Δ: D along the summed move is a
//! concave quadratic in t whose maximiser on [0, 1] every rank computes alike from the reduced
//! sums. t = 1/ranks is CoCoA's averaging, whose convergence is proved, so the best t does at
//! least as well; on a9a t stays near 1. Each rank shrinks its rows as LIBLINEAR does, and
//! brings them all back at every check.
//!
//! The certificate is the dual's own: F(w(α)) − λ·D(α) from three reduced sums (Σᵢ ℓ, Σᵢ αᵢ,
//! Σᵢ αᵢ²), a true bound at every round since every α in the box is dual feasible. A penalised
//! intercept μ·½b² is one more coordinate whose feature is √(λ/μ) on every row (then
//! b = √(λ/μ)·β is penalised as ½λβ²). A free intercept would need Σᵢ yᵢαᵢ = 0, which one
//! coordinate step cannot keep, so it is not taken (LIBLINEAR has none either).

use super::collective::Collective;
use super::driver::{Outcome, RunSettings};
use super::evaluate::Evaluation;
use super::stopping::{Checks, Ended};
use super::stream::{StreamOutcome, StreamStop};
use super::{DataView, State};
use crate::data::DataFacts;
use crate::plan::{Certificate, LossConjugate, Plan};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;

/// Rounds between checks grow with the run: one every `rounds / CHECK_SPACING`.
const CHECK_SPACING: usize = 10;
/// Rounds after which every shrunk row comes back.
const UNSHRINK: usize = 20;

/// The model's certificate when `plan` is dual CD's on a model this solver takes; None
/// otherwise.
pub fn applies(plan: &Plan) -> Option<Certificate> {
    // The rows' weights are not carried by its steps (runs on several processes refuse them).
    if plan.info.solver != crate::solvers::SolverKind::Dcd || plan.row_weights().is_some() {
        return None;
    }
    let cert = plan.certificate?;
    let obj = &plan.objective;
    let loss = matches!(cert.conjugate, LossConjugate::Hinge | LossConjugate::SquaredHinge);
    let ridge_only = cert.l2 > 0.0
        && cert.l1 == 0.0
        && cert.lo == f64::NEG_INFINITY
        && cert.hi == f64::INFINITY
        && cert.vector.is_none()
        && cert.groups.is_none()
        && obj.composite.is_none();
    let intercept = !cert.intercept || cert.intercept_l2 > 0.0;
    let one_vector = !obj.softmax && obj.class_intercept.is_none();
    (loss && ridge_only && intercept && one_vector).then_some(cert)
}

/// Solves from α = 0 (w = 0) on this rank's rows `data`, the whole data's facts in `facts`,
/// until the rule of `settings`; every rank returns the same weights.
pub fn run(
    plan: &Plan,
    cert: &Certificate,
    data: &DataView,
    facts: &DataFacts,
    settings: &RunSettings,
    ranks: &dyn Collective,
) -> Result<StreamOutcome, StreamStop> {
    let (d, rows) = (data.features, data.rows());
    let m = facts.rows.max(1) as f64;
    let lambda = cert.l2;
    let big_c = plan.objective.loss_weight / (m * lambda);
    let squared = cert.conjugate == LossConjugate::SquaredHinge;
    // LIBLINEAR's D_ii and U.
    let (diag, upper) = if squared { (0.5 / big_c, f64::INFINITY) } else { (0.0, big_c) };
    // The intercept's feature: √(λ/μ) on every row (0 without one).
    let bias = if cert.intercept { (lambda / cert.intercept_l2).sqrt() } else { 0.0 };
    let classification = plan.info.classification;
    let start = Instant::now();
    // w̃ = (w, β): the intercept's coordinate last.
    let mut w = vec![0.0; d + 1];
    let mut alpha = vec![0.0; rows];
    let norms: Vec<f64> = (0..rows)
        .map(|i| {
            (data.indptr[i]..data.indptr[i + 1])
                .filter(|&p| (data.indices[p] as usize) < d)
                .map(|p| data.values[p] * data.values[p])
                .sum::<f64>()
                + bias * bias
        })
        .collect();
    let mut order: Vec<usize> = (0..rows).collect();
    // The rows in play (the first `active` of `order`), and the projected gradients beyond
    // which a row at a bound is shrunk away.
    let (mut active, mut shrink) = (rows, (f64::INFINITY, f64::NEG_INFINITY));
    let mut rng = rand::rngs::StdRng::seed_from_u64(settings.seed + ranks.rank() as u64);
    let mut checks = Checks::new(plan, settings);
    let mut state = State::new(plan, &DataFacts { rows, ..*facts }, data.labels);
    let (mut epochs, mut passes, mut check_seconds) = (0, 0, 0.0);
    let mut start_objective = None;
    let mut last: Option<(Evaluation, f64)> = None;
    // ⟨x̃ᵢ, w̃⟩: the row's declared features, and the intercept's feature.
    let margin = |w: &[f64], i: usize| -> f64 { super::evaluate::margin(data, &w[..d], i) + bias * w[d] };
    let objective = Objective { data, lambda, big_c, squared, classification, m };
    let mut next_check = 0;
    loop {
        // A check is a pass of its own: after the first rounds, one every tenth of the rounds so
        // far, so that it costs a tenth of the run at most (and ends it at most that late).
        let due = epochs >= next_check || epochs >= settings.max_epochs;
        let mut converged = false;
        if due {
            let checking = Instant::now();
            let (eval, gap) = objective.certify(&w, &alpha, &margin, ranks, epochs)?;
            passes += 1;
            start_objective.get_or_insert(eval.objective);
            publish(plan, &mut state, &w, bias);
            converged = checks.record(epochs, &eval, Some(gap), &state, start.elapsed().as_secs_f64(), None);
            last = Some((eval, gap));
            check_seconds += checking.elapsed().as_secs_f64();
            next_check = epochs + (epochs / CHECK_SPACING).max(1);
        }
        if checks.stop_together(ranks, converged, start.elapsed().as_secs_f64(), epochs)?
            || epochs >= settings.max_epochs
        {
            if !due {
                // Stopped between checks (the clock, Ctrl-C): the answer is checked as it is.
                let (eval, gap) = objective.certify(&w, &alpha, &margin, ranks, epochs)?;
                passes += 1;
                publish(plan, &mut state, &w, bias);
                checks.record(epochs, &eval, Some(gap), &state, start.elapsed().as_secs_f64(), None);
                last = Some((eval, gap));
            }
            break;
        }
        // One round: LIBLINEAR's steps on this rank's rows against v = w + Δw, as if alone;
        // then the step along the ranks' summed moves that raises the dual the most.
        let mut v = w.clone();
        let mut delta = vec![0.0; d + 1 + 3];
        let mut moved = vec![0.0; rows];
        if due || epochs % UNSHRINK == 0 {
            // Every row is back in play at each check (the run cannot stop with one shrunk
            // away for good) and every few rounds: a row shrunk on a gradient the other ranks'
            // moves have since changed would otherwise stay out (a9a on 4 ranks then stalled
            // at the 10,000-round cap, 1.7e-4 from certified).
            (active, shrink) = (rows, (f64::INFINITY, f64::NEG_INFINITY));
        }
        order[..active].shuffle(&mut rng);
        let mut range = (f64::NEG_INFINITY, f64::INFINITY);
        let mut s = 0;
        while s < active {
            let i = order[s];
            let y = data.labels[i];
            let q = norms[i] + diag;
            let now = alpha[i] + moved[i];
            let g = y * margin(&v, i) - 1.0 + diag * now;
            // LIBLINEAR's shrinking: a row at a bound whose gradient pushes it further out than
            // any free row's did last round is left out until the next check.
            let at_low = now <= 0.0 && g > shrink.0;
            let at_high = now >= upper && g < shrink.1;
            if at_low || at_high {
                active -= 1;
                order.swap(s, active);
                continue;
            }
            s += 1;
            let projected = if now <= 0.0 {
                g.min(0.0)
            } else if now >= upper {
                g.max(0.0)
            } else {
                g
            };
            range = (range.0.max(projected), range.1.min(projected));
            // An empty row (hinge: q = 0) leaves w alone, and D rises along αᵢ at −g: to the bound.
            let step = if q > 0.0 {
                (now - g / q).clamp(0.0, upper)
            } else if g < 0.0 {
                upper
            } else {
                0.0
            } - now;
            if step == 0.0 {
                continue;
            }
            moved[i] += step;
            for p in data.indptr[i]..data.indptr[i + 1] {
                let j = data.indices[p] as usize;
                if j < d {
                    delta[j] += step * y * data.values[p];
                    v[j] += step * y * data.values[p];
                }
            }
            delta[d] += step * y * bias;
            v[d] += step * y * bias;
        }
        shrink = (
            if range.0 <= 0.0 { f64::INFINITY } else { range.0 },
            if range.1 >= 0.0 { f64::NEG_INFINITY } else { range.1 },
        );
        // Σ Δα, Σ α·Δα, Σ Δα² ride with Δw.
        delta[d + 1] = moved.iter().sum();
        delta[d + 2] = alpha.iter().zip(&moved).map(|(a, s)| a * s).sum();
        delta[d + 3] = moved.iter().map(|s| s * s).sum();
        ranks.sum(&mut delta)?;
        passes += 1;
        let (dw, rest) = delta.split_at(d + 1);
        // D(α + tΔα) is a concave quadratic in t; α + tΔα stays in the box for t ∈ [0, 1].
        let rise = rest[0] - w.iter().zip(dw).map(|(a, b)| a * b).sum::<f64>() - diag * rest[1];
        let curvature = dw.iter().map(|x| x * x).sum::<f64>() + diag * rest[2];
        let t = if curvature > 0.0 { (rise / curvature).clamp(0.0, 1.0) } else { 1.0 };
        alpha.iter_mut().zip(&moved).for_each(|(a, s)| *a = (*a + t * s).clamp(0.0, upper));
        w.iter_mut().zip(dw).for_each(|(x, dx)| *x += t * dx);
        epochs += 1;
    }
    let Ended { status, rule, trace, .. } = checks.end(epochs);
    // Every run checks at round 0, so this never reads the data again.
    let (eval, gap) = match last {
        Some(checked) => checked,
        None => objective.certify(&w, &alpha, &margin, ranks, epochs)?,
    };
    let outcome = Outcome {
        state,
        epochs,
        seconds: start.elapsed().as_secs_f64(),
        trace,
        status,
        rule,
        eval,
        gap: Some(gap),
        check_seconds,
        working_set: None,
        screened: None,
        holdout: None,
    };
    let seconds = outcome.seconds;
    Ok(StreamOutcome { outcome, start_objective: start_objective.unwrap_or(f64::NAN), passes, epoch_seconds: seconds })
}

/// w̃ = (w, β) into the plan's state: its weights, and b = √(λ/μ)·β.
fn publish(plan: &Plan, state: &mut State, w: &[f64], bias: f64) {
    let d = w.len() - 1;
    if let Some(v) = plan.weights() {
        state.vectors[v.0].copy_from_slice(&w[..d]);
    }
    if let Some(b) = plan.objective.intercept {
        state.scalars[b.0] = bias * w[d];
    }
}

/// What F and the dual's gap are computed from.
struct Objective<'a> {
    data: &'a DataView<'a>,
    lambda: f64,
    big_c: f64,
    squared: bool,
    classification: bool,
    m: f64,
}

impl Objective<'_> {
    /// F(w) and F(w) − λ·D(α) from one reduction of Σℓ, Σα, Σα² and the errors.
    fn certify(
        &self,
        w: &[f64],
        alpha: &[f64],
        margin: &dyn Fn(&[f64], usize) -> f64,
        ranks: &dyn Collective,
        epochs: usize,
    ) -> Result<(Evaluation, f64), StreamStop> {
        let (data, squared, m) = (self.data, self.squared, self.m);
        let mut sums = [0.0; 5];
        for (i, &ai) in alpha.iter().enumerate() {
            let (y, a) = (data.labels[i], margin(w, i));
            let slack = (1.0 - y * a).max(0.0);
            sums[0] += if squared { slack * slack } else { slack };
            sums[1] += ai;
            sums[2] += ai * ai;
            sums[3] += f64::from(u8::from((if a > 0.0 { 1.0 } else { -1.0 }) != y));
            sums[4] += (a - y) * (a - y);
        }
        ranks.sum(&mut sums)?;
        let norm_sq: f64 = w.iter().map(|x| x * x).sum();
        let f = self.lambda * (0.5 * norm_sq + self.big_c * sums[0]);
        if !f.is_finite() {
            return Err(StreamStop::Fault {
                fault: super::Fault { what: "F".into(), value: f, step: epochs as f64, row: 0 },
                line: 0,
            });
        }
        let quadratic = if squared { 0.25 * sums[2] / self.big_c } else { 0.0 };
        let dual = self.lambda * (sums[1] - 0.5 * norm_sq - quadratic);
        let gap = (f - dual).max(0.0);
        let gap = if gap.is_nan() { f64::INFINITY } else { gap };
        let d = data.features;
        let eval = Evaluation {
            objective: f,
            loss: sums[0] / m,
            nnz: w[..d].iter().filter(|x| **x != 0.0).count(),
            nnz_rows: None,
            error: self.classification.then(|| sums[3] / m),
            mse: (!self.classification).then(|| sums[4] / m),
        };
        Ok((eval, gap))
    }
}
