use super::conjugates::vector_conjugate;
use super::loss::{loss_derivatives, loss_terms};
use super::refine::*;
use super::refinement::refined_dual;
use super::tuning::TUNING;
use super::*;
use crate::plan::VectorTerm;

/// A squared-loss certificate with these terms (the tests of the working sets take it too).
pub(crate) fn cert(l1: f64, l2: f64, lo: f64, hi: f64) -> Certificate {
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

/// The CSR arrays (indptr, indices, values) of dense rows, every entry stored.
pub(crate) fn rows_of(dense: &[Vec<f64>]) -> (Vec<usize>, Vec<u32>, Vec<f64>) {
    let (mut indptr, mut indices, mut values) = (vec![0], vec![], vec![]);
    for row in dense {
        for (j, &v) in row.iter().enumerate() {
            indices.push(j as u32);
            values.push(v);
        }
        indptr.push(indices.len());
    }
    (indptr, indices, values)
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
/// box, and whether s < 1 scales the point; with a ridge and no box, so is its closed form.
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
    // Without weights, and with the rows' weights (a 0 among them): the Newton steps' rows
    // hold ωᵢℓ′, the dual point is ℓ′.
    let ws: Vec<f64> = (0..m).map(|i| ((i * 3) % 5) as f64 * 0.5).collect();
    for weights in [None, Some(&ws[..])] {
        let data = DataView::new(&indptr, &indices, &values, &labels, d).with_weights(weights);
        let weight = |i: usize| weights.map_or(1.0, |s| s[i]);
        let w = [0.4, 0.0, -0.25, 0.1, 0.0, -0.6];
        let sub = Subspace::new(&data, d, &(0..d).collect::<Vec<_>>());
        let a = sub.times(&w);
        let c = 1.0;
        let scale = c / m as f64;
        for kind in [LossConjugate::Logistic, LossConjugate::Squared] {
            for (l1, l2, lo, hi) in [
                (0.05, 0.0, f64::NEG_INFINITY, f64::INFINITY),
                (0.001, 0.0, -1.0, 1.0),
                (0.02, 0.3, -0.7, 2.0),
                (0.0, 0.3, f64::NEG_INFINITY, f64::INFINITY),
                (0.02, 0.3, f64::NEG_INFINITY, f64::INFINITY),
            ] {
                let cert = Certificate { conjugate: kind, ..cert(l1, l2, lo, hi) };
                let u: Vec<f64> = a.iter().zip(&labels).map(|(&ai, &y)| loss_derivatives(kind, y, ai).0).collect();
                let wu: Vec<f64> = u.iter().enumerate().map(|(i, ui)| weight(i) * ui).collect();
                let loss: f64 =
                    a.iter().zip(&labels).enumerate().map(|(i, (&ai, &y))| weight(i) * kind.loss(y, ai)).sum();
                let f = scale * loss + w.iter().map(|v| l1 * v.abs() + 0.5 * l2 * v * v).sum::<f64>();
                let (dual, _) = dual_at(&cert, &data, c, d, 1, &u);
                let loss_gradient: Vec<f64> = sub.transpose_times(&wu).iter().map(|g| scale * g).collect();
                let round = Round { cols: (0..d).collect(), v: w.to_vec() };
                let rows = Rows { a: a.clone(), u: wu, curvature: vec![], loss };
                let on_v = round.restricted_gap(&cert, scale, (&labels, weights), &rows, &loss_gradient, 1);
                assert!(on_v >= -1e-12, "{kind:?} {l1} {l2}: negative gap {on_v}");
                assert!(
                    (on_v - (f - dual)).abs() <= 1e-10 * (1.0 + f.abs()),
                    "{kind:?} l1 {l1} l2 {l2}: gap on V {on_v} against F − D {}",
                    f - dual
                );
                // With a ridge and no box, the closed form the steps take instead of the pass.
                if l2 > 0.0 && lo == f64::NEG_INFINITY && hi == f64::INFINITY {
                    let closed = closed_form_gap(&cert, &w, &loss_gradient);
                    assert!((closed - on_v).abs() <= 1e-12 * (1.0 + f.abs()), "{kind:?} {l1}: {closed} against {on_v}");
                }
            }
        }
    }
}

/// A support wider than TUNING.refine_max would need a dense Hessian of its square (FOBOS on
/// debian-files after two epochs: 16,665 non-zeros, 2.2 GB and 80 s): it is refined by
/// Newton steps through Hessian-vector products instead. Here the rows share no column, so
/// F separates by rows and F* has a closed form: row i's columns add up to one margin sᵢ,
/// whose cheapest split costs λ|sᵢ|, and min_s ℓ(y s) + 4λ|s| (4 rows: the mean's weight)
/// is at y·s = log(1/(4λ) − 1). The refined dual value must bound F* from below, and come
/// within 1e-6 of it from a start the scaled dual point alone certifies only to 1e-3. F at the
/// point it reached must be within the slack of that value: the exact steps' first round settles
/// at a gap of 6e-9 with every coordinate in the support, and a second round on the same support
/// takes it below the slack (1e-9). Conjugate-gradient steps wait for a second stalled check.
#[test]
fn a_support_wider_than_a_dense_hessian_is_refined_without_one() {
    // Conjugate gradients, then exact steps (Cholesky, with a ridge for the exactly duplicated
    // columns).
    for exact in [false, true] {
        let d = TUNING.refine_max + 1;
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
        let budget = Budget {
            enough: f64::INFINITY,
            slack: 1e-9,
            rounds: 1,
            exact,
            settle: exact,
            stalled_again: true,
            halt: &|| false,
        };
        // Asked to stop (Ctrl-C, the time limit), it takes no step and has no dual value of its own.
        let halted = Budget { halt: &|| true, ..budget };
        assert!(
            refined_dual(&cert, &data, 1.0, &w, &a, &gradient, halted).is_none(),
            "exact {exact}: a halted refinement"
        );
        // Far from the optimum, at a run's first stalled check, conjugate-gradient steps wait.
        if !exact {
            let first = Budget { stalled_again: false, ..budget };
            assert!(refined_dual(&cert, &data, 1.0, &w, &a, &gradient, first).is_none(), "steps at a first stall");
        }
        let refined = refined_dual(&cert, &data, 1.0, &w, &a, &gradient, budget).expect("a refinement");
        assert!(refined.dual <= f_star + 1e-12, "exact {exact}: D = {} above F* = {f_star}", refined.dual);
        assert!(
            f_star - refined.dual <= 1e-6 * f_star,
            "exact {exact}: D = {} not within 1e-6 of F* = {f_star}",
            refined.dual
        );
        let moved = refined.moved.expect("the refinement moved w").weights;
        let f_moved = Subspace::new(&data, d, &(0..d).collect::<Vec<_>>())
            .times(&moved)
            .iter()
            .zip(&labels)
            .map(|(&ai, &y)| (-y * ai).exp().ln_1p() / m as f64)
            .sum::<f64>()
            + l1 * moved.iter().map(|x| x.abs()).sum::<f64>();
        assert!(f_moved >= f_star - 1e-12 && f_moved - f_star <= 1e-6 * f_star, "F = {f_moved} against F* = {f_star}");
        assert!(
            f_moved - refined.dual <= budget.slack,
            "exact {exact}: F − D = {} at the point reached, above the slack {}",
            f_moved - refined.dual,
            budget.slack
        );
    }
}

#[test]
fn loss_terms_from_one_exponential_match_the_separate_formulas() {
    for kind in [LossConjugate::Logistic, LossConjugate::Squared] {
        for y in [-1.0, 1.0] {
            for a in [-800.0, -40.0, -3.5, -1e-9, 0.0, 2e-7, 0.7, 12.0, 36.0, 750.0] {
                let (loss, u, curvature) = loss_terms(kind, y, a);
                let (u0, c0) = loss_derivatives(kind, y, a);
                let loss0 = kind.loss(y, a);
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
            let l = LossConjugate::SquaredHinge.loss(y, a);
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

/// The balance to Σᵢ uᵢ = 0 of a free intercept keeps every uᵢ in dom ℓ* and finite where that
/// domain is unbounded on one side (the squared hinge's: yu ≤ 0), for either sign of the excess.
#[test]
fn the_squared_hinges_balance_is_finite_and_in_its_domain() {
    let labels = [1.0, 1.0, -1.0, -1.0, 1.0];
    for u0 in [[-0.5, -0.1, 0.2, 0.0, -0.3], [-0.1, 0.0, 0.9, 0.4, -0.2]] {
        let mut u = u0.to_vec();
        intercept::balance(LossConjugate::SquaredHinge, &labels, None, &mut u);
        let sum: f64 = u.iter().sum();
        assert!(sum.abs() <= 1e-12, "{u0:?} → {u:?}: Σ u = {sum}");
        for (ui, y) in u.iter().zip(labels) {
            assert!(ui.is_finite() && y * ui <= 0.0, "{u0:?} → {u:?}: u = {ui} for y = {y}");
        }
    }
}

/// With the rows' weights the balance makes Σᵢ ωᵢuᵢ = 0, keeps every uᵢ in dom ℓ*, and leaves
/// a row of weight 0 where it was; the squared loss's moves by the weighted mean.
#[test]
fn the_weighted_balance_zeroes_the_weighted_sum() {
    let labels = [1.0, 1.0, -1.0, -1.0, 1.0];
    let weights = [2.0, 0.0, 0.5, 3.0, 1.0];
    for kind in [LossConjugate::Logistic, LossConjugate::SquaredHinge, LossConjugate::Hinge, LossConjugate::Squared] {
        for u0 in [[-0.5, -0.1, 0.2, 0.0, -0.3], [-0.1, -0.2, 0.9, 0.4, -0.2]] {
            let mut u = u0.to_vec();
            intercept::balance(kind, &labels, Some(&weights), &mut u);
            let sum: f64 = u.iter().zip(weights).map(|(ui, wi)| ui * wi).sum();
            assert!(sum.abs() <= 1e-12, "{kind:?} {u0:?} → {u:?}: Σ ωu = {sum}");
            for (ui, y) in u.iter().zip(labels) {
                assert!(ui.is_finite() && loss_conjugate(kind, y, *ui).is_finite(), "{kind:?}: u = {ui} for y = {y}");
            }
            if kind != LossConjugate::Squared {
                assert_eq!(u[1], u0[1], "{kind:?}: the row of weight 0 moved");
            }
        }
    }
}

/// The exact Newton point of a quadratic model satisfies its optimality condition
/// g + H·(x − v) = 0, and an indefinite H gives none.
#[test]
fn the_newton_point_zeroes_the_models_gradient() {
    let n = 5;
    let b: Vec<f64> = (0..n * n).map(|k| ((k * 29 % 13) as f64 - 6.0) / 4.0).collect();
    let h: Vec<f64> = (0..n * n)
        .map(|k| (0..n).map(|p| b[(k / n) * n + p] * b[(k % n) * n + p]).sum::<f64>() + f64::from(k / n == k % n))
        .collect();
    let v: Vec<f64> = (0..n).map(|k| k as f64 - 2.0).collect();
    let g: Vec<f64> = (0..n).map(|k| (k * k) as f64 / 3.0 - 1.0).collect();
    let x = super::refine::newton_point(&v, h.clone(), &g).expect("B·Bᵀ + I is positive definite");
    for r in 0..n {
        let residual = g[r] + (0..n).map(|c| h[r * n + c] * (x[c] - v[c])).sum::<f64>();
        assert!(residual.abs() <= 1e-10, "row {r}: {residual}");
    }
    assert!(super::refine::newton_point(&[0.0, 0.0], vec![1.0, 2.0, 2.0, 1.0], &[1.0, 0.0]).is_none());
}

/// The regression losses' conjugates, each against the numeric sup over a of u·a − ℓ(y, a) on
/// a fine grid, with Fenchel–Young an equality at u = ℓ′(a) and the projection into the domain
/// where ℓ* is finite.
#[test]
fn the_regression_conjugates_are_the_sup_they_define() {
    use super::conjugates::into_loss_domain;
    let kinds = [
        LossConjugate::Huber(0.7),
        LossConjugate::Quantile(0.3),
        LossConjugate::EpsInsensitive(0.4),
        LossConjugate::SquaredEpsInsensitive(0.4),
        LossConjugate::Poisson,
    ];
    for kind in kinds {
        for y in [-1.5f64, 0.0, 2.0] {
            // sup over a grid of margins wide enough to hold every maximiser for |u| ≤ 1.
            let sup = |u: f64| {
                (-40_000..=40_000).map(|k| k as f64 * 1e-3).map(|a| u * a - kind.loss(y, a)).fold(f64::MIN, f64::max)
            };
            for u in [-0.9f64, -0.3, 0.0, 0.25, 0.69] {
                let closed = loss_conjugate(kind, y, u);
                if closed.is_finite() {
                    assert!((closed - sup(u)).abs() <= 2e-3, "{kind:?}, y = {y}, u = {u}: {closed} against {}", sup(u));
                } else {
                    assert!(sup(u) > 5.0, "{kind:?}, y = {y}, u = {u}: outside the domain the sup grows");
                }
                let inside = into_loss_domain(kind, y, u);
                assert!(loss_conjugate(kind, y, inside).is_finite(), "{kind:?}: {u} → {inside}");
            }
            for a in [-3.0f64, -0.2, 0.55, 4.0] {
                let (u, _) = loss_derivatives(kind, y, a);
                let l = kind.loss(y, a);
                assert!((l + loss_conjugate(kind, y, u) - a * u).abs() < 1e-12, "{kind:?}: y = {y}, a = {a}");
                for v in [-0.5, 0.0, 0.2] {
                    assert!(l + loss_conjugate(kind, y, v) >= a * v - 1e-12, "{kind:?}: Fenchel–Young at {v}");
                }
            }
        }
    }
}

/// A round on all 200 columns of a sparse 100-row set costs a factor of 200³/3 against
/// epochs of 2·500 multiply-adds: expensive. It waits only after epochs, and only while the
/// run's epochs are about to reach the target (or, with no pace yet, for one check); a
/// round on three columns is cheap and never waits.
#[test]
fn an_expensive_round_waits_while_the_epochs_are_about_to_finish() {
    let (m, d) = (100, 200);
    let (mut indptr, mut indices) = (vec![0], vec![]);
    for i in 0..m {
        indices.extend((0..5).map(|k| ((i * 7 + k * 40) % d) as u32));
        indptr.push(indices.len());
    }
    let values = vec![1.0; indices.len()];
    let labels = vec![1.0; m];
    let data = DataView::new(&indptr, &indices, &values, &labels, d);
    let c = cert(1e-3, 0.0, f64::NEG_INFINITY, f64::INFINITY);
    let wide = vec![0.5; d];
    let mut narrow = vec![0.0; d];
    narrow[..3].fill(0.5);
    let gate = |epochs, pace| super::Gate { epochs, pace, ..super::Gate::default() };
    // The target 10× below the gap: 1 epoch to go at a pace of 0.1, 229 at 0.99.
    let short = 10.0;
    assert!(super::refinement::worth_a_round(&c, &data, &wide, gate(0, None), short), "before any epoch");
    assert!(!super::refinement::worth_a_round(&c, &data, &wide, gate(3, None), short), "no pace yet");
    assert!(!super::refinement::worth_a_round(&c, &data, &wide, gate(3, Some(0.1)), short), "about to finish");
    assert!(super::refinement::worth_a_round(&c, &data, &wide, gate(3, Some(0.99)), short), "crawling");
    assert!(super::refinement::worth_a_round(&c, &data, &wide, gate(3, Some(1.0)), short), "stalled");
    assert!(super::refinement::worth_a_round(&c, &data, &narrow, gate(3, None), short), "cheap");
}
