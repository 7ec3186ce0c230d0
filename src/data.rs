//! Data: LIBSVM/svmlight text (plain or compressed) → CSR matrix + labels, and the mapping of
//! raw labels to what a loss reads (±1, class indices, reals).

mod bind;
pub mod cache;
mod columns;
mod copies;
mod labels;
mod libsvm;
pub mod operator;
mod progress;
pub mod store;
pub mod stream;
pub mod structure_files;
pub mod synthetic;
mod view;
mod weights;

pub use crate::plan::{bound_scalars, needs_gram, DataFacts};
pub use columns::{Columns, LazyColumns};
pub use copies::Copies;
pub use labels::{one_vs_rest_labels, LabelError, LabelMap};
pub use libsvm::{
    available_threads, display_name, open_text, read_in_blocks, read_libsvm, read_libsvm_from, read_libsvm_shown,
    read_libsvm_with, read_text, sniff, DataError, ReadOptions,
};
pub use store::{Indices, Matrix};
pub use view::DataView;
pub use weights::{class_weights_of, parse_class_weight, read_weights, ClassWeightError, RowWeights};

/// The rows of a data file: features as CSR (0-based feature indices) and the raw labels.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// m × d, d = the largest feature index seen (indices are 1-based in the file).
    pub x: Matrix,
    pub labels: Vec<f64>,
    /// The rows' weights (`--weights FILE`, `sample_weight`, times `--class-weight`), one a
    /// row, each finite and ≥ 0; None: every weight 1.
    pub weights: Option<Vec<f64>>,
    /// The file line of each row, for messages about a label; 0 for rows that have none
    /// (arrays handed over in memory).
    pub lines: Vec<u32>,
    pub name: String,
    /// Bytes of (decompressed) text read.
    pub bytes: u64,
    /// The file line where the largest feature index first appears (0 when there is none), for
    /// messages about the memory the weights would need.
    pub max_index_line: u32,
}

impl Dataset {
    pub fn rows(&self) -> usize {
        self.x.rows()
    }

    /// Where row k is, for a message: `file:line`, or for a row of arrays handed over in
    /// memory (no line) `row k`, counted from 0 as its caller counts it.
    pub fn place(&self, k: usize) -> String {
        match self.lines.get(k) {
            Some(&line) if line > 0 => format!("{}:{line}", self.name),
            _ => format!("row {k}"),
        }
    }
    pub fn features(&self) -> usize {
        self.x.cols()
    }
    pub fn nnz(&self) -> usize {
        self.x.nnz()
    }

    /// max over rows of ωᵢ‖xᵢ‖², the curvature scale of the worst example (ωᵢ its weight).
    pub fn max_row_norm_sq(&self) -> f64 {
        let (ptr, data) = (self.x.indptr(), self.x.data());
        (0..self.rows())
            .map(|i| self.weight(i) * data[ptr[i]..ptr[i + 1]].iter().map(|v| v * v).sum::<f64>())
            .fold(0.0, f64::max)
    }

    /// Row i's weight: 1 without weights.
    pub fn weight(&self, i: usize) -> f64 {
        self.weights.as_ref().map_or(1.0, |s| s[i])
    }

    /// Σᵢ ωᵢ/m: 1 without weights.
    pub fn mean_weight(&self) -> f64 {
        match &self.weights {
            Some(s) if !s.is_empty() => s.iter().sum::<f64>() / s.len() as f64,
            _ => 1.0,
        }
    }

    /// The mean over rows of ‖xᵢ‖²: with the ridge, how strongly regularized a model is
    /// ([`crate::analysis::STRONG_RIDGE`]).
    pub fn mean_row_norm_sq(&self) -> f64 {
        self.x.data().iter().map(|v| v * v).sum::<f64>() / self.rows().max(1) as f64
    }

    /// The raw CSR arrays (what the plan's back ends read).
    pub fn csr(&self) -> (&[usize], Indices<'_>, &[f64]) {
        (self.x.indptr(), self.x.indices(), self.x.data())
    }

    /// The rows as a plan reads them, with `labels` already mapped and the weights of length
    /// `features` (≥ the columns of the data for training).
    pub fn view<'a>(&'a self, labels: &'a [f64], features: usize) -> DataView<'a> {
        let (indptr, indices, values) = self.csr();
        // Every column index was checked against cols() when the matrix was built.
        DataView::with_known_columns(indptr, indices, values, labels, features, self.x.cols())
            .with_weights(self.weights.as_deref())
    }

    /// A seeded random `fraction` of the rows held out (at least one row each side when there
    /// are two), in file order: (the rest, the held-out rows). Both keep the feature count.
    pub fn split(&self, fraction: f64, seed: u64) -> (Dataset, Dataset) {
        use rand::seq::SliceRandom;
        use rand::SeedableRng;
        let m = self.rows();
        let held = if m < 2 { 0 } else { ((fraction * m as f64).round() as usize).clamp(1, m - 1) };
        let mut order: Vec<usize> = (0..m).collect();
        // A stream apart from the epochs' row orders, which start from the same seed.
        order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_401d_u64));
        let mut out = vec![false; m];
        for &i in &order[..held] {
            out[i] = true;
        }
        (self.rows_where(|i| !out[i], "training part"), self.rows_where(|i| out[i], "held-out part"))
    }

    /// Fold `k` of a K-fold split (`fold_of` gives each row's fold): (the other rows, the fold's
    /// rows), each in file order, both with the feature count kept.
    pub fn fold(&self, fold_of: &[usize], k: usize) -> (Dataset, Dataset) {
        let part = format!("fold {}", k + 1);
        (self.rows_where(|i| fold_of[i] != k, &format!("all but {part}")), self.rows_where(|i| fold_of[i] == k, &part))
    }

    /// The rows of `range`, in order, with the feature count kept: a share of the rows, as a
    /// rank holds one.
    pub fn rows_between(&self, range: std::ops::Range<usize>) -> Dataset {
        self.rows_where(|i| range.contains(&i), "share")
    }

    fn rows_where(&self, keep: impl Fn(usize) -> bool, part: &str) -> Dataset {
        let (indptr, indices, values) = self.csr();
        let (mut ptr, mut idx, mut val, mut labels, mut lines) = (vec![0], vec![], vec![], vec![], vec![]);
        let mut weights = self.weights.as_ref().map(|_| vec![]);
        for i in (0..self.rows()).filter(|&i| keep(i)) {
            idx.extend(indices.range(indptr[i]..indptr[i + 1]).iter());
            val.extend_from_slice(&values[indptr[i]..indptr[i + 1]]);
            ptr.push(idx.len());
            labels.push(self.labels[i]);
            if let Some(s) = &mut weights {
                s.push(self.weight(i));
            }
            lines.push(self.lines[i]);
        }
        let x = store::csr((labels.len(), self.features()), ptr, idx, val)
            .unwrap_or_else(|e| unreachable!("rows of a checked matrix stay sorted and in range: {e}"));
        Dataset {
            weights,
            x,
            labels,
            lines,
            name: format!("{} ({part})", self.name),
            bytes: self.bytes,
            max_index_line: self.max_index_line,
        }
    }

    /// Every fact of the data, max ωᵢ‖xᵢ‖² included (a pass over it).
    pub fn facts(&self) -> DataFacts {
        DataFacts { max_row_norm_sq: Some(self.max_row_norm_sq()), ..self.counts() }
    }

    /// The facts that need no pass over the matrix: its sizes and the weights' mean and largest.
    /// [`Dataset::complete_facts`] adds what a plan reads besides.
    pub fn counts(&self) -> DataFacts {
        DataFacts {
            rows: self.rows(),
            features: self.features(),
            classes: 0,
            op_rows: 0,
            nnz: self.nnz(),
            max_row_norm_sq: None,
            mean_weight: self.mean_weight(),
            max_weight: self.weights.as_ref().map_or(1.0, |s| s.iter().copied().fold(0.0, f64::max)),
            gram_norm: None,
        }
    }
}

/// Bytes from a user's file as they may be shown in a message: printable text as is, anything
/// else (control bytes, invalid UTF-8) escaped, so that a binary file given as data cannot write
/// raw bytes to the terminal. At most `max` characters, then `…`.
pub fn escape_for_message(bytes: &[u8], max: usize) -> String {
    let pieces = bytes.utf8_chunks().flat_map(|c| c.valid().chars().map(Ok).chain(c.invalid().iter().map(|&b| Err(b))));
    let mut out = String::new();
    for (k, piece) in pieces.enumerate() {
        if k >= max {
            out.push('…');
            break;
        }
        match piece {
            Ok(c) if c == '\t' || !c.is_control() => out.push(c),
            Ok(c) if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            Ok(c) => out.extend(c.escape_unicode()),
            Err(b) => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// An I/O error's reason in plain words, for messages that already name the file: "no such
/// file", "permission denied", else the system's wording without its "(os error N)".
pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(k) => s[..k].to_string(),
                None => s,
            }
        }
    }
}
