//! The Newton direction on every coordinate by one dense Cholesky factor: the step `tron` takes
//! where the features are few (the plan's `newton` statement), instead of conjugate gradients.
//! Both back ends call it, so they take the same step.

use super::cholesky::Factor;
use super::Subspace;
use crate::exec::DataView;

/// The widest system factored: its matrix is 8·n² bytes (18 MB here), as the certificate's dense
/// refinement bounds its own ([`crate::solvers::DENSE_NEWTON_MAX`]).
const DENSE_MAX: usize = crate::solvers::DENSE_NEWTON_MAX;

/// Whether one dense step on the first `features` columns of `data` costs less than `cg_steps`
/// steps of conjugate gradients, the count of the last iteration that ran them (none before
/// the first: that one runs CG and so measures it). Only rows with curvature (Dᵢ > 0) count,
/// for both: the squared hinge's beyond their margin take part in neither. A dense step forms
/// Σᵢ eᵢ(eᵢ + 1)/2 products of a row's e entries, scattered, in at most
/// [`super::subspace::HESSIAN_PARTS`] runs on the data's threads, and a factor of d³/3
/// flops that run [`super::subspace::GEMM_SPEEDUP`] times as fast; a CG step of the plan reads
/// each entry twice, on one thread. Counts alone decide, so the same data and threads take the
/// same path on every machine. w8a, solve seconds of CG / always dense / this rule, no penalty:
/// 0.149 / 0.107 / 0.107; the squared hinge with LIBLINEAR's penalised b at C = 1, whose rows
/// past their margin leave a few thousand products against a factor: 0.068 / 0.099 / 0.068.
pub(crate) fn dense_step_pays(
    indptr: &[usize],
    threads: usize,
    features: usize,
    curvature: &[f64],
    cg_steps: f64,
) -> bool {
    if features == 0 || features + 1 > DENSE_MAX || cg_steps.is_nan() || cg_steps < 1.0 {
        return false;
    }
    if curvature.len() + 1 != indptr.len() {
        return false;
    }
    let (mut products, mut entries) = (0.0, 0.0);
    for (r, &c) in indptr.windows(2).zip(curvature) {
        if c > 0.0 {
            let e = (r[1] - r[0]) as f64;
            products += e * (e + 1.0) / 2.0;
            entries += e;
        }
    }
    let d = features as f64;
    let parallel = threads.clamp(1, super::subspace::HESSIAN_PARTS) as f64;
    products / parallel + d * d * d / 3.0 / super::subspace::GEMM_SPEEDUP <= cg_steps * 2.0 * entries
}

/// The `newton` statement of a plan: the direction on the g.len() features of `data` where one
/// dense step pays against `cg_steps` of CG ([`dense_step_pays`], which a compiled kernel asks
/// first) and H is positive definite, else None.
pub(crate) fn newton_statement(
    data: &DataView,
    curvature: &[f64],
    g: &[f64],
    (ridge, cg_steps): (f64, f64),
    b: Option<(f64, f64)>,
) -> Option<(Vec<f64>, f64)> {
    let n = g.len();
    dense_step_pays(data.indptr, data.threads, n, curvature, cg_steps)
        .then(|| newton_direction(data, n, curvature, g, ridge, b))
        .flatten()
}

/// s = −H⁻¹g for H = Xᵀ·diag(curvature)·X + ridge·I on the first `features` columns (indices at
/// or past them ignored; rows with curvature ≤ 0 left out, as the plan's Hessian products leave
/// them, NaN among them), and with an intercept, `b` = (g_b, ridge_b), b one more coordinate:
/// its row of H is Xᵀ·curvature and its corner Σᵢ curvatureᵢ + ridge_b. b is eliminated in
/// closed form, as the certificate's refinement eliminates it: the step on w solves
/// (H − h_b·h_bᵀ/h_bb)·s = −(g − h_b·g_b/h_bb), and s_b = −(g_b + h_bᵀs)/h_bb.
///
/// The step on w and on b, or None when H is not positive definite (rounding included), the
/// step is not finite, or there is no feature: the caller takes its conjugate gradients instead.
pub(crate) fn newton_direction(
    data: &DataView,
    features: usize,
    curvature: &[f64],
    g: &[f64],
    ridge: f64,
    b: Option<(f64, f64)>,
) -> Option<(Vec<f64>, f64)> {
    let n = features;
    if n == 0 || g.len() < n {
        return None;
    }
    let all: Vec<usize> = (0..n).collect();
    let sub = Subspace::new(data, n, &all);
    let curvature: Vec<f64> = curvature.iter().map(|&c| if c > 0.0 { c } else { 0.0 }).collect();
    let curvature = &curvature[..];
    let mut h = sub.hessian(curvature, 1.0, ridge);
    let mut rhs = g[..n].to_vec();
    let mut eliminated = None;
    if let Some((g_b, ridge_b)) = b {
        let h_bb = curvature.iter().sum::<f64>() + ridge_b;
        if h_bb > 0.0 {
            let h_b = sub.transpose_times(curvature);
            for ((row, hp), r) in h.chunks_exact_mut(n).zip(&h_b).zip(&mut rhs) {
                let f = hp / h_bb;
                row.iter_mut().zip(&h_b).for_each(|(x, hq)| *x -= f * hq);
                *r -= f * g_b;
            }
            eliminated = Some((h_b, g_b, h_bb));
        }
    }
    let factor = Factor::new(h, n)?;
    let solved = factor.solve(faer::MatRef::from_column_major_slice(&rhs, n, 1));
    let step: Vec<f64> = (0..n).map(|k| -solved[(k, 0)]).collect();
    let step_b = eliminated.map_or(0.0, |(h_b, g_b, h_bb)| -(g_b + super::dot(&h_b, &step)) / h_bb);
    (step.iter().all(|x| x.is_finite()) && step_b.is_finite()).then_some((step, step_b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dense step pays against enough CG steps, never before the first iteration's (0), and
    /// rows without curvature count for neither side: with few of them the factor's d³/3
    /// outweighs what CG reads. More threads make its products cheaper.
    #[test]
    fn a_dense_step_pays_against_enough_cg_steps() {
        // 1,000 rows of 20 entries over 50 features: 210 products and 20 entries a row.
        let indptr: Vec<usize> = (0..=1000).map(|i| 20 * i).collect();
        let all = vec![1.0; 1000];
        assert!(!dense_step_pays(&indptr, 1, 50, &all, 0.0));
        // 210,000 products + 5,208 for the factor, against 40,000 reads a CG step.
        assert!(!dense_step_pays(&indptr, 1, 50, &all, 5.0));
        assert!(dense_step_pays(&indptr, 1, 50, &all, 6.0));
        assert!(dense_step_pays(&indptr, 2, 50, &all, 3.0));
        // Ten rows with curvature: 2,100 products + 5,208 against 400 reads a step.
        let few: Vec<f64> = (0..1000).map(|i| if i % 100 == 0 { 1.0 } else { 0.0 }).collect();
        assert!(!dense_step_pays(&indptr, 1, 50, &few, 6.0));
        assert!(dense_step_pays(&indptr, 1, 50, &few, 19.0));
        // Past the widest system factored.
        assert!(!dense_step_pays(&indptr, 1, DENSE_MAX, &all, 1e9));
    }

    /// The direction solves the Newton system it describes: H·(s, s_b) = −(g, g_b), H formed here
    /// entry by entry from the rows, with and without b, a column index past the features
    /// ignored; rows without curvature are left out, and an H that is not positive definite
    /// gives None.
    #[test]
    fn the_direction_solves_the_newton_system() {
        let (m, n) = (30, 5);
        let (mut indptr, mut indices, mut values) = (vec![0], vec![], vec![]);
        for i in 0..m {
            for j in 0..n + 1 {
                if (i * 7 + j * 3) % 4 != 0 {
                    indices.push(j as u32);
                    values.push(((i * 13 + j * 5) % 11) as f64 / 5.0 - 1.0);
                }
            }
            indptr.push(indices.len());
        }
        let labels = vec![0.0; m];
        let data = DataView::new(&indptr, &indices, &values, &labels, n);
        let curvature: Vec<f64> = (0..m).map(|i| 0.05 + (i % 3) as f64 * 0.1).collect();
        let g: Vec<f64> = (0..n).map(|j| j as f64 - 2.0).collect();
        let ridge = 0.3;
        // H·v over the rows, the entries at column n left out.
        let product = |v: &[f64], vb: f64, with_b: Option<f64>| {
            let (mut hv, mut hb) = (v.iter().map(|x| ridge * x).collect::<Vec<f64>>(), with_b.unwrap_or(0.0) * vb);
            for i in 0..m {
                let row = indptr[i]..indptr[i + 1];
                let t = curvature[i]
                    * (row
                        .clone()
                        .filter(|&k| (indices[k] as usize) < n)
                        .map(|k| values[k] * v[indices[k] as usize])
                        .sum::<f64>()
                        + if with_b.is_some() { vb } else { 0.0 });
                for k in row.filter(|&k| (indices[k] as usize) < n) {
                    hv[indices[k] as usize] += t * values[k];
                }
                hb += t;
            }
            (hv, hb)
        };
        for b in [None, Some((0.7, 0.0)), Some((-0.2, 0.5))] {
            let (s, s_b) = newton_direction(&data, n, &curvature, &g, ridge, b).expect("positive definite");
            let (hv, hb) = product(&s, s_b, b.map(|(_, r)| r));
            for j in 0..n {
                assert!((hv[j] + g[j]).abs() <= 1e-9, "{b:?}: row {j}: {} against {}", hv[j], -g[j]);
            }
            match b {
                Some((g_b, _)) => assert!((hb + g_b).abs() <= 1e-9, "{b:?}: b's row: {hb} against {}", -g_b),
                None => assert_eq!(s_b, 0.0),
            }
        }
        // Rows with no curvature (or a negative one) are left out: only the ridge is left, and
        // without it nothing is positive definite.
        let flat = vec![-1.0; m];
        let (s, _) = newton_direction(&data, n, &flat, &g, ridge, None).expect("the ridge");
        assert!(s.iter().zip(&g).all(|(s, g)| (s + g / ridge).abs() <= 1e-12), "{s:?}");
        assert!(newton_direction(&data, n, &flat, &g, 0.0, None).is_none());
    }
}
