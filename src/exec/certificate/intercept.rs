//! The dual with an unregularized intercept b. F(w, b) = (c/m)·Σᵢ ℓ(yᵢ, ⟨xᵢ, w⟩ + b) + R(w)
//! has R's conjugate in w and, in b, the conjugate of 0: the indicator of {0}. So a dual point
//! bounds F* only if Σᵢ uᵢ = 0 exactly; any other u has D(u) = −∞. (Lagrange's view: the
//! bound D₀(u) + (c/m)·b*·Σᵢ uᵢ holds for the unknown optimal b*, so without the constraint no
//! finite bound follows.)
//!
//! ℓ′ at the run's margins has Σᵢ uᵢ = 0 only when b is optimal for the current w. Two steps
//! make every dual point feasible without touching the iterate:
//! 1. [`shift_to_optimal_offset`]: the margins are moved by the t that minimises Σᵢ ℓ(yᵢ, aᵢ + t)
//!    (a safeguarded 1-D Newton; one step for the squared loss), so ℓ′ there sums to ≈ 0 and
//!    the point is the one the optimal b for this w would give;
//! 2. [`balance`]: the rounding left over (or an extrapolated point's drift) is removed by
//!    moving each uᵢ toward the end of dom ℓ*(yᵢ, ·) in proportion to its room there, so
//!    Σᵢ uᵢ = 0 up to rounding and u stays in the domain. Scaling by s afterwards keeps the sum 0.

use super::tuning::TUNING;
use crate::plan::LossConjugate;

/// Moves every margin by the minimiser t of Σᵢ ωᵢ·ℓ(yᵢ, aᵢ + t) (or as close as the iterations
/// get: a logistic loss on one class has none, t → ±∞, and [`balance`] makes up the rest);
/// `weights` are the rows' ωᵢ, None for every ωᵢ = 1. Returns the t the margins moved by.
pub(super) fn shift_to_optimal_offset(
    kind: LossConjugate,
    labels: &[f64],
    weights: Option<&[f64]>,
    a: &mut [f64],
) -> f64 {
    if !kind.has_curvature() || a.is_empty() {
        return 0.0;
    }
    // Where every margin is the same (w = 0: the null model every fit with b starts from) the
    // rows of one label are one row of their summed weight, and the iterations run over the
    // labels: on w8a's 49,749 rows, 7 iterations of an exp a row took 2.4 ms, twice a fit.
    let t = match equal_margin_groups(labels, weights, a) {
        Some(groups) => {
            let at = a[0];
            optimal_offset(|t| {
                groups.iter().fold((0.0, 0.0), |(g, h), &(y, wi)| {
                    let (d1, d2) = super::loss::loss_derivatives(kind, y, at + t);
                    (g + wi * d1, h + wi * d2)
                })
            })
        }
        None => optimal_offset(|t| {
            let (mut g, mut h) = (0.0, 0.0);
            for (i, (&ai, &y)) in a.iter().zip(labels).enumerate() {
                let (d1, d2) = super::loss::loss_derivatives(kind, y, ai + t);
                let wi = weights.map_or(1.0, |s| s[i]);
                g += wi * d1;
                h += wi * d2;
            }
            (g, h)
        }),
    };
    a.iter_mut().for_each(|ai| *ai += t);
    t
}

/// The zero of a slope that grows with t, `slope(t)` = (its value, its derivative): a
/// safeguarded Newton from 0, bisecting once a bracket is known; 0 where it diverges.
fn optimal_offset(slope: impl Fn(f64) -> (f64, f64)) -> f64 {
    let (mut t, mut lo, mut hi) = (0.0_f64, f64::NEG_INFINITY, f64::INFINITY);
    for _ in 0..TUNING.offset_steps {
        let (g, h) = slope(t);
        if g == 0.0 || !g.is_finite() {
            break;
        }
        if g > 0.0 {
            hi = t;
        } else {
            lo = t;
        }
        let mut next = t - g / h;
        if !(next > lo && next < hi) {
            // Outside the bracket (or h ≈ 0): bisect, or widen toward the root.
            next = match (lo.is_finite(), hi.is_finite()) {
                (true, true) => 0.5 * (lo + hi),
                _ if g > 0.0 => t - t.abs().max(1.0),
                _ => t + t.abs().max(1.0),
            };
        }
        let done = (next - t).abs() <= TUNING.offset_resolution * (1.0 + t.abs());
        t = next;
        if done {
            break;
        }
    }
    if t.is_finite() {
        t
    } else {
        0.0
    }
}

/// The distinct labels with their rows' summed weights, when every margin is the same and the
/// labels are few (classes; a regression's labels are many, and its loss takes one step):
/// one pass with no loss evaluated. None otherwise.
fn equal_margin_groups(labels: &[f64], weights: Option<&[f64]>, a: &[f64]) -> Option<Vec<(f64, f64)>> {
    if a.iter().any(|&x| x != a[0]) {
        return None;
    }
    let mut groups: Vec<(f64, f64)> = vec![];
    for (i, &y) in labels.iter().enumerate() {
        let wi = weights.map_or(1.0, |s| s[i]);
        if let Some(g) = groups.iter_mut().find(|g| g.0 == y) {
            g.1 += wi;
        } else if groups.len() < TUNING.offset_label_groups {
            groups.push((y, wi));
        } else {
            return None;
        }
    }
    Some(groups)
}

/// The best intercept for w = 0: the b minimising (c/m)·Σᵢ ℓ(yᵢ, b) + (μ/2)·b², found by
/// bisecting its derivative, which grows with b (a subgradient for the hinge). It is where a
/// regularization path starts: at λ ≥ λ_max the solution is w = 0 with this b. None when there
/// is no minimiser (a logistic loss on one class with b unregularized: b → ±∞), no closed-form
/// ℓ′ (softmax, whose offsets are [`class_offsets`]), or no single ℓ′ there: the hinge's best b
/// sits on its kink (b = ±1 with w = 0), where the subgradient that makes w = 0 optimal is a
/// balance of the kink rows' no bisection picks.
pub(crate) fn intercept_only(
    kind: LossConjugate,
    labels: &[f64],
    weights: Option<&[f64]>,
    c: f64,
    mu: f64,
) -> Option<f64> {
    let m = labels.len() as f64;
    let slope = |y: f64, b: f64| super::loss::loss_derivatives(kind, y, b).0;
    if !kind.has_curvature() || labels.is_empty() {
        return None;
    }
    // The rows' weights ωᵢ: (c/m)·Σᵢ ωᵢℓ′(yᵢ, b) + μ·b, a row of weight 0 out of it.
    let weight = |i: usize| weights.map_or(1.0, |s| s[i]);
    let rows = || labels.iter().enumerate().filter(|&(i, _)| weight(i) > 0.0);
    // A logistic loss on one class decreases for ever toward that class: no minimiser (its
    // derivative only underflows to 0, which a bisection would take for one).
    let one_class = rows().all(|(_, &y)| y > 0.0) || rows().all(|(_, &y)| y < 0.0);
    if kind == LossConjugate::Logistic && mu == 0.0 && one_class {
        return None;
    }
    let d = |b: f64| c / m * rows().map(|(i, &y)| weight(i) * slope(y, b)).sum::<f64>() + mu * b;
    let (mut lo, mut hi) = (-1.0_f64, 1.0_f64);
    while d(lo) > 0.0 {
        lo *= 2.0;
        if lo < -1e15 {
            return None;
        }
    }
    while d(hi) < 0.0 {
        hi *= 2.0;
        if hi > 1e15 {
            return None;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if d(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(0.5 * (lo + hi))
}

/// Softmax's best offsets for W = 0, unregularized: b_c = log(n_c/m), centred (softmax is the
/// same for any constant added to every class), so the predicted probabilities are the
/// classes' frequencies. None when a class of the `k` has no row (its b would be −∞).
pub(crate) fn class_offsets(labels: &[f64], weights: Option<&[f64]>, k: usize) -> Option<Vec<f64>> {
    // With the rows' weights, n_c is the class's total weight.
    let mut counts = vec![0.0_f64; k];
    for (i, &y) in labels.iter().enumerate() {
        *counts.get_mut(y as usize)? += weights.map_or(1.0, |s| s[i]);
    }
    if counts.iter().any(|&n| n <= 0.0) {
        return None;
    }
    let total: f64 = counts.iter().sum();
    let logs: Vec<f64> = counts.iter().map(|&n| (n / total).ln()).collect();
    let mean = logs.iter().sum::<f64>() / k as f64;
    Some(logs.iter().map(|l| l - mean).collect())
}

/// The interval dom ℓ*(y, ·): [lo, hi], holding 0.
pub(super) fn domain(kind: LossConjugate, y: f64) -> (f64, f64) {
    match kind {
        // logistic: p = −y·u ∈ [0, 1]; hinge: y·u ∈ [−1, 0]: u between 0 and −y.
        LossConjugate::Logistic | LossConjugate::Hinge => ((-y).min(0.0), (-y).max(0.0)),
        // y·u ≤ 0: u between 0 and −y·∞.
        LossConjugate::SquaredHinge if y > 0.0 => (f64::NEG_INFINITY, 0.0),
        LossConjugate::SquaredHinge => (0.0, f64::INFINITY),
        LossConjugate::Squared | LossConjugate::Softmax => (f64::NEG_INFINITY, f64::INFINITY),
        LossConjugate::Huber(delta) => (-delta, delta),
        LossConjugate::Quantile(tau) => (-tau, 1.0 - tau),
        LossConjugate::EpsInsensitive(_) => (-1.0, 1.0),
        LossConjugate::SquaredEpsInsensitive(_) => (f64::NEG_INFINITY, f64::INFINITY),
        LossConjugate::Poisson => (-y, f64::INFINITY),
    }
}

/// Makes Σᵢ ωᵢuᵢ = 0 (up to rounding) with every uᵢ kept in dom ℓ*(yᵢ, ·): the excess
/// r = Σ ωᵢuᵢ is taken from each uᵢ in proportion to its weighted room ωᵢ·(room toward the
/// domain's end in the direction of −r) (the whole domain's end is reachable: 0 is in every
/// domain, so the rooms add up to ≥ |r|; a row's share is capped at |r|, so an unbounded side
/// counts as |r|). A row of weight 0 is not moved. `weights` are the rows' ωᵢ, None for every
/// ωᵢ = 1. A squared loss's domain is the line: the weighted mean is subtracted.
pub(super) fn balance(kind: LossConjugate, labels: &[f64], weights: Option<&[f64]>, u: &mut [f64]) {
    if u.is_empty() {
        return;
    }
    let weight = |i: usize| weights.map_or(1.0, |s| s[i]);
    for _ in 0..2 {
        let r = match weights {
            Some(s) => sum(&u.iter().zip(s).map(|(ui, wi)| ui * wi).collect::<Vec<f64>>()),
            None => sum(u),
        };
        if r == 0.0 {
            return;
        }
        if matches!(kind, LossConjugate::Squared | LossConjugate::SquaredEpsInsensitive(_)) {
            let total = weights.map_or(u.len() as f64, sum);
            if total.is_nan() || total <= 0.0 {
                return;
            }
            let mean = r / total;
            u.iter_mut().for_each(|ui| *ui -= mean);
            continue;
        }
        let room: Vec<f64> = u
            .iter()
            .zip(labels)
            .enumerate()
            .map(|(i, (&ui, &y))| {
                let (lo, hi) = domain(kind, y);
                // An unbounded side (the squared hinge's) counts as |r|: the total stays ≥ |r|,
                // and no ∞·0 makes a NaN of the move.
                let room = if r > 0.0 { ui - lo } else { hi - ui };
                match weight(i) {
                    0.0 => 0.0,
                    wi => (wi * room).min(r.abs()),
                }
            })
            .collect();
        let total = sum(&room);
        if total.is_nan() || total <= 0.0 {
            return;
        }
        let f = (r.abs() / total).min(1.0);
        for (i, ((ui, &y), room)) in u.iter_mut().zip(labels).zip(room).enumerate() {
            if room > 0.0 {
                let (lo, hi) = domain(kind, y);
                *ui = (*ui - r.signum() * f * room / weight(i)).clamp(lo, hi);
            }
        }
    }
}

/// Σ by Neumaier's compensated summation: the sum the constraint is about must not lose the
/// small terms to rounding.
fn sum(v: &[f64]) -> f64 {
    let (mut s, mut c) = (0.0_f64, 0.0_f64);
    for &x in v {
        let t = s + x;
        c += if s.abs() >= x.abs() { (s - t) + x } else { (x - t) + s };
        s = t;
    }
    s + c
}

/// Softmax with one free offset per class: makes Σᵢ uᵢ = 0 in ℝᵏ (up to rounding) with every
/// qᵢ = uᵢ + e_{yᵢ} kept in the simplex. The mean residual r/m is taken from every row, which
/// keeps each row summing to 0 (the entries of r do) but may push an entry of q below 0; the
/// result is then mixed with u⁰ᵢ = f − e_{yᵢ}, f the class frequencies, whose rows are in the
/// simplex and whose sum is exactly 0, by the least θ that lifts every entry back to ≥ 0. Near
/// the optimum r is the gradient along the offsets, so θ is tiny and the point barely moves.
pub(super) fn balance_classes(labels: &[f64], weights: Option<&[f64]>, mut u: Vec<f64>, k: usize) -> Vec<f64> {
    let m = labels.len();
    if m == 0 || k == 0 || u.len() != m * k {
        return u;
    }
    // With the rows' weights ωᵢ: Σᵢ ωᵢuᵢ = 0, the weighted mean subtracted and the class
    // frequencies weighted; a row of weight 0 is out of the dual and does not limit θ.
    let weight = |i: usize| weights.map_or(1.0, |s| s[i]);
    let total: f64 = weights.map_or(m as f64, |s| s.iter().sum());
    if total.is_nan() || total <= 0.0 {
        return u;
    }
    let mut r = vec![0.0; k];
    for (i, row) in u.chunks(k).enumerate() {
        for (rc, x) in r.iter_mut().zip(row) {
            *rc += weight(i) * x;
        }
    }
    let mut f = vec![0.0; k];
    for (i, &y) in labels.iter().enumerate() {
        if let Some(fc) = f.get_mut(y as usize) {
            *fc += weight(i) / total;
        }
    }
    let mut theta: f64 = 0.0;
    for (i, (row, &y)) in u.chunks_mut(k).zip(labels).enumerate() {
        for (c, x) in row.iter_mut().enumerate() {
            *x -= r[c] / total;
            let q = *x + if c as f64 == y { 1.0 } else { 0.0 };
            if q < 0.0 && weight(i) > 0.0 {
                // (1 − θ)·q + θ·f_c ≥ 0; a class the data never shows has f_c = 0: all of u⁰.
                theta = theta.max(if f[c] > 0.0 { -q / (f[c] - q) } else { 1.0 });
            }
        }
    }
    let theta = theta.min(1.0);
    if theta > 0.0 {
        for (row, &y) in u.chunks_mut(k).zip(labels) {
            for (c, x) in row.iter_mut().enumerate() {
                let u0 = f[c] - if c as f64 == y { 1.0 } else { 0.0 };
                *x = (1.0 - theta) * *x + theta * u0;
            }
        }
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_points_sum_to_zero_inside_the_domain() {
        let labels = [1.0, -1.0, 1.0, 1.0, -1.0];
        for kind in [LossConjugate::Logistic, LossConjugate::Hinge, LossConjugate::Squared] {
            for u0 in [[-0.9, 0.2, -0.1, -0.7, 0.05], [-0.01, 0.9, -0.02, 0.0, 0.99]] {
                let mut u = u0.to_vec();
                balance(kind, &labels, None, &mut u);
                assert!(sum(&u).abs() <= 1e-15, "{kind:?}: {}", sum(&u));
                for (&ui, &y) in u.iter().zip(&labels) {
                    let (lo, hi) = domain(kind, y);
                    assert!(lo <= ui && ui <= hi, "{kind:?}: {ui} outside [{lo}, {hi}]");
                }
            }
        }
    }

    /// The derivative of (c/m)·Σᵢ ℓ(yᵢ, b) + (μ/2)·b² vanishes at the intercept found, computed
    /// here from the losses' own formulas; the squared loss's is the shrunk mean in closed form.
    #[test]
    fn the_intercept_only_offset_is_stationary() {
        let labels = [1.0, -1.0, 1.0, 1.0, -1.0, 1.0];
        let (c, mu) = (1.0, 0.1);
        let b = intercept_only(LossConjugate::Logistic, &labels, None, c, 0.0).expect("two classes");
        assert!((b - 2f64.ln()).abs() < 1e-12, "logit of 4/6: {b}");
        let b = intercept_only(LossConjugate::Logistic, &labels, None, c, mu).expect("b");
        let g: f64 = labels.iter().map(|&y| -y / (1.0 + (y * b).exp())).sum::<f64>() / 6.0 + mu * b;
        assert!(g.abs() < 1e-12, "{g}");
        let y = [3.0, 5.0, 10.0];
        let b = intercept_only(LossConjugate::Squared, &y, None, 2.0, 0.5).expect("b");
        // (2/3)·Σ(b − yᵢ) + 0.5·b = 0 → b = (2/3)·18 / (2 + 0.5)
        assert!((b - 12.0 / 2.5).abs() < 1e-12, "{b}");
        // The hinge's best b is on its kink, where no one ℓ′ says w = 0 is optimal.
        assert_eq!(intercept_only(LossConjugate::Hinge, &labels, None, c, 0.0), None);
        assert_eq!(intercept_only(LossConjugate::Logistic, &[1.0, 1.0], None, c, 0.0), None, "one class: b → ∞");
        assert!(intercept_only(LossConjugate::Logistic, &[1.0, 1.0], None, c, mu).is_some(), "μ > 0 bounds b");
        let p = class_offsets(&[0.0, 1.0, 1.0, 2.0, 2.0, 2.0], None, 3).expect("three classes");
        let e: Vec<f64> = p.iter().map(|v| v.exp()).collect();
        let total: f64 = e.iter().sum();
        for (k, n) in [1.0, 2.0, 3.0].iter().enumerate() {
            assert!((e[k] / total - n / 6.0).abs() < 1e-15);
        }
        assert_eq!(class_offsets(&[0.0, 2.0], None, 3), None);
        // With the rows' weights: the logit of the weighted share, and a class whose rows all
        // weigh 0 has no offset (nor does one class left with weight).
        let weights = [1.0, 2.0, 0.5, 0.5, 0.0, 2.0];
        let b = intercept_only(LossConjugate::Logistic, &labels, Some(&weights), c, 0.0).expect("two classes");
        assert!((b - (4.0f64 / 2.0).ln()).abs() < 1e-12, "logit of 4/(4 + 2): {b}");
        let only_positives = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
        assert_eq!(intercept_only(LossConjugate::Logistic, &labels, Some(&only_positives), c, 0.0), None);
        let p = class_offsets(&[0.0, 1.0, 1.0, 2.0], Some(&[3.0, 1.0, 2.0, 0.0]), 3);
        assert_eq!(p, None, "class 2 weighs 0");
        let p = class_offsets(&[0.0, 1.0, 1.0, 2.0], Some(&[3.0, 1.0, 2.0, 6.0]), 3).expect("weighted shares");
        assert!(((p[0] - p[1]) - (3.0f64 / 3.0).ln()).abs() < 1e-12 && ((p[2] - p[0]) - 2f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn from_equal_margins_the_offset_is_the_log_odds_of_the_weights() {
        // Equal margins take the labels' groups: the logistic loss's offset is then
        // log(W₊/W₋) − a₀ and the squared loss's the weighted mean label − a₀.
        let labels = [1.0, -1.0, 1.0, 1.0, -1.0, 1.0];
        let weights = [1.0, 3.0, 0.0, 2.0, 0.5, 1.0];
        let mut a = vec![0.3; 6];
        let t = shift_to_optimal_offset(LossConjugate::Logistic, &labels, Some(&weights), &mut a);
        assert!((t - ((4.0f64 / 3.5).ln() - 0.3)).abs() < 1e-12, "{t}");
        assert!(a.iter().all(|&x| x == 0.3 + t));
        let mut a = vec![0.3; 6];
        let t = shift_to_optimal_offset(LossConjugate::Squared, &labels, Some(&weights), &mut a);
        assert!((t - (0.5 / 7.5 - 0.3)).abs() < 1e-12, "{t}");
        // Many labels (a regression's) take the rows.
        let labels: Vec<f64> = (0..20).map(f64::from).collect();
        let mut a = vec![1.0; 20];
        let t = shift_to_optimal_offset(LossConjugate::Squared, &labels, None, &mut a);
        assert!((t - 8.5).abs() < 1e-12, "{t}");
    }

    #[test]
    fn the_optimal_offset_zeroes_the_sum_of_derivatives() {
        let labels = [1.0, -1.0, 1.0, 1.0, -1.0, 1.0];
        for kind in [LossConjugate::Logistic, LossConjugate::Squared] {
            let mut a = vec![0.3, -2.0, 5.0, 0.1, 0.7, -1.0];
            let t = shift_to_optimal_offset(kind, &labels, None, &mut a);
            assert!(t != 0.0 && a[1] == -2.0 + t, "{kind:?}: the shift returned is the one applied");
            let g: f64 =
                a.iter().zip(&labels).map(|(&ai, &y)| super::super::loss::loss_derivatives(kind, y, ai).0).sum();
            assert!(g.abs() < 1e-12, "{kind:?}: Σℓ′ = {g}");
            let weights = [1.0, 3.0, 0.0, 2.0, 0.5, 1.0];
            let mut a = vec![0.3, -2.0, 5.0, 0.1, 0.7, -1.0];
            shift_to_optimal_offset(kind, &labels, Some(&weights), &mut a);
            let g: f64 =
                (0..6).map(|i| weights[i] * super::super::loss::loss_derivatives(kind, labels[i], a[i]).0).sum();
            assert!(g.abs() < 1e-12, "{kind:?}: Σωℓ′ = {g}");
        }
    }
}
