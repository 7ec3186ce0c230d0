//! Binding a plan to its data: the facts a plan's parameters are computed from (rows, columns,
//! max‖xᵢ‖², λ_max(XᵀX)/m) and the parameter values themselves. Lowering leaves data-dependent
//! parameters symbolic (`ParamInit`); here they get numbers, once per run.

use crate::plan::{ParamInit, Plan, ScalarRole};

/// Facts about the data that a bound plan shows next to its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataFacts {
    pub rows: usize,
    pub features: usize,
    /// k, for multiclass labels (0 when the labels are not classes).
    pub classes: usize,
    /// p, the rows of a composite's operator B (0 without one).
    pub op_rows: usize,
    pub nnz: usize,
    /// max over rows of ωᵢ‖xᵢ‖² (ωᵢ the row's weight, 1 without weights).
    pub max_row_norm_sq: f64,
    /// Σᵢ ωᵢ/m: 1 without weights.
    pub mean_weight: f64,
    /// max ωᵢ: 1 without weights.
    pub max_weight: f64,
    /// λ_max(XᵀΩX)/m (Ω the rows' weights), by power iteration; computed only for plans that need it.
    pub gram_norm: Option<f64>,
}

impl DataFacts {
    /// The sizes of a plan's dimensions.
    pub fn dims(&self) -> crate::plan::Dims {
        crate::plan::Dims { rows: self.rows, features: self.features, classes: self.classes, op_rows: self.op_rows }
    }
}

impl ParamInit {
    /// The value once the data is known.
    pub fn value(&self, facts: Option<&DataFacts>) -> Option<f64> {
        match self {
            ParamInit::Value(v) => Some(*v),
            ParamInit::InverseMaxRowNormSq { scale } => {
                facts.map(|f| if f.max_row_norm_sq > 0.0 { 1.0 / (scale * f.max_row_norm_sq) } else { 1.0 })
            }
            ParamInit::InverseMaxRowNorm { scale } => {
                facts.map(|f| if f.max_row_norm_sq > 0.0 { 1.0 / (scale * f.max_row_norm_sq.sqrt()) } else { 1.0 })
            }
            ParamInit::PerRow { scale } => facts.map(|f| scale / f.rows.max(1) as f64),
            ParamInit::MeanWeight { scale } => facts.map(|f| scale * f.mean_weight),
            ParamInit::MaxWeight { scale } => facts.map(|f| scale * f.max_weight),
            // Rows that are all zero have no curvature: any positive L is safe.
            ParamInit::MaxRowNormSq { scale } => {
                facts.map(|f| if f.max_row_norm_sq > 0.0 { scale * f.max_row_norm_sq } else { 1.0 })
            }
            ParamInit::Tuned { default, .. } => Some(*default),
            // A zero matrix has no curvature: any positive L is safe.
            ParamInit::DualStep => {
                facts.and_then(|f| f.gram_norm.map(|g| if g > 0.0 { 1.0 / (g * f.rows.max(1) as f64) } else { 1.0 }))
            }
            ParamInit::GramNorm { scale } => {
                facts.and_then(|f| f.gram_norm).map(|g| if g > 0.0 { scale * g } else { 1.0 })
            }
            ParamInit::NormExponent => facts.map(|f| (2.0 * (f.features.max(1) as f64).ln()).max(2.0)),
        }
    }
}

/// The initial scalars: parameters bound to their values (data-dependent ones from `facts`),
/// state and temporaries at 0. The JIT folds the parameters into the code from this.
pub fn bound_scalars(plan: &Plan, facts: &DataFacts) -> Vec<f64> {
    plan.scalars
        .iter()
        .map(|s| match s.role {
            ScalarRole::Param => s.init.value(Some(facts)).unwrap_or(f64::NAN),
            ScalarRole::State => s.init.value(Some(facts)).unwrap_or(0.0),
            ScalarRole::Local => 0.0,
        })
        .collect()
}

impl super::Dataset {
    /// λ_max(XᵀΩX)/m by power iteration (the curvature of the mean squared margin, Ω the rows'
    /// weights), for the
    /// step of batch solvers. The estimate approaches λ_max from below; iterating until it
    /// changes by less than 1e-9 relative and adding 1% keeps the step safe in practice.
    pub fn gram_norm(&self, features: usize) -> f64 {
        let alone: Result<f64, std::convert::Infallible> =
            self.gram_norm_summed(features, self.rows(), &mut |_| Ok(()));
        alone.unwrap_or_else(|never| match never {})
    }

    /// As [`Self::gram_norm`], these rows being a share of `rows` split across processes: `sum`
    /// adds an array up over all of them (each iteration's Xᵀ(Xv) and ‖Xv‖², one reduction),
    /// so every process finds the same estimate.
    pub fn gram_norm_summed<E>(
        &self,
        features: usize,
        rows: usize,
        sum: &mut dyn FnMut(&mut [f64]) -> Result<(), E>,
    ) -> Result<f64, E> {
        let (indptr, indices, values) = self.csr();
        let m = self.rows();
        // A fixed, non-degenerate start: every direction, unevenly weighted.
        let mut v: Vec<f64> = (0..features).map(|j| 1.0 + ((j * 7919) % 13) as f64 / 13.0).collect();
        let mut u = vec![0.0; m];
        let mut lambda = 0.0;
        for _ in 0..500 {
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm == 0.0 {
                return Ok(0.0);
            }
            v.iter_mut().for_each(|x| *x /= norm);
            for i in 0..m {
                u[i] = (indptr[i]..indptr[i + 1])
                    .filter(|&k| (indices[k] as usize) < features)
                    .map(|k| values[k] * v[indices[k] as usize])
                    .sum();
            }
            let mut next = vec![0.0; features + 1];
            for i in 0..m {
                for k in indptr[i]..indptr[i + 1] {
                    if let Some(x) = next[..features].get_mut(indices[k] as usize) {
                        *x += values[k] * self.weight(i) * u[i];
                    }
                }
            }
            next[features] = u.iter().enumerate().map(|(i, x)| self.weight(i) * x * x).sum(); // vᵀXᵀΩXv, ‖v‖ = 1
            sum(&mut next)?;
            let estimate = next.pop().unwrap_or(0.0);
            v = next;
            if (estimate - lambda).abs() <= 1e-9 * estimate {
                lambda = estimate;
                break;
            }
            lambda = estimate;
        }
        Ok(1.01 * lambda / rows.max(1) as f64)
    }

    /// The facts `plan`'s parameters are bound from, with the weights `features` long; the
    /// power iteration runs only for plans that need it.
    pub fn facts_for(&self, plan: &crate::plan::Plan, features: usize) -> DataFacts {
        self.complete_facts(plan, DataFacts { features, ..self.facts() })
    }

    /// `facts` (already read off the data) with what `plan` needs besides: λ_max(XᵀX)/m for a
    /// step from the curvature of the whole matrix.
    pub fn complete_facts(&self, plan: &crate::plan::Plan, facts: DataFacts) -> DataFacts {
        DataFacts { gram_norm: needs_gram(plan).then(|| self.gram_norm(facts.features)), ..facts }
    }
}

/// Whether a parameter of `plan` is bound from λ_max(XᵀX) (a power iteration over the data).
pub fn needs_gram(plan: &crate::plan::Plan) -> bool {
    plan.scalars
        .iter()
        .any(|s| matches!(s.init, crate::plan::ParamInit::GramNorm { .. } | crate::plan::ParamInit::DualStep))
}
