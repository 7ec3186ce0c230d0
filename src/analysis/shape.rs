//! The defaults a data shape settles (docs/algorithms.md §9): the solver for few features, for
//! wide data and under a strong ridge, against the one the analysis chose from the model alone,
//! picked once the data is bound ([`ShapeRule::choose`]).

use super::{Choice, Model, Shape, SolverKind};

/// Features at most which a model counts as having few: the certificate's Newton refinement
/// holds a dense Hessian over up to this many coordinates ([`crate::solvers::DENSE_NEWTON_MAX`]),
/// so at its first check SCD solves the whole ℓ2-logistic problem; and a primal Newton system of
/// this size is cheaper to work on than a dual of one variable per row when the rows outnumber it.
pub const FEW_FEATURES: usize = crate::solvers::DENSE_NEWTON_MAX;

/// The defaults for few features (d ≤ [`FEW_FEATURES`]) and for wide data (more features than
/// rows, text), where they differ from the one the analysis chose.
#[derive(Clone, Debug)]
pub struct ShapeRule {
    pub few_features: Option<Choice>,
    pub wide: Option<Choice>,
    /// Dual CD whatever the shape once the ridge is strong ([`STRONG_RIDGE`]), with λ/c of
    /// F = (c/m)·Σᵢ ℓ + (λ/2)‖w‖², which LIBLINEAR's C = c/(λm) is made of; with a free
    /// intercept, only beyond few features (see `free_intercept`).
    pub strong: Option<(Choice, f64)>,
    /// A free b, which dual CD keeps Σᵢ αᵢyᵢ = 0 for by an augmented Lagrangian and SCD's first
    /// check takes as one more Newton coordinate: few features keep SCD under a strong ridge.
    pub free_intercept: bool,
    /// The few-features choice factors a dense d × d system at each of its many steps (`alm`):
    /// it is taken only where that factor costs no more than the step's passes (`factor_pays`).
    pub factored: bool,
}

/// A dense factor's d³/3 flops run about this many times as fast as a pass's scattered
/// multiply-adds (blocked and vectorized; the figure `exec::linalg` weighs tron's dense step by).
const FACTOR_SPEEDUP: f64 = 8.0;

/// Whether a factor of d × d costs no more than two passes over X's `entries` (a Newton step of
/// `alm` makes two: Xᵀu and X·s). w8a (d = 300, 580k entries) 1.1M against 2.3M; a set of
/// 1,000 features and a million entries would spend 42M a step factoring against 4M.
fn factor_pays(features: usize, entries: usize) -> bool {
    let d = features as f64;
    d * d * d / 3.0 / FACTOR_SPEEDUP <= 4.0 * entries as f64
}

/// LIBLINEAR's C times the mean ‖xᵢ‖² at most which the ridge counts as strong. Dual CD's
/// system is Q + diag(1/(2C)) with Qᵢᵢ = ‖xᵢ‖² for the squared hinge: from about here the
/// diagonal holds it and a few epochs solve it. Squared hinge, `--tol 1e-4`, solve seconds of
/// tron / dcd: a9a (mean ‖xᵢ‖² = 13.9) at C = 0.01 0.027 / 0.014, C = 0.03 0.053 / 0.020, C = 0.1
/// 0.078 / 0.032, C = 1 0.049 / 0.22; w8a (11.6) at C = 0.03 0.036 / 0.021, C = 0.1 0.036 /
/// 0.042. Logistic at C = 0.01 (SCD, tron, dcd): a9a 0.037, 0.024, 0.027; w8a 0.057, 0.038,
/// 0.039; at C = 1 SCD's 0.044 and 0.070 win.
pub const STRONG_RIDGE: f64 = 0.5;

impl ShapeRule {
    /// The choice for data of `rows` × `features` with `entries` non-zeros: the rule's for few
    /// features, for wide data, else `otherwise`, its reason prefixed by the shape that decided.
    /// `mean_row_norm_sq` gives the mean ‖xᵢ‖² over the rows, asked only by a rule with a strong
    /// ridge's branch.
    pub fn choose(
        &self,
        (features, rows, entries): (usize, usize, usize),
        mean_row_norm_sq: impl FnOnce() -> f64,
        otherwise: &Choice,
    ) -> Choice {
        let few = features <= FEW_FEATURES && (!self.factored || factor_pays(features, entries));
        let mean = if self.strong.is_some() { mean_row_norm_sq() } else { 0.0 };
        let strength = |ridge: f64| mean / (ridge * rows.max(1) as f64);
        let (shape, choice) = match (&self.few_features, &self.wide, &self.strong) {
            (_, _, Some((c, ridge)))
                if strength(*ridge) <= STRONG_RIDGE
                    && (!self.free_intercept || !few || self.few_features.is_none()) =>
            {
                (format!("C·mean ‖xᵢ‖² = {:.3} ≤ {STRONG_RIDGE}", strength(*ridge)), c)
            }
            (Some(c), _, _) if few && self.factored => {
                (format!("d = {features} ≤ {FEW_FEATURES}, d³/3 within a pass's cost of {entries} non-zeros"), c)
            }
            (Some(c), _, _) if few => (format!("d = {features} ≤ {FEW_FEATURES}"), c),
            (_, Some(c), _) if features > rows => (format!("d = {features} > m = {rows}"), c),
            _ if features <= FEW_FEATURES && self.few_features.is_some() => {
                (format!("d = {features}, a factor of d³/3 beyond a pass's cost of {entries} non-zeros"), otherwise)
            }
            _ => (format!("d = {features} > {FEW_FEATURES}, m = {rows}"), otherwise),
        };
        Choice { solver: choice.solver, reason: format!("{shape}: {}", choice.reason) }
    }
}

/// The solver a default would take for few features, where the data's shape changes it:
/// `tron`'s ℓ2-logistic or least squares and `dcd`'s squared hinge go to SCD (its check's dense
/// Newton refinement solves them, on the squared hinge's generalized Hessian: a9a and w8a in one
/// epoch; logistic 2.5× faster than tron; the squared hinge, with or without b, 2–4× on a9a at
/// C = 0.1–10 and 1.0–1.5× on w8a; on debian-desc, d = 181k, dcd's 0.58 s beats tron's 1.2 s).
///
/// With a strong ridge (`ridge` = λ/c, see [`STRONG_RIDGE`]) both go to dual CD, but with a
/// free intercept only beyond few features, and logistic with a free intercept to `tron`.
pub(super) fn shape_rule(model: &Model, chosen: &Choice, ridge: Option<f64>) -> Option<ShapeRule> {
    use crate::stdlib::KnownLoss;
    let known = model.loss.def.known();
    let free_intercept = model.intercept.is_some() && model.intercept_l2.is_none();
    let scd = Choice {
        solver: SolverKind::Scd,
        reason: "few features: SCD, whose first check refines the dual point by Newton steps on a dense Hessian over every feature, which solves the whole problem".into(),
    };
    let vector = matches!(model.shape, Shape::Vec(_));
    let strong = |what: &str| {
        ridge.map(|r| {
            let reason = format!("a strong ridge: dual coordinate descent (LIBLINEAR's {what}), whose system the ridge's diagonal holds, in a few epochs of O(nnz)");
            (Choice { solver: SolverKind::Dcd, reason }, r)
        })
    };
    match (chosen.solver, known) {
        (SolverKind::Tron, Some(KnownLoss::Logistic)) if vector => {
            // A free intercept costs dual CD an augmented Lagrangian on Σ αᵢyᵢ = 0: worth it on
            // text at C = 1 (debian-desc 0.76 s against tron's 1.84 s), not once the ridge is
            // strong (C = 0.01: 0.74 s against 0.33 s), where tron keeps it.
            let tron_with_b = Choice {
                solver: SolverKind::Tron,
                reason: "a strong ridge with a free intercept: truncated Newton, b one more coordinate, in a few Newton steps (dual CD would add an augmented Lagrangian on Σ αᵢyᵢ = 0)".into(),
            };
            Some(ShapeRule {
                // SCD fits no penalised intercept.
                few_features: model.intercept_l2.is_none().then_some(scd),
                wide: Some(Choice {
                    solver: SolverKind::Dcd,
                    reason: "more features than rows (text): dual coordinate descent for logistic (LIBLINEAR's -s 7), a 1-D Newton step per αᵢ at O(nnz of its row); on debian-desc 0.34 s against tron's 0.59 s".into(),
                }),
                strong: match free_intercept {
                    true => ridge.map(|r| (tron_with_b, r)),
                    false => strong("-s 7"),
                },
                free_intercept,
                factored: false,
            })
        }
        (SolverKind::Tron, Some(KnownLoss::Squared)) if vector && model.intercept_l2.is_none() => {
            Some(ShapeRule { few_features: Some(scd), wide: None, strong: None, free_intercept, factored: false })
        }
        (SolverKind::Dcd, Some(KnownLoss::SquaredHinge)) => Some(ShapeRule {
            // SCD's first check solves the primal by Newton steps on the generalized Hessian; a
            // penalised intercept, which SCD does not fit, takes truncated Newton.
            few_features: Some(match model.intercept_l2 {
                None => scd,
                Some(_) => Choice {
                    solver: SolverKind::Tron,
                    reason: "few features against the rows: the primal's d unknowns by truncated Newton (LIBLINEAR's -s 2) rather than a dual of one variable per row".into(),
                },
            }),
            wide: None,
            strong: strong("-s 1"),
            free_intercept,
            factored: false,
        }),
        (SolverKind::Dcd, Some(KnownLoss::Hinge)) if vector => Some(ShapeRule {
            few_features: Some(Choice {
                solver: SolverKind::Alm,
                reason: "few features: the augmented Lagrangian method, whose Newton steps on a dense Hessian take b as one more coordinate and the rows at the hinge's kink together, where dual CD crawls".into(),
            }),
            wide: None,
            // Under a strong ridge dual CD's few epochs win, with or without b (C = 0.01, solve
            // seconds of alm / dcd without b and with it: a9a 0.039 / 0.017, 0.046 / 0.029; w8a
            // 0.079 / 0.026, 0.103 / 0.061).
            strong: strong("-s 3"),
            free_intercept: false,
            factored: true,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(solver: SolverKind) -> Choice {
        Choice { solver, reason: String::new() }
    }

    /// A rule whose few-features choice factors d × d each step takes it only where the factor
    /// costs no more than two passes over the non-zeros, and never under a strong ridge: w8a's
    /// shape takes it, a thousand features over a million non-zeros do not, nor C·mean ‖xᵢ‖² of
    /// 0.02.
    #[test]
    fn a_factored_choice_needs_a_factor_within_two_passes() {
        let rule = ShapeRule {
            few_features: Some(choice(SolverKind::Alm)),
            wide: None,
            strong: Some((choice(SolverKind::Dcd), 1e-3)),
            free_intercept: false,
            factored: true,
        };
        let dcd = choice(SolverKind::Dcd);
        // C·mean ‖xᵢ‖² = mean/(1e-3·m): 20 here, 0.02 below.
        let weak = || 1e3;
        assert_eq!(rule.choose((300, 49_749, 579_586), weak, &dcd).solver, SolverKind::Alm);
        assert_eq!(rule.choose((1000, 10_000, 1_000_000), weak, &dcd).solver, SolverKind::Dcd);
        assert_eq!(rule.choose((300, 49_749, 579_586), || 1.0, &dcd).solver, SolverKind::Dcd);
        assert!(factor_pays(300, 580_000) && !factor_pays(300, 200_000));
    }
}
