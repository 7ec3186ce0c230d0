//! R* for R(w) = γ·Σ_g ‖w_g‖₂ + (l2/2)·‖w‖² over disjoint groups (the groups of the operator
//! bound with the data; a feature in no group carries only the ½‖·‖² part). Disjoint groups make
//! R separable per group, so R* is the sum of the groups' conjugates, each in closed form:
//!
//!   l2 > 0:  Σ_g max(‖z_g‖ − γ, 0)²/(2·l2) + Σ_{j in no group} z_j²/(2·l2)   (finite: s = 1)
//!   l2 = 0:  0 if every ‖z_g‖ ≤ γ (and z_j = 0 off the groups), else +∞: the dual point is
//!            scaled by s = min(1, min_g γ/‖z_g‖) into the product of the groups' balls.
//!
//! Without ½‖·‖², a feature in no group is not penalised at all, and its conjugate is the
//! indicator of {0}, which no scaling of u reaches: [`applies`] says so and the run then stops
//! on the relative change of F, as for any model without a closed-form dual.

use crate::runtime::norm2;
use crate::runtime::picard::Operator;

/// Whether the closed form bounds F* from a scaled dual point: with ½‖·‖², always; without, when
/// every one of the `features` coordinates is in a group.
pub(in crate::exec::certificate) fn applies(l2: f64, op: &Operator, features: usize) -> bool {
    if l2 > 0.0 {
        return true;
    }
    let mut covered = vec![false; features];
    for &j in &op.indices {
        if let Some(c) = covered.get_mut(j as usize) {
            *c = true;
        }
    }
    covered.iter().all(|&c| c)
}

/// The scale s ≤ 1 that puts s·z in the domain of R*, and R*(s·z).
pub(in crate::exec::certificate) fn conjugate(l2: f64, gamma: f64, op: &Operator, z: &[f64]) -> (f64, f64) {
    let mut in_group = vec![false; z.len()];
    let mut norms = Vec::with_capacity(op.blocks.len());
    let mut members = vec![];
    for &(a, b) in &op.blocks {
        members.clear();
        for &j in &op.indices[op.indptr[a]..op.indptr[b]] {
            if let Some(zj) = z.get(j as usize) {
                members.push(*zj);
                in_group[j as usize] = true;
            }
        }
        norms.push(norm2(&members));
    }
    if l2 > 0.0 {
        let groups: f64 = norms.iter().map(|n| (n - gamma).max(0.0).powi(2)).sum();
        let free: f64 = z.iter().zip(&in_group).filter(|(_, &g)| !g).map(|(zj, _)| zj * zj).sum();
        return (1.0, (groups + free) / (2.0 * l2));
    }
    let s = norms.iter().map(|&n| if n > gamma { gamma / n } else { 1.0 }).fold(1.0, f64::min);
    // s·‖z_g‖ must not round above γ: a hair inside the balls costs nothing measurable.
    (if s < 1.0 { s * (1.0 - 1e-12) } else { s }, 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R(w) = γ·Σ_g ‖w_g‖ + (l2/2)‖w‖².
    fn penalty(l2: f64, gamma: f64, groups: &[Vec<u32>], w: &[f64]) -> f64 {
        let g: f64 = groups.iter().map(|g| norm2(&g.iter().map(|&j| w[j as usize]).collect::<Vec<_>>())).sum();
        gamma * g + 0.5 * l2 * w.iter().map(|x| x * x).sum::<f64>()
    }

    /// Fenchel–Young: R(w) + R*(z) ≥ ⟨z, w⟩ for every w, with equality at the maximiser, which
    /// for each group is z_g·max(‖z_g‖ − γ, 0)/(l2·‖z_g‖) (and z_j/l2 off the groups).
    #[test]
    fn the_closed_form_is_the_sup_of_zw_minus_r() {
        let groups = vec![vec![0, 3], vec![1, 4, 5]];
        let op = Operator::groups(&groups, 7);
        let z = [0.9, -0.2, 0.4, 1.5, 0.1, 0.3, -0.8];
        let (l2, gamma) = (0.7, 0.5);
        let (s, value) = conjugate(l2, gamma, &op, &z);
        assert_eq!(s, 1.0);
        let mut best = vec![0.0; z.len()];
        for (j, b) in best.iter_mut().enumerate() {
            let g = groups.iter().find(|g| g.contains(&(j as u32)));
            *b = match g {
                Some(g) => {
                    let n = norm2(&g.iter().map(|&k| z[k as usize]).collect::<Vec<_>>());
                    z[j] * (n - gamma).max(0.0) / (l2 * n)
                }
                None => z[j] / l2,
            };
        }
        let inner = |w: &[f64]| z.iter().zip(w).map(|(a, b)| a * b).sum::<f64>();
        assert!((inner(&best) - penalty(l2, gamma, &groups, &best) - value).abs() < 1e-12);
        let mut seed = 7u64;
        for _ in 0..2000 {
            let w: Vec<f64> = (0..z.len())
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 6.0
                })
                .collect();
            assert!(penalty(l2, gamma, &groups, &w) + value >= inner(&w) - 1e-12);
        }
    }

    #[test]
    fn without_l2_the_point_is_scaled_into_every_groups_ball() {
        let op = Operator::groups(&[vec![0, 1], vec![2]], 3);
        let z = [3.0, 4.0, 1.0];
        let (s, value) = conjugate(0.0, 2.0, &op, &z);
        assert_eq!(value, 0.0);
        assert!(s <= 0.4 && s > 0.4 * (1.0 - 1e-11), "‖z_1‖ = 5 bounds s by 2/5: {s}");
        assert!(applies(0.0, &op, 3));
        assert!(!applies(0.0, &op, 4), "feature 4 is in no group and not penalised");
        assert!(applies(0.1, &op, 4));
    }
}
