//! [`Data`]: a training set held in memory, from a LIBSVM file or from CSR arrays (checked,
//! canonical, read in place where the index type allows), with the rows' weights.

use super::Error;
use crate::data::store::{Checks, Store};
use crate::data::Dataset;
use std::path::Path;

/// Training data, held in memory: a file read once, or arrays.
pub struct Data {
    pub(super) set: Dataset,
}

/// An index type CSR arrays may come in (u32, i32, i64, usize): each value is checked.
pub trait CsrIndex: Copy + std::fmt::Display {
    fn index(self) -> Option<usize>;
}

macro_rules! csr_index {
    ($($t:ty),*) => {$(
        impl CsrIndex for $t {
            fn index(self) -> Option<usize> {
                usize::try_from(self).ok()
            }
        }
    )*};
}
csr_index!(u32, i32, i64, u64, usize);

/// A column index type whose arrays a matrix reads in place ([`Data::from_csr_in_place`], which
/// checks their structure itself: [`Checks::Caller`]):
/// u32; int32, whose bits are u32 once none is negative; or int64 (scipy's other index
/// width), whose low halves the back ends read.
pub trait InPlaceIndex: CsrIndex + bytemuck::Pod {
    #[doc(hidden)]
    fn matrix(
        shape: (usize, usize),
        indptr: Store<usize>,
        indices: Store<Self>,
        values: Store<f64>,
    ) -> Result<crate::data::Matrix, sprs::errors::StructureError>;
}

impl InPlaceIndex for u32 {
    fn matrix(
        shape: (usize, usize),
        indptr: Store<usize>,
        indices: Store<u32>,
        values: Store<f64>,
    ) -> Result<crate::data::Matrix, sprs::errors::StructureError> {
        crate::data::store::checked_by(Checks::Caller, shape, indptr, indices, values)
    }
}

impl InPlaceIndex for i32 {
    fn matrix(
        shape: (usize, usize),
        indptr: Store<usize>,
        indices: Store<i32>,
        values: Store<f64>,
    ) -> Result<crate::data::Matrix, sprs::errors::StructureError> {
        // Checked non-negative by from_csr_in_place: the same bits as u32.
        crate::data::store::checked_by(Checks::Caller, shape, indptr, indices.same_bits(), values)
    }
}

impl InPlaceIndex for i64 {
    fn matrix(
        shape: (usize, usize),
        indptr: Store<usize>,
        indices: Store<i64>,
        values: Store<f64>,
    ) -> Result<crate::data::Matrix, sprs::errors::StructureError> {
        crate::data::store::checked_wide(Checks::Caller, shape, indptr, indices, values)
    }
}

impl Data {
    /// A LIBSVM/svmlight file (plain or compressed), read on `threads` threads.
    pub fn from_file(path: &Path, threads: usize) -> Result<Data, Error> {
        let read = crate::data::ReadOptions { threads: threads.max(1), progress: false };
        let set = crate::data::read_libsvm_with(path, &read).map_err(|e| {
            let ctx = e.context();
            Error::Input(if ctx.is_empty() { e.to_string() } else { format!("{e}\n{ctx}") })
        })?;
        Ok(Data { set })
    }

    /// Rows in CSR form with 0-based column indices, one label per row; `features` widens the
    /// data past its largest index. Every pointer and index is checked (the message names the
    /// row and the position); each row's entries are sorted and repeated columns summed.
    pub fn from_csr<P: CsrIndex, I: CsrIndex>(
        indptr: &[P],
        indices: &[I],
        values: &[f64],
        labels: &[f64],
        features: Option<usize>,
    ) -> Result<Data, Error> {
        let bad = |m: String| Err(Error::Input(m));
        let ptr = pointers(indptr, indices.len(), values.len(), "rows")?;
        let rows = ptr.len() - 1;
        if labels.len() != rows {
            return bad(format!("{} labels for {rows} rows", labels.len()));
        }
        let (mut idx, mut val, mut out_ptr) = (Vec::with_capacity(indices.len()), vec![], vec![0usize]);
        let mut width = features.unwrap_or(0);
        for r in 0..rows {
            let mut row: Vec<(u32, f64)> = Vec::with_capacity(ptr[r + 1] - ptr[r]);
            for k in ptr[r]..ptr[r + 1] {
                let j = match indices[k].index().and_then(|j| u32::try_from(j).ok()) {
                    Some(j) => j,
                    None => return bad(format!("row {r}, position {k}: column index {} is not in 0..2³²", indices[k])),
                };
                if !values[k].is_finite() {
                    return bad(format!("row {r}, column {j}: the value {} is not finite", values[k]));
                }
                row.push((j, values[k]));
            }
            row.sort_by_key(|e| e.0);
            for (j, v) in row {
                if idx.len() > *out_ptr.last().unwrap_or(&0) && idx.last() == Some(&j) {
                    *val.last_mut().expect("a value beside the index") += v;
                } else {
                    idx.push(j);
                    val.push(v);
                }
                width = width.max(j as usize + 1);
            }
            out_ptr.push(idx.len());
        }
        Data::owned((rows, width), out_ptr, idx, val, labels.to_vec())
    }

    /// Rows in CSR form as owned arrays (0-based u32 column indices), taken without a copy when
    /// every row's indices are already strictly increasing (as scipy's canonical CSR and
    /// optc's own reader make them); otherwise as [`Data::from_csr`] takes them.
    pub fn from_csr_vecs(
        indptr: Vec<usize>,
        indices: Vec<u32>,
        values: Vec<f64>,
        labels: Vec<f64>,
        features: Option<usize>,
    ) -> Result<Data, Error> {
        let ptr = pointers(&indptr, indices.len(), values.len(), "rows")?;
        let rows = ptr.len() - 1;
        let canonical = (0..rows).all(|r| indices[ptr[r]..ptr[r + 1]].windows(2).all(|p| p[0] < p[1]));
        if !canonical || labels.len() != rows || values.iter().any(|v| !v.is_finite()) {
            return Data::from_csr(&indptr, &indices, &values, &labels, features);
        }
        let width = indices.iter().map(|&j| j as usize + 1).max().unwrap_or(0).max(features.unwrap_or(0));
        Data::owned((rows, width), indptr, indices, values, labels)
    }

    /// Rows in CSR form whose column indices and values are read where they are, the buffers
    /// of another runtime's arrays (NumPy's: the Python package fits a scipy matrix without a
    /// copy); the row pointers, one a row, are the caller's copy. The matrix is `features` wide.
    /// Everything is checked as [`Data::from_csr`] checks it, and each row's indices must
    /// increase strictly (scipy's canonical form): a matrix in any other form is for
    /// [`Data::from_csr`], which sorts a copy.
    pub fn from_csr_in_place<I: InPlaceIndex>(
        indptr: Vec<usize>,
        indices: Store<I>,
        values: Store<f64>,
        labels: Vec<f64>,
        features: usize,
    ) -> Result<Data, Error> {
        let bad = |m: String| Err(Error::Input(m));
        let ptr = pointers(&indptr, indices.len(), values.len(), "rows")?;
        let rows = ptr.len() - 1;
        if labels.len() != rows {
            return bad(format!("{} labels for {rows} rows", labels.len()));
        }
        for r in 0..rows {
            let mut last: Option<usize> = None;
            for k in ptr[r]..ptr[r + 1] {
                let Some(j) = indices[k].index().filter(|&j| j < features) else {
                    return bad(format!("row {r}, position {k}: column index {} is not in 0..{features}", indices[k]));
                };
                if last.is_some_and(|l| l >= j) {
                    return bad(format!("row {r}, position {k}: column indices do not increase (not canonical CSR)"));
                }
                if !values[k].is_finite() {
                    return bad(format!("row {r}, column {j}: the value {} is not finite", values[k]));
                }
                last = Some(j);
            }
        }
        Data::of(I::matrix((rows, features), Store::Owned(indptr), indices, values), labels)
    }

    /// A dense row-major m × d array's values, read in place, with one label a row (m of them):
    /// every entry stored, zeros too, so a row's columns are 0..d and its indices are made here,
    /// with no check beyond the values' finiteness (the structure is right by construction).
    pub fn from_dense_in_place(values: Store<f64>, labels: Vec<f64>, features: usize) -> Result<Data, Error> {
        let bad = |m: String| Err(Error::Input(m));
        let rows = labels.len();
        if rows.checked_mul(features) != Some(values.len()) {
            return bad(format!("{} values for {rows} rows of {features} columns", values.len()));
        }
        if u32::try_from(features).is_err() {
            return bad(format!("{features} columns: at most 2³² fit"));
        }
        if let Some(k) = values.iter().position(|v| !v.is_finite()) {
            let (r, j) = (k / features, k % features);
            return bad(format!("row {r}, column {j}: the value {} is not finite", values[k]));
        }
        let indptr: Vec<usize> = (0..=rows).map(|r| r * features).collect();
        // Sized at once: grown by doubling, these 4 bytes an entry were allocated 2.7 times over
        // (27 ms on a 200,000 × 50 array, 18 sized).
        let mut indices: Vec<u32> = Vec::with_capacity(values.len());
        for _ in 0..rows {
            indices.extend(0..features as u32);
        }
        let x = crate::data::store::checked_by(
            Checks::Caller,
            (rows, features),
            Store::Owned(indptr),
            Store::Owned(indices),
            values,
        );
        Data::of(x, labels)
    }

    /// Where the matrix's column indices and values are held: a fit on arrays read in place
    /// reads them at the caller's addresses.
    pub fn addresses(&self) -> (usize, usize) {
        (self.set.x.indices().as_ptr() as usize, self.set.x.data().as_ptr() as usize)
    }

    /// Columns in CSC form (0-based row indices, one label per row): optc reads rows, so the
    /// matrix is transposed into CSR once, O(nnz). Every pointer and index is checked, as
    /// [`Data::from_csr`] checks them, and repeated entries are summed.
    pub fn from_csc<I: CsrIndex>(indptr: &[I], indices: &[I], values: &[f64], labels: &[f64]) -> Result<Data, Error> {
        let ptr = pointers(indptr, indices.len(), values.len(), "columns")?;
        let (rows, columns) = (labels.len(), ptr.len() - 1);
        let mut entries: Vec<Vec<(u32, f64)>> = vec![vec![]; rows];
        for j in 0..columns {
            for k in ptr[j]..ptr[j + 1] {
                let i = match indices[k].index().filter(|&i| i < rows) {
                    Some(i) => i,
                    None => {
                        return Err(Error::Input(format!(
                            "column {j}, position {k}: row index {} is not in 0..{rows} (one label a row)",
                            indices[k]
                        )))
                    }
                };
                let column = u32::try_from(j).map_err(|_| Error::Input(format!("column {j} is not in 0..2³²")))?;
                entries[i].push((column, values[k]));
            }
        }
        let mut indptr = vec![0usize];
        let (mut idx, mut val) = (Vec::with_capacity(values.len()), Vec::with_capacity(values.len()));
        for row in entries {
            for (j, v) in row {
                idx.push(j);
                val.push(v);
            }
            indptr.push(idx.len());
        }
        // Column by column, each row's entries arrive in increasing column order: canonical
        // unless a column repeats a row, which from_csr sums.
        Data::from_csr(&indptr, &idx, &val, labels, Some(columns))
    }

    /// A dataset of checked, canonical CSR arrays.
    fn owned(
        shape: (usize, usize),
        indptr: Vec<usize>,
        indices: Vec<u32>,
        values: Vec<f64>,
        labels: Vec<f64>,
    ) -> Result<Data, Error> {
        Data::of(crate::data::store::csr(shape, indptr, indices, values), labels)
    }

    /// The dataset of a matrix whose structure sprs checked (and whose values every
    /// constructor checked finite by row), its labels checked finite here.
    fn of(x: Result<crate::data::Matrix, sprs::errors::StructureError>, labels: Vec<f64>) -> Result<Data, Error> {
        let x = x.map_err(|e| Error::Input(format!("the arrays do not make a matrix: {e}")))?;
        if let Some(r) = labels.iter().position(|y| !y.is_finite()) {
            return Err(Error::Input(format!("row {r}: the label {} is not finite", labels[r])));
        }
        let rows = x.rows();
        let set = Dataset {
            weights: None,
            x,
            labels,
            lines: vec![0; rows],
            name: "arrays".into(),
            bytes: 0,
            max_index_line: 0,
        };
        Ok(Data { set })
    }

    pub fn rows(&self) -> usize {
        self.set.rows()
    }

    /// The same rows with a weight each (`E[s·loss(...)]`): as many as the rows, each finite
    /// and ≥ 0, else an input error that names the first bad one.
    pub fn with_weights(mut self, weights: Vec<f64>) -> Result<Data, Error> {
        if weights.len() != self.rows() {
            return Err(Error::Input(format!("sample_weight has {} entries for {} rows", weights.len(), self.rows())));
        }
        if let Some(i) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(Error::Input(format!("sample_weight[{i}] = {} is not a finite number ≥ 0", weights[i])));
        }
        self.set.weights = Some(weights);
        Ok(self)
    }

    pub fn features(&self) -> usize {
        self.set.features()
    }
}

/// The row (or column) pointers of compressed arrays with `entries` indices and `values`
/// values, checked: non-decreasing positions from 0 to the number of entries. `what` names the
/// pointers' axis in messages.
fn pointers<I: CsrIndex>(indptr: &[I], entries: usize, values: usize, what: &str) -> Result<Vec<usize>, Error> {
    let bad = |m: String| Err(Error::Input(m));
    if indptr.is_empty() {
        return bad(format!("indptr is empty: it has one entry more than there are {what}"));
    }
    if entries != values {
        return bad(format!("{entries} indices but {values} values"));
    }
    let mut ptr = Vec::with_capacity(indptr.len());
    for (r, p) in indptr.iter().enumerate() {
        match p.index() {
            Some(p) if p <= entries && ptr.last().is_none_or(|&q| q <= p) => ptr.push(p),
            _ => return bad(format!("indptr[{r}] = {p} is not a position in 0..={entries} after the one before it")),
        }
    }
    let last = ptr.len() - 1;
    if ptr[0] != 0 || ptr[last] != entries {
        return bad(format!("indptr runs from {} to {}; it must run from 0 to {entries}", ptr[0], ptr[last]));
    }
    Ok(ptr)
}
