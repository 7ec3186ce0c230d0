//! The data as a plan reads it.

use crate::data::store::Indices;

/// The data a plan reads: CSR rows with 0-based feature indices, the mapped labels, and, for
/// plans that walk columns, a CSC copy.
#[derive(Clone, Copy, Debug)]
pub struct DataView<'a> {
    pub indptr: &'a [usize],
    pub indices: Indices<'a>,
    pub values: &'a [f64],
    pub labels: &'a [f64],
    /// The rows' weights ωᵢ, one a row, when the plan weights its loss (`E[s·loss(...)]`);
    /// None reads as every weight 1.
    pub weights: Option<&'a [f64]>,
    /// d: the feature count the weights have (test data may have more; those are ignored).
    pub features: usize,
    /// k: the number of classes multiclass labels are mapped into (0..k), else 0.
    pub classes: usize,
    /// 1 + the largest column index, known for certain: computed by [`DataView::new`] or taken
    /// from a validated matrix ([`crate::data::Dataset::view`]). Compiled kernels rely on it.
    pub(crate) columns: usize,
    /// The same matrix by columns (`col(Xc, j)`), d columns, row indices < m, built when first
    /// read ([`DataView::csc`]).
    pub(crate) lazy_csc: Option<&'a crate::data::LazyColumns>,
    /// The operator B of a composite regularizer ω∘B, bound with the data.
    pub operator: Option<&'a crate::runtime::picard::Operator>,
    /// Threads a pass over all of the data may use (F and the certificate at a check; see
    /// [`crate::exec::passes`]): `--threads`, 1 unless a command says otherwise.
    pub threads: usize,
}

impl<'a> DataView<'a> {
    /// A view of raw CSR arrays; scans the column indices once to learn their bound.
    pub fn new(indptr: &'a [usize], indices: &'a [u32], values: &'a [f64], labels: &'a [f64], features: usize) -> Self {
        let columns = indices.iter().max().map_or(0, |&j| j as usize + 1);
        Self::with_known_columns(indptr, indices.into(), values, labels, features, columns)
    }

    /// A view of CSR arrays whose column bound `columns` the caller knows for certain (a
    /// validated matrix's): compiled kernels rely on it.
    pub(crate) fn with_known_columns(
        indptr: &'a [usize],
        indices: Indices<'a>,
        values: &'a [f64],
        labels: &'a [f64],
        features: usize,
        columns: usize,
    ) -> Self {
        DataView {
            indptr,
            indices,
            values,
            labels,
            weights: None,
            features,
            classes: 0,
            columns,
            lazy_csc: None,
            operator: None,
            threads: 1,
        }
    }

    /// The same view with the operator of a composite regularizer, if the plan has one.
    pub fn with_operator(self, operator: Option<&'a crate::runtime::picard::Operator>) -> Self {
        DataView { operator, ..self }
    }

    /// The same view, its passes on `threads` threads.
    pub fn with_threads(self, threads: usize) -> Self {
        DataView { threads: threads.max(1), ..self }
    }

    /// The same view with the rows' weights (one a row).
    pub fn with_weights(self, weights: Option<&'a [f64]>) -> Self {
        DataView { weights, ..self }
    }

    /// Row i's weight ωᵢ: 1 when the view has none.
    #[inline]
    pub fn weight(&self, i: usize) -> f64 {
        self.weights.map_or(1.0, |s| s[i])
    }

    /// The same view with multiclass labels in 0..k.
    pub fn with_classes(self, classes: usize) -> Self {
        DataView { classes, ..self }
    }

    /// The sizes of a plan's dimensions on this data.
    pub fn dims(&self) -> crate::plan::Dims {
        crate::plan::Dims {
            rows: self.rows(),
            features: self.features,
            classes: self.classes,
            op_rows: self.operator.map_or(0, |b| b.rows),
        }
    }

    /// The same view with its columns, built when a kernel first reads them.
    pub fn with_columns(self, csc: &'a crate::data::LazyColumns) -> Self {
        DataView { lazy_csc: Some(csc), ..self }
    }

    /// The columns of a view that has them ([`DataView::with_columns`]), built now if nothing
    /// has read them yet: what a kernel that walks `col(Xc, j)` reads.
    pub fn csc(&self) -> Option<&'a crate::data::Columns> {
        self.lazy_csc.map(|c| c.get_or_build(self.indptr, self.indices, self.values, self.features, self.threads))
    }

    /// The columns if they are built: what a check uses when they are at hand, never building
    /// them for itself.
    pub fn csc_at_hand(&self) -> Option<&'a crate::data::Columns> {
        self.lazy_csc.and_then(|c| c.get())
    }

    pub fn rows(&self) -> usize {
        self.indptr.len() - 1
    }

    pub fn columns(&self) -> usize {
        self.columns
    }
}
