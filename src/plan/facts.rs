//! The facts of the data a plan's parameters are bound from (rows, columns, max‖xᵢ‖²,
//! λ_max(XᵀX)/m) and the parameter values themselves. Lowering leaves data-dependent parameters
//! symbolic (`ParamInit`); binding gives them numbers, once per run. The data layer reads the
//! facts off a data set; they live here, below it, because a plan's text shows them.

use super::{ParamInit, Plan, ScalarRole};

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
    /// max over rows of ωᵢ‖xᵢ‖² (ωᵢ the row's weight, 1 without weights); computed only for
    /// plans whose parameters are bound from it (a pass over the data).
    pub max_row_norm_sq: Option<f64>,
    /// Σᵢ ωᵢ/m: 1 without weights.
    pub mean_weight: f64,
    /// max ωᵢ: 1 without weights.
    pub max_weight: f64,
    /// λ_max(XᵀΩX)/m (Ω the rows' weights), by power iteration; computed only for plans that need it.
    pub gram_norm: Option<f64>,
}

impl DataFacts {
    /// The sizes of a plan's dimensions.
    pub fn dims(&self) -> super::Dims {
        super::Dims { rows: self.rows, features: self.features, classes: self.classes, op_rows: self.op_rows }
    }
}

impl ParamInit {
    /// The value once the data is known.
    pub fn value(&self, facts: Option<&DataFacts>) -> Option<f64> {
        match self {
            ParamInit::Value(v) => Some(*v),
            ParamInit::InverseMaxRowNormSq { scale } => {
                row_norm(facts).map(|n| if n > 0.0 { 1.0 / (scale * n) } else { 1.0 })
            }
            ParamInit::InverseMaxRowNorm { scale } => {
                row_norm(facts).map(|n| if n > 0.0 { 1.0 / (scale * n.sqrt()) } else { 1.0 })
            }
            ParamInit::PerRow { scale } => facts.map(|f| scale / f.rows.max(1) as f64),
            ParamInit::MeanWeight { scale } => facts.map(|f| scale * f.mean_weight),
            ParamInit::MaxWeight { scale } => facts.map(|f| scale * f.max_weight),
            // Rows that are all zero have no curvature: any positive L is safe.
            ParamInit::MaxRowNormSq { scale } => row_norm(facts).map(|n| if n > 0.0 { scale * n } else { 1.0 }),
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

/// max ωᵢ‖xᵢ‖², where the facts have it.
pub(super) fn row_norm(facts: Option<&DataFacts>) -> Option<f64> {
    facts.and_then(|f| f.max_row_norm_sq)
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

/// Whether a parameter of `plan` is bound from max ωᵢ‖xᵢ‖² (a pass over the data).
pub fn needs_row_norms(plan: &Plan) -> bool {
    plan.scalars.iter().any(|s| {
        matches!(
            s.init,
            ParamInit::InverseMaxRowNormSq { .. }
                | ParamInit::InverseMaxRowNorm { .. }
                | ParamInit::MaxRowNormSq { .. }
        )
    })
}

/// Whether a parameter of `plan` is bound from λ_max(XᵀX) (a power iteration over the data).
pub fn needs_gram(plan: &Plan) -> bool {
    plan.scalars.iter().any(|s| matches!(s.init, ParamInit::GramNorm { .. } | ParamInit::DualStep))
}
