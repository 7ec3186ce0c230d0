//! The linear algebra under the certificate's refinements and the ranks' Newton steps, with no
//! knowledge of losses or duals: the columns V of X a refinement moves and their products
//! (`subspace.rs`), the Hessian over them (`hessian.rs`), a dense Cholesky factor made where its
//! matrix lies (`cholesky.rs`, through faer), the Newton direction on every column that `tron`
//! takes on few features (`direction.rs`), preconditioned conjugate gradients, Xᵀu over the
//! data, and a dot product.

pub(crate) mod cholesky;
mod direction;
pub(crate) mod hessian;
mod subspace;

pub(crate) use direction::{dense_step_pays, newton_direction, newton_statement};
pub(crate) use hessian::{newton_costs, NewtonCosts};
pub(crate) use subspace::Subspace;

use super::DataView;

/// n zeros, written. A zeroed allocation this large (`vec![0.0; n]`, calloc's fresh pages) maps
/// every page to the shared zero page on its first read, and the first `+=` then faults again
/// to copy it: with a second thread running, each such copy flushes the other core's TLB by an
/// interrupt. Zeros written here take one fault a page and no flush. w8a's 300 × 300 Hessian a
/// Newton step: the faults and flushes were a fifth of a check's time on two cores.
pub(crate) fn zeros(n: usize) -> Vec<f64> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, 0.0);
    v
}

/// Σ xᵢ·yᵢ in four independent sums.
pub(crate) fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (xc, yc) = (x.chunks_exact(4), y.chunks_exact(4));
    let tail: f64 = xc.remainder().iter().zip(yc.remainder()).map(|(a, b)| a * b).sum();
    for (a, b) in xc.zip(yc) {
        for k in 0..4 {
            acc[k] += a[k] * b[k];
        }
    }
    acc[0] + acc[1] + acc[2] + acc[3] + tail
}

/// Whether the entries `range` of a row, whose column indices are `index(k)`, are exactly the
/// columns 0..n in order: a dense row, whose products read no index and vectorize (a dense
/// array handed over from Python stores every entry). Rows are canonical (indices strictly
/// increasing), so n entries from 0 to n − 1 are every column.
#[inline]
pub(crate) fn full_row(range: &std::ops::Range<usize>, n: usize, index: impl Fn(usize) -> u32) -> bool {
    n > 0 && range.len() == n && index(range.start) == 0 && index(range.end - 1) as usize == n - 1
}

/// out += a·x, entry by entry.
#[inline]
pub(crate) fn axpy(out: &mut [f64], a: f64, x: &[f64]) {
    for (o, x) in out.iter_mut().zip(x) {
        *o += a * x;
    }
}

/// Xᵀu over the first `features` columns: by columns when the plan keeps the CSC copy (a
/// gather from u, which fits in cache, instead of a scatter over d entries), else by rows.
pub(crate) fn transpose_times(data: &DataView, features: usize, u: &[f64]) -> Vec<f64> {
    if let Some(csc) = data.csc_at_hand().filter(|c| c.count() == features) {
        return super::passes::map(features, data.threads, |j| {
            (csc.ptr()[j]..csc.ptr()[j + 1]).map(|k| csc.values()[k] * u[csc.rows()[k] as usize]).sum()
        });
    }
    let rows = |range: std::ops::Range<usize>| {
        let mut xtu = vec![0.0; features];
        for i in range {
            let ui = u[i];
            let row = data.indptr[i]..data.indptr[i + 1];
            if full_row(&row, features, |k| data.indices[k]) {
                axpy(&mut xtu, ui, &data.values[row]);
                continue;
            }
            for k in row {
                if let Some(x) = xtu.get_mut(data.indices[k] as usize) {
                    *x += data.values[k] * ui;
                }
            }
        }
        xtu
    };
    // In ROW_PARTS fixed runs of rows added in order (the same sums for any thread count) where
    // a partial sum of d entries costs little against the pass: before any epoch of a column
    // solver its columns are not built (a dense 15,000 × 200 set: 5 ms on one core).
    let m = u.len();
    if features * ROW_PARTS * 8 <= data.values.len() {
        let part = |k: usize| rows(m * k / ROW_PARTS..m * (k + 1) / ROW_PARTS);
        let threads = super::passes::threads_for(data.values.len(), data.threads);
        return super::passes::add_in_order(super::passes::each(ROW_PARTS, threads, part));
    }
    rows(0..m)
}

/// Runs of rows Xᵀu is summed in by rows (one a thread, on two cores).
const ROW_PARTS: usize = 2;

/// Preconditioned conjugate gradients on H·d = b from `d`, whose residual b − H·d is `r`; both
/// are updated in place, on the coordinates `moves` only. They run for at most `limit.0`
/// iterations, until rᵀM⁻¹r falls to `limit.1` of its first value; whether they got there (not
/// when H has no curvature along a direction, a product or preconditioning is not finite, or
/// `product` gives none: the ranks' products, whose reduction can fail, stop there).
pub(crate) fn conjugate_gradients(
    d: &mut [f64],
    r: &mut [f64],
    moves: &[bool],
    (steps, tol): (usize, f64),
    mut product: impl FnMut(&[f64]) -> Option<Vec<f64>>,
    precondition: impl Fn(&[f64]) -> Option<Vec<f64>>,
) -> bool {
    let Some(mut z) = precondition(r) else { return false };
    let mut p = z.clone();
    let mut rz = dot(r, &z);
    let stop = tol * rz;
    for _ in 0..steps {
        if rz.is_nan() || rz <= stop {
            return rz <= stop;
        }
        let Some(hp) = product(&p) else { return false };
        let curv = dot(&p, &hp);
        if curv.is_nan() || curv <= 0.0 {
            return false;
        }
        let alpha = rz / curv;
        for k in 0..d.len() {
            if moves[k] {
                d[k] += alpha * p[k];
                r[k] -= alpha * hp[k];
            }
        }
        let Some(next_z) = precondition(r) else { return false };
        z = next_z;
        let next = dot(r, &z);
        let beta = next / rz;
        rz = next;
        for k in 0..p.len() {
            p[k] = z[k] + beta * p[k];
        }
    }
    rz <= stop
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense rows (every column, in order) take the products sparse rows do: a row of every
    /// column beside a row of one.
    #[test]
    fn dense_rows_take_the_products_sparse_rows_do() {
        let (indptr, indices) = ([0, 3, 4, 7], [0u32, 1, 2, 1, 0, 1, 2]);
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let labels = [0.0; 3];
        let data = DataView::new(&indptr, &indices, &values, &labels, 3).with_threads(2);
        assert_eq!(transpose_times(&data, 3, &[1.0, -2.0, 0.5]), vec![3.5, -3.0, 6.5]);
        let w = [1.0, 10.0, 100.0];
        assert!(full_row(&(0..3), 3, |k| indices[k]) && !full_row(&(3..4), 3, |k| indices[k]));
        let sub = Subspace::new(&data, 3, &[0, 1, 2]);
        assert_eq!(sub.times(&w), vec![321.0, 40.0, 765.0]);
        assert_eq!(sub.transpose_times(&[1.0, -2.0, 0.5]), vec![3.5, -3.0, 6.5]);
        let (xu, xc) = sub.transpose_times_both(&[1.0, -2.0, 0.5], &[0.0, 1.0, 0.0]);
        assert_eq!((xu, xc), (vec![3.5, -3.0, 6.5], vec![0.0, 4.0, 0.0]));
    }
}
