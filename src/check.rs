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
    run_checker(program, lib, |ck| ck.dictionary(program, overrides))
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
    run_checker(program, lib, |ck| ck.model(program, overrides))
}

/// The library with the program's own declarations added, a checker over it that knows which
/// of those failed (their uses are not reported again), and `walk`'s result, or every problem
/// found, in the order of the text.
fn run_checker<T>(
    program: &ast::Program,
    lib: &Library,
    walk: impl FnOnce(&mut Checker) -> Option<T>,
) -> Result<T, Vec<CheckError>> {
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
    let model = walk(&mut ck);
    errors.append(&mut ck.errors);
    match model {
        Some(m) if errors.is_empty() => Ok(m),
        _ => {
            errors.sort_by_cached_key(|e| e.span().start);
            Err(errors)
        }
    }
}

/// What a program declares, read in one walk before its objective is: the data's columns,
/// the variable, the intercept, the objective and the `solve with` statement.
pub(super) struct Declared<'p> {
    pub features: Option<Named>,
    pub label: Option<(Named, LabelKind)>,
    /// `s: weights`: one non-negative weight a row.
    pub weights: Option<Named>,
    pub var: Option<(Named, Shape)>,
    pub intercept: Option<Named>,
    pub per_class: bool,
    pub objective: Option<&'p ast::Objective>,
    pub solve: Option<&'p ast::SolveStmt>,
}

impl Checker<'_> {
    pub(super) fn err(&mut self, e: CheckError) {
        self.errors.push(e);
    }

    /// The declarations of `program` (parameters folded as they come); with `intercepts`, a
    /// second unknown that [`Checker::is_intercept`] recognises is the intercept, without it a
    /// second variable.
    pub(super) fn declarations<'p>(
        &mut self,
        program: &'p ast::Program,
        overrides: &[(String, f64)],
        intercepts: bool,
    ) -> Declared<'p> {
        let mut d = Declared {
            features: None,
            label: None,
            weights: None,
            var: None,
            intercept: None,
            per_class: false,
            objective: None,
            solve: None,
        };
        for item in &program.items {
            match item {
                ast::Item::Data(data) => self.data(data, &mut d.features, &mut d.label, &mut d.weights),
                ast::Item::Param(p) => self.param(p, overrides),
                ast::Item::Var(v) if intercepts && self.is_intercept(v, d.var.as_ref()) => {
                    self.intercept(v, &mut d.intercept, &mut d.per_class)
                }
                ast::Item::Var(v) => {
                    if let Some((prev, _)) = &d.var {
                        self.err(CheckError::SecondVariable { span: v.name.span, first: prev.span });
                    } else if let Some(s) = self.var_shape(v, d.features.as_ref(), d.label.as_ref()) {
                        d.var = Some((Named { name: v.name.name.clone(), span: v.name.span }, s));
                    }
                }
                ast::Item::Minimize(o) => {
                    if let Some(prev) = d.objective {
                        self.err(CheckError::SecondObjective { span: o.span, first: prev.span });
                    } else {
                        d.objective = Some(o);
                    }
                }
                ast::Item::Solve(s) => d.solve = Some(s),
                ast::Item::Loss(_) | ast::Item::Regularizer(_) | ast::Item::Set(_) => {}
            }
        }
        d
    }

    fn model(&mut self, program: &ast::Program, overrides: &[(String, f64)]) -> Option<Model> {
        let Declared { features, label, weights, var, intercept, per_class, objective, solve } =
            self.declarations(program, overrides, true);

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
            weights: weights.as_ref(),
        };
        let (loss, regs, intercept_l2) = self.terms(&objective.sum, &cx)?;
        if let (Some(s), false) = (&weights, loss.weighted) {
            let (span, expectation, weights) = (s.span, loss.span, s.name.clone());
            self.err(CheckError::WeightsUnused { span, expectation, weights });
            return None;
        }
        let constraints = objective.constraints.iter().filter_map(|c| self.constraint(c, &cx)).collect();
        let solver = solve.and_then(|s| self.solver(s));
        Some(Model {
            features,
            label,
            label_kind,
            weights,
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
