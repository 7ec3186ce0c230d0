//! The Newton refinement of the certificate's dual point on a support narrow enough for a dense
//! Hessian, and what every refinement shares (its budget, its rows, its tuning constants):
//! proximal Newton steps on the columns that matter, whose model is solved by coordinate
//! descent and conjugate gradients (a plain quadratic, by one Cholesky solve), run until the gap restricted to those columns is small, and
//! the dual point is taken at the refined primal. It moves a copy of the iterate, never the
//! run's (a column solver may continue from it: [`Assessment::polished`]). `refinement.rs`
//! decides which refinement a check runs; `support.rs` takes a support too wide for a dense
//! Hessian, `softmax.rs` a softmax W; both build on the pieces here.

use super::loss::loss_terms;
use super::search::{Search, Trial};
use super::tuning::TUNING;
use super::*;
use crate::exec::linalg::cholesky::Factor;
pub(super) use crate::exec::linalg::Subspace;
use chord::Held;

mod chord;

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
#[allow(clippy::too_many_arguments)]
pub(super) fn dense_refined_dual(
    cert: &Certificate,
    data: &DataView,
    c: f64,
    mut v: Vec<f64>,
    copies: Option<&crate::data::Copies>,
    margins: &[f64],
    gradient: &[f64],
    budget: Budget,
) -> Option<Refined> {
    let Budget { enough, slack, rounds, halt, .. } = budget;
    let scale = c / margins.len() as f64;
    let mut a = margins.to_vec();
    let mut gradient = gradient.to_vec();
    let mut best = f64::NEG_INFINITY;
    // With a free intercept, how far the rounds moved b (it is one more Newton coordinate).
    let mut offset = free_intercept(cert).then_some(0.0);
    // ∇f at the last point a round moved to (None: no round moved).
    let mut last_gradient = None;
    // From w = 0 with a free b and a smooth penalty, the steps start at the null model, as
    // glmnet's path does: b at its best for w = 0, found on the margins alone (a 1-D Newton, no
    // pass over X), then ∇f there. ℓ2-logistic with b from w = 0 on w8a (3% positives) then
    // takes 7 Newton steps at C = 1 where it took 8, and 4 at C = 0.01 where it took 6;
    // balanced a9a takes 5 either way. Beside l1 the proximal steps' count moved both ways
    // (ℓ1-logistic with b: a9a at C = 0.01 and 10, w8a at C = 0.01, 8 → 7, 11 → 10, 6 → 4;
    // w8a at C = 1, 11 → 15), so l1 keeps the solver's b.
    // The check's dual point was taken at that same offset (ℓ′ at the margins moved to their
    // optimal offset, [`Entries::Margins`]), so `gradient` is ∇f there and its D is the check's
    // own: no pass here (11 ms of a dense 200,000 × 50 ridge fit's 97).
    let smooth = cert.l1 == 0.0;
    if let Some(b) = offset.as_mut().filter(|_| smooth && v.iter().all(|&x| x == 0.0)) {
        *b = intercept::shift_to_optimal_offset(cert.conjugate, data.labels, data.weights, &mut a);
        if *b != 0.0 {
            last_gradient = Some(gradient.clone());
        }
    }
    // Beside l1, where the Hessian on every column costs many passes over X (dense rows), the
    // first round from w = 0 takes the worst violators, not all of them: at a cold start every
    // column correlates with the residual, and after one round on the worst the violators left
    // are the support's, which the next round takes whole (see `TUNING.refine_grow_passes`).
    let mut grow = cert.l1 > 0.0 && v.iter().all(|&x| x == 0.0) && round_epochs(data, v.len(), v.len()).is_some();
    for _ in 0..rounds {
        if halt() {
            break;
        }
        let mut inside = vec![];
        let mut entering = vec![];
        for (j, (&vj, &gj)) in v.iter().zip(&gradient).enumerate() {
            if moves_freely(cert, vj) {
                inside.push(j);
            } else if violation(cert, vj, gj) > 0.0 && !copies.is_some_and(|c| c.is_copy(j)) {
                entering.push((violation(cert, vj, gj), j));
            }
        }
        // A support wider than a dense Hessian can hold is not near an optimum's (a stochastic
        // iterate's: FOBOS on debian-files after two epochs has 16,665 non-zeros, a 2.2 GB
        // Hessian and a minute of steps); the plain dual point is all such a check gets.
        if inside.len() > TUNING.refine_max {
            break;
        }
        // The coordinates that violate optimality most: the next round looks at the violations
        // again, at the point this one reaches.
        // Every violator when V stays small: any one left out keeps the scale s of the dual
        // point below 1 and the gap far from the truth (w8a at λ 7.08e-6: two rounds on 200
        // and 286 of its 300 columns, each solved to 1e-5 on V, left gaps of 94% and 76% of
        // F, and the run needed a second check; with every violator it needs one).
        let room = if inside.len() + entering.len() <= TUNING.refine_all && !std::mem::take(&mut grow) {
            entering.len()
        } else {
            TUNING.refine_max.saturating_sub(inside.len()).min(TUNING.refine_enter.max(inside.len()))
        };
        if entering.len() > room {
            if room > 0 {
                entering.select_nth_unstable_by(room - 1, |a, b| b.0.total_cmp(&a.0));
            }
            entering.truncate(room);
        }
        inside.extend(entering.into_iter().map(|(_, j)| j));
        // V of at least half the columns, all of which a round could take, is every column:
        // X_V is then X itself, borrowed, where a copy of half of X cost more than the Hessian's
        // added columns (a dense 15,000 × 200 lasso with 120 columns in V: 11 ms against 4).
        if 2 * inside.len() >= v.len() && v.len() <= TUNING.refine_all {
            inside = (0..v.len()).filter(|&j| !copies.is_some_and(|c| c.is_copy(j))).collect();
        }
        // In column order, so every row of X_V lists its entries by position in V.
        inside.sort_unstable();
        let mut round = Round { v: inside.iter().map(|&j| v[j]).collect(), cols: inside };
        let n = round.cols.len();
        if n == 0 {
            break;
        }
        let sub = Subspace::new(data, v.len(), &round.cols);
        let rows = (data.labels, data.weights);
        let (moved, loss) = round.newton(cert, scale, &sub, rows, &mut a, offset.as_mut(), TUNING.refine_slack * slack);
        for (&j, &x) in round.cols.iter().zip(&round.v) {
            v[j] = x;
        }
        let f = scale * loss + regularizer(cert, &v);
        let d;
        (d, gradient) = dual_and_gradient(cert, data, c, v.len(), &a);
        if d.is_finite() {
            best = best.max(d);
        }
        if moved {
            last_gradient = Some(gradient.clone());
        }
        // Done once the point reached is certified: the run continues from it when F is lower
        // there (`moved`), and its gap is F there minus the best D.
        if best >= enough || !moved || f - best <= slack {
            break;
        }
    }
    // The null model's shift of b alone is a move worth keeping (its D is the check's own: −∞
    // here counts for nothing beside it).
    (best.is_finite() || last_gradient.is_some()).then_some(Refined {
        dual: best,
        moved: last_gradient.map(|gradient| Polished {
            weights: v,
            intercept_shift: offset.unwrap_or(0.0),
            class_shift: vec![],
            gradient,
        }),
    })
}

/// Where X stores at least `TUNING.refine_dense_share` of its entries (dense rows, whose
/// columns are alike, so a support of s columns takes (s/d)² of the Hessian's work) and a Newton
/// step's Hessian on every column costs more than `TUNING.refine_grow_passes` passes over X,
/// what a round on `support` of the `features` coordinates costs in epochs of coordinate
/// descent: its Hessian's share and its factor, against an epoch's 2·nnz. None elsewhere, whose
/// rounds the other rules weigh.
pub(super) fn round_epochs(data: &DataView, features: usize, support: usize) -> Option<f64> {
    dense_round_epochs(data, features, support, &crate::exec::linalg::newton_costs(data.indptr, features))
}

/// [`round_epochs`] given X's [`NewtonCosts`](crate::exec::linalg::NewtonCosts) (a pass over
/// the rows' lengths), which [`round_cost`] reads too.
fn dense_round_epochs(
    data: &DataView,
    features: usize,
    support: usize,
    costs: &crate::exec::linalg::NewtonCosts,
) -> Option<f64> {
    let nnz = costs.epoch / 2.0;
    let stored = nnz / (data.rows() as f64 * features as f64);
    if stored.is_nan() || stored < TUNING.refine_dense_share || costs.hessian <= TUNING.refine_grow_passes * nnz {
        return None;
    }
    let (s, d) = (support as f64, features as f64);
    Some((costs.hessian * (s / d) * (s / d) + s * s * s / 3.0) / costs.epoch)
}

/// What a round on `support` of the `features` coordinates costs in epochs of coordinate
/// descent (2·nnz each), on any rows: [`round_epochs`] where it weighs dense rows, else the
/// support's share s/d of the whole Hessian (a sparse row's products over V are at most its
/// entries times its entries in V) and a factor of s³/3.
pub(super) fn round_cost(data: &DataView, features: usize, support: usize) -> f64 {
    let costs = crate::exec::linalg::newton_costs(data.indptr, features);
    if let Some(epochs) = dense_round_epochs(data, features, support, &costs) {
        return epochs;
    }
    let (s, d) = (support as f64, features.max(1) as f64);
    (costs.hessian * (s / d).min(1.0) + s * s * s / 3.0) / costs.epoch.max(1.0)
}

/// The dual value at the refined margins `a` (ℓ′ there, scaled into the domain) and ∇f there,
/// from the same pass over X: every refinement step reads both.
pub(super) fn dual_and_gradient(
    cert: &Certificate,
    data: &DataView,
    c: f64,
    features: usize,
    a: &[f64],
) -> (f64, Vec<f64>) {
    let (dual, z) =
        dual_at(cert, data, c, features, 1, &dual_point(cert, data.labels, data.weights, 1, Entries::Margins(a)));
    (dual, z.iter().map(|x| -x).collect())
}

/// Whether x is a coordinate the refinements move freely: non-zero and strictly inside the box
/// (where r is differentiable).
pub(super) fn moves_freely(cert: &Certificate, x: f64) -> bool {
    x != 0.0 && cert.lo < x && x < cert.hi
}

/// When a refinement stops: once its dual value reaches `enough`, or after `rounds` rounds.
/// A round ends early once its gap on V is a small fraction of `slack`, the gap the caller asks
/// for: the dual point needs no more.
#[derive(Clone, Copy)]
pub(super) struct Budget<'a> {
    /// A support too wide for the dense refinement takes exact Newton steps (else conjugate
    /// gradients).
    pub(super) exact: bool,
    /// A support just past the exact steps' bound is settled first (`TUNING.settle_gap`).
    pub(super) settle: bool,
    /// F has stalled at this check and the one before (or there is no run): only then does a
    /// wide support that gets neither exact steps nor a settling take conjugate-gradient steps.
    pub(super) stalled_again: bool,
    pub(super) enough: f64,
    pub(super) slack: f64,
    pub(super) rounds: usize,
    /// Whether the run has been asked to stop (Ctrl-C, the time limit): read between steps, so
    /// a refinement that would take seconds (a settling: 13 s on debian-files at C = 100) ends
    /// with the best dual value it has, which bounds F* all the same.
    pub(super) halt: &'a dyn Fn() -> bool,
}

/// What a refinement found: the best dual value, and the primal point its steps reached with
/// ∇f there (from the pass that gave its dual point).
pub(super) struct Refined {
    pub(super) dual: f64,
    pub(super) moved: Option<Polished>,
}

/// The coordinates V of a refinement round (in column order) and their values v.
pub(super) struct Round {
    pub(super) cols: Vec<usize>,
    pub(super) v: Vec<f64>,
}

impl Round {
    /// Proximal Newton steps on F restricted to V (newGLMNET's outer iteration: Yuan, Ho & Lin,
    /// "An improved GLMNET for L1-regularized logistic regression", 2012). Each step minimises
    /// the quadratic model of f at v plus the l1 term and the box ([`Round::model_minimiser`]),
    /// then searches along the direction. The model's coordinate descent runs on the dense
    /// Hessian of V, with no pass over the data, and sets coordinates to zero and back as the
    /// l1 term asks: no active set to grow one coordinate a step. Moves `self.v` and the
    /// margins `a` along; whether it moved at all, and Σᵢ ℓ at the margins it leaves.
    /// The round ends once the gap on V is at most `negligible`, or after the whole step to the
    /// squared loss's exact minimiser (a quadratic: nothing is left for another step).
    ///
    /// With `offset` (a free intercept b, and how far the steps have moved it), b is one more
    /// unregularized coordinate of the model, eliminated from it in closed form: for a step d
    /// on V the best step on b is δb = −(g_b + h_bᵀd)/h_bb, and the model left on V has the
    /// Hessian H − h_b h_bᵀ/h_bb and the gradient g − h_b·g_b/h_bb. That is glmnet's implicit
    /// centering (the columns centred by their ℓ″-weighted means), which never densifies X_V.
    /// Without it b stays where the solver left it, and on one-hot groups that sum to a
    /// constant (a9a) the rounds solve F at the wrong b while coordinate steps move b slowly.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn newton(
        &mut self,
        cert: &Certificate,
        scale: f64,
        sub: &Subspace,
        (labels, weights): (&[f64], Option<&[f64]>),
        a: &mut Vec<f64>,
        mut offset: Option<&mut f64>,
        negligible: f64,
    ) -> (bool, f64) {
        let n = self.cols.len();
        let kind = cert.conjugate;
        let mut moved = false;
        // The margins with ωℓ′, ωℓ″ and Σᵢ ωℓ there: after a step, its line search's accepted trial.
        let mut now = Rows::at(kind, labels, weights, a, None, sub.threads);
        // The squared loss's curvature is the same at every point (each row's weight): its
        // Hessian on V is formed once a round, m·|V|²/2 products that a dense 15,000 × 200
        // set spent 15 ms on each step.
        let mut constant_hessian: Option<Vec<f64>> = None;
        // With a ridge and no box the restricted gap needs no pass over the rows
        // ([`closed_form_gap`]): one of a conjugate (two logarithms) a row took 0.5 ms a step
        // on w8a.
        let closed_form = cert.l2 > 0.0 && cert.lo == f64::NEG_INFINITY && cert.hi == f64::INFINITY;
        // The last whole step's factor, kept for a chord step ([`Held`]).
        let mut held: Option<Held> = None;
        for _ in 0..TUNING.refine_steps {
            // ∂f/∂b = (c/m)·Σᵢ ℓ′ᵢ, and the decrease a step on b alone could still make.
            let free = offset.is_some();
            let b_curvature = scale * now.curvature.iter().sum::<f64>();
            // X_Vᵀℓ′ and, when b is a coordinate of the step, b's row of the Hessian X_Vᵀℓ″: one
            // pass for both.
            let (loss_gradient, h_b): (Vec<f64>, Option<Vec<f64>>) = if free && b_curvature > 0.0 {
                let (xu, xc) = sub.transpose_times_both(&now.u, &now.curvature);
                (xu.iter().map(|x| scale * x).collect(), Some(xc.iter().map(|x| scale * x).collect()))
            } else {
                (sub.transpose_times(&now.u).iter().map(|x| scale * x).collect(), None)
            };
            let unit_of_residual =
                if cert.l1 > 0.0 { cert.l1 } else { loss_gradient.iter().fold(0.0_f64, |x, g| x.max(g.abs())) };
            let g_b = if free { scale * now.u.iter().sum::<f64>() } else { 0.0 };
            let b_decrease = if free && b_curvature > 0.0 { 0.5 * g_b * g_b / b_curvature } else { 0.0 };
            // A residual r costs the dual point's scaling about r·‖v‖₁, which must also stay
            // below the gap asked for when that is tighter (a tolerance of 1e-12).
            let mass = self.v.iter().map(|x| x.abs()).sum::<f64>();
            let residual = (TUNING.refine_residual * unit_of_residual).min(negligible / mass.max(f64::MIN_POSITIVE));
            if (0..n).all(|k| violation(cert, self.v[k], loss_gradient[k]) <= residual) && g_b.abs() <= residual {
                break;
            }
            // The gap of F on V at the current b: with b free, what a step on b would still gain
            // comes on top of it.
            let gap_on_v = if closed_form {
                closed_form_gap(cert, &self.v, &loss_gradient)
            } else {
                self.restricted_gap(cert, scale, (labels, weights), &now, &loss_gradient, sub.threads)
            };
            // No rule on a stall: from a cold point the first steps may take a tenth of the gap
            // in four steps, then all of it in three (a9a at λ 1.13e-5), and any rule tried
            // there cut them short and cost an epoch.
            let gap = gap_on_v + b_decrease;
            if gap <= negligible {
                break;
            }
            let gradient: Vec<f64> = (0..n).map(|k| loss_gradient[k] + cert.l2 * self.v[k]).collect();
            let squared = kind == LossConjugate::Squared;
            // A step of the model to x (d = x − v) with b's step, and the decrease it predicts,
            // Δ = ∇ᵀd + l1·(‖x‖₁ − ‖v‖₁).
            let l1_norm = |z: &[f64]| z.iter().map(|v| v.abs()).sum::<f64>();
            let step_to = |x: Vec<f64>, d: Vec<f64>, step_b: f64| {
                let predicted = dot(&gradient, &d) + g_b * step_b + cert.l1 * (l1_norm(&x) - l1_norm(&self.v));
                (x, d, step_b, predicted)
            };
            let to = |x: &[f64]| -> Vec<f64> { x.iter().zip(&self.v).map(|(x, v)| x - v).collect() };
            // Near the end a step with the last whole step's factor (a chord step, with that
            // factor's b-row) saves a Hessian (see `TUNING.refine_chord`); else Newton's step.
            let chord = held
                .take()
                .filter(|h| gap * (gap / h.gap) * TUNING.refine_chord <= negligible)
                .and_then(|h| h.step(&self.v, &gradient, g_b))
                .map(|(x, step_b)| {
                    let d = to(&x);
                    step_to(x, d, step_b)
                })
                .filter(|&(_, _, _, predicted)| predicted < 0.0);
            let (step, newton) = match chord {
                Some(step) => (step, None),
                None => {
                    let mut h = match &constant_hessian {
                        Some(h) => h.clone(),
                        None => sub.hessian(&now.curvature, scale, cert.l2),
                    };
                    if squared && constant_hessian.is_none() {
                        constant_hessian = Some(h.clone());
                    }
                    // With b's row of the Hessian h_b = (c/m)·X_Vᵀℓ″, the model on V has b eliminated
                    // (its gradient centred), while the slope of F along (d, δb) takes the uncentred one.
                    let mut centred = gradient.clone();
                    if let Some(h_b) = &h_b {
                        for ((row, hp), c) in h.chunks_exact_mut(n).zip(h_b).zip(&mut centred) {
                            let f = hp / b_curvature;
                            row.iter_mut().zip(h_b).for_each(|(x, hq)| *x -= f * hq);
                            *c -= f * g_b;
                        }
                    }
                    // Without l1 or a box the model is a quadratic, minimised exactly by one Cholesky
                    // solve (its n³/3 flops are a few passes' worth at the sizes a dense refinement
                    // takes); coordinate descent and conjugate gradients would stop at
                    // TUNING.model_forcing. The squared loss's model is F on V itself: minimised to
                    // rounding, its step leaves nothing for another (`TUNING.model_forcing_squared`).
                    let quadratic = cert.l1 == 0.0 && cert.lo == f64::NEG_INFINITY && cert.hi == f64::INFINITY;
                    let factor = quadratic.then(|| Factor::new(h.clone(), n)).flatten();
                    let exact = factor.as_ref().and_then(|f| newton_point_by(f, &self.v, &centred));
                    let solved_exactly = exact.is_some() || squared;
                    let forcing = if squared { TUNING.model_forcing_squared } else { TUNING.model_forcing };
                    let x = exact.unwrap_or_else(|| self.model_minimiser(cert, &h, &centred, forcing));
                    let d = to(&x);
                    let step_b = h_b.as_ref().map_or(0.0, |h_b| -(g_b + dot(h_b, &d)) / b_curvature);
                    let step = step_to(x, d, step_b);
                    if step.3.is_nan() || step.3 >= 0.0 {
                        break;
                    }
                    (step, Some((factor, h_b, solved_exactly)))
                }
            };
            let step_b = step.2;
            let Some((point, trial, t)) = self.search_step(cert, scale, sub, (labels, weights), &now, step) else {
                break;
            };
            if let Some(b) = offset.as_deref_mut() {
                *b += t * step_b;
            }
            (self.v, now, moved) = (point, trial, true);
            let Some((factor, h_b, solved_exactly)) = newton else { continue };
            if let (Some(factor), true, false) = (factor, t == 1.0, squared) {
                held = Some(Held { factor, b_row: h_b.map(|h_b| (h_b, b_curvature)), gap });
            }
            // The whole step to a quadratic's exact minimiser leaves nothing for another: its
            // gradient pass would only confirm it (7 ms of the ridge fit above). The dual point
            // taken next measures it all the same, and a round after this one steps again if
            // rounding left too much.
            if solved_exactly && t == 1.0 && squared {
                break;
            }
        }
        *a = now.a;
        (moved, now.loss)
    }

    /// The line search along a step of the model from v to `x` (d = x − v, b moved by `step_b`
    /// with it, Δ = `predicted`): Armijo's sufficient decrease (Δ = ∇ᵀd + l1·(‖x‖₁ − ‖v‖₁), as
    /// LIBLINEAR), or a non-positive slope of F at the end of the step. The point, its rows and
    /// the step length taken; None when no length decreases F.
    fn search_step(
        &self,
        cert: &Certificate,
        scale: f64,
        sub: &Subspace,
        (labels, weights): (&[f64], Option<&[f64]>),
        now: &Rows,
        (x, d, step_b, predicted): (Vec<f64>, Vec<f64>, f64, f64),
    ) -> Option<(Vec<f64>, Rows, f64)> {
        let n = self.cols.len();
        let mut dm = sub.times(&d);
        if step_b != 0.0 {
            dm.iter_mut().for_each(|x| *x += step_b);
        }
        let search = Search { cert, scale, v: &self.v, loss: now.loss, least: TUNING.refine_min_step, after_full: 1.0 };
        let trial = |t: f64| {
            let point: Vec<f64> =
                if t == 1.0 { x.clone() } else { self.v.iter().zip(&d).map(|(v, d)| v + t * d).collect() };
            let rows = Rows::at(cert.conjugate, labels, weights, &now.a, Some((&dm, t)), sub.threads);
            Trial { point, loss: rows.loss, rows, predicted: t * predicted }
        };
        // The slope from the left at the end: a coordinate the step took to zero counts with
        // the sign it had before.
        let flat_end = |at: &Trial<Rows>| {
            let reg_slope: f64 = (0..n)
                .map(|k| {
                    let side = match (at.point[k] != 0.0, self.v[k] != 0.0) {
                        (true, _) => at.point[k].signum(),
                        (false, true) => self.v[k].signum(),
                        (false, false) => 0.0,
                    };
                    (cert.l1 * side + cert.l2 * at.point[k]) * d[k]
                })
                .sum();
            scale * dot(&at.rows.u, &dm) + reg_slope <= 0.0
        };
        search.run(trial, flat_end).map(|(at, t)| (at.point, at.rows, t))
    }

    /// The duality gap of F restricted to V (the other coordinates fixed, their part of the
    /// margins a constant) at v and the dual point ℓ′(a) scaled into the domain of r* on V:
    /// Σᵢ c/m·[ℓ(aᵢ) + ℓ*(s·uᵢ) − s·uᵢ·a⁰ᵢ] + Σ_{j∈V} [r(vⱼ) + r*(s·zⱼ)] with a⁰ = a − X_V·v and
    /// z = −∇_V f. It measures what a round is for: on a9a at λ ≈ 1e-5, F on V is within 1e-6
    /// of its minimum while ∇f still exceeds l1 by a few l1 on some coordinate, and scaling the
    /// dual point by s ≈ 1/4 costs ~2/3 of F in the bound (ℓ* is steep at the rows misclassified
    /// by a wide margin, where uᵢ is near the end of its domain): the decrease F's model
    /// predicts says the round is done long before the dual point is.
    pub(super) fn restricted_gap(
        &self,
        cert: &Certificate,
        scale: f64,
        (labels, weights): (&[f64], Option<&[f64]>),
        Rows { a, u, loss, .. }: &Rows,
        loss_gradient: &[f64],
        threads: usize,
    ) -> f64 {
        let kind = cert.conjugate;
        let z: Vec<f64> = loss_gradient.iter().map(|g| -g).collect();
        let s = domain_scale(cert, &z);
        // Σᵢ uᵢ·(X_V v)ᵢ = −⟨z, v⟩/scale turns a⁰ into a.
        let conjugates: f64 = crate::exec::passes::blocks(a.len(), threads, |rows| {
            rows.map(|i| {
                // `u` holds ωᵢℓ′: the dual point is ℓ′, its term weighted (a row of weight 0 is
                // out of the sum).
                let wi = weights.map_or(1.0, |w| w[i]);
                if wi == 0.0 {
                    return 0.0;
                }
                let su = into_loss_domain(kind, labels[i], s * u[i] / wi);
                wi * (loss_conjugate(kind, labels[i], su) - su * a[i])
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
    pub(super) fn model_minimiser(&self, cert: &Certificate, h: &[f64], gradient: &[f64], forcing: f64) -> Vec<f64> {
        let n = gradient.len();
        let mut model = Model { h, n, gradient, x: self.v.clone(), hd: vec![0.0; n], cert };
        let enough = forcing * model.violation();
        let mut first = None;
        for _ in 0..TUNING.model_rounds {
            let mut gain = 0.0;
            for _ in 0..TUNING.model_sweeps {
                gain += model.sweep();
            }
            let negligible = TUNING.model_tol * first.unwrap_or(gain);
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

/// [`Round::restricted_gap`] where r = l1|·| + (l2/2)(·)² with l2 > 0 and no box, given
/// ∇_V f: at u = ℓ′(a) (domain scale 1, as l2 > 0 makes r* finite everywhere) Fenchel–Young's
/// equality ℓ*(u) = u·a − ℓ(a) cancels every row's terms, and what is left is
/// Σ_V [r(vₖ) + r*(−gₖ) + gₖvₖ] with r*(z) = (|z| − l1)₊²/(2·l2): for the ridge alone
/// ‖∇_V F‖²/(2·l2). The same number as the pass, up to rounding (w8a, a9a: 12+ digits).
pub(super) fn closed_form_gap(cert: &Certificate, v: &[f64], loss_gradient: &[f64]) -> f64 {
    let (l1, l2) = (cert.l1, cert.l2);
    v.iter()
        .zip(loss_gradient)
        .map(|(&v, &g)| {
            if l1 == 0.0 {
                (g + l2 * v).powi(2) / (2.0 * l2)
            } else {
                l1 * v.abs() + 0.5 * l2 * v * v + g * v + (g.abs() - l1).max(0.0).powi(2) / (2.0 * l2)
            }
        })
        .sum()
}

/// v − H⁻¹·g, the minimiser of gᵀ(x − v) + ½(x − v)ᵀH(x − v) for H symmetric (n × n, either
/// order): None when H is not positive definite, rounding included.
#[cfg(test)]
pub(super) fn newton_point(v: &[f64], h: Vec<f64>, g: &[f64]) -> Option<Vec<f64>> {
    newton_point_by(&Factor::new(h, v.len())?, v, g)
}

/// v − H⁻¹·g with H given by its Cholesky factor.
pub(super) fn newton_point_by(factor: &Factor, v: &[f64], g: &[f64]) -> Option<Vec<f64>> {
    let n = v.len();
    let step = factor.solve(faer::MatRef::from_column_major_slice(g, n, 1));
    let x: Vec<f64> = (0..n).map(|k| v[k] - step[(k, 0)]).collect();
    x.iter().all(|x| x.is_finite()).then_some(x)
}

/// The quadratic model of a Newton step at x: ∇ᵀ(x − v) + ½(x − v)ᵀH(x − v) + l1‖x‖₁ on the
/// box, with H·(x − v) kept up to date.
pub(super) struct Model<'a> {
    pub(super) h: &'a [f64],
    pub(super) n: usize,
    pub(super) gradient: &'a [f64],
    pub(super) x: Vec<f64>,
    pub(super) hd: Vec<f64>,
    pub(super) cert: &'a Certificate,
}

impl Model<'_> {
    /// The largest distance of a coordinate from the model's optimality condition.
    pub(super) fn violation(&self) -> f64 {
        (0..self.n).map(|k| violation(self.cert, self.x[k], self.gradient[k] + self.hd[k])).fold(0.0, f64::max)
    }

    /// Sets xₖ, keeping H·(x − v) up to date.
    pub(super) fn move_to(&mut self, k: usize, value: f64) {
        let (n, change) = (self.n, value - self.x[k]);
        self.x[k] = value;
        for (acc, hk) in self.hd.iter_mut().zip(&self.h[k * n..k * n + n]) {
            *acc += change * hk;
        }
    }

    /// One cyclic sweep of coordinate descent; what it took off the model.
    pub(super) fn sweep(&mut self) -> f64 {
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
    pub(super) fn conjugate_gradients(&mut self, negligible: f64) -> (f64, bool) {
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
        let stop = rr * TUNING.model_cg_tol * TUNING.model_cg_tol;
        let mut gain = 0.0;
        let mut stopped_at = None;
        for _ in 0..TUNING.model_cg_steps.min(2 * s) {
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
/// ωᵢℓ′ and ωᵢℓ″ per row, and Σᵢ ωᵢℓ (ωᵢ the row's weight, 1 without weights): the gradient
/// and the Hessian read them as they are. The dual point is ℓ′ itself (`u` over ωᵢ).
pub(super) struct Rows {
    pub(super) a: Vec<f64>,
    pub(super) u: Vec<f64>,
    pub(super) curvature: Vec<f64>,
    pub(super) loss: f64,
}

impl Rows {
    /// In blocks of rows on `threads` threads, the sum added in block order: the same numbers
    /// for any thread count. Each thread writes its run of rows in place: blocks collected and
    /// then copied cost w8a's 50,000 rows a third of the pass (three vectors twice, the second
    /// time into fresh pages), at every trial of every line search.
    pub(super) fn at(
        kind: LossConjugate,
        labels: &[f64],
        weights: Option<&[f64]>,
        a: &[f64],
        step: Option<(&[f64], f64)>,
        threads: usize,
    ) -> Rows {
        use crate::exec::passes::BLOCK;
        let m = a.len();
        let (mut to_a, mut to_u, mut to_c) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        let count = m.div_ceil(BLOCK);
        let threads = threads.clamp(1, count.max(1));
        // Each thread's run: whole blocks, so the blocks and their sums are the same whatever
        // the thread count.
        let run = count.div_ceil(threads).max(1) * BLOCK;
        let runs: Vec<_> = to_a
            .chunks_mut(run)
            .zip(to_u.chunks_mut(run))
            .zip(to_c.chunks_mut(run))
            .enumerate()
            .map(|(t, ((xa, xu), xc))| std::sync::Mutex::new((t * run, xa, xu, xc)))
            .collect();
        let losses = crate::exec::passes::each(runs.len(), threads, |t| {
            let mut guard = runs[t].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let (first, xa, xu, xc) = &mut *guard;
            let mut sums = vec![];
            for start in (0..xa.len()).step_by(BLOCK) {
                let mut loss = 0.0;
                for k in start..(start + BLOCK).min(xa.len()) {
                    let i = *first + k;
                    let ai = step.map_or(a[i], |(da, t)| a[i] + t * da[i]);
                    let (l, u, curvature) = loss_terms(kind, labels[i], ai);
                    let wi = weights.map_or(1.0, |s| s[i]);
                    xa[k] = ai;
                    xu[k] = wi * u;
                    xc[k] = wi * curvature;
                    loss += wi * l;
                }
                sums.push(loss);
            }
            sums
        });
        drop(runs);
        let loss = losses.into_iter().flatten().fold(0.0, |total, block| total + block);
        Rows { a: to_a, u: to_u, curvature: to_c, loss }
    }
}
