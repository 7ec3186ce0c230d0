//! Proximal Newton steps on a support the exact steps of [`super::support`] cannot finish: the
//! ℓ1 subproblem of each step solved on the dense Hessian by ADMM, so that coordinates enter,
//! leave and change sign inside the step.
//!
//! Why: on debian-files at C = 100 (λ = 1.94e-7) the epochs reach F* within 2e-5 while ∇f still
//! exceeds λ by up to 8% on 300 of the 6,500 non-zero columns, and the certified gap stays near
//! 2e-2 of F. The optimum's support differs from theirs in some 300 columns. A Newton step in
//! the face of their signs carries those across zero, and after the first step it is no longer
//! a descent direction; coordinate descent on the dense subproblem, even by blocks of the
//! near-copies, moves F by 1e-10 a step. ADMM on the subproblem, one Cholesky factor of
//! H + ρI a step, settles the support: started after epoch 12, three steps of 3.2–5.4 s at
//! 6,600–7,000 columns bring the gap to 3.7e-3 of F, and the exact steps that follow certify
//! 1e-4 in the same check (24 s of solving; before the settling it did not certify in 120 s).

use super::loss::loss_terms;
use super::refine::{dual_and_gradient, moves_freely, Rows};
use super::search::{Search, Trial};
use super::tuning::TUNING;
use super::{dot, regularizer, violation};
use crate::data::Copies;
use crate::exec::linalg::cholesky::Factor;
use crate::exec::linalg::hessian::{hessian_times, lower_hessian};
use crate::exec::linalg::Subspace;
use crate::exec::DataView;
use crate::plan::Certificate;

/// Where a settling left w (moved in place): F there, the best dual value of its steps, and ∇f
/// at the point (from the pass that gave the dual value).
pub(super) struct Settled {
    pub(super) f: f64,
    pub(super) dual: f64,
    pub(super) gradient: Vec<f64>,
}

/// Whether a certificate's regularizer suits the subproblem: ℓ1 (with or without a ridge) and
/// no box. The loss is the caller's to check: twice differentiable.
pub(super) fn applies(cert: &Certificate) -> bool {
    cert.l1 > 0.0 && cert.lo == f64::NEG_INFINITY && cert.hi == f64::INFINITY
}

/// Proximal Newton steps from `x` (the rows at it `now`, ∇f there `gradient`), each moving `x`
/// and `now`, until the gap is within `TUNING.settled_gap` of F, V would exceed `most` columns, the
/// run is asked to stop (`halt`, read between ADMM iterations too: a step takes seconds), or
/// after `TUNING.settle_steps`. None when no step was taken.
#[allow(clippy::too_many_arguments)]
pub(super) fn settle(
    cert: &Certificate,
    data: &DataView,
    c: f64,
    x: &mut [f64],
    now: &mut Rows,
    gradient: &[f64],
    copies: Option<&Copies>,
    most: usize,
    halt: &dyn Fn() -> bool,
) -> Option<Settled> {
    let mut gradient = gradient.to_vec();
    let scale = c / now.a.len() as f64;
    let mut f = scale * now.loss + regularizer(cert, x);
    let mut best = f64::NEG_INFINITY;
    let mut stepped = false;
    // The last subproblem's multipliers by column, where the next one starts.
    let mut multipliers: std::collections::HashMap<usize, f64> = Default::default();
    for _ in 0..TUNING.settle_steps {
        if halt() {
            break;
        }
        let cols: Vec<usize> = (0..x.len())
            .filter(|&j| {
                moves_freely(cert, x[j])
                    || (x[j] == 0.0
                        && gradient[j].abs() > TUNING.settle_near_violation * cert.l1
                        && !copies.is_some_and(|c| c.is_copy(j)))
            })
            .collect();
        if cols.is_empty() || cols.len() > most {
            break;
        }
        let sub = Subspace::new(data, x.len(), &cols);
        let v: Vec<f64> = cols.iter().map(|&j| x[j]).collect();
        // ∇ of the loss on V, and of the smooth part (the loss and the ridge) for the subproblem.
        let g: Vec<f64> = sub.transpose_times(&now.u).iter().map(|x| scale * x).collect();
        let smooth: Vec<f64> = g.iter().zip(&v).map(|(g, v)| g + cert.l2 * v).collect();
        let start: Option<Vec<f64>> = (!multipliers.is_empty())
            .then(|| cols.iter().map(|j| multipliers.get(j).copied().unwrap_or(f64::NAN)).collect());
        let Some((z, multiplier)) = subproblem(cert, &sub, now, scale, &v, &smooth, start.as_deref(), halt) else {
            break;
        };
        multipliers = cols.iter().copied().zip(multiplier).collect();
        let d: Vec<f64> = z.iter().zip(&v).map(|(z, v)| z - v).collect();
        let Some((point, trial)) = line_search(cert, data, &sub, now, scale, &v, &g, &d) else { break };
        f += scale * (trial.loss - now.loss) + regularizer(cert, &point) - regularizer(cert, &v);
        for (&j, &p) in cols.iter().zip(&point) {
            x[j] = p;
        }
        *now = trial;
        stepped = true;
        // ∇f at the step's point picks the coordinates the one-coordinate steps take, and ∇f
        // after them the next step's V; both points' dual values count.
        let (at_step, stepped_gradient) = dual_and_gradient(cert, data, c, x.len(), &now.a);
        f += coordinate_steps(cert, data, scale, x, now, &stepped_gradient, copies);
        let (after, moved_gradient) = dual_and_gradient(cert, data, c, x.len(), &now.a);
        for dual in [at_step, after].into_iter().filter(|d| d.is_finite()) {
            best = best.max(dual);
        }
        gradient = moved_gradient;
        if f - best <= TUNING.settled_gap * f.abs() {
            break;
        }
    }
    stepped.then_some(Settled { f, dual: best, gradient })
}

/// One-coordinate Newton steps on F itself at the `TUNING.settle_coordinates` coordinates that violate
/// optimality most (by ∇f in `gradient`), each halved until F falls and followed by its rows;
/// the change of F. Without the columns of X at hand (`data.csc`), none.
fn coordinate_steps(
    cert: &Certificate,
    data: &DataView,
    scale: f64,
    x: &mut [f64],
    now: &mut Rows,
    gradient: &[f64],
    copies: Option<&Copies>,
) -> f64 {
    let Some(csc) = data.csc_at_hand().filter(|c| c.count() == x.len()) else { return 0.0 };
    let mut worst: Vec<(f64, usize)> = (0..x.len())
        .filter(|&j| !copies.is_some_and(|c| c.is_copy(j)))
        .map(|j| (violation(cert, x[j], gradient[j]), j))
        .filter(|&(v, _)| v > 0.0)
        .collect();
    if worst.len() > TUNING.settle_coordinates {
        worst.select_nth_unstable_by(TUNING.settle_coordinates - 1, |a, b| b.0.total_cmp(&a.0));
        worst.truncate(TUNING.settle_coordinates);
    }
    let kind = cert.conjugate;
    let labels = data.labels;
    let mut total = 0.0;
    for &(_, j) in &worst {
        let range = csc.ptr()[j]..csc.ptr()[j + 1];
        let column: Vec<(usize, f64)> =
            csc.rows()[range.clone()].iter().zip(&csc.values()[range]).map(|(&i, &v)| (i as usize, v)).collect();
        for _ in 0..TUNING.settle_coordinate_steps {
            let (g, h) =
                column.iter().fold((0.0, 0.0), |(g, h), &(i, v)| (g + v * now.u[i], h + v * v * now.curvature[i]));
            let (g, h) = (scale * g + cert.l2 * x[j], scale * h + cert.l2);
            if h.is_nan() || h <= 0.0 {
                break;
            }
            let shifted = x[j] - g / h;
            let mut delta = shifted.signum() * (shifted.abs() - cert.l1 / h).max(0.0) - x[j];
            if delta == 0.0 {
                break;
            }
            // F along the column, exactly: ℓ changes on the column's rows only (their ℓ now
            // taken once for every trial and for the update).
            // Each row's terms times its weight ωᵢ, as [`Rows::at`] keeps them.
            let weight = |i: usize| data.weight(i);
            let before: Vec<f64> =
                column.iter().map(|&(i, _)| weight(i) * loss_terms(kind, labels[i], now.a[i]).0).collect();
            let change = |delta: f64| {
                let loss: f64 = column
                    .iter()
                    .zip(&before)
                    .map(|(&(i, v), old)| weight(i) * loss_terms(kind, labels[i], now.a[i] + delta * v).0 - old)
                    .sum();
                let next = x[j] + delta;
                scale * loss + cert.l1 * (next.abs() - x[j].abs()) + 0.5 * cert.l2 * (next * next - x[j] * x[j])
            };
            let mut fell = None;
            for _ in 0..TUNING.settle_halvings {
                let c = change(delta);
                if c < 0.0 {
                    fell = Some(c);
                    break;
                }
                delta *= 0.5;
            }
            let Some(c) = fell else { break };
            for (&(i, v), old) in column.iter().zip(&before) {
                now.a[i] += delta * v;
                let (loss, u, curvature) = loss_terms(kind, labels[i], now.a[i]);
                now.loss += weight(i) * loss - old;
                now.u[i] = weight(i) * u;
                now.curvature[i] = weight(i) * curvature;
            }
            x[j] += delta;
            total += c;
        }
    }
    total
}

/// The minimiser over V of gᵀ(z − v) + ½(z − v)ᵀH(z − v) + λ‖z‖₁, g and H those of the loss and
/// the ridge, by over-relaxed ADMM on the split z = y: one Cholesky factor of H + ρI, then
/// `TUNING.settle_iterations` solves with it, or `TUNING.settle_warm_iterations` from the multipliers `start` of an
/// earlier step (by position in V; NaN where a coordinate is new). The minimiser and its
/// multipliers (ρ times ADMM's scaled dual). None when H + ρI cannot be factored, or when `halt`
/// says the run is to stop.
#[allow(clippy::too_many_arguments)]
fn subproblem(
    cert: &Certificate,
    sub: &Subspace,
    now: &Rows,
    scale: f64,
    v: &[f64],
    g: &[f64],
    start: Option<&[f64]>,
    halt: &dyn Fn() -> bool,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let n = v.len();
    let idx: Vec<usize> = (0..n).collect();
    let mut h = lower_hessian(sub, &now.curvature, scale, cert.l2, &idx);
    let mut diagonal: Vec<f64> = (0..n).map(|p| h[p * n + p]).collect();
    let (_, median, _) = diagonal.select_nth_unstable_by(n / 2, f64::total_cmp);
    let rho = TUNING.settle_rho * median.max(f64::MIN_POSITIVE);
    for p in 0..n {
        h[p * n + p] += rho;
    }
    let factor = Factor::new(h, n)?;
    // The subproblem's linear term: (H + ρI)·y = H·v − g + ρ(z − u).
    let hv = hessian_times(sub, &now.curvature, scale, cert.l2, v);
    let b: Vec<f64> = hv.iter().zip(g).map(|(hv, g)| hv - g).collect();
    let threshold = cert.l1 / rho;
    let mut z = v.to_vec();
    // u, the scaled dual of z = y, starts at the last step's multipliers, or (a coordinate new
    // to V, or the first step) where ∂‖z‖₁ would have it at v.
    let mut u: Vec<f64> = (0..n)
        .map(|k| {
            let m = start.map_or(f64::NAN, |s| s[k]);
            let m = if m.is_nan() { -g[k] } else { m };
            (m / rho).clamp(-threshold, threshold)
        })
        .collect();
    let mut rhs = faer::Mat::<f64>::zeros(n, 1);
    for _ in 0..if start.is_some() { TUNING.settle_warm_iterations } else { TUNING.settle_iterations } {
        if halt() {
            return None;
        }
        for k in 0..n {
            rhs[(k, 0)] = b[k] + rho * (z[k] - u[k]);
        }
        let y = factor.solve(rhs.as_ref());
        for k in 0..n {
            let relaxed = TUNING.settle_relax * y[(k, 0)] + (1.0 - TUNING.settle_relax) * z[k];
            let shifted = relaxed + u[k];
            let next = shifted.signum() * (shifted.abs() - threshold).max(0.0);
            u[k] = shifted - next;
            z[k] = next;
        }
    }
    let multipliers = u.iter().map(|u| u * rho).collect();
    z.iter().all(|x| x.is_finite()).then_some((z, multipliers))
}

/// The point v + t·d (and the rows there) for the largest t = 1, ½, … whose decrease of F is
/// Armijo's share of t·Δ, Δ = gᵀd + r(v + d) − r(v) for the loss's gradient g and the
/// regularizer r; None when no t down to `TUNING.settle_min_step` passes or Δ is not negative.
#[allow(clippy::too_many_arguments)]
fn line_search(
    cert: &Certificate,
    data: &DataView,
    sub: &Subspace,
    now: &Rows,
    scale: f64,
    v: &[f64],
    g: &[f64],
    d: &[f64],
) -> Option<(Vec<f64>, Rows)> {
    let full: Vec<f64> = v.iter().zip(d).map(|(v, d)| v + d).collect();
    let predicted = dot(g, d) + regularizer(cert, &full) - regularizer(cert, v);
    if predicted.is_nan() || predicted >= 0.0 {
        return None;
    }
    let dm = sub.times(d);
    let search = Search { cert, scale, v, loss: now.loss, least: TUNING.settle_min_step, after_full: 1.0 };
    let trial = |t: f64| {
        let rows = Rows::at(cert.conjugate, data.labels, data.weights, &now.a, Some((&dm, t)), sub.threads);
        let point = v.iter().zip(d).map(|(v, d)| v + t * d).collect();
        Trial { point, loss: rows.loss, rows, predicted: t * predicted }
    };
    search.run(trial, |_| false).map(|(at, _)| (at.point, at.rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: usize = 8;
    const D: usize = 4;
    const L1: f64 = 0.02;
    const L2: f64 = 1e-3;

    /// The one-coordinate steps lower F by what they report, leave the rows at X·w, and bring
    /// each violating coordinate within 1% of its optimality condition (three Newton steps from
    /// a violation of 18·λ). The two columns have no row in common, so neither step moves the
    /// other's condition; one starts at zero and enters, the other is non-zero and moves.
    #[test]
    fn the_coordinate_steps_meet_the_optimality_conditions_of_their_columns() {
        let x: Vec<Vec<f64>> =
            (0..M).map(|i| if i < M / 2 { vec![1.0 + i as f64, 0.0] } else { vec![0.0, 0.5 * i as f64] }).collect();
        let labels: Vec<f64> = (0..M).map(|i| if i % 3 == 1 { -1.0 } else { 1.0 }).collect();
        let (indptr, indices, values) = super::super::tests::rows_of(&x);
        let csc = crate::data::LazyColumns::built(crate::data::Columns::of(&indptr, (&indices).into(), &values, 2, 1));
        let data = DataView::new(&indptr, &indices, &values, &labels, 2).with_columns(&csc);
        let cert = Certificate {
            conjugate: crate::plan::LossConjugate::Logistic,
            ..super::super::tests::cert(L1, L2, f64::NEG_INFINITY, f64::INFINITY)
        };
        let scale = 1.0 / M as f64;
        let margins = |w: &[f64]| -> Vec<f64> { x.iter().map(|r| r[0] * w[0] + r[1] * w[1]).collect() };
        let f = |w: &[f64]| {
            let loss: f64 = margins(w).iter().zip(&labels).map(|(&a, &y)| cert.conjugate.loss(y, a)).sum();
            scale * loss + L1 * (w[0].abs() + w[1].abs()) + 0.5 * L2 * (w[0] * w[0] + w[1] * w[1])
        };
        let gradient = |w: &[f64]| -> Vec<f64> {
            let a = margins(w);
            (0..2)
                .map(|j| {
                    let sum: f64 = (0..M).map(|i| x[i][j] * loss_terms(cert.conjugate, labels[i], a[i]).1).sum();
                    scale * sum + L2 * w[j]
                })
                .collect()
        };
        let mut w = vec![0.0, -0.3];
        let before = f(&w);
        let g = gradient(&w);
        let violations: Vec<f64> = (0..2).map(|j| violation(&cert, w[j], g[j])).collect();
        assert!(violations.iter().all(|&v| v > 10.0 * L1), "both columns violate: {violations:?}");
        let mut now = Rows::at(cert.conjugate, &labels, None, &margins(&w), None, 1);
        let change = coordinate_steps(&cert, &data, scale, &mut w, &mut now, &g, None);
        assert!(w[0] != 0.0, "the zero column entered: {w:?}");
        assert!(
            (f(&w) - (before + change)).abs() <= 1e-12,
            "F moved by {} where the steps said {change}",
            f(&w) - before
        );
        for (a, b) in now.a.iter().zip(margins(&w)) {
            assert!((a - b).abs() <= 1e-12, "the rows are at {a} where X·w is {b}");
        }
        let g = gradient(&w);
        for j in 0..2 {
            let after = violation(&cert, w[j], g[j]);
            assert!(after <= 1e-2 * violations[j], "column {j}: violation {after} from {}", violations[j]);
        }
    }

    /// ADMM's answer to the subproblem meets its optimality conditions, with H summed here from
    /// the rows: (g + H·(z − v))ₖ = −λ·sign(zₖ) where zₖ ≠ 0, and |(g + H·(z − v))ₖ| ≤ λ where
    /// zₖ = 0. From v the answer brings a coordinate in, sends one to zero and flips the sign of
    /// a third.
    #[test]
    fn the_subproblem_meets_its_optimality_conditions() {
        let x: Vec<Vec<f64>> =
            (0..M).map(|i| (0..D).map(|j| (((i * 5 + j * 3) % 7) as f64 - 3.0) / (1 + j) as f64).collect()).collect();
        let (indptr, indices, values) = super::super::tests::rows_of(&x);
        let labels = vec![1.0; M];
        let data = DataView::new(&indptr, &indices, &values, &labels, D);
        let sub = Subspace::new(&data, D, &(0..D).collect::<Vec<_>>());
        let curvature: Vec<f64> = (0..M).map(|i| 0.1 + 0.02 * i as f64).collect();
        let now = Rows { a: vec![0.0; M], u: vec![0.0; M], curvature: curvature.clone(), loss: 0.0 };
        let scale = 1.0 / M as f64;
        let cert = super::super::tests::cert(L1, L2, f64::NEG_INFINITY, f64::INFINITY);
        let v = [0.3, 0.0, -0.01, 0.1];
        let g = [0.05, -0.3, 0.03, 0.01];
        assert!(subproblem(&cert, &sub, &now, scale, &v, &g, None, &|| true).is_none(), "a halted subproblem answered");
        let (z, multipliers) = subproblem(&cert, &sub, &now, scale, &v, &g, None, &|| false).expect("a factor");
        // Started from its own multipliers, with fewer iterations, ADMM stays at its answer; from
        // multipliers of the wrong sign it finds it again.
        let (again, _) = subproblem(&cert, &sub, &now, scale, &v, &g, Some(&multipliers), &|| false).expect("a factor");
        let flipped: Vec<f64> = multipliers.iter().map(|m| -m).collect();
        let (found, _) = subproblem(&cert, &sub, &now, scale, &v, &g, Some(&flipped), &|| false).expect("a factor");
        for k in 0..D {
            assert!((again[k] - z[k]).abs() <= 1e-9 * (1.0 + z[k].abs()), "warm start moved {k}: {again:?} from {z:?}");
            assert!(
                (found[k] - z[k]).abs() <= 1e-6 * (1.0 + z[k].abs()),
                "warm start from the wrong side: {found:?} against {z:?}"
            );
        }
        let h = |r: usize, c: usize| {
            let sum: f64 = (0..M).map(|i| scale * curvature[i] * x[i][r] * x[i][c]).sum();
            sum + if r == c { L2 } else { 0.0 }
        };
        assert!(z.contains(&0.0) && z.iter().any(|&x| x != 0.0), "both kinds of coordinate: {z:?}");
        // Coordinate 1 enters, 2 changes sign and 3 leaves.
        assert!(z[1] != 0.0 && z[2] > 0.0 && z[3] == 0.0, "the step moves the support: {z:?}");
        for k in 0..D {
            let r = g[k] + (0..D).map(|c| h(k, c) * (z[c] - v[c])).sum::<f64>();
            if z[k] == 0.0 {
                assert!(r.abs() <= L1 * (1.0 + 1e-6), "zero coordinate {k}: |∇| = {r} > λ");
            } else {
                assert!(
                    (r + L1 * z[k].signum()).abs() <= 1e-6 * L1,
                    "coordinate {k}: ∇ + λ·sign = {}",
                    r + L1 * z[k].signum()
                );
            }
        }
    }
}
