use super::*;
use crate::exec::linalg::transpose_times;

/// A small problem with duplicated rows (several rows at the hinge's kink) and, with b, labels
/// mostly one way, so that b* is far from 0.
fn problem(m: usize) -> (Vec<usize>, Vec<u32>, Vec<f64>, Vec<f64>) {
    let (mut indptr, mut indices, mut values, mut labels) = (vec![0], vec![], vec![], vec![]);
    let mut seed = 7_u64;
    let mut next = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as f64 / (1u64 << 31) as f64
    };
    for i in 0..m {
        let row: Vec<(u32, f64)> = if i % 7 == 3 {
            vec![(0, 1.0), (2, 1.0)]
        } else {
            let mut row = vec![];
            for j in 0..5u32 {
                let (keep, v) = (next() < 0.6, (next() * 4.0).round() / 2.0);
                if keep {
                    row.push((j, v));
                }
            }
            row
        };
        let score: f64 = row.iter().map(|&(j, v)| v * [1.0, -0.5, 0.3, 0.8, -1.2][j as usize]).sum();
        labels.push(if score + 0.5 * next() > 1.2 { 1.0 } else { -1.0 });
        for (j, v) in row {
            indices.push(j);
            values.push(v);
        }
        indptr.push(indices.len());
    }
    (indptr, indices, values, labels)
}

/// P(w, b) − D(α) in LIBLINEAR's scaling, α balanced (Σ αᵢyᵢ = 0, by scaling down the larger
/// side) when b is free, α's box checked: a true bound on P − P*, computed here from the
/// formulas alone.
fn gap(data: &DataView, rows: &Rows, w: &[f64], b: Option<(f64, f64)>, alpha: &[f64]) -> f64 {
    let m = rows.labels.len();
    let margin = |i: usize| -> f64 {
        let mut s = b.map_or(0.0, |(b, _)| b);
        for k in data.indptr[i]..data.indptr[i + 1] {
            s += data.values[k] * w[data.indices[k] as usize];
        }
        s
    };
    let primal = 0.5 * dot(w, w)
        + b.map_or(0.0, |(b, r)| 0.5 * r * b * b)
        + (0..m).map(|i| rows.cap(i) * (1.0 - rows.labels[i] * margin(i)).max(0.0)).sum::<f64>();
    let mut a = alpha.to_vec();
    for (i, &x) in a.iter().enumerate() {
        assert!((0.0..=rows.cap(i)).contains(&x), "α[{i}] = {x} out of its box");
    }
    let free = b.is_some_and(|(_, r)| r == 0.0);
    if free {
        let side = |sign: f64| (0..m).filter(|&i| rows.labels[i] == sign).map(|i| a[i]).sum::<f64>();
        let (pos, neg) = (side(1.0), side(-1.0));
        for (a, &y) in a.iter_mut().zip(rows.labels) {
            if y > 0.0 && pos > neg {
                *a *= neg / pos;
            } else if y < 0.0 && neg > pos {
                *a *= pos / neg;
            }
        }
    }
    let signed: Vec<f64> = (0..m).map(|i| rows.labels[i] * a[i]).collect();
    let v = transpose_times(data, w.len(), &signed);
    let sum: f64 = signed.iter().sum();
    // With a penalised b its coordinate of the dual's quadratic is (Σ αᵢyᵢ)²/ρ_b.
    let b_term = b.filter(|_| !free).map_or(0.0, |(_, r)| 0.5 * sum * sum / r);
    let dual = a.iter().sum::<f64>() - 0.5 * dot(&v, &v) - b_term;
    primal - dual
}

/// From w = 0, α = 0, the epochs certify a relative gap of 1e-10, by the gap computed from the
/// formulas: without b, with a free b and with a penalised one, with and without the rows'
/// weights, at a strong and a weak C. Every α stays in its box along the way.
#[test]
fn epochs_reach_the_optimum_by_an_independent_gap() {
    let (indptr, indices, values, labels) = problem(300);
    let data = DataView::new(&indptr, &indices, &values, &labels, 5);
    let weights: Vec<f64> = (0..300).map(|i| [1.0, 0.0, 2.5][i % 3]).collect();
    for cap in [0.05, 5.0] {
        for intercept in [None, Some(0.0), Some(0.7)] {
            for weighted in [false, true] {
                let rows = Rows { labels: &labels, weights: weighted.then_some(&weights[..]), cap };
                let (mut w, mut alpha, mut sigma) = (vec![0.0; 5], vec![0.0; 300], 0.0);
                let mut b = intercept.map(|_| 0.0);
                let mut last = f64::INFINITY;
                for _ in 0..60 {
                    let it = Iterate { w: &mut w, b: b.as_mut().zip(intercept), alpha: &mut alpha, sigma: &mut sigma };
                    epoch(&data, &rows, it);
                    last = gap(&data, &rows, &w, b.zip(intercept), &alpha);
                }
                let p = 0.5 * dot(&w, &w);
                assert!(last >= -1e-9 * (1.0 + p), "C {cap}, b {intercept:?}: a negative gap {last:e}");
                let scale = (0..300).map(|i| rows.cap(i)).sum::<f64>();
                assert!(last <= 1e-10 * scale, "C {cap}, b {intercept:?}, weighted {weighted}: gap {last:e}");
            }
        }
    }
}

/// The step length is the minimiser of φ along the step: φ′ is 0 there (within rounding) where
/// it is negative at 0, on a line crossing many rows' kinks.
#[test]
fn the_line_search_finds_the_root_of_the_derivative() {
    let labels: Vec<f64> = (0..50).map(|i| if i % 3 == 0 { 1.0 } else { -1.0 }).collect();
    let rows = Rows { labels: &labels, weights: None, cap: 1.0 };
    let alpha: Vec<f64> = (0..50).map(|i| (i % 5) as f64 / 5.0).collect();
    let margins: Vec<f64> = (0..50).map(|i| (i as f64 - 25.0) / 10.0).collect();
    let along: Vec<f64> = (0..50).map(|i| ((i * 7) % 11) as f64 / 5.0 - 1.0).collect();
    let line = Line::new(&rows, &alpha, &margins, &along, 2.0);
    let quadratic = (-3.0, 0.5, 0.0, 0.0);
    let (slope, _) = line.derivatives(0.0, quadratic);
    assert!(slope < 0.0);
    let t = line.minimum(quadratic, slope);
    let (at, _) = line.derivatives(t, quadratic);
    assert!(t > 0.0 && at.abs() <= 1e-9 * slope.abs(), "t = {t}, φ′(t) = {at:e}, φ′(0) = {slope:e}");
}

/// What a run can meet: every label one class with a free b (once every row sits on a bound φ is
/// linear in b, and b moves along its gradient), rows without entries (no feature at all), and a
/// C so small that every αᵢ is on a bound. The epochs reach the optimum by the independent gap.
#[test]
fn one_class_no_features_and_a_tiny_c_reach_the_optimum() {
    let (indptr, indices, values) = (vec![0, 1, 2, 4], vec![0, 1, 0, 1], vec![1.0, 1.0, 0.5, 0.5]);
    let (empty_ptr, none, nothing) = (vec![0, 0, 0, 0], vec![], vec![]);
    for (labels, empty) in [(vec![1.0, 1.0, 1.0], false), (vec![1.0, -1.0, 1.0], true), (vec![-1.0; 3], true)] {
        let data = match empty {
            false => DataView::new(&indptr, &indices, &values, &labels, 2),
            true => DataView::new(&empty_ptr, &none, &nothing, &labels, 0),
        };
        for cap in [1e-6, 1.0 / 3.0, 1e3] {
            let rows = Rows { labels: &labels, weights: None, cap };
            let (mut w, mut alpha, mut sigma, mut b) = (vec![0.0; data.features], vec![0.0; 3], 0.0, 0.0);
            for _ in 0..40 {
                let it = Iterate { w: &mut w, b: Some((&mut b, 0.0)), alpha: &mut alpha, sigma: &mut sigma };
                epoch(&data, &rows, it);
            }
            let last = gap(&data, &rows, &w, Some((b, 0.0)), &alpha);
            assert!(last.abs() <= 1e-9 * (1.0 + 3.0 * cap), "labels {labels:?}, C {cap}: gap {last:e} at b = {b}");
        }
    }
}
