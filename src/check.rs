//! Stage 2: AST → checked [`Model`]. Resolves names (with ASCII aliases of Greek names), checks
//! shapes and label kinds, evaluates parameters, and splits the objective into one loss term,
//! scaled regularizers and constraints. Collects every problem it can instead of stopping at
//! the first. No IO: `load("...")` paths are recorded, not read.
//!
//! One job per module: `model` (what checking produces), `names` (aliases and parameters),
//! `declarations`, `objective` (the split into terms), `loss`, `regularizer`, `constraint` and
//! `solver`; this file holds the checker's state and the order in which a program is walked.

mod constraint;
mod declarations;
mod loss;
mod model;
mod names;
mod objective;
mod regularizer;
mod solver;

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
    pub(super) problems: Vec<Problem>,
    pub(super) params: Vec<Param>,
    /// Names the model declared but whose declaration failed (already reported).
    pub(super) failed: Vec<String>,
}

/// Checks a parsed program against the library. `overrides` are `--set` values, already
/// resolved to declared parameter names.
pub fn check(program: &ast::Program, lib: &Library, overrides: &[(String, f64)]) -> Result<Model, Vec<Problem>> {
    let mut lib = lib.clone();
    let mut problems = lib.declare(program);
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
    let mut ck = Checker { lib: &lib, problems: vec![], params: vec![], failed };
    let model = ck.model(program, overrides);
    problems.append(&mut ck.problems);
    match model {
        Some(m) if problems.iter().all(|p| p.severity != crate::diagnostics::Severity::Error) => Ok(m),
        _ => {
            problems.sort_by_key(|p| p.primary_span().start);
            Err(problems)
        }
    }
}

impl Checker<'_> {
    pub(super) fn err(&mut self, p: Problem) {
        self.problems.push(p);
    }

    fn model(&mut self, program: &ast::Program, overrides: &[(String, f64)]) -> Option<Model> {
        let mut features: Option<Named> = None;
        let mut label: Option<(Named, LabelKind)> = None;
        let mut var: Option<(Named, Shape)> = None;
        let mut objective: Option<&ast::Objective> = None;
        let mut solve: Option<&ast::SolveStmt> = None;

        for item in &program.items {
            match item {
                ast::Item::Data(d) => self.data(d, &mut features, &mut label),
                ast::Item::Param(p) => self.param(p, overrides),
                ast::Item::Var(v) => {
                    if let Some((prev, _)) = &var {
                        let p = Problem::error("optc::var", "a model has one variable", v.name.span, "second variable")
                            .with_label(prev.span, "first declared here")
                            .with_help("stack the unknowns into one `vec` or `mat`");
                        self.err(p);
                    } else if let Some(s) = self.var_shape(v, features.as_ref(), label.as_ref()) {
                        var = Some((Named { name: v.name.name.clone(), span: v.name.span }, s));
                    }
                }
                ast::Item::Minimize(o) => {
                    if let Some(prev) = objective {
                        let p =
                            Problem::error("optc::objective", "a model has one `minimize`", o.span, "second objective")
                                .with_label(prev.span, "first objective");
                        self.err(p);
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
            self.err(
                Problem::error(
                    "optc::objective",
                    "the model has no objective",
                    end,
                    "expected `minimize ...` after this",
                )
                .with_help("add a line `minimize E[loss(y, <x, w>)] + λ·reg(w)`"),
            );
            return None;
        };
        let Some(features) = features else {
            self.err(
                Problem::error("optc::data", "the model declares no features", objective.span, "uses data")
                    .with_help("add `data x: sparse, y: labels` before the objective"),
            );
            return None;
        };
        let Some((label, label_kind)) = label else {
            self.err(
                Problem::error("optc::data", "the model declares no labels", objective.span, "uses labels")
                    .with_help("add `y: labels` (or `classes`, `real`) to the `data` line"),
            );
            return None;
        };
        let Some((var, shape)) = var else {
            self.err(
                Problem::error("optc::var", "the model declares no variable", objective.span, "minimizes over nothing")
                    .with_help("add `var w: vec[dim(x)]` before the objective"),
            );
            return None;
        };

        let cx = TermContext { features: &features, label: &label, label_kind, var: &var, shape: &shape };
        let (loss, regs) = self.terms(&objective.sum, &cx)?;
        let constraints = objective.constraints.iter().filter_map(|c| self.constraint(c, &cx)).collect();
        let solver = solve.and_then(|s| self.solver(s));
        Some(Model {
            features,
            label,
            label_kind,
            var,
            shape,
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
