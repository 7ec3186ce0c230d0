//! The columns V of X that a refinement's Newton steps move, stored by rows, and the products
//! those steps take with them: X_V·β, X_Vᵀ·u and the Hessian X_Vᵀ·diag(d)·X_V.

use crate::exec::DataView;
use faer::linalg::matmul::triangular::{matmul, BlockStructure};
use faer::{Accum, MatMut, MatRef, Par};
use std::borrow::Cow;
use std::ops::Range;

/// What placing an entry of X_V by a counting sort costs, in entries of X scanned in order.
const SCATTER_COST: usize = 8;
/// Runs of rows the Hessian of a Newton step is summed in (one a thread, on two cores).
pub(super) const HESSIAN_PARTS: usize = 2;
/// How many more products of two entries a second the Hessian's dense blocks multiply (faer's
/// matrix product) than its one-row-at-a-time loop adds, with a block's filling counted apart:
/// the rows' outer products go by blocks once the loop's Σᵢ nnzᵢ(nnzᵢ + 1)/2 products cost more
/// than the blocks' n(n + 1)/2 a row, plus 2n for filling them. Measured on one core on a dense
/// 15,000 × 200 set (3.0e8 products): the loop took 132 ms (2.3e9 a second), the blocks 17 ms,
/// filling included (1.8e10).
pub(super) const GEMM_SPEEDUP: f64 = 8.0;
/// Columns up to which the Hessian takes dense rows one at a time, each row's products added
/// straight into H's rows, never as blocks: H (n² entries, 32 kB at 64) then stays in the
/// first-level cache and the adds are contiguous and vectorize, where a matrix product on so
/// few columns costs its call more than its work. A dense 15,000 × 20 set's Hessian: 1.1–1.9 ms
/// by blocks of 256 to 7,500 rows, 0.65 ms so (on two threads, their start included).
const L1_COLUMNS: usize = 64;
/// Rows of a dense block of X_V. The Hessian of that set, one core / two: 256 rows 17 / 9–13 ms,
/// 512 19–20 / 10–11, 1,024 24 / 12–14, 4,096 31 / 15.
pub(super) const DENSE_ROWS: usize = 256;

/// The columns V of X, stored by rows (k-th entry of row i: the position in V and the value).
/// When V is every column of X in order, those are X's own arrays, borrowed.
pub(crate) struct Subspace<'a> {
    pub(crate) ptr: Cow<'a, [usize]>,
    pub(crate) slot: Cow<'a, [u32]>,
    pub(crate) value: Cow<'a, [f64]>,
    pub(crate) n: usize,
    /// How many threads sum the Hessian (the data's `--threads`).
    pub(crate) threads: usize,
}

impl<'a> Subspace<'a> {
    pub(crate) fn new(data: &DataView<'a>, features: usize, cols: &[usize]) -> Self {
        // Every column, in order, and X's indices u32s all below `features`: X_V is X.
        let whole = cols.len() == features && data.columns <= features && cols.iter().enumerate().all(|(k, &j)| k == j);
        if let Some(slot) = data.indices.as_slice().filter(|_| whole) {
            let (ptr, value) = (Cow::Borrowed(data.indptr), Cow::Borrowed(data.values));
            return Subspace { ptr, slot: Cow::Borrowed(slot), value, n: cols.len(), threads: data.threads };
        }
        // Every row stores every column (a dense array: rows are canonical, so m·d entries are
        // each row's 0..d in order): X_V is gathered row by row, m·|V| reads and no scan of the
        // rest (a dense 15,000 × 200 lasso with 32 columns in V: the scan below wrote all 3M
        // entries, 3.5 ms).
        let rows = data.rows();
        if data.columns > 0 && data.columns <= features && data.values.len() == rows * data.columns {
            let (width, n) = (data.columns, cols.len());
            // V's columns that X has, and their positions in V: every row's slots.
            let (inside, slots): (Vec<usize>, Vec<u32>) =
                cols.iter().enumerate().filter(|&(_, &j)| j < width).map(|(k, &j)| (j, k as u32)).unzip();
            let mut ptr = Vec::with_capacity(rows + 1);
            let (mut slot, mut value) = (Vec::with_capacity(rows * n), Vec::with_capacity(rows * n));
            ptr.push(0);
            for row in data.values.chunks_exact(width) {
                value.extend(inside.iter().map(|&j| row[j]));
                slot.extend_from_slice(&slots);
                ptr.push(value.len());
            }
            let (ptr, slot, value) = (Cow::Owned(ptr), Cow::Owned(slot), Cow::Owned(value));
            return Subspace { ptr, slot, value, n, threads: data.threads };
        }
        // A counting sort of V's columns by row costs O(nnz of X_V), not O(nnz of X), but every
        // entry it places is a cache miss (each column sweeps the whole output): it pays when
        // X_V holds a small part of X (text data: a thousand of a million columns), and a scan
        // of the rows in order does when V holds most of the mass (w8a: 13 ms against 2 ms).
        let csc = data.csc_at_hand().filter(|c| c.count() == features);
        // nnz of X_V when the columns are at hand, else a bound.
        let entries = csc.map_or(data.values.len(), |c| cols.iter().map(|&j| c.ptr()[j + 1] - c.ptr()[j]).sum());
        if let Some(csc) = csc.filter(|_| entries * SCATTER_COST < data.values.len()) {
            let mut ptr = vec![0usize; data.rows() + 1];
            for &j in cols {
                for &i in &csc.rows()[csc.ptr()[j]..csc.ptr()[j + 1]] {
                    ptr[i as usize + 1] += 1;
                }
            }
            for i in 0..data.rows() {
                ptr[i + 1] += ptr[i];
            }
            let mut next = ptr.clone();
            let (mut slot, mut value) = (vec![0u32; ptr[data.rows()]], vec![0.0; ptr[data.rows()]]);
            for (k, &j) in cols.iter().enumerate() {
                for p in csc.ptr()[j]..csc.ptr()[j + 1] {
                    let i = csc.rows()[p] as usize;
                    slot[next[i]] = k as u32;
                    value[next[i]] = csc.values()[p];
                    next[i] += 1;
                }
            }
            let (ptr, slot, value) = (Cow::Owned(ptr), Cow::Owned(slot), Cow::Owned(value));
            return Subspace { ptr, slot, value, n: cols.len(), threads: data.threads };
        }
        // Every entry is written and the cursor advances only for V's: a branch on membership
        // mispredicts at every other entry when V holds half the columns (12 ms against 1.5 ms
        // on w8a).
        let mut position = vec![u32::MAX; data.columns.max(features)];
        for (k, &j) in cols.iter().enumerate() {
            position[j] = k as u32;
        }
        let (mut ptr, mut slot, mut value) =
            (vec![0; data.rows() + 1], vec![0u32; entries + 1], vec![0.0; entries + 1]);
        let mut next = 0;
        for i in 0..data.rows() {
            for k in data.indptr[i]..data.indptr[i + 1] {
                let p = position[data.indices[k] as usize];
                slot[next] = p;
                value[next] = data.values[k];
                next += usize::from(p != u32::MAX);
            }
            ptr[i + 1] = next;
        }
        slot.truncate(next);
        value.truncate(next);
        let (ptr, slot, value) = (Cow::Owned(ptr), Cow::Owned(slot), Cow::Owned(value));
        Subspace { ptr, slot, value, n: cols.len(), threads: data.threads }
    }

    /// scale·X_Vᵀ·diag(d)·X_V + (l2 + ν)·I, dense and row-major, ν a relative 1e-12 of the
    /// largest diagonal entry: exactly duplicated columns make the matrix singular.
    pub(crate) fn hessian(&self, d: &[f64], scale: f64, l2: f64) -> Vec<f64> {
        let n = self.n;
        // The lower triangle of the rows' outer products, in HESSIAN_PARTS fixed runs of rows
        // added in order: the same sums for any thread count.
        let m = d.len();
        let part = |k: usize| {
            let rows = m * k / HESSIAN_PARTS..m * (k + 1) / HESSIAN_PARTS;
            let mut h = super::zeros(n * n);
            if n > L1_COLUMNS && self.dense_pays(rows.clone()) {
                self.add_dense_products(&mut h, d, scale, rows);
            } else {
                self.add_products(&mut h, d, scale, rows);
            }
            h
        };
        let threads = crate::exec::passes::threads_for(self.value.len(), self.threads);
        let mut h = crate::exec::passes::add_in_order(crate::exec::passes::each(HESSIAN_PARTS, threads, part));
        for a in 0..n {
            for b in 0..a {
                h[b * n + a] = h[a * n + b];
            }
        }
        let largest = (0..n).map(|a| h[a * n + a]).fold(0.0, f64::max);
        for a in 0..n {
            h[a * n + a] += l2 + 1e-12 * largest;
        }
        h
    }

    /// Whether these rows' outer products cost less as dense blocks (see [`GEMM_SPEEDUP`]):
    /// decided by counts alone, so the same data takes the same path on every machine.
    fn dense_pays(&self, rows: Range<usize>) -> bool {
        let n = self.n as f64;
        let one_at_a_time: f64 = rows
            .clone()
            .map(|i| {
                let e = (self.ptr[i + 1] - self.ptr[i]) as f64;
                e * (e + 1.0) / 2.0
            })
            .sum();
        let blocks = rows.len() as f64 * (n * (n + 1.0) / 2.0 / GEMM_SPEEDUP + 2.0 * n);
        blocks < one_at_a_time
    }

    /// The lower triangle (row-major) of Σᵢ scale·dᵢ·xᵢxᵢᵀ over `rows`, added to `h` one row's
    /// products at a time. Every row lists its entries by position in V, so a row's products
    /// below the diagonal are a prefix.
    fn add_products(&self, h: &mut [f64], d: &[f64], scale: f64, rows: Range<usize>) {
        let n = self.n;
        for i in rows {
            let di = scale * d[i];
            if di == 0.0 {
                continue;
            }
            let row = self.ptr[i]..self.ptr[i + 1];
            // A dense row: each of H's rows gets a contiguous multiply-add, no index read.
            if super::full_row(&row, n, |k| self.slot[k]) {
                let values = &self.value[row];
                for (a, (&va, out)) in values.iter().zip(h.chunks_exact_mut(n)).enumerate() {
                    super::axpy(&mut out[..=a], di * va, &values[..=a]);
                }
                continue;
            }
            let (slots, values) = (&self.slot[row.clone()], &self.value[row]);
            for (p, (&a, &va)) in slots.iter().zip(values).enumerate() {
                // A row of H as its own slice: its bounds check is against n, cheaper than
                // against n² after an add (8.1M products: 15.8 ms → 13.9 ms).
                let (fa, row) = (di * va, &mut h[a as usize * n..(a as usize + 1) * n]);
                for (&b, &vb) in slots[..=p].iter().zip(&values[..=p]) {
                    row[b as usize] += fa * vb;
                }
            }
        }
    }

    /// As [`Subspace::add_products`], by blocks of [`DENSE_ROWS`] rows made dense: for each,
    /// the lower triangle of Bᵀ·(scale·D·B), one matrix product.
    fn add_dense_products(&self, h: &mut [f64], d: &[f64], scale: f64, rows: Range<usize>) {
        let n = self.n;
        let (mut x, mut xd) = (super::zeros(DENSE_ROWS * n), super::zeros(DENSE_ROWS * n));
        let mut start = rows.start;
        while start < rows.end {
            let b = DENSE_ROWS.min(rows.end - start);
            // Rows that store all of V, in V's order, are B itself: only D·B is written (a dense
            // 15,000 × 200 set's Hessian copied its 3M entries into B's blocks at every step).
            let (first, last) = (self.ptr[start], self.ptr[start + b]);
            let whole = last - first == b * n
                && (start..start + b)
                    .all(|i| crate::exec::linalg::full_row(&(self.ptr[i]..self.ptr[i + 1]), n, |k| self.slot[k]));
            if whole {
                let block = &self.value[first..last];
                let xd = &mut xd[..b * n];
                for (r, (out, row)) in xd.chunks_exact_mut(n).zip(block.chunks_exact(n)).enumerate() {
                    let di = scale * d[start + r];
                    out.iter_mut().zip(row).for_each(|(o, v)| *o = di * v);
                }
                add_block_products(MatMut::from_row_major_slice_mut(h, n, n), block, xd, b);
                start += b;
                continue;
            }
            // Row-major b × n blocks, B and D·B: each row's entries land near each other.
            let (x, xd) = (&mut x[..b * n], &mut xd[..b * n]);
            x.fill(0.0);
            xd.fill(0.0);
            for r in 0..b {
                let i = start + r;
                let di = scale * d[i];
                if di == 0.0 {
                    continue;
                }
                for k in self.ptr[i]..self.ptr[i + 1] {
                    let at = r * n + self.slot[k] as usize;
                    x[at] += self.value[k];
                    xd[at] += di * self.value[k];
                }
            }
            add_block_products(MatMut::from_row_major_slice_mut(h, n, n), x, xd, b);
            start += b;
        }
    }

    /// Σᵢ dᵢ·x²ᵢₖ for every k of V: the diagonal of X_Vᵀ·diag(d)·X_V.
    pub(crate) fn weighted_squares(&self, d: &[f64]) -> Vec<f64> {
        crate::exec::passes::add_in_order(crate::exec::passes::blocks(d.len(), self.threads, |rows| {
            let mut out = vec![0.0; self.n];
            for i in rows {
                for k in self.ptr[i]..self.ptr[i + 1] {
                    out[self.slot[k] as usize] += d[i] * self.value[k] * self.value[k];
                }
            }
            out
        }))
    }

    /// X_V·β, one entry per row.
    pub(crate) fn times(&self, beta: &[f64]) -> Vec<f64> {
        crate::exec::passes::map(self.ptr.len() - 1, self.threads, |i| {
            let row = self.ptr[i]..self.ptr[i + 1];
            if super::full_row(&row, self.n, |k| self.slot[k]) {
                return super::dot(&self.value[row], beta);
            }
            self.slot[row.clone()].iter().zip(&self.value[row]).map(|(&j, &x)| x * beta[j as usize]).sum()
        })
    }

    /// X_Vᵀ·u and X_Vᵀ·c from one pass over X_V (each as [`Subspace::transpose_times`] gives it).
    pub(crate) fn transpose_times_both(&self, u: &[f64], c: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let n = self.n;
        let parts = crate::exec::passes::blocks(u.len(), self.threads, |rows| {
            let mut out = vec![0.0; 2 * n];
            let (xu, xc) = out.split_at_mut(n);
            for i in rows {
                let row = self.ptr[i]..self.ptr[i + 1];
                if super::full_row(&row, n, |k| self.slot[k]) {
                    super::axpy(xu, u[i], &self.value[row.clone()]);
                    super::axpy(xc, c[i], &self.value[row]);
                    continue;
                }
                // The row's entries as slices and its two factors read once: indexing the
                // arrays entry by entry (each a bounds check, u[i] and c[i] loaded again after
                // every store) took 1.2 ms a pass on w8a (580k entries, one thread), this 0.95.
                let (ui, ci) = (u[i], c[i]);
                for (&j, &x) in self.slot[row.clone()].iter().zip(&self.value[row]) {
                    xu[j as usize] += x * ui;
                    xc[j as usize] += x * ci;
                }
            }
            out
        });
        let mut both = crate::exec::passes::add_in_order(parts);
        let second = both.split_off(n);
        (both, second)
    }

    /// X_Vᵀ·u, by blocks of rows added in block order.
    pub(crate) fn transpose_times(&self, u: &[f64]) -> Vec<f64> {
        // u has a row at least (the caller has checked m > 0), so there is a block.
        crate::exec::passes::add_in_order(crate::exec::passes::blocks(u.len(), self.threads, |rows| {
            let mut out = vec![0.0; self.n];
            for i in rows {
                let row = self.ptr[i]..self.ptr[i + 1];
                if super::full_row(&row, self.n, |k| self.slot[k]) {
                    super::axpy(&mut out, u[i], &self.value[row]);
                    continue;
                }
                let ui = u[i];
                for (&j, &x) in self.slot[row.clone()].iter().zip(&self.value[row]) {
                    out[j as usize] += x * ui;
                }
            }
            out
        }))
    }
}

/// The lower triangle of `dst` (n × n) += Bᵀ·C for row-major b × n blocks B = `x`, C = `xd`: one
/// faer product on one thread, so the sums are the same for any thread count.
pub(super) fn add_block_products(dst: MatMut<'_, f64>, x: &[f64], xd: &[f64], b: usize) {
    let n = dst.nrows();
    let (x, xd) = (MatRef::from_row_major_slice(x, b, n), MatRef::from_row_major_slice(xd, b, n));
    matmul(
        dst,
        BlockStructure::TriangularLower,
        Accum::Add,
        x.transpose(),
        BlockStructure::Rectangular,
        xd,
        BlockStructure::Rectangular,
        1.0,
        Par::Seq,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows by (i, j) ↦ value, kept where `keep` says: a CSR matrix of m rows and d columns.
    fn csr(m: usize, d: usize, keep: impl Fn(usize, usize) -> bool) -> (Vec<usize>, Vec<u32>, Vec<f64>) {
        let (mut indptr, mut indices, mut values) = (vec![0], vec![], vec![]);
        for i in 0..m {
            for j in (0..d).filter(|&j| keep(i, j)) {
                indices.push(j as u32);
                values.push((((i * 13 + j * 7) % 11) as f64 - 5.0) / 3.0);
            }
            indptr.push(indices.len());
        }
        (indptr, indices, values)
    }

    /// The Hessian is scale·Σᵢ dᵢxᵢxᵢᵀ + l2·I (rows with dᵢ = 0 included), whether the rows' products
    /// are summed by dense blocks or one row at a time, and the cost model takes the blocks on
    /// dense rows (here two parts of 300 rows: a block of 256 and a shorter one each) and the
    /// single rows on sparse ones.
    #[test]
    fn dense_blocks_and_single_rows_give_the_same_hessian() {
        for (m, d, dense) in [(600, 12, true), (600, 40, false)] {
            let (indptr, indices, values) = csr(m, d, |i, j| dense || (i * 5 + j * 3) % 13 == 0);
            let labels = vec![1.0; m];
            let data = DataView::new(&indptr, &indices, &values, &labels, d);
            let sub = Subspace::new(&data, d, &(0..d).collect::<Vec<_>>());
            assert_eq!(sub.dense_pays(0..m), dense, "{m} × {d}");
            let curvature: Vec<f64> = (0..m).map(|i| ((i * 3) % 4) as f64 * 0.25).collect();
            let (scale, l2) = (1.0 / m as f64, 0.3);
            let h = sub.hessian(&curvature, scale, l2);
            let mut expected = vec![0.0; d * d];
            for i in 0..m {
                for p in indptr[i]..indptr[i + 1] {
                    for q in indptr[i]..indptr[i + 1] {
                        let (a, b) = (indices[p] as usize, indices[q] as usize);
                        expected[a * d + b] += scale * curvature[i] * values[p] * values[q];
                    }
                }
            }
            let largest = (0..d).map(|a| expected[a * d + a]).fold(0.0, f64::max);
            for a in 0..d {
                expected[a * d + a] += l2;
                for b in 0..d {
                    let (got, want) = (h[a * d + b], expected[a * d + b]);
                    assert!(
                        (got - want).abs() <= 1e-12 * (1.0 + largest),
                        "{m} × {d}: H[{a}, {b}] = {got}, not {want}"
                    );
                }
            }
            // Both ways on the same rows, whichever the model picks.
            let (mut blocks, mut single) = (vec![0.0; d * d], vec![0.0; d * d]);
            sub.add_dense_products(&mut blocks, &curvature, scale, 0..m);
            sub.add_products(&mut single, &curvature, scale, 0..m);
            for a in 0..d {
                for b in 0..=a {
                    let (x, y) = (blocks[a * d + b], single[a * d + b]);
                    assert!((x - y).abs() <= 1e-12 * (1.0 + largest), "{m} × {d}: [{a}, {b}] {x} against {y}");
                }
            }
        }
    }

    /// X_V of some columns, out of order, of rows that store every column (gathered row by row)
    /// is the one the scan of every entry makes: the same matrix with one zero not stored, so
    /// that its rows are not all full, gives the same rows of X_V and the same X_V·β.
    #[test]
    fn columns_of_dense_rows_are_gathered_as_the_scan_places_them() {
        let (m, d) = (7, 5);
        let (indptr, indices, mut values) = csr(m, d, |_, _| true);
        values[3] = 0.0;
        let (mut sparse_ptr, mut sparse_idx, mut sparse_val) = (vec![0], vec![], vec![]);
        for i in 0..m {
            for k in indptr[i]..indptr[i + 1] {
                if k != 3 {
                    sparse_idx.push(indices[k]);
                    sparse_val.push(values[k]);
                }
            }
            sparse_ptr.push(sparse_idx.len());
        }
        let labels = vec![1.0; m];
        let dense = DataView::new(&indptr, &indices, &values, &labels, d);
        let sparse = DataView::new(&sparse_ptr, &sparse_idx, &sparse_val, &labels, d);
        let cols = [4, 1, 3];
        let (a, b) = (Subspace::new(&dense, d, &cols), Subspace::new(&sparse, d, &cols));
        let beta = [0.5, -2.0, 1.5];
        assert_eq!(a.times(&beta), b.times(&beta));
        for i in 0..m {
            let row = |s: &Subspace, i: usize| -> Vec<(u32, f64)> {
                let mut r: Vec<(u32, f64)> =
                    (s.ptr[i]..s.ptr[i + 1]).map(|k| (s.slot[k], s.value[k])).filter(|e| e.1 != 0.0).collect();
                r.sort_by_key(|e| e.0);
                r
            };
            assert_eq!(row(&a, i), row(&b, i), "row {i}");
        }
    }
}
