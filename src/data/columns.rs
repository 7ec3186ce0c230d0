//! The data by columns (CSC), built once for plans that walk `col(Xc, j)` (SCD): a counting
//! sort of the CSR non-zeros, O(nnz), rows ascending within each column.

/// d columns; column j's non-zeros are `rows[ptr[j]..ptr[j+1]]` with `values` alongside.
#[derive(Clone, Debug, PartialEq)]
pub struct Columns {
    pub ptr: Vec<usize>,
    pub rows: Vec<u32>,
    pub values: Vec<f64>,
}

impl Columns {
    /// The columns of CSR arrays with `features` columns (indices ≥ features are dropped, as
    /// the row loops drop them).
    pub fn of(indptr: &[usize], indices: &[u32], values: &[f64], features: usize) -> Columns {
        let mut ptr = vec![0usize; features + 1];
        for &j in indices {
            if (j as usize) < features {
                ptr[j as usize + 1] += 1;
            }
        }
        for j in 0..features {
            ptr[j + 1] += ptr[j];
        }
        let nnz = ptr[features];
        let mut next = ptr.clone();
        let (mut rows, mut vals) = (vec![0u32; nnz], vec![0.0; nnz]);
        for i in 0..indptr.len().saturating_sub(1) {
            for k in indptr[i]..indptr[i + 1] {
                let j = indices[k] as usize;
                if j < features {
                    rows[next[j]] = i as u32;
                    vals[next[j]] = values[k];
                    next[j] += 1;
                }
            }
        }
        Columns { ptr, rows, values: vals }
    }

    pub fn count(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Bytes the columns of `nnz` non-zeros over `features` columns take.
    pub fn bytes_for(nnz: usize, features: usize) -> u64 {
        (nnz as u64) * 12 + (features as u64 + 1) * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_hold_the_same_entries_rows_ascending() {
        // [[1, 0, 2], [0, 3, 0], [4, 5, 0]]
        let c = Columns::of(&[0, 2, 3, 5], &[0, 2, 1, 0, 1], &[1.0, 2.0, 3.0, 4.0, 5.0], 3);
        assert_eq!(c.ptr, vec![0, 2, 4, 5]);
        assert_eq!(c.rows, vec![0, 2, 1, 2, 0]);
        assert_eq!(c.values, vec![1.0, 4.0, 3.0, 5.0, 2.0]);
    }
}
