//! Gap Safe screening (Ndiaye, Fercoq, Gramfort & Salmon, JMLR 2017) for the working-set
//! driver: features a check proves zero at every optimum leave the working set for good.
//!
//! The dual D(θ) = −(c/m)·Σᵢ ℓ*(yᵢ, θᵢ) − Σⱼ r*(zⱼ), zⱼ = −(c/m)·xⱼᵀθ, is μ-strongly concave
//! with μ = c/(m·β) when every ℓ has ℓ″ ≤ β (ℓ* is then 1/β-strongly convex). So a feasible θ
//! with gap G = F(w) − D(θ) ≥ F* − D(θ) = D(θ*) − D(θ) lies within r = √(2G/μ) of the dual
//! optimum θ*, and |z*ⱼ| ≤ |zⱼ(θ)| + (c/m)·‖xⱼ‖·r. With r = l1·|·| (+ (l2/2)·(·)² and a box
//! holding 0), a coordinate whose optimum is non-zero has |z*ⱼ| ≥ l1; so once that bound is
//! below l1, w*ⱼ = 0. The test is sound for any feasible θ; it bites once G is small.

use super::certificate::domain_scale;
use super::DataView;
use crate::plan::{Certificate, LossConjugate};

/// The features proven zero so far in a run, and what the test needs of the data.
pub struct Screening {
    out: Vec<bool>,
    count: usize,
    /// ‖xⱼ‖ of every column; with a free intercept ‖xⱼ − x̄ⱼ‖, centred: every dual point the
    /// certificate makes keeps Σᵢ θᵢ = 0, and so does θ*, so xⱼᵀ(θ − θ*) = (xⱼ − x̄ⱼ)ᵀ(θ − θ*).
    norms: Vec<f64>,
    /// β, the bound on ℓ″ that makes the dual strongly concave.
    beta: f64,
}

impl Screening {
    /// None where the test does not apply: no l1, a vector or group term, a box that excludes
    /// 0, or a loss without a bounded ℓ″ (hinge) or with a conjugate over a simplex (softmax).
    pub fn new(cert: &Certificate, data: &DataView, features: usize) -> Option<Screening> {
        let beta = match cert.conjugate {
            LossConjugate::Logistic => 0.25,
            LossConjugate::Squared | LossConjugate::Huber(_) => 1.0,
            LossConjugate::SquaredHinge | LossConjugate::SquaredEpsInsensitive(_) => 2.0,
            LossConjugate::Hinge
            | LossConjugate::Softmax
            | LossConjugate::Quantile(_)
            | LossConjugate::EpsInsensitive(_)
            | LossConjugate::Poisson => return None,
        };
        if cert.l1 <= 0.0 || cert.vector.is_some() || cert.groups.is_some() || cert.lo > 0.0 || cert.hi < 0.0 {
            return None;
        }
        // With the rows' weights ωᵢ the dual is strongly concave in the norm √Σᵢ ωᵢθᵢ², and a
        // feature's correlation is Σᵢ ωᵢxᵢⱼθᵢ: its norm is √Σᵢ ωᵢxᵢⱼ², centred by the weighted
        // mean with a free intercept (Σᵢ ωᵢθᵢ = 0).
        let (mut norms, mut sums) = (vec![0.0; features], vec![0.0; features]);
        for i in 0..data.rows() {
            let wi = data.weight(i);
            for k in data.indptr[i]..data.indptr[i + 1] {
                let (j, v) = (data.indices[k] as usize, data.values[k]);
                if let (Some(n), Some(t)) = (norms.get_mut(j), sums.get_mut(j)) {
                    *n += wi * v * v;
                    *t += wi * v;
                }
            }
        }
        let total: f64 = match data.weights {
            Some(s) => s.iter().sum(),
            None => data.rows() as f64,
        };
        let centred = cert.intercept && cert.intercept_l2 == 0.0 && total > 0.0;
        for (n, t) in norms.iter_mut().zip(&sums) {
            let square = if centred { *n - t * t / total } else { *n };
            *n = square.max(0.0).sqrt();
        }
        Some(Screening { out: vec![false; features], count: 0, norms, beta })
    }

    /// How many features are proven zero.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether feature j is proven zero.
    pub fn is_out(&self, j: usize) -> bool {
        self.out[j]
    }

    /// After a check at w with objective F: θ = s·u for the dual point u whose correlations
    /// are z = −∇f(w) = −(c/m)·Xᵀu (`gradient` is ∇f), s the scale that makes it feasible,
    /// and D(θ) its value. Features at zero whose bound falls below l1 are out from now on.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        cert: &Certificate,
        c: f64,
        rows: usize,
        w: &[f64],
        gradient: &[f64],
        objective: f64,
        dual: f64,
    ) {
        let gap = objective - dual;
        if rows == 0 || !gap.is_finite() || gap < 0.0 {
            return;
        }
        let z: Vec<f64> = gradient.iter().map(|g| -g).collect();
        let s = domain_scale(cert, &z);
        let mean = c / rows as f64;
        let radius = (2.0 * gap * self.beta / mean).sqrt();
        for (j, (&wj, &gj)) in w.iter().zip(gradient).enumerate() {
            if self.out[j] || wj != 0.0 {
                continue;
            }
            if s * gj.abs() + mean * self.norms[j] * radius < cert.l1 {
                self.out[j] = true;
                self.count += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::certificate::loss_conjugate;

    /// Four rows that share no column, row i's three columns all of value vᵢ: F separates by
    /// rows, and row i's columns are zero at every optimum exactly when the slope of its loss
    /// at 0, (1/4)·(1/2)·vᵢ, is at most λ. With λ = 0.01, rows 2 and 3 (v = 0.05) are zero and
    /// rows 0 and 1 (v = 1 and 0.5) are not; at w = 0 row 1's features are well inside the
    /// scaled dual ball, so a test without its radius would screen them. A feature screened from any point must be one of rows 2
    /// and 3; from the optimum (where a row's margin t solves (1/4)·v·σ(−t) = λ in closed
    /// form) all six are.
    #[test]
    fn screening_proves_zero_only_the_features_zero_at_the_optimum() {
        let (m, per_row, l1) = (4, 3, 0.01);
        let v = [1.0, 0.5, 0.05, 0.05];
        let labels = [1.0, -1.0, 1.0, -1.0];
        let (mut indptr, mut indices, mut values) = (vec![0], vec![], vec![]);
        for (i, &vi) in v.iter().enumerate() {
            for k in 0..per_row {
                indices.push((i * per_row + k) as u32);
                values.push(vi);
            }
            indptr.push(indices.len());
        }
        let d = m * per_row;
        let data = DataView::new(&indptr, &indices, &values, &labels, d);
        let cert = Certificate {
            conjugate: LossConjugate::Logistic,
            l1,
            l2: 0.0,
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
            vector: None,
            groups: None,
            intercept: false,
            intercept_l2: 0.0,
        };
        // The optimum: for rows 0 and 1, y·a = t with (1/4)·v·1/(1 + e^t) = λ, split evenly.
        let margin = |i: usize| (v[i] / (4.0 * l1) - 1.0_f64).ln();
        let optimum: Vec<f64> = (0..d)
            .map(|j| {
                let i = j / per_row;
                if i < 2 {
                    labels[i] * margin(i) / (v[i] * per_row as f64)
                } else {
                    0.0
                }
            })
            .collect();
        let screen_at = |w: &[f64]| {
            let a: Vec<f64> = (0..m).map(|i| v[i] * w[i * per_row..(i + 1) * per_row].iter().sum::<f64>()).collect();
            let u: Vec<f64> = a.iter().zip(&labels).map(|(&ai, &y)| -y / (1.0 + (y * ai).exp())).collect();
            let gradient: Vec<f64> = (0..d).map(|j| v[j / per_row] * u[j / per_row] / m as f64).collect();
            let z: Vec<f64> = gradient.iter().map(|g| -g).collect();
            let s = domain_scale(&cert, &z);
            let dual = -(0..m).map(|i| loss_conjugate(cert.conjugate, labels[i], s * u[i])).sum::<f64>() / m as f64;
            let objective = a.iter().zip(&labels).map(|(&ai, &y)| (-y * ai).exp().ln_1p()).sum::<f64>() / m as f64
                + l1 * w.iter().map(|x| x.abs()).sum::<f64>();
            assert!(dual <= objective + 1e-12);
            let mut screening = Screening::new(&cert, &data, d).expect("l1 with logistic screens");
            screening.update(&cert, 1.0, m, w, &gradient, objective, dual);
            screening
        };
        for w in [vec![0.0; d], optimum.iter().map(|x| 0.5 * x).collect(), optimum.clone()] {
            let screening = screen_at(&w);
            for j in 0..d {
                assert!(!screening.is_out(j) || j / per_row >= 2, "feature {j} of row {} screened", j / per_row);
            }
        }
        let at_optimum = screen_at(&optimum);
        assert_eq!(at_optimum.count(), 2 * per_row, "not every zero of the optimum was screened");
    }

    /// With a free intercept the ball's radius acts through the centred column: a constant
    /// column has none, and a column (1, 2, 3) has ‖x − x̄‖ = √2, where the plain norm is √14.
    #[test]
    fn a_free_intercept_centres_the_columns_of_the_test() {
        let (indptr, indices, values) = (vec![0, 2, 4, 6], vec![0, 1, 0, 1, 0, 1], vec![1.0, 1.0, 1.0, 2.0, 1.0, 3.0]);
        let labels = [1.0, -1.0, 1.0];
        let data = DataView::new(&indptr, &indices, &values, &labels, 2);
        let mut cert = Certificate {
            conjugate: LossConjugate::Logistic,
            l1: 0.1,
            l2: 0.0,
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
            vector: None,
            groups: None,
            intercept: true,
            intercept_l2: 0.0,
        };
        let free = Screening::new(&cert, &data, 2).expect("screens");
        assert!(free.norms[0].abs() < 1e-12 && (free.norms[1] - 2f64.sqrt()).abs() < 1e-12, "{:?}", free.norms);
        // A penalised b is a column of its own: the test keeps the plain norms.
        cert.intercept_l2 = 0.5;
        let penalised = Screening::new(&cert, &data, 2).expect("screens");
        assert!((penalised.norms[0] - 3f64.sqrt()).abs() < 1e-12 && (penalised.norms[1] - 14f64.sqrt()).abs() < 1e-12);
        // The rows' weights (2, 0, 1): the norms are √Σωᵢxᵢⱼ², centred by the weighted mean
        // (the column (1, 2, 3) has x̄ = (2 + 3)/3 = 5/3 and Σωᵢ(xᵢ − x̄)² = 2·4/9 + 16/9 = 8/3).
        let weights = [2.0, 0.0, 1.0];
        let weighted = data.with_weights(Some(&weights));
        let plain = Screening::new(&cert, &weighted, 2).expect("screens");
        assert!((plain.norms[0] - 3f64.sqrt()).abs() < 1e-12 && (plain.norms[1] - 11f64.sqrt()).abs() < 1e-12);
        cert.intercept_l2 = 0.0;
        let free = Screening::new(&cert, &weighted, 2).expect("screens");
        assert!(
            free.norms[0].abs() < 1e-12 && (free.norms[1] - (8.0f64 / 3.0).sqrt()).abs() < 1e-12,
            "{:?}",
            free.norms
        );
    }
}
