//! A weighted loss (`E[s·loss(...)]`): which solvers take the rows' weights, and the choice
//! when the one preferred without weights does not. The default is never a solver that would
//! ignore them; a forced one that cannot take them is refused with the list of those that can.

use super::{ridge, Choice, ShapeRule};
use crate::check::Model;
use crate::solvers::SolverKind;

/// The solvers that take the rows' weights, as the diagnostics list them; a test holds the list
/// to the registry.
pub(super) const ROW_WEIGHTS: &str = "fobos, truncated, adagrad, smm, scd, smidas, proxgrad, tron, dcd, alm and pdhg";

/// The choice for a weighted model: `chosen` when its solver takes weights, else (a default, not
/// forced) the one that does for this model: tron for ½‖·‖² alone, proxgrad for another smooth
/// loss, FOBOS for a nonsmooth one. Err says why none can.
pub(super) fn steer(
    model: &Model,
    chosen: Choice,
    forced: bool,
    is_matrix: bool,
    convex: bool,
) -> Result<Choice, String> {
    if is_matrix && !matches!(chosen.solver, SolverKind::Tron | SolverKind::Proxgrad | SolverKind::Fobos) {
        return Err(format!(
            "`{}` does not take the rows' weights on a multiclass W in this build",
            chosen.solver.name()
        ));
    }
    if chosen.solver.can().row_weights {
        return Ok(chosen);
    }
    if forced || !convex {
        return Err(format!(
            "`{}` does not take the rows' weights for `{}` in this build ({ROW_WEIGHTS} do)",
            chosen.solver.name(),
            model.loss.def.name
        ));
    }
    let why =
        |to: &str| format!("the rows' weights: {to} takes them, `{}` does not in this build", chosen.solver.name());
    Ok(match ridge::default_choice(model) {
        Some(tron) => Choice { solver: tron.solver, reason: format!("{}; {}", why("tron"), tron.reason) },
        None if model.loss.def.smooth.is_some() => Choice {
            solver: SolverKind::Proxgrad,
            reason: format!("{}; batch proximal gradient with FISTA, certified each iteration", why("proxgrad")),
        },
        None => Choice {
            solver: SolverKind::Fobos,
            reason: format!("{}; `{}` is not smooth: FOBOS needs only subgradients", why("fobos"), model.loss.def.name),
        },
    })
}

/// `rule` with the choices a weighted model cannot take left out (None when none is left).
pub(super) fn shape_rule(model: &Model, rule: ShapeRule) -> Option<ShapeRule> {
    if !model.loss.weighted {
        return Some(rule);
    }
    let takes = |c: &Choice| c.solver.can().row_weights;
    let rule = ShapeRule {
        few_features: rule.few_features.filter(takes),
        wide: rule.wide.filter(takes),
        strong: rule.strong.filter(|(c, _)| takes(c)),
        free_intercept: rule.free_intercept,
        factored: rule.factored,
    };
    (rule.few_features.is_some() || rule.wide.is_some() || rule.strong.is_some()).then_some(rule)
}
