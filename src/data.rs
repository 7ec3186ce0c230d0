//! Data: LIBSVM/svmlight text (plain or compressed) → CSR matrix + labels, and the mapping of
//! raw labels to what a loss reads (±1, class indices, reals).

mod columns;
mod labels;
mod libsvm;
mod progress;
pub mod structure_files;
pub mod synthetic;

pub use columns::Columns;
pub use labels::{LabelError, LabelMap};
pub use libsvm::{display_name, open_text, read_libsvm, read_libsvm_from, read_libsvm_shown, sniff, DataError};

/// The rows of a data file: features as CSR (0-based feature indices) and the raw labels.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// m × d, d = the largest feature index seen (indices are 1-based in the file).
    pub x: sprs::CsMatI<f64, u32, usize>,
    pub labels: Vec<f64>,
    /// The file line of each row, for messages about a label.
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
    pub fn features(&self) -> usize {
        self.x.cols()
    }
    pub fn nnz(&self) -> usize {
        self.x.nnz()
    }

    /// max over rows of ‖xᵢ‖², the curvature scale of the worst example.
    pub fn max_row_norm_sq(&self) -> f64 {
        let (ptr, data) = (self.x.indptr(), self.x.data());
        let ptr = ptr.into_raw_storage();
        (0..self.rows()).map(|i| data[ptr[i]..ptr[i + 1]].iter().map(|v| v * v).sum::<f64>()).fold(0.0, f64::max)
    }

    /// The raw CSR arrays (what the plan's back ends read).
    pub fn csr(&self) -> (&[usize], &[u32], &[f64]) {
        (self.x.indptr().into_raw_storage(), self.x.indices(), self.x.data())
    }

    /// The rows as a plan reads them, with `labels` already mapped and the weights of length
    /// `features` (≥ the columns of the data for training).
    pub fn view<'a>(&'a self, labels: &'a [f64], features: usize) -> crate::exec::DataView<'a> {
        let (indptr, indices, values) = self.csr();
        // sprs checked every column index against cols() when the matrix was built.
        crate::exec::DataView { indptr, indices, values, labels, features, columns: self.x.cols(), csc: None }
    }

    /// λ_max(XᵀX)/m by power iteration (the curvature of the mean squared margin), for the
    /// step of batch solvers. The estimate approaches λ_max from below; iterating until it
    /// changes by less than 1e-9 relative and adding 1% keeps the step safe in practice.
    pub fn gram_norm(&self, features: usize) -> f64 {
        let (indptr, indices, values) = self.csr();
        let m = self.rows();
        // A fixed, non-degenerate start: every direction, unevenly weighted.
        let mut v: Vec<f64> = (0..features).map(|j| 1.0 + ((j * 7919) % 13) as f64 / 13.0).collect();
        let mut u = vec![0.0; m];
        let mut lambda = 0.0;
        for _ in 0..500 {
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm == 0.0 {
                return 0.0;
            }
            v.iter_mut().for_each(|x| *x /= norm);
            for i in 0..m {
                u[i] = (indptr[i]..indptr[i + 1])
                    .filter(|&k| (indices[k] as usize) < features)
                    .map(|k| values[k] * v[indices[k] as usize])
                    .sum();
            }
            let mut next = vec![0.0; features];
            for i in 0..m {
                for k in indptr[i]..indptr[i + 1] {
                    if let Some(x) = next.get_mut(indices[k] as usize) {
                        *x += values[k] * u[i];
                    }
                }
            }
            let estimate: f64 = u.iter().map(|x| x * x).sum(); // vᵀXᵀXv with ‖v‖ = 1
            v = next;
            if (estimate - lambda).abs() <= 1e-9 * estimate {
                lambda = estimate;
                break;
            }
            lambda = estimate;
        }
        1.01 * lambda / m.max(1) as f64
    }

    /// The facts `plan`'s parameters are bound from, with the weights `features` long; the
    /// power iteration runs only for plans that need it.
    pub fn facts_for(&self, plan: &crate::plan::Plan, features: usize) -> crate::plan::dump::DataFacts {
        let needs_gram = plan.scalars.iter().any(|s| matches!(s.init, crate::plan::ParamInit::GramNorm { .. }));
        crate::plan::dump::DataFacts {
            features,
            gram_norm: needs_gram.then(|| self.gram_norm(features)),
            ..self.facts()
        }
    }

    pub fn facts(&self) -> crate::plan::dump::DataFacts {
        crate::plan::dump::DataFacts {
            rows: self.rows(),
            features: self.features(),
            nnz: self.nnz(),
            max_row_norm_sq: self.max_row_norm_sq(),
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
