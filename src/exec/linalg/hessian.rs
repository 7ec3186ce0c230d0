//! The Hessian of the loss part over a subspace X_V of the columns, H = scale·X_Vᵀ·diag(d)·X_V
//! plus a diagonal: its product with a vector, and its lower triangle on some of V's positions,
//! formed where the Cholesky factor will lie. Both the wide-support steps (`support.rs`) and the
//! settling steps (`settle.rs`) use them; they sit below both.

use super::Subspace;

/// (scale·X_Vᵀ·diag(d)·X_V + diagonal·I)·p, p on all of V, through two passes over X_V: nothing
/// of size |V|² is read.
pub(crate) fn hessian_times(sub: &Subspace, d: &[f64], scale: f64, diagonal: f64, p: &[f64]) -> Vec<f64> {
    let xp = sub.times(p);
    let weighted: Vec<f64> = xp.iter().zip(d).map(|(x, d)| x * d).collect();
    let mut hp = sub.transpose_times(&weighted);
    for (k, x) in hp.iter_mut().enumerate() {
        *x = scale * *x + diagonal * p[k];
    }
    hp
}

/// H_II for H = scale·X_Vᵀ·diag(d)·X_V + (l2 + 1e-12·L)·I, L the largest diagonal entry of the
/// first term over V (as [`Subspace::hessian`] forms H), on the positions `idx` of V
/// (increasing): its lower triangle, column-major, the upper left at zero (the Cholesky factor
/// reads the lower).
///
/// Column by column: the rows' outer products scatter over all of an n×n matrix (155 MB at
/// 4,400 columns), a cache miss an entry, and their sum and its mirror image cost two passes
/// more over it. A column of the lower triangle is summed from the rows of that column into
/// one contiguous run, each column by one thread. debian-desc at C = 100, 4,352 columns:
/// 0.45–0.48 s by rows, 0.20–0.22 s by columns.
pub(crate) fn lower_hessian(sub: &Subspace, d: &[f64], scale: f64, l2: f64, idx: &[usize]) -> Vec<f64> {
    let f = idx.len();
    if f == 0 {
        return vec![];
    }
    let mut at = vec![u32::MAX; sub.n];
    for (p, &k) in idx.iter().enumerate() {
        at[k] = p as u32;
    }
    // X_I by row, positions in increasing order; the rows with no curvature left out.
    let rows = d.len();
    let (mut rptr, mut rpos, mut rval) = (Vec::with_capacity(rows + 1), vec![], vec![]);
    rptr.push(0);
    for (i, &di) in d.iter().enumerate() {
        if di != 0.0 {
            for k in sub.ptr[i]..sub.ptr[i + 1] {
                let p = at[sub.slot[k] as usize];
                if p != u32::MAX {
                    rpos.push(p);
                    rval.push(sub.value[k]);
                }
            }
        }
        rptr.push(rpos.len());
    }
    // Rows dense enough in I (dense arrays, wide supports of them) take matrix products, as
    // the dense refinement's Hessian does (`Subspace::hessian`): on a dense 2,000 × 5,000 set,
    // a support of 2,900 columns took 4 s a Hessian by columns.
    let kept = rptr.windows(2).filter(|r| r[1] > r[0]).count() as f64;
    let one_at_a_time: f64 = rptr.windows(2).map(|r| ((r[1] - r[0]) * (r[1] - r[0] + 1)) as f64 / 2.0).sum();
    let n = f as f64;
    let mut h = if kept * (n * (n + 1.0) / 2.0 / super::subspace::GEMM_SPEEDUP + 2.0 * n) < one_at_a_time {
        dense_lower(&rptr, &rpos, &rval, d, scale, f)
    } else {
        column_lower(&rptr, &rpos, &rval, d, scale, f, sub.threads)
    };
    let largest = sub.weighted_squares(d).into_iter().fold(0.0_f64, |x, v| x.max(scale * v));
    for p in 0..f {
        h[p * f + p] += l2 + 1e-12 * largest;
    }
    h
}

/// The lower triangle, column-major, of Σᵢ scale·dᵢ·xᵢxᵢᵀ over rows given by position (`rptr`,
/// `rpos`, `rval`), summed column by column on `threads` threads.
fn column_lower(
    rptr: &[usize],
    rpos: &[u32],
    rval: &[f64],
    d: &[f64],
    scale: f64,
    f: usize,
    threads: usize,
) -> Vec<f64> {
    let rows = d.len();
    // By column: each entry's row and place in the rows' arrays, and each column's work (the
    // entries of its rows from it on).
    let mut cptr = vec![0usize; f + 1];
    for &p in rpos {
        cptr[p as usize + 1] += 1;
    }
    for p in 0..f {
        cptr[p + 1] += cptr[p];
    }
    let mut next = cptr.clone();
    let mut entry = vec![(0usize, 0usize); rpos.len()];
    let mut work = vec![0usize; f];
    for i in 0..rows {
        let (start, end) = (rptr[i], rptr[i + 1]);
        for (t, &p) in (start..end).zip(&rpos[start..end]) {
            let p = p as usize;
            entry[next[p]] = (i, t);
            next[p] += 1;
            work[p] += end - t;
        }
    }
    // Runs of columns of about equal work, HESSIAN_RUNS a thread, taken in turn.
    let total: usize = work.iter().sum();
    let threads = crate::exec::passes::threads_for(total, threads);
    let runs = HESSIAN_RUNS * threads;
    let mut bounds = vec![0];
    let mut done = 0;
    for (p, &w) in work.iter().enumerate() {
        done += w;
        if done * runs >= total * bounds.len() && p + 1 < f {
            bounds.push(p + 1);
        }
    }
    bounds.push(f);
    // Zeros written here, not a zeroed allocation ([`super::zeros`]): on debian-desc at C = 100
    // (155 MB) the sums took 0.30 s so on two threads, 0.20 s on one, and 0.10 s on two after
    // 0.07 s of writing zeros.
    let mut h = super::zeros(f * f);
    let mut pieces: Vec<Vec<(usize, &mut [f64])>> = (0..threads).map(|_| vec![]).collect();
    let mut rest: &mut [f64] = &mut h;
    for (r, pair) in bounds.windows(2).enumerate() {
        let (piece, after) = std::mem::take(&mut rest).split_at_mut((pair[1] - pair[0]) * f);
        pieces[r % threads].push((pair[0], piece));
        rest = after;
    }
    let column = |c: usize, out: &mut [f64]| {
        for &(i, t) in &entry[cptr[c]..cptr[c + 1]] {
            let end = rptr[i + 1];
            let a = scale * d[i] * rval[t];
            for (&p, &v) in rpos[t..end].iter().zip(&rval[t..end]) {
                out[p as usize] += a * v;
            }
        }
    };
    let run = |mine: Vec<(usize, &mut [f64])>| {
        for (first, piece) in mine {
            for (c, out) in piece.chunks_mut(f).enumerate() {
                column(first + c, out);
            }
        }
    };
    if threads == 1 {
        pieces.into_iter().for_each(run);
    } else {
        std::thread::scope(|scope| {
            for mine in pieces {
                scope.spawn(|| run(mine));
            }
        });
    }
    h
}

/// The lower triangle, column-major, of Σᵢ scale·dᵢ·xᵢxᵢᵀ over rows given by position (`rptr`,
/// `rpos`, `rval`; the rows with dᵢ = 0 already empty), by blocks of rows made dense: for each,
/// Bᵀ·(scale·D·B) ([`super::subspace::add_block_products`]), the blocks added in order.
fn dense_lower(rptr: &[usize], rpos: &[u32], rval: &[f64], d: &[f64], scale: f64, f: usize) -> Vec<f64> {
    let rows: Vec<usize> = (0..d.len()).filter(|&i| rptr[i + 1] > rptr[i]).collect();
    let block = super::subspace::DENSE_ROWS;
    let mut h = super::zeros(f * f);
    let (mut x, mut xd) = (super::zeros(block * f), super::zeros(block * f));
    for chunk in rows.chunks(block) {
        let b = chunk.len();
        let (x, xd) = (&mut x[..b * f], &mut xd[..b * f]);
        x.fill(0.0);
        xd.fill(0.0);
        for (r, &i) in chunk.iter().enumerate() {
            let di = scale * d[i];
            for t in rptr[i]..rptr[i + 1] {
                let at = r * f + rpos[t] as usize;
                x[at] = rval[t];
                xd[at] = di * rval[t];
            }
        }
        super::subspace::add_block_products(faer::MatMut::from_column_major_slice_mut(&mut h, f, f), x, xd, b);
    }
    h
}

/// Runs of columns a thread sums [`lower_hessian`] in: the work of a column falls from the first
/// to the last, so runs of equal work taken in turn keep the threads even.
const HESSIAN_RUNS: usize = 8;

/// What a Newton step on every column costs, in multiply-adds, beside an epoch of coordinate
/// descent: the figures a run report and `optc plan MODEL DATA` print when a run is checked
/// before its first epoch, and the scale a refinement weighs its rounds by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonCosts {
    /// A step's Hessian X_VᵀDX_V on every column: Σᵢ eᵢ(eᵢ + 1)/2 for rows of eᵢ entries (its
    /// lower triangle, one product an entry pair of a row).
    pub hessian: f64,
    /// A step's Cholesky factor of that d × d matrix: d³/3.
    pub factor: f64,
    /// An epoch of coordinate descent: each entry read twice (a column's gradient, its update).
    pub epoch: f64,
}

/// The costs of [`NewtonCosts`] for CSR rows `indptr` on `features` columns.
pub fn newton_costs(indptr: &[usize], features: usize) -> NewtonCosts {
    let hessian = indptr
        .windows(2)
        .map(|r| {
            let e = (r[1] - r[0]) as f64;
            e * (e + 1.0) / 2.0
        })
        .sum();
    let nnz = indptr.last().copied().unwrap_or(0) - indptr.first().copied().unwrap_or(0);
    let d = features as f64;
    NewtonCosts { hessian, factor: d * d * d / 3.0, epoch: 2.0 * nnz as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::DataView;

    /// H_II is Σᵢ scale·dᵢ·xᵢxᵢᵀ restricted to I plus the diagonal, whether its rows are dense
    /// enough for matrix products (every column stored) or sparse enough to be summed by column.
    #[test]
    fn the_hessian_of_dense_rows_is_their_products() {
        let (m, n) = (40, 12);
        for dense in [true, false] {
            let (mut indptr, mut indices, mut values) = (vec![0], vec![], vec![]);
            for i in 0..m {
                for j in (0..n).filter(|j| dense || (i + j) % 6 == 0) {
                    indices.push(j as u32);
                    values.push(((i * 7 + j * 3) % 11) as f64 - 5.0);
                }
                indptr.push(indices.len());
            }
            let labels = vec![0.0; m];
            let data = DataView::new(&indptr, &indices, &values, &labels, n);
            let cols: Vec<usize> = (0..n).collect();
            let sub = Subspace::new(&data, n, &cols);
            let d: Vec<f64> = (0..m).map(|i| if i % 5 == 0 { 0.0 } else { 0.25 + i as f64 / 40.0 }).collect();
            let (scale, l2) = (0.5, 0.1);
            for idx in [cols.clone(), vec![1, 4, 5, 11]] {
                let f = idx.len();
                let h = lower_hessian(&sub, &d, scale, l2, &idx);
                let x = |i: usize, j: usize| {
                    (indptr[i]..indptr[i + 1]).find(|&k| indices[k] as usize == j).map_or(0.0, |k| values[k])
                };
                let largest =
                    (0..n).map(|j| (0..m).map(|i| scale * d[i] * x(i, j) * x(i, j)).sum::<f64>()).fold(0.0, f64::max);
                for c in 0..f {
                    for r in 0..f {
                        let mut want: f64 =
                            if r >= c { (0..m).map(|i| scale * d[i] * x(i, idx[r]) * x(i, idx[c])).sum() } else { 0.0 };
                        if r == c {
                            want += l2 + 1e-12 * largest;
                        }
                        let got = h[c * f + r];
                        assert!(
                            (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                            "dense {dense}, H[{r}, {c}]: {got} against {want}"
                        );
                    }
                }
            }
        }
    }

    /// Rows of 3, 0 and 2 entries: 6 + 0 + 3 products in the Hessian's lower triangle, 10
    /// entries read by an epoch, 4³/3 flops in the factor.
    #[test]
    fn the_costs_count_a_rows_entry_pairs_and_the_factor() {
        let c = newton_costs(&[0, 3, 3, 5], 4);
        assert_eq!(c, NewtonCosts { hessian: 9.0, factor: 64.0 / 3.0, epoch: 10.0 });
    }
}
