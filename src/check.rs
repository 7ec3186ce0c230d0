//! Stage 2: AST → checked [`Model`]. Resolves names (with ASCII aliases of Greek names), checks
//! shapes and label kinds, evaluates parameters, and splits the objective into one loss term,
//! scaled regularizers and constraints. Collects every problem it can instead of stopping at
//! the first. No IO: `load("...")` paths are recorded, not read.
//!
//! One job per module: `model` (what checking produces), `error` (what it finds wrong, as
//! kinds; worded only by `error::render`), `names` (aliases and parameters), `declarations`,
//! `objective` (the split into terms), `loss`, `regularizer`, `constraint` and `solver`; this
//! file holds the checker's state and the order in which a program is walked.

mod constraint;
mod declarations;
mod dictionary;
mod error;
mod loss;
mod model;
mod names;
mod objective;
mod regularizer;
mod solver;
#[cfg(test)]
mod tests;

pub use dictionary::is_dictionary;
pub use error::{CheckError, Column, Names};
pub use model::*;
pub use names::{canonical, declared_params, resolve_param, spellings, suggest_param};

use crate::diagnostics::Problem;
use crate::source::Span;
use crate::stdlib::{expr_text, to_sym, LabelKind, Library, LossDef, ParamType};
use crate::symbolic::{self, Sym};
use crate::syntax::ast::{self, BinOp, ExprKind};
use names::find_name;
use objective::TermContext;

pub(super) struct Checker<'a> {
    pub(super) lib: &'a Library,
    pub(super) errors: Vec<CheckError>,
    pub(super) params: Vec<Param>,
    /// Names the model declared but whose declaration failed (already reported).
    pub(super) failed: Vec<String>,
}

/// Checks a parsed program against the library. `overrides` are `--set` values, already
/// resolved to declared parameter names.
pub fn check(program: &ast::Program, lib: &Library, overrides: &[(String, f64)]) -> Result<Model, Vec<Problem>> {
    check_errors(program, lib, overrides).map_err(|errors| errors.iter().map(CheckError::to_problem).collect())
}

/// A dictionary-learning model ([`is_dictionary`]) checked against the library.
pub fn check_dictionary(
    program: &ast::Program,
    lib: &Library,
    overrides: &[(String, f64)],
) -> Result<Dictionary, Vec<Problem>> {
    check_dictionary_errors(program, lib, overrides)
        .map_err(|errors| errors.iter().map(CheckError::to_problem).collect())
}

/// [`check_dictionary`], with the errors as kinds.
pub fn check_dictionary_errors(
    program: &ast::Program,
    lib: &Library,
    overrides: &[(String, f64)],
) -> Result<Dictionary, Vec<CheckError>> {
    let mut lib = lib.clone();
    let mut errors: Vec<CheckError> = lib.declare(program).into_iter().map(CheckError::Declaration).collect();
    let mut ck = Checker { lib: &lib, errors: vec![], params: vec![], failed: vec![] };
    let model = ck.dictionary(program, overrides);
    errors.append(&mut ck.errors);
    match model {
        Some(m) if errors.is_empty() => Ok(m),
        _ => {
            errors.sort_by_cached_key(|e| e.span().start);
            Err(errors)
        }
    }
}

/// [`check`], with the errors as kinds rather than rendered text, in the order they are reported.
pub fn check_errors(
    program: &ast::Program,
    lib: &Library,
    overrides: &[(String, f64)],
) -> Result<Model, Vec<CheckError>> {
    if let Some(o) = program.items.iter().find_map(|i| match i {
        ast::Item::Minimize(o) if is_dictionary(program) => Some(o),
        _ => None,
    }) {
        return Err(vec![CheckError::DictionaryModel { span: o.span }]);
    }
    let mut lib = lib.clone();
    let mut errors: Vec<CheckError> = lib.declare(program).into_iter().map(CheckError::Declaration).collect();
    let failed = program
        .items
        .iter()
        .filter_map(|i| match i {
            ast::Item::Loss(d) | ast::Item::Regularizer(d) => Some(d.name.name.clone()),
            ast::Item::Set(d) => Some(d.name.name.clone()),
            _ => None,
        })
        .filter(|n| lib.loss(n).is_none() && lib.regularizer(n).is_none() && lib.set(n).is_none())
        .collect();
    let mut ck = Checker { lib: &lib, errors: vec![], params: vec![], failed };
    let model = ck.model(program, overrides);
    errors.append(&mut ck.errors);
    match model {
        Some(m) if errors.is_empty() => Ok(m),
        _ => {
            errors.sort_by_cached_key(|e| e.span().start);
            Err(errors)
        }
    }
}

impl Checker<'_> {
    pub(super) fn err(&mut self, e: CheckError) {
        self.errors.push(e);
    }

    fn model(&mut self, program: &ast::Program, overrides: &[(String, f64)]) -> Option<Model> {
        let mut features: Option<Named> = None;
        let mut label: Option<(Named, LabelKind)> = None;
        let mut var: Option<(Named, Shape)> = None;
        let mut intercept: Option<Named> = None;
        let mut per_class = false;
        let mut objective: Option<&ast::Objective> = None;
        let mut solve: Option<&ast::SolveStmt> = None;

        for item in &program.items {
            match item {
                ast::Item::Data(d) => self.data(d, &mut features, &mut label),
                ast::Item::Param(p) => self.param(p, overrides),
                ast::Item::Var(v) if self.is_intercept(v, var.as_ref()) => {
                    self.intercept(v, &mut intercept, &mut per_class)
                }
                ast::Item::Var(v) => {
                    if let Some((prev, _)) = &var {
                        self.err(CheckError::SecondVariable { span: v.name.span, first: prev.span });
                    } else if let Some(s) = self.var_shape(v, features.as_ref(), label.as_ref()) {
                        var = Some((Named { name: v.name.name.clone(), span: v.name.span }, s));
                    }
                }
                ast::Item::Minimize(o) => {
                    if let Some(prev) = objective {
                        self.err(CheckError::SecondObjective { span: o.span, first: prev.span });
                    } else {
                        objective = Some(o);
                    }
                }
                ast::Item::Solve(s) => solve = Some(s),
                ast::Item::Loss(_) | ast::Item::Regularizer(_) | ast::Item::Set(_) => {}
            }
        }

        let Some(objective) = objective else {
            let end = program.items.last().map_or(Span::default(), item_span);
            self.err(CheckError::NoObjective { after: end });
            return None;
        };
        let Some(features) = features else {
            self.err(CheckError::NoFeatures { objective: objective.span });
            return None;
        };
        let Some((label, label_kind)) = label else {
            self.err(CheckError::NoLabels { objective: objective.span });
            return None;
        };
        let Some((var, shape)) = var else {
            self.err(CheckError::NoVariable { objective: objective.span });
            return None;
        };

        if let (Some(b), Shape::Mat(..), false) = (&intercept, &shape, per_class) {
            self.err(CheckError::InterceptOnMatrix { span: b.span, var: var.name.clone(), var_span: var.span });
            return None;
        }
        let cx = TermContext {
            features: &features,
            label: &label,
            label_kind,
            var: &var,
            shape: &shape,
            intercept: intercept.as_ref(),
        };
        let (loss, regs, intercept_l2) = self.terms(&objective.sum, &cx)?;
        let constraints = objective.constraints.iter().filter_map(|c| self.constraint(c, &cx)).collect();
        let solver = solve.and_then(|s| self.solver(s));
        Some(Model {
            features,
            label,
            label_kind,
            var,
            shape,
            intercept,
            intercept_per_class: per_class,
            intercept_l2,
            params: std::mem::take(&mut self.params),
            loss,
            regs,
            constraints,
            solver,
            objective_span: objective.span,
        })
    }
}

fn item_span(i: &ast::Item) -> Span {
    match i {
        ast::Item::Data(d) => d.span,
        ast::Item::Var(d) => d.span,
        ast::Item::Param(d) => d.span,
        ast::Item::Minimize(d) => d.span,
        ast::Item::Solve(d) => d.span,
        ast::Item::Loss(d) | ast::Item::Regularizer(d) => d.span,
        ast::Item::Set(d) => d.span,
    }
}
