//! The prox of γ·Σ_g ‖w_g‖₂ over disjoint groups (docs/algorithms.md §2: "group lasso, disjoint
//! groups — ℓ2 prox per group"). The penalty is then separable per group, so its prox is the
//! ℓ2 shrink of each group on its own, in closed form: what the Picard fixed point of §3 would
//! converge to, in one pass and without a dual.
//!
//! The groups are the blocks of the stacked group selections B that `groups(load(...))` binds
//! ([`Operator::groups`]): block g is a range of B's rows and each row selects one feature. A
//! feature in no group is left as it is (the penalty does not see it).

use super::picard::Operator;
use super::Routine;

/// x_g ← max(0, 1 − γ/‖x_g‖)·x_g for each group g of `op`. Exact only when no feature is in
/// two groups (binding checks that before a plan runs this); a feature index beyond x is an
/// operator that does not fit x, which the callers rule out with [`Operator::fits`].
pub fn shrink(op: &Operator, x: &mut [f64], gamma: f64) {
    let mut members: Vec<usize> = vec![];
    let mut values: Vec<f64> = vec![];
    for &(a, b) in &op.blocks {
        members.clear();
        members.extend(op.indices[op.indptr[a]..op.indptr[b]].iter().map(|&j| j as usize));
        values.clear();
        values.extend(members.iter().map(|&j| x[j]));
        // The same shrink as `l2(w)`'s, so the two agree to the bit on a single group.
        Routine::ShrinkL2.apply(&mut values, gamma);
        for (&j, &v) in members.iter().zip(&values) {
            x[j] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::norm2;
    use proptest::prelude::*;

    const TOL: f64 = 1e-12;

    /// The groups of an assignment: feature j is in group a[j] − 1, or in none when a[j] = 0.
    fn groups_of(assignment: &[usize]) -> Vec<Vec<u32>> {
        let count = assignment.iter().copied().max().unwrap_or(0);
        (1..=count)
            .map(|g| (0..assignment.len()).filter(|&j| assignment[j] == g).map(|j| j as u32).collect::<Vec<_>>())
            .filter(|g| !g.is_empty())
            .collect()
    }

    /// p = prox_{γR}(v), R = Σ_g ‖·_g‖₂, holds iff v − p ∈ γ∂R(p), group by group: where p_g ≠ 0,
    /// v_g − p_g = γ·p_g/‖p_g‖; where p_g = 0, ‖v_g‖ ≤ γ. A feature in no group is not penalised:
    /// p_j = v_j.
    fn check(v: &[f64], groups: &[Vec<u32>], gamma: f64) {
        let op = Operator::groups(groups, v.len());
        let mut p = v.to_vec();
        shrink(&op, &mut p, gamma);
        let scale = 1.0 + norm2(v);
        for g in groups {
            let vg: Vec<f64> = g.iter().map(|&j| v[j as usize]).collect();
            let pg: Vec<f64> = g.iter().map(|&j| p[j as usize]).collect();
            let n = norm2(&pg);
            if n > 0.0 {
                for (a, b) in vg.iter().zip(&pg) {
                    assert!((a - b - gamma * b / n).abs() <= TOL * scale, "group {g:?}: v − p ≠ γ·p/‖p‖");
                }
            } else {
                assert!(norm2(&vg) <= gamma + TOL * scale, "group {g:?} is zeroed, but ‖v_g‖ > γ = {gamma}");
            }
        }
        for j in (0..v.len()).filter(|j| !groups.iter().flatten().any(|&k| k as usize == *j)) {
            assert_eq!(p[j].to_bits(), v[j].to_bits(), "feature {j} is in no group and moved");
        }
    }

    #[test]
    fn two_groups_by_hand() {
        // (3, 4) has norm 5: shrunk by 1/5; (0.5) is inside the ball: zeroed; feature 3 is free.
        let op = Operator::groups(&[vec![0, 1], vec![2]], 4);
        let mut x = vec![3.0, 4.0, 0.5, -7.0];
        shrink(&op, &mut x, 1.0);
        assert_eq!(x, vec![3.0 * 0.8, 4.0 * 0.8, 0.0, -7.0]);
    }

    #[test]
    fn agrees_with_the_picard_fixed_point_on_disjoint_groups() {
        let groups = [vec![4, 0], vec![2, 5, 1]];
        let op = Operator::groups(&groups, 7);
        let v = vec![0.3, -1.2, 2.0, 5.0, -0.4, 0.7, 0.1];
        let mut closed = v.clone();
        shrink(&op, &mut closed, 0.9);
        let mut fixed = v.clone();
        let mut z = vec![0.0; op.rows];
        crate::runtime::picard::prox(
            &op,
            crate::runtime::picard::Omega::BlockL2,
            &mut fixed,
            &mut z,
            0.9,
            1e-14,
            10_000,
        );
        assert!(closed.iter().zip(&fixed).all(|(a, b)| (a - b).abs() < 1e-10), "{closed:?} vs {fixed:?}");
    }

    proptest! {
        #[test]
        fn meets_its_optimality_condition_group_by_group(
            (v, assignment) in (1usize..16).prop_flat_map(|n| {
                (proptest::collection::vec(-3.0f64..3.0, n), proptest::collection::vec(0usize..5, n))
            }),
            gamma in 0.0f64..4.0,
        ) {
            check(&v, &groups_of(&assignment), gamma);
        }
    }
}
