//! The data by columns (CSC), built once, when a kernel first reads it, for plans that walk
//! `col(Xc, j)` (SCD): a counting sort of the CSR non-zeros, O(nnz), rows ascending within each
//! column.

use crate::data::{Copies, Indices};

/// d columns; column j's non-zeros are `rows[ptr[j]..ptr[j+1]]` with `values` alongside.
#[derive(Clone, Debug)]
pub struct Columns {
    ptr: Vec<usize>,
    rows: Vec<u32>,
    values: Vec<f64>,
    /// The rows of the matrix they were built from: every row index is below it.
    row_count: usize,
    /// Which columns copy an earlier one, found the first time a solver asks.
    copies: std::sync::OnceLock<Copies>,
}

/// Equal entries make equal columns, whether or not their copies were looked for yet.
impl PartialEq for Columns {
    fn eq(&self, other: &Columns) -> bool {
        (&self.ptr, &self.rows, &self.values, self.row_count)
            == (&other.ptr, &other.rows, &other.values, other.row_count)
    }
}

impl Columns {
    /// The columns of CSR arrays with `features` columns (indices ≥ features are dropped, as
    /// the row loops drop them), built on up to `threads` threads: each takes a run of columns
    /// holding about the same number of non-zeros and scatters into its own part of the arrays,
    /// so the result is the same for any thread count.
    pub fn of(indptr: &[usize], indices: Indices, values: &[f64], features: usize, threads: usize) -> Columns {
        // The entries the rows of `indptr` cover, walked as the scatter below walks them: it
        // places exactly these, so every slot gets a row index below `row_count` (counting all
        // of `indices` left row 0 in the slots of entries past the last row, and a view of no
        // rows then took columns whose entries name a row it does not have).
        let row_count = indptr.len().saturating_sub(1);
        let mut ptr = vec![0usize; features + 1];
        for i in 0..row_count {
            for j in indices.range(indptr[i]..indptr[i + 1]).iter() {
                if (j as usize) < features {
                    ptr[j as usize + 1] += 1;
                }
            }
        }
        for j in 0..features {
            ptr[j + 1] += ptr[j];
        }
        let nnz = ptr[features];
        let (mut rows, mut vals) = (vec![0u32; nnz], vec![0.0; nnz]);
        // Column boundaries of the threads' runs, by non-zeros.
        let threads = threads.clamp(1, features.max(1));
        let mut cuts = vec![0];
        for t in 1..threads {
            let at = ptr.partition_point(|&p| p < nnz * t / threads).min(features);
            cuts.push(at.max(*cuts.last().unwrap_or(&0)));
        }
        cuts.push(features);
        let scatter = |(first, last): (usize, usize), rows: &mut [u32], vals: &mut [f64]| {
            let base = ptr[first];
            let mut next: Vec<usize> = ptr[first..last].iter().map(|p| p - base).collect();
            for i in 0..row_count {
                for k in indptr[i]..indptr[i + 1] {
                    let j = indices[k] as usize;
                    if first <= j && j < last {
                        let at = &mut next[j - first];
                        rows[*at] = i as u32;
                        vals[*at] = values[k];
                        *at += 1;
                    }
                }
            }
        };
        if threads == 1 {
            scatter((0, features), &mut rows, &mut vals);
        } else {
            std::thread::scope(|scope| {
                let (mut rest_rows, mut rest_vals) = (&mut rows[..], &mut vals[..]);
                for run in cuts.windows(2) {
                    let len = ptr[run[1]] - ptr[run[0]];
                    let (r, rr) = std::mem::take(&mut rest_rows).split_at_mut(len);
                    let (v, rv) = std::mem::take(&mut rest_vals).split_at_mut(len);
                    (rest_rows, rest_vals) = (rr, rv);
                    let scatter = &scatter;
                    let run = (run[0], run[1]);
                    scope.spawn(move || scatter(run, r, v));
                }
            });
        }
        Columns { ptr, rows, values: vals, row_count, copies: Default::default() }
    }

    pub fn count(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Where each column starts in [`Columns::rows`] and [`Columns::values`] (count + 1 entries,
    /// non-decreasing, from 0 to the non-zeros).
    pub fn ptr(&self) -> &[usize] {
        &self.ptr
    }

    /// The row index of each non-zero, column by column: each below [`Columns::row_count`].
    pub fn rows(&self) -> &[u32] {
        &self.rows
    }

    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The rows of the matrix the columns were built from. The arrays are private and only
    /// [`Columns::of`] makes them, so this bound holds by construction: a compiled kernel's
    /// check of a CSC it is handed is O(1), not a scan of every non-zero at every call.
    pub fn row_count(&self) -> usize {
        self.row_count
    }

    /// The columns that copy an earlier one ([`Copies`]), found on `threads` threads once per data
    /// set bound to a plan and kept for the runs that follow (a path, one-vs-rest's problems).
    pub fn copies(&self, threads: usize) -> &Copies {
        self.copies.get_or_init(|| Copies::of(self, threads))
    }

    /// Bytes the columns of `nnz` non-zeros over `features` columns take.
    pub fn bytes_for(nnz: usize, features: usize) -> u64 {
        (nnz as u64) * 12 + (features as u64 + 1) * 8
    }
}

/// The columns of data bound to a plan that walks them, built the first time a kernel reads
/// them ([`crate::data::DataView::csc`]). A run whose first check certifies the answer before
/// any epoch (the squared loss on few features, `exec::driver`) never builds them: on a dense
/// 15,000 × 200 set the copy took 20 ms of a 0.08-s solve. The certificate only uses columns
/// already at hand ([`crate::data::DataView::csc_at_hand`]): after an epoch they always are.
#[derive(Clone, Debug, Default)]
pub struct LazyColumns {
    cell: std::sync::OnceLock<Columns>,
}

impl LazyColumns {
    /// Columns built already.
    pub fn built(columns: Columns) -> LazyColumns {
        let cell = std::sync::OnceLock::new();
        let _ = cell.set(columns);
        LazyColumns { cell }
    }

    /// The columns if something has built them.
    pub fn get(&self) -> Option<&Columns> {
        self.cell.get()
    }

    /// The columns, built from these CSR arrays the first time (see [`Columns::of`]).
    pub fn get_or_build(
        &self,
        indptr: &[usize],
        indices: Indices,
        values: &[f64],
        features: usize,
        threads: usize,
    ) -> &Columns {
        self.cell.get_or_init(|| Columns::of(indptr, indices, values, features, threads))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries no row of `indptr` covers are not placed: every row index is below the rows.
    #[test]
    fn entries_past_the_last_row_are_left_out() {
        for indptr in [vec![0], vec![], vec![0, 1]] {
            let c = Columns::of(&indptr, (&[0, 0, 0, 0]).into(), &[1.0; 4], 1, 1);
            assert_eq!(c.rows().len(), indptr.last().copied().unwrap_or(0), "{indptr:?}");
            assert!(c.rows().iter().all(|&i| (i as usize) < c.row_count()), "{indptr:?}");
            assert_eq!(c.ptr().last(), Some(&c.rows().len()));
        }
    }

    /// Any thread count gives the columns one thread does, on a matrix with empty columns,
    /// one dense column and indices beyond `features` (dropped).
    #[test]
    fn columns_do_not_depend_on_threads() {
        let (rows, features) = (300, 50);
        let mut indptr = vec![0];
        let (mut indices, mut values) = (vec![], vec![]);
        for i in 0..rows {
            for j in (0..features + 5).filter(|j| j % 7 != 3 && (i * 31 + j * 17) % 5 == 0 || *j == 0) {
                indices.push(j as u32);
                values.push((i * features + j) as f64);
            }
            indptr.push(indices.len());
        }
        let one = Columns::of(&indptr, (&indices).into(), &values, features, 1);
        assert_eq!(one.count(), features);
        for threads in [2, 3, 4, 64] {
            assert_eq!(Columns::of(&indptr, (&indices).into(), &values, features, threads), one, "{threads} threads");
        }
    }

    #[test]
    fn columns_hold_the_same_entries_rows_ascending() {
        // [[1, 0, 2], [0, 3, 0], [4, 5, 0]]
        for threads in [1, 2, 3, 8] {
            let c = Columns::of(&[0, 2, 3, 5], (&[0, 2, 1, 0, 1]).into(), &[1.0, 2.0, 3.0, 4.0, 5.0], 3, threads);
            assert_eq!(c.ptr, vec![0, 2, 4, 5], "{threads} threads");
            assert_eq!(c.rows, vec![0, 2, 1, 2, 0], "{threads} threads");
            assert_eq!(c.values, vec![1.0, 4.0, 3.0, 5.0, 2.0], "{threads} threads");
        }
    }
}
