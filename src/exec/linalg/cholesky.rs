//! A dense Cholesky factor made in the buffer its matrix was formed in.
//!
//! Why: faer's `Llt::new` copies the matrix into a fresh zeroed one before it factors. At the
//! sizes the certificate's exact steps factor (4,400 columns on debian-desc at C = 100, 155 MB;
//! 6,700 on debian-files at C = 100, 360 MB) the copy doubled what a check held while it
//! factored, and its pages were faulted in and zeroed first. The lower triangle
//! [`super::hessian::lower_hessian`] forms is factored where it lies instead.

use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::triangular_solve::{solve_lower_triangular_in_place, solve_upper_triangular_in_place};

/// Matrices with fewer columns than this are factored on one thread. faer's threaded factor
/// costs more than it saves below about a thousand columns on two cores: factor time one thread
/// / faer's global pool, n = 100: 0.03 / 0.13 ms, 300: 0.26 / 1.3, 500: 0.91 / 2.0, 800:
/// 3.2 / 5.9, 1,200: 10.4 / 10.2, 2,000: 46 / 35. ℓ2-logistic with b on w8a factors a 300 × 300
/// Hessian at each of its seven Newton steps.
const THREADED_FROM: usize = 1024;

/// The parallelism for a factor (or solve) with n columns (see [`THREADED_FROM`]).
fn parallelism(n: usize) -> faer::Par {
    if n < THREADED_FROM {
        faer::Par::Seq
    } else {
        faer::get_global_parallelism()
    }
}

/// L with L·Lᵀ = A, in the lower triangle of a column-major n × n buffer (the upper triangle is
/// not part of it).
pub(crate) struct Factor {
    l: Vec<f64>,
    n: usize,
}

impl Factor {
    /// The factor of the n × n matrix A whose lower triangle `a` holds (column-major), made in
    /// `a`. None when A is not positive definite, rounding included; `a` is then spent.
    pub(crate) fn new(mut a: Vec<f64>, n: usize) -> Option<Self> {
        assert_eq!(a.len(), n * n, "an n × n matrix");
        let par = parallelism(n);
        let mut memory = faer::dyn_stack::MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par, Default::default()));
        let stack = faer::dyn_stack::MemStack::new(&mut memory);
        let view = faer::MatMut::from_column_major_slice_mut(&mut a, n, n);
        cholesky_in_place(view, Default::default(), par, stack, Default::default()).ok()?;
        Some(Factor { l: a, n })
    }

    /// A⁻¹·rhs: two triangular solves with L.
    pub(crate) fn solve(&self, rhs: faer::MatRef<'_, f64>) -> faer::Mat<f64> {
        let mut x = rhs.to_owned();
        let l = faer::MatRef::from_column_major_slice(&self.l, self.n, self.n);
        let par = parallelism(self.n);
        solve_lower_triangular_in_place(l, x.as_mut(), par);
        solve_upper_triangular_in_place(l.transpose(), x.as_mut(), par);
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A = B·Bᵀ + I solved by the factor gives back x with A·x = b, and a matrix that is not
    /// positive definite has none.
    #[test]
    fn the_factor_solves_its_matrix_and_refuses_an_indefinite_one() {
        let n = 7;
        let b: Vec<f64> = (0..n * n).map(|k| ((k * 37 % 11) as f64 - 5.0) / 3.0).collect();
        let a = |r: usize, c: usize| (0..n).map(|k| b[r * n + k] * b[c * n + k]).sum::<f64>() + f64::from(r == c);
        // The lower triangle only, as the Hessians are formed.
        let lower: Vec<f64> = (0..n * n).map(|k| if k % n >= k / n { a(k % n, k / n) } else { 0.0 }).collect();
        let factor = Factor::new(lower, n).expect("B·Bᵀ + I is positive definite");
        let rhs = faer::Mat::<f64>::from_fn(n, 2, |r, c| (r + 3 * c) as f64 - 4.0);
        let x = factor.solve(rhs.as_ref());
        for c in 0..2 {
            for r in 0..n {
                let ax: f64 = (0..n).map(|k| a(r, k) * x[(k, c)]).sum();
                assert!(
                    (ax - rhs[(r, c)]).abs() <= 1e-10 * (1.0 + rhs[(r, c)].abs()),
                    "row {r}: {ax} against {}",
                    rhs[(r, c)]
                );
            }
        }
        let mut indefinite = vec![0.0; 4];
        (indefinite[0], indefinite[1], indefinite[3]) = (1.0, 2.0, 1.0);
        assert!(Factor::new(indefinite, 2).is_none(), "[[1, 2], [2, 1]] has the eigenvalue −1");
    }
}
