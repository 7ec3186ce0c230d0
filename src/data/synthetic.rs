//! Seeded synthetic sparse data for benchmarks: rows with a fixed expected number of
//! non-zeros whose features follow a power law (a few very frequent features, a long tail),
//! as text data do. Rows are l2-normalised and labelled by a sparse linear model plus noise.
//!
//! [`Rows`] draws the rows one at a time from a single seeded stream, so a file of many GB can
//! be written ([`write_libsvm`], the `optc-synth` binary) in O(features) memory; [`generate`]
//! collects the same rows into a [`Dataset`], so a file written from a spec and the in-memory
//! set of that spec are the same data.

use super::Dataset;
use rand::{Rng, SeedableRng};
use std::io::{self, Write};

#[derive(Clone, Copy, Debug)]
pub struct SyntheticSpec {
    pub rows: usize,
    pub features: usize,
    /// Draws per row; repeated features merge, so a row has slightly fewer non-zeros.
    pub draws_per_row: usize,
    /// P(feature j) ∝ 1/(j + 1)^exponent.
    pub exponent: f64,
    pub seed: u64,
}

impl Default for SyntheticSpec {
    /// The benchmark set of issue #3: 1M rows × 100k features, ~80 non-zeros per row.
    fn default() -> Self {
        SyntheticSpec { rows: 1_000_000, features: 100_000, draws_per_row: 120, exponent: 1.1, seed: 20261121 }
    }
}

impl SyntheticSpec {
    /// Why the spec cannot make data, if it cannot: a row needs a draw (else its norm is 0)
    /// and a feature to draw, and the power law a finite exponent.
    pub fn invalid(&self) -> Option<String> {
        if self.rows == 0 {
            Some("rows must be at least 1".into())
        } else if self.features == 0 || self.features > u32::MAX as usize {
            Some(format!("features must be between 1 and {}", u32::MAX))
        } else if self.draws_per_row == 0 {
            Some("draws per row must be at least 1".into())
        } else if !(self.exponent.is_finite() && self.exponent >= 0.0) {
            Some(format!("the exponent must be a finite number ≥ 0, not {}", self.exponent))
        } else {
            None
        }
    }
}

/// The rows of a spec, drawn in order. The random stream is consumed exactly as the original
/// in-memory generator consumed it (the truth first, then per row: the draws, the values, the
/// noise), so `generate` still makes the sets earlier benchmark numbers were measured on.
pub struct Rows {
    rng: rand_chacha::ChaCha8Rng,
    /// Cumulative weights of the power law, for inverse-CDF sampling.
    cdf: Vec<f64>,
    total: f64,
    /// A sparse "true" model: every 10th feature matters.
    truth: Vec<f64>,
    draws: usize,
    left: usize,
    indices: Vec<u32>,
    values: Vec<f64>,
}

impl Rows {
    pub fn new(spec: &SyntheticSpec) -> Rows {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(spec.seed);
        let mut cdf = Vec::with_capacity(spec.features);
        let mut total = 0.0;
        for j in 0..spec.features {
            total += 1.0 / ((j + 1) as f64).powf(spec.exponent);
            cdf.push(total);
        }
        let truth: Vec<f64> =
            (0..spec.features).map(|j| if j % 10 == 3 { rng.gen_range(-2.0..2.0) } else { 0.0 }).collect();
        Rows {
            rng,
            cdf,
            total,
            truth,
            draws: spec.draws_per_row,
            left: spec.rows,
            indices: Vec::with_capacity(spec.draws_per_row),
            values: Vec::with_capacity(spec.draws_per_row),
        }
    }

    /// The next row as (label ±1, 0-based increasing feature indices, values), or None after
    /// the last. The slices are reused by the next call.
    pub fn next_row(&mut self) -> Option<(f64, &[u32], &[f64])> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let last = self.cdf.len() - 1;
        self.indices.clear();
        for _ in 0..self.draws {
            let u = self.rng.gen::<f64>() * self.total;
            self.indices.push(self.cdf.partition_point(|&c| c < u).min(last) as u32);
        }
        self.indices.sort_unstable();
        self.indices.dedup();
        self.values.clear();
        for _ in 0..self.indices.len() {
            self.values.push(self.rng.gen_range(0.5..1.5));
        }
        let norm = self.values.iter().map(|v| v * v).sum::<f64>().sqrt();
        let mut margin = 0.0;
        for (v, &j) in self.values.iter_mut().zip(&self.indices) {
            *v /= norm;
            margin += *v * self.truth[j as usize];
        }
        let label = if margin + self.rng.gen_range(-0.3..0.3) > 0.0 { 1.0 } else { -1.0 };
        Some((label, &self.indices, &self.values))
    }
}

pub fn generate(spec: &SyntheticSpec) -> Dataset {
    let mut indptr = Vec::with_capacity(spec.rows + 1);
    indptr.push(0usize);
    let mut indices: Vec<u32> = Vec::with_capacity(spec.rows * spec.draws_per_row);
    let mut values: Vec<f64> = Vec::with_capacity(spec.rows * spec.draws_per_row);
    let mut labels = Vec::with_capacity(spec.rows);
    let mut rows = Rows::new(spec);
    while let Some((label, idx, val)) = rows.next_row() {
        indices.extend_from_slice(idx);
        values.extend_from_slice(val);
        labels.push(label);
        indptr.push(values.len());
    }
    let lines = (1..=spec.rows as u32).collect();
    let x = super::store::csr((spec.rows, spec.features), indptr, indices, values)
        .unwrap_or_else(|e| unreachable!("rows are built sorted and in range: {e}"));
    Dataset {
        weights: None,
        x,
        labels,
        lines,
        name: format!("synthetic({}×{}, seed {})", spec.rows, spec.features, spec.seed),
        bytes: 0,
        max_index_line: 0,
    }
}

/// What [`write_libsvm`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub rows: u64,
    pub nnz: u64,
    pub bytes: u64,
}

/// Writes the spec's rows as LIBSVM text (1-based indices, labels `1`/`-1`), one row at a
/// time. Values are printed in the shortest form that reads back to the same f64, so the
/// file parses to exactly the set `generate` builds (its column count is the largest index
/// drawn, which may be below `features`).
pub fn write_libsvm(spec: &SyntheticSpec, out: &mut impl Write) -> io::Result<Written> {
    let mut rows = Rows::new(spec);
    let mut line: Vec<u8> = Vec::with_capacity(spec.draws_per_row * 24 + 8);
    let mut done = Written::default();
    while let Some((label, idx, val)) = rows.next_row() {
        line.clear();
        line.extend_from_slice(if label > 0.0 { b"1" } else { b"-1" });
        for (&j, &v) in idx.iter().zip(val) {
            write!(line, " {}:{}", j as u64 + 1, v)?;
        }
        line.push(b'\n');
        out.write_all(&line)?;
        done.rows += 1;
        done.nnz += idx.len() as u64;
        done.bytes += line.len() as u64;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sets_are_seeded_and_power_law() {
        let spec = SyntheticSpec { rows: 2000, features: 1000, draws_per_row: 40, exponent: 1.1, seed: 3 };
        let a = generate(&spec);
        let b = generate(&spec);
        assert_eq!(a.x, b.x, "same seed, same data");
        assert_eq!(a.rows(), 2000);
        let mean = a.nnz() as f64 / a.rows() as f64;
        assert!((25.0..=40.0).contains(&mean), "mean nnz per row {mean}");
        let mut freq = vec![0usize; 1000];
        for j in a.x.indices() {
            freq[j as usize] += 1;
        }
        assert!(freq[0] > 20 * freq[500].max(1), "head {} vs tail {}", freq[0], freq[500]);
        assert!((a.max_row_norm_sq() - 1.0).abs() < 1e-12);
        let pos = a.labels.iter().filter(|y| **y > 0.0).count();
        assert!((200..1800).contains(&pos), "both classes present: {pos}");
    }

    #[test]
    fn written_text_reads_back_to_the_generated_set() {
        let spec = SyntheticSpec { rows: 500, features: 300, draws_per_row: 25, exponent: 0.8, seed: 11 };
        let mut text = vec![];
        let written = write_libsvm(&spec, &mut text).expect("writes to memory");
        let mem = generate(&spec);
        let read = crate::data::read_libsvm_from(text.as_slice(), "synthetic.svm").expect("optc reads what it wrote");
        assert_eq!(written.rows as usize, read.rows());
        assert_eq!(written.nnz as usize, read.nnz());
        assert_eq!(written.bytes as usize, text.len());
        assert_eq!(read.labels, mem.labels);
        let (a, b) = (read.csr(), mem.csr());
        assert_eq!(a.0, b.0, "row pointers");
        assert_eq!(a.1, b.1, "feature indices");
        assert!(a.2.iter().zip(b.2).all(|(p, q)| p.to_bits() == q.to_bits()), "values bit for bit");
        // The file only knows the largest index drawn; with 500 × 25 draws over 300 features
        // the last one is drawn, so the shapes agree too.
        assert_eq!(read.features(), mem.features());
    }

    #[test]
    fn rows_stream_without_the_whole_set() {
        // The streamed rows are the generated rows, one at a time.
        let spec = SyntheticSpec { rows: 50, features: 80, draws_per_row: 10, exponent: 1.1, seed: 5 };
        let mem = generate(&spec);
        let (ptr, idx, val) = mem.csr();
        let mut rows = Rows::new(&spec);
        let mut i = 0;
        while let Some((label, j, v)) = rows.next_row() {
            assert_eq!(label, mem.labels[i]);
            assert_eq!(j, idx.range(ptr[i]..ptr[i + 1]).to_vec());
            assert_eq!(v, &val[ptr[i]..ptr[i + 1]]);
            i += 1;
        }
        assert_eq!(i, 50);
    }

    #[test]
    fn specs_that_cannot_make_data_say_why() {
        let ok = SyntheticSpec { rows: 1, features: 1, draws_per_row: 1, exponent: 0.0, seed: 0 };
        assert_eq!(ok.invalid(), None);
        assert!(SyntheticSpec { draws_per_row: 0, ..ok }.invalid().is_some_and(|m| m.contains("draws")));
        assert!(SyntheticSpec { rows: 0, ..ok }.invalid().is_some_and(|m| m.contains("rows")));
        assert!(SyntheticSpec { features: 0, ..ok }.invalid().is_some_and(|m| m.contains("features")));
        assert!(SyntheticSpec { exponent: f64::NAN, ..ok }.invalid().is_some_and(|m| m.contains("exponent")));
    }
}
