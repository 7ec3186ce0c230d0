//! Seeded synthetic sparse data for benchmarks: rows with a fixed expected number of
//! non-zeros whose features follow a power law (a few very frequent features, a long tail),
//! as text data do. Rows are l2-normalised and labelled by a sparse linear model plus noise.

use super::Dataset;
use rand::{Rng, SeedableRng};

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

pub fn generate(spec: &SyntheticSpec) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(spec.seed);
    // Cumulative weights of the power law, for inverse-CDF sampling.
    let mut cdf = Vec::with_capacity(spec.features);
    let mut total = 0.0;
    for j in 0..spec.features {
        total += 1.0 / ((j + 1) as f64).powf(spec.exponent);
        cdf.push(total);
    }
    // A sparse "true" model: every 10th feature matters.
    let truth: Vec<f64> =
        (0..spec.features).map(|j| if j % 10 == 3 { rng.gen_range(-2.0..2.0) } else { 0.0 }).collect();

    let mut indptr = Vec::with_capacity(spec.rows + 1);
    indptr.push(0usize);
    let mut indices: Vec<u32> = Vec::with_capacity(spec.rows * spec.draws_per_row);
    let mut values: Vec<f64> = Vec::with_capacity(spec.rows * spec.draws_per_row);
    let mut labels = Vec::with_capacity(spec.rows);
    let mut row: Vec<u32> = Vec::with_capacity(spec.draws_per_row);
    for _ in 0..spec.rows {
        row.clear();
        for _ in 0..spec.draws_per_row {
            let u = rng.gen::<f64>() * total;
            row.push(cdf.partition_point(|&c| c < u).min(spec.features - 1) as u32);
        }
        row.sort_unstable();
        row.dedup();
        let start = values.len();
        for &j in &row {
            indices.push(j);
            values.push(rng.gen_range(0.5..1.5));
        }
        let norm = values[start..].iter().map(|v| v * v).sum::<f64>().sqrt();
        let mut margin = 0.0;
        for k in start..values.len() {
            values[k] /= norm;
            margin += values[k] * truth[indices[k] as usize];
        }
        labels.push(if margin + rng.gen_range(-0.3..0.3) > 0.0 { 1.0 } else { -1.0 });
        indptr.push(values.len());
    }
    let lines = (1..=spec.rows as u32).collect();
    let x = super::store::csr((spec.rows, spec.features), indptr, indices, values)
        .unwrap_or_else(|e| unreachable!("rows are built sorted and in range: {e}"));
    Dataset {
        x,
        labels,
        lines,
        name: format!("synthetic({}×{}, seed {})", spec.rows, spec.features, spec.seed),
        bytes: 0,
        max_index_line: 0,
    }
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
        for &j in a.x.indices() {
            freq[j as usize] += 1;
        }
        assert!(freq[0] > 20 * freq[500].max(1), "head {} vs tail {}", freq[0], freq[500]);
        assert!((a.max_row_norm_sq() - 1.0).abs() < 1e-12);
        let pos = a.labels.iter().filter(|y| **y > 0.0).count();
        assert!((200..1800).contains(&pos), "both classes present: {pos}");
    }
}
