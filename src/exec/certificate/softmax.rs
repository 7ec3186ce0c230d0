//! The Newton refinement of [`super::refine`] for softmax on W (d × k) with few features:
//! proximal Newton steps on every entry of W at once, the dense Hessian of the k·d entries
//! (c/m)·Σᵢ (xᵢxᵢᵀ) ⊗ (diag(pᵢ) − pᵢpᵢᵀ) + l2·I, the l1 model solved by the dense coordinate
//! descent and conjugate gradients of [`Round::model_minimiser`], then a backtracking search on
//! F. Proximal gradient (the plan's method for softmax with l1) takes hundreds of epochs where
//! glmnet's multinomial Newton steps take tens; the check's steps here solve the problem, and the
//! run continues from the point they reach, with its dual point u = pᵢ − e_{yᵢ}.
//!
//! Per-class offsets (free) are k more coordinates of each step, eliminated in closed form as a
//! scalar b is in [`Round::newton`]. Softmax is blind to b + t·1, so the last class's offset is
//! held: the others' block of the Hessian is then definite wherever some row's p has two classes
//! above 0.

use super::refine::{Budget, Refined, Round};
use super::search::{Search, Trial};
use super::tuning::TUNING;
use super::{dual_at, regularizer, solve, Certificate, Polished};
use crate::exec::DataView;

/// softmax(aᵢ) per row (k entries each) and Σᵢ ωᵢ·[log Σ_c exp(aᵢ_c) − aᵢ_{yᵢ}] (ωᵢ the
/// row's weight, 1 without weights).
fn probabilities(labels: &[f64], weights: Option<&[f64]>, scores: &[f64], k: usize) -> (Vec<f64>, f64) {
    let mut p = scores.to_vec();
    let mut loss = 0.0;
    for (i, (row, &y)) in p.chunks_mut(k).zip(labels).enumerate() {
        let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let label = row.get(y as usize).copied().unwrap_or(top);
        let mut z = 0.0;
        for v in row.iter_mut() {
            *v = (*v - top).exp();
            z += *v;
        }
        row.iter_mut().for_each(|v| *v /= z);
        loss += weights.map_or(1.0, |s| s[i]) * (top + z.ln() - label);
    }
    (p, loss)
}

/// The scores' gradients pᵢ − e_{yᵢ}, balanced per class with free offsets.
fn scores_point(cert: &Certificate, labels: &[f64], weights: Option<&[f64]>, p: &[f64], k: usize) -> Vec<f64> {
    let mut u = p.to_vec();
    for (row, &y) in u.chunks_mut(k).zip(labels) {
        if let Some(v) = row.get_mut(y as usize) {
            *v -= 1.0;
        }
    }
    super::dual_point(cert, labels, weights, k, super::Entries::InDomain(u))
}

/// Proximal Newton steps from W (`w`, d × k row-major) at the scores `margins` (m × k, the
/// offsets in them): the best dual value they reach and, when they moved, where to. None where
/// the k·d entries are too many for a dense Hessian.
pub(super) fn refined_dual(
    cert: &Certificate,
    data: &DataView,
    c: f64,
    w: &[f64],
    margins: &[f64],
    budget: Budget,
) -> Option<Refined> {
    let m = data.rows();
    let n = w.len();
    if m == 0 || n == 0 || n > TUNING.refine_max || !margins.len().is_multiple_of(m) {
        return None;
    }
    let k = margins.len() / m;
    let d = n / k;
    let work: f64 = (0..m).map(|i| ((data.indptr[i + 1] - data.indptr[i]) * k).pow(2) as f64 / 2.0).sum();
    if work > TUNING.softmax_hessian_work_max {
        return None;
    }
    let scale = c / m as f64;
    let labels = data.labels;
    let free = cert.intercept && k > 1;
    let (mut v, mut a) = (w.to_vec(), margins.to_vec());
    let mut shift = vec![0.0; k];
    let (mut p, mut loss) = probabilities(labels, data.weights, &a, k);
    let mut best = f64::NEG_INFINITY;
    let mut moved = false;
    // −(c/m)·Xᵀu at the current point's dual point, once it is taken.
    let mut at_point: Option<Vec<f64>> = None;
    let round = |v: &[f64]| Round { cols: (0..n).collect(), v: v.to_vec() };
    for _ in 0..TUNING.refine_steps {
        if (budget.halt)() {
            break;
        }
        let u = scores_point(cert, labels, data.weights, &p, k);
        let (dual, z) = dual_at(cert, data, c, d, k, &u);
        at_point = Some(z);
        if dual.is_finite() {
            best = best.max(dual);
        }
        let f = scale * loss + regularizer(cert, &v);
        if best >= budget.enough || f - best <= budget.slack {
            break;
        }
        // ∇ and the Hessian of the loss part, entry (j, c) at j·k + c; the offsets' block.
        let mut g = vec![0.0; n];
        let mut h = crate::exec::linalg::zeros(n * n);
        let mut g_b = vec![0.0; k];
        let mut h_wb = vec![0.0; n * k];
        let mut h_bb = vec![0.0; k * k];
        let mut curvature = vec![0.0; k * k];
        for i in 0..m {
            let pi = &p[i * k..(i + 1) * k];
            let y = labels[i] as usize;
            let entries = data.indptr[i]..data.indptr[i + 1];
            // The row's gradient and Hessian block carry its weight.
            let scale = scale * data.weight(i);
            for cl in 0..k {
                let r = pi[cl] - if cl == y { 1.0 } else { 0.0 };
                g_b[cl] += scale * r;
                for q in entries.clone() {
                    g[data.indices[q] as usize * k + cl] += scale * r * data.values[q];
                }
            }
            // The row's k × k block diag(pᵢ) − pᵢpᵢᵀ, scaled.
            for c1 in 0..k {
                for c2 in 0..k {
                    curvature[c1 * k + c2] = scale * (if c1 == c2 { pi[c1] } else { 0.0 } - pi[c1] * pi[c2]);
                }
            }
            h_bb.iter_mut().zip(&curvature).for_each(|(h, c)| *h += c);
            // Each unordered pair of the row's (entry, class) once, into h at either orientation:
            // h + hᵀ − diag(h) below is the Hessian whatever order the row lists its entries in.
            for q1 in entries.clone() {
                let (j1, x1) = (data.indices[q1] as usize, data.values[q1]);
                for c1 in 0..k {
                    let e1 = j1 * k + c1;
                    let block = &curvature[c1 * k..(c1 + 1) * k];
                    h_wb[e1 * k..(e1 + 1) * k].iter_mut().zip(block).for_each(|(h, c)| *h += c * x1);
                    let row = &mut h[e1 * n..(e1 + 1) * n];
                    for q2 in data.indptr[i]..q1 {
                        let (base, x) = (data.indices[q2] as usize * k, x1 * data.values[q2]);
                        for (c2, c) in block.iter().enumerate() {
                            row[base + c2] += c * x;
                        }
                    }
                    for (c2, c) in block.iter().enumerate().take(c1 + 1) {
                        row[j1 * k + c2] += c * x1 * x1;
                    }
                }
            }
        }
        for e1 in 0..n {
            for e2 in 0..e1 {
                let sum = h[e1 * n + e2] + h[e2 * n + e1];
                h[e1 * n + e2] = sum;
                h[e2 * n + e1] = sum;
            }
        }
        let largest = (0..n).map(|e| h[e * n + e]).fold(0.0, f64::max);
        for e in 0..n {
            h[e * n + e] += cert.l2 + 1e-12 * largest;
            g[e] += cert.l2 * v[e];
        }
        // The offsets but the last, eliminated: δb = −H_bb⁻¹(g_b + H_bw·d) on the model's d, whose
        // Hessian and gradient are then H − H_wb·H_bb⁻¹·H_bw and g − H_wb·H_bb⁻¹·g_b.
        let kept = if free { k - 1 } else { 0 };
        let block: Vec<Vec<f64>> = (0..kept).map(|c1| (0..kept).map(|c2| h_bb[c1 * k + c2]).collect()).collect();
        let inverse_cols: Option<Vec<Vec<f64>>> = (kept > 0)
            .then(|| {
                (0..n)
                    .map(|e| solve(block.clone(), (0..kept).map(|cl| h_wb[e * k + cl]).collect()))
                    .collect::<Option<Vec<_>>>()
            })
            .flatten();
        let b_step_of = |dvec: &[f64]| -> Vec<f64> {
            let mut out = vec![0.0; k];
            if kept > 0 {
                let rhs: Vec<f64> =
                    (0..kept).map(|cl| g_b[cl] + (0..n).map(|e| h_wb[e * k + cl] * dvec[e]).sum::<f64>()).collect();
                if let Some(x) = solve(block.clone(), rhs) {
                    out[..kept].iter_mut().zip(x).for_each(|(o, x)| *o = -x);
                }
            }
            out
        };
        let mut centred = g.clone();
        if let Some(cols) = &inverse_cols {
            // (H_bb⁻¹·H_bw)[·, e] is cols[e]; H_wb·H_bb⁻¹·H_bw and H_wb·H_bb⁻¹·g_b.
            let b_only = solve(block.clone(), g_b[..kept].to_vec()).unwrap_or_else(|| vec![0.0; kept]);
            for e1 in 0..n {
                centred[e1] -= (0..kept).map(|cl| h_wb[e1 * k + cl] * b_only[cl]).sum::<f64>();
                for (e2, col) in cols.iter().enumerate() {
                    h[e1 * n + e2] -= (0..kept).map(|cl| h_wb[e1 * k + cl] * col[cl]).sum::<f64>();
                }
            }
        }
        let x = round(&v).model_minimiser(cert, &h, &centred, TUNING.model_forcing);
        let step: Vec<f64> = x.iter().zip(&v).map(|(x, v)| x - v).collect();
        let step_b = b_step_of(&step);
        let l1_norm = |z: &[f64]| z.iter().map(|v| v.abs()).sum::<f64>();
        let predicted = g.iter().zip(&step).map(|(g, s)| g * s).sum::<f64>()
            + g_b.iter().zip(&step_b).map(|(g, s)| g * s).sum::<f64>()
            + cert.l1 * (l1_norm(&x) - l1_norm(&v));
        if predicted.is_nan() || predicted >= 0.0 {
            break;
        }
        // The step in the scores: Xᵢ·D + δb.
        let mut da = vec![0.0; m * k];
        for i in 0..m {
            let row = &mut da[i * k..(i + 1) * k];
            row.copy_from_slice(&step_b);
            for q in data.indptr[i]..data.indptr[i + 1] {
                let (j, x) = (data.indices[q] as usize, data.values[q]);
                for (cl, o) in row.iter_mut().enumerate() {
                    *o += x * step[j * k + cl];
                }
            }
        }
        let search = Search { cert, scale, v: &v, loss, least: TUNING.refine_min_step, after_full: 1.0 };
        let trial = |t: f64| {
            let scores: Vec<f64> = a.iter().zip(&da).map(|(a, s)| a + t * s).collect();
            let (probabilities, loss) = probabilities(labels, data.weights, &scores, k);
            let point = v.iter().zip(&step).map(|(v, s)| v + t * s).collect();
            Trial { point, rows: (scores, probabilities), loss, predicted: t * predicted }
        };
        let accepted = search.run(trial, |_| false).map(|(at, t)| (at.point, at.rows.0, at.rows.1, at.loss, t));
        let Some((point, trial, tp, tloss, t)) = accepted else { break };
        shift.iter_mut().zip(&step_b).for_each(|(s, b)| *s += t * b);
        (v, a, p, loss) = (point, trial, tp, tloss);
        moved = true;
        at_point = None;
    }
    // The dual point where the steps ended, and ∇f there for the run that continues from it:
    // already taken at the top of the loop unless its last step moved.
    let z = match at_point {
        Some(z) => z,
        None => {
            let (dual, z) = dual_at(cert, data, c, d, k, &scores_point(cert, labels, data.weights, &p, k));
            if dual.is_finite() {
                best = best.max(dual);
            }
            z
        }
    };
    best.is_finite().then(|| Refined {
        dual: best,
        moved: moved.then(|| Polished {
            weights: v,
            intercept_shift: 0.0,
            class_shift: if free { shift } else { vec![] },
            gradient: z.iter().map(|x| -x).collect(),
        }),
    })
}
