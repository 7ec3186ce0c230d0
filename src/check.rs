//! Stage 2: AST → checked [`Model`]. Resolves names (with ASCII aliases of Greek names), checks
//! shapes and label kinds, evaluates parameters, and splits the objective into one loss term,
//! scaled regularizers and constraints. Collects every problem it can instead of stopping at
//! the first. No IO: `load("...")` paths are recorded, not read.

use crate::diagnostics::{did_you_mean, Problem};
use crate::source::Span;
use crate::stdlib::{expr_text, to_sym, LabelKind, Library, LossDef, ParamType, RegDef, SetDef};
use crate::symbolic::{self, Sym};
use crate::syntax::ast::{self, BinOp, ExprKind};

/// A dimension as the model states it; the data fixes its value.
#[derive(Clone, Debug, PartialEq)]
pub enum Dim {
    /// `dim(x)`: the feature count.
    Features,
    /// `classes(y)`: the number of distinct labels.
    Classes,
    Fixed(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Vec(Dim),
    Mat(Dim, Dim),
}

#[derive(Clone, Debug)]
pub struct Named {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub value: f64,
    pub span: Span,
    /// Set by `--set` rather than by the model text.
    pub overridden: bool,
}

/// A constant factor in front of a term, kept as written for reports.
#[derive(Clone, Debug)]
pub struct Coef {
    pub value: f64,
    /// `λ`, `λ/2`, or empty for 1.
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct LossTerm {
    pub def: LossDef,
    pub coef: Coef,
    pub span: Span,
}

/// A structured linear operator B in `ω(B w)`, or a group structure.
#[derive(Clone, Debug, PartialEq)]
pub enum Operator {
    /// `diff(n)`: first differences, (n−1)×n.
    Diff(Dim),
    /// `incidence(load(path))`: graph incidence from lines `i j`.
    Incidence(String),
    /// `groups(load(path))`: one group per line.
    Groups(String),
}

#[derive(Clone, Debug)]
pub struct RegTerm {
    pub def: RegDef,
    pub coef: Coef,
    /// `B` when the term is `ω(B w)`.
    pub operator: Option<Operator>,
    /// The group structure of `group_l2(G, w)`.
    pub groups: Option<Operator>,
    /// Values of the scalar parameters (α, ε), by the names the stdlib gives them.
    pub scalars: Vec<(String, f64)>,
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct ConstraintTerm {
    pub set: SetDef,
    pub args: Vec<f64>,
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct SolverOption {
    pub name: String,
    /// The value with parameters folded in; may mention `t` (the step counter).
    pub value: Sym,
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct SolverRequest {
    pub name: String,
    pub options: Vec<SolverOption>,
    pub span: Span,
}

/// A model whose names, shapes and terms are known to fit together.
#[derive(Clone, Debug)]
pub struct Model {
    pub features: Named,
    pub label: Named,
    pub label_kind: LabelKind,
    pub var: Named,
    pub shape: Shape,
    pub params: Vec<Param>,
    pub loss: LossTerm,
    pub regs: Vec<RegTerm>,
    pub constraints: Vec<ConstraintTerm>,
    pub solver: Option<SolverRequest>,
    pub objective_span: Span,
}

/// ASCII spellings of Greek names, accepted wherever a name is.
const ALIASES: [(&str, &str); 14] = [
    ("lambda", "λ"),
    ("gamma", "γ"),
    ("epsilon", "ε"),
    ("eps", "ε"),
    ("alpha", "α"),
    ("beta", "β"),
    ("mu", "μ"),
    ("eta", "η"),
    ("tau", "τ"),
    ("rho", "ρ"),
    ("sigma", "σ"),
    ("delta", "δ"),
    ("theta", "θ"),
    ("kappa", "κ"),
];

/// The Greek spelling of an ASCII alias, or the name itself.
pub fn canonical(name: &str) -> &str {
    ALIASES.iter().find(|(a, _)| *a == name).map_or(name, |(_, g)| g)
}

/// Every spelling of the declared names (Greek and ASCII), for "did you mean" hints.
pub fn spellings(declared: &[String]) -> Vec<(String, String)> {
    let mut out = vec![];
    for d in declared {
        out.push((d.clone(), d.clone()));
        for (ascii, greek) in ALIASES {
            if greek == d {
                out.push((ascii.to_string(), d.clone()));
            }
        }
    }
    out
}

/// The declared name closest to `name`, trying ASCII spellings of Greek names too.
pub fn suggest_param(name: &str, declared: &[String]) -> Option<String> {
    let sp = spellings(declared);
    let hit = did_you_mean(name, sp.iter().map(|(s, _)| s.as_str()))?;
    sp.iter().find(|(s, _)| s == hit).map(|(_, d)| d.clone())
}

/// The parameters a program declares (for validating `--set` before checking).
pub fn declared_params(program: &ast::Program) -> Vec<String> {
    program
        .items
        .iter()
        .filter_map(|i| match i {
            ast::Item::Param(p) => Some(p.name.name.clone()),
            _ => None,
        })
        .collect()
}

/// Finds the declared parameter that `name` (possibly an ASCII alias) refers to.
pub fn resolve_param<'a>(declared: &'a [String], name: &str) -> Option<&'a String> {
    declared.iter().find(|d| *d == name || canonical(d) == canonical(name))
}

struct Checker<'a> {
    lib: &'a Library,
    problems: Vec<Problem>,
    params: Vec<Param>,
    /// Names the model declared but whose declaration failed (already reported).
    failed: Vec<String>,
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
    fn err(&mut self, p: Problem) {
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

    fn data(&mut self, d: &ast::DataDecl, features: &mut Option<Named>, label: &mut Option<(Named, LabelKind)>) {
        for (name, kind) in &d.bindings {
            let named = Named { name: name.name.clone(), span: name.span };
            match kind.name.as_str() {
                "sparse" | "dense" => {
                    if let Some(prev) = features {
                        let p = Problem::error("optc::data", "features are declared twice", name.span, "second")
                            .with_label(prev.span, "first");
                        self.err(p);
                    }
                    *features = Some(named);
                }
                k => match LabelKind::from_name(k) {
                    Some(lk) => {
                        if let Some((prev, _)) = label {
                            let p = Problem::error("optc::data", "labels are declared twice", name.span, "second")
                                .with_label(prev.span, "first");
                            self.err(p);
                        }
                        *label = Some((named, lk));
                    }
                    None => {
                        let kinds = ["sparse", "labels", "classes", "real"];
                        let p =
                            Problem::error("optc::data", format!("unknown data kind `{k}`"), kind.span, "unknown kind");
                        let p = p.suggest(
                            k,
                            kinds,
                            "a data column is `sparse` (features), `labels` (±1), `classes` or `real`",
                        );
                        self.err(p);
                    }
                },
            }
        }
    }

    fn param(&mut self, p: &ast::ParamDecl, overrides: &[(String, f64)]) {
        if let Some(prev) = self.params.iter().find(|q| q.name == p.name.name) {
            let pr = Problem::error(
                "optc::param",
                format!("parameter `{}` is declared twice", p.name.name),
                p.name.span,
                "again",
            )
            .with_label(prev.span, "first declared here");
            self.err(pr);
            return;
        }
        let overridden = overrides.iter().find(|(n, _)| *n == p.name.name);
        let value = match overridden {
            Some((_, v)) => Some(*v),
            None => self.constant(&p.value),
        };
        if value.is_none() {
            // Reported already; later uses of the name must not add "unknown name".
            self.failed.push(p.name.name.clone());
        }
        if let Some(value) = value {
            self.params.push(Param {
                name: p.name.name.clone(),
                value,
                span: p.name.span,
                overridden: overridden.is_some(),
            });
        }
    }

    /// Evaluates a constant expression (numbers, parameters, arithmetic, scalar functions).
    fn constant(&mut self, e: &ast::Expr) -> Option<f64> {
        let sym = match to_sym(e) {
            Ok(s) => s,
            Err(p) => {
                self.err(p);
                return None;
            }
        };
        let sym = self.fold_params(&sym, e, &[])?;
        let v = symbolic::simplify(&sym).as_const();
        match v {
            Some(v) if v.is_nan() => {
                self.err(Problem::error("optc::param", "this value is not a number (NaN)", e.span, "evaluates to NaN"));
                None
            }
            Some(v) if v.is_infinite() => {
                self.err(Problem::error("optc::param", "this value is infinite", e.span, "evaluates to ±∞"));
                None
            }
            Some(v) => Some(v),
            None => {
                let mut free = vec![];
                symbolic::simplify(&sym).vars(&mut free);
                let p = if free.is_empty() {
                    Problem::error("optc::param", "this value is not a finite number", e.span, "divides by zero")
                        .with_help("a parameter must evaluate to a finite number")
                } else {
                    Problem::error("optc::param", "expected a constant", e.span, "not a constant")
                };
                self.err(p);
                None
            }
        }
    }

    /// Replaces parameter names by their values; `free` names (like `t`) stay symbolic.
    fn fold_params(&mut self, sym: &Sym, at: &ast::Expr, free: &[&str]) -> Option<Sym> {
        let mut names = vec![];
        sym.vars(&mut names);
        let declared: Vec<String> = self.params.iter().map(|p| p.name.clone()).collect();
        for n in &names {
            if free.contains(&n.as_str()) || resolve_param(&declared, n).is_some() {
                continue;
            }
            if resolve_param(&self.failed, n).is_some() {
                return None; // its declaration was reported
            }
            let span = find_name(at, n).unwrap_or(at.span);
            let p = Problem::error("optc::name", format!("unknown name `{n}`"), span, "not a parameter");
            let p = match suggest_param(n, &declared) {
                Some(s) => p.with_help(format!("did you mean `{s}`?")),
                None if free.is_empty() => p.with_help("declare it first: `param NAME = VALUE`"),
                None => p.with_help(format!("a value here may use parameters and {}", free.join(", "))),
            };
            self.err(p);
            return None;
        }
        let params = &self.params;
        Some(sym.substitute(&|n| {
            let d: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
            let name = resolve_param(&d, n)?;
            params.iter().find(|p| &p.name == name).map(|p| Sym::Const(p.value))
        }))
    }

    fn var_shape(
        &mut self,
        v: &ast::VarDecl,
        features: Option<&Named>,
        label: Option<&(Named, LabelKind)>,
    ) -> Option<Shape> {
        let dims: Vec<Dim> = v.dims.iter().filter_map(|d| self.dim(d, features, label)).collect();
        if dims.len() != v.dims.len() {
            return None;
        }
        match (v.kind.name.as_str(), dims.as_slice()) {
            ("vec", [d]) => Some(Shape::Vec(d.clone())),
            ("mat", [r, c]) => Some(Shape::Mat(r.clone(), c.clone())),
            ("vec", _) => {
                self.err(
                    Problem::error("optc::shape", "`vec` takes one dimension", v.span, "here")
                        .with_help("write `vec[dim(x)]`"),
                );
                None
            }
            ("mat", _) => {
                self.err(
                    Problem::error("optc::shape", "`mat` takes two dimensions", v.span, "here")
                        .with_help("write `mat[dim(x), classes(y)]`"),
                );
                None
            }
            (k, _) => {
                let p = Problem::error("optc::shape", format!("unknown variable type `{k}`"), v.kind.span, "here");
                let p = p.suggest(k, ["vec", "mat"], "a variable is a `vec[n]` or a `mat[n, k]`");
                self.err(p);
                None
            }
        }
    }

    fn dim(&mut self, e: &ast::Expr, features: Option<&Named>, label: Option<&(Named, LabelKind)>) -> Option<Dim> {
        match &e.kind {
            ExprKind::Number(n) if *n >= 1.0 && n.fract() == 0.0 => Some(Dim::Fixed(*n as usize)),
            ExprKind::Call { func, args } if func.name == "dim" && args.len() == 1 => {
                let arg = args[0].value.name().unwrap_or("");
                if features.is_some_and(|f| f.name == arg) {
                    Some(Dim::Features)
                } else {
                    let p = Problem::error(
                        "optc::shape",
                        "`dim` takes the features",
                        args[0].value.span,
                        "not the features",
                    );
                    let p = match features {
                        Some(f) => p.with_help(format!("write `dim({})`", f.name)),
                        None => p.with_help("declare `data x: sparse, y: labels` before the variable"),
                    };
                    self.err(p);
                    None
                }
            }
            ExprKind::Call { func, args } if func.name == "classes" && args.len() == 1 => {
                let arg = args[0].value.name().unwrap_or("");
                match label {
                    Some((l, LabelKind::Classes)) if l.name == arg => Some(Dim::Classes),
                    Some((l, k)) if l.name == arg => {
                        let p = Problem::error(
                            "optc::shape",
                            format!("`classes({arg})` needs `{arg}: classes`, but `{arg}` is `{}`", k.name()),
                            e.span,
                            "here",
                        )
                        .with_label(l.span, "declared here")
                        .with_help(format!("declare `{arg}: classes` in the `data` line"));
                        self.err(p);
                        None
                    }
                    _ => {
                        self.err(Problem::error("optc::shape", "`classes` takes the labels", e.span, "not the labels"));
                        None
                    }
                }
            }
            _ => {
                self.err(
                    Problem::error("optc::shape", "expected a dimension", e.span, "not a dimension")
                        .with_help("a dimension is `dim(x)`, `classes(y)` or a whole number"),
                );
                None
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // The objective

    fn terms(&mut self, sum: &ast::Expr, cx: &TermContext) -> Option<(LossTerm, Vec<RegTerm>)> {
        let mut parts = vec![];
        self.flatten_sum(sum, &mut parts);
        let mut loss: Option<LossTerm> = None;
        let mut saw_expectation = false;
        let mut regs = vec![];
        for part in parts {
            let mut coefs = vec![];
            let Some(functional) = self.split_term(part, &mut coefs) else {
                continue;
            };
            let coef = self.coefficient(&coefs)?;
            if coef.value < 0.0 || coef.value.is_nan() {
                self.err(
                    Problem::error(
                        "optc::convexity",
                        "a term has a negative weight",
                        part.span,
                        format!("weight {}", coef.value),
                    )
                    .with_help("optc minimizes a sum of non-negative multiples of losses and regularizers"),
                );
                continue;
            }
            match &functional.kind {
                ExprKind::Expect(inner) => {
                    saw_expectation = true;
                    if let Some(prev) = &loss {
                        let p = Problem::error(
                            "optc::objective",
                            "the objective has two data terms",
                            functional.span,
                            "second",
                        )
                        .with_label(prev.span, "first")
                        .with_help("write one `E[loss(y, <x, w>)]`");
                        self.err(p);
                        continue;
                    }
                    if let Some(def) = self.loss_call(inner, cx) {
                        loss = Some(LossTerm { def, coef, span: functional.span });
                    }
                }
                ExprKind::Call { .. } => {
                    if let Some(r) = self.reg_call(functional, coef, part.span, cx) {
                        regs.push(r);
                    }
                }
                _ => unreachable!("split_term returns an expectation or a call"),
            }
        }
        match loss {
            Some(l) => Some((l, regs)),
            // The data term was written but is wrong: that problem is already reported.
            None if saw_expectation => None,
            None => {
                self.err(
                    Problem::error("optc::objective", "the objective has no data term", sum.span, "no `E[...]` here")
                        .with_help(format!(
                            "add a mean loss over the data: `E[logistic({}, <{}, {}>)] + ...`",
                            cx.label.name, cx.features.name, cx.var.name
                        )),
                );
                None
            }
        }
    }

    fn flatten_sum<'e>(&mut self, e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
        match &e.kind {
            ExprKind::Binary(BinOp::Add, a, b) => {
                self.flatten_sum(a, out);
                self.flatten_sum(b, out);
            }
            ExprKind::Binary(BinOp::Sub, a, b) => {
                self.flatten_sum(a, out);
                self.err(
                    Problem::error(
                        "optc::convexity",
                        "a term is subtracted",
                        b.span,
                        "subtracting makes the objective non-convex",
                    )
                    .with_help("optc minimizes a sum of terms; write `+` and a non-negative weight"),
                );
            }
            _ => out.push(e),
        }
    }

    /// Splits `c₁·c₂/c₃·f(...)` into constant factors and the one functional factor.
    fn split_term<'e>(&mut self, e: &'e ast::Expr, coefs: &mut Vec<(&'e ast::Expr, bool)>) -> Option<&'e ast::Expr> {
        let mut found = vec![];
        if !self.collect_factors(e, false, coefs, &mut found) {
            return None;
        }
        match found.as_slice() {
            [] => self.no_functional(e),
            [f] => Some(f),
            [_, second, ..] => {
                self.err(
                    Problem::error(
                        "optc::objective",
                        "a product of two terms",
                        second.span,
                        "second loss or regularizer in one term",
                    )
                    .with_help("each term is one loss or regularizer, times a constant"),
                );
                None
            }
        }
    }

    /// Returns false when a problem was reported.
    fn collect_factors<'e>(
        &mut self,
        e: &'e ast::Expr,
        divide: bool,
        coefs: &mut Vec<(&'e ast::Expr, bool)>,
        found: &mut Vec<&'e ast::Expr>,
    ) -> bool {
        match &e.kind {
            ExprKind::Binary(BinOp::Mul, a, b) => {
                self.collect_factors(a, divide, coefs, found) && self.collect_factors(b, divide, coefs, found)
            }
            ExprKind::Binary(BinOp::Div, a, b) => {
                self.collect_factors(a, divide, coefs, found) && self.collect_factors(b, !divide, coefs, found)
            }
            ExprKind::Expect(_) => self.functional(e, divide, found),
            ExprKind::Call { func, .. } if symbolic::Func::from_name(&func.name).is_none() => {
                self.functional(e, divide, found)
            }
            ExprKind::Neg(_) => {
                self.err(
                    Problem::error("optc::convexity", "a term has a negative weight", e.span, "negated here")
                        .with_help("optc minimizes a sum of non-negative multiples of losses and regularizers"),
                );
                false
            }
            _ => {
                coefs.push((e, divide));
                true
            }
        }
    }

    fn functional<'e>(&mut self, e: &'e ast::Expr, divide: bool, found: &mut Vec<&'e ast::Expr>) -> bool {
        if divide {
            self.err(
                Problem::error("optc::convexity", "a loss or regularizer in a denominator", e.span, "divides by this")
                    .with_help("a term is a constant times one loss or regularizer"),
            );
            return false;
        }
        found.push(e);
        true
    }

    fn no_functional(&mut self, e: &ast::Expr) -> Option<&'static ast::Expr> {
        self.err(
            Problem::error("optc::objective", "this term is a constant", e.span, "no loss or regularizer here")
                .with_help("a term is `E[loss(y, <x, w>)]` or `c·reg(w)`; constants do not change the minimizer"),
        );
        None
    }

    fn coefficient(&mut self, coefs: &[(&ast::Expr, bool)]) -> Option<Coef> {
        let mut value = 1.0;
        let mut text = String::new();
        for (e, divide) in coefs {
            let v = self.constant(e)?;
            if *divide {
                value /= v;
                text.push('/');
            } else {
                value *= v;
                if !text.is_empty() {
                    text.push('·');
                }
            }
            let t = expr_text(e);
            if matches!(e.kind, ExprKind::Binary(..)) {
                text.push_str(&format!("({t})"));
            } else {
                text.push_str(&t);
            }
        }
        if text.starts_with('/') {
            text.insert(0, '1');
        }
        Some(Coef { value, text })
    }

    fn loss_call(&mut self, inner: &ast::Expr, cx: &TermContext) -> Option<LossDef> {
        let ExprKind::Call { func, args } = &inner.kind else {
            self.err(
                Problem::error("optc::loss", "expected a loss inside `E[...]`", inner.span, "not a loss call")
                    .with_help(format!(
                        "write `E[logistic({}, <{}, {}>)]`",
                        cx.label.name, cx.features.name, cx.var.name
                    )),
            );
            return None;
        };
        let Some(def) = self.lib.loss(&func.name).cloned() else {
            if self.failed.contains(&func.name) {
                return None; // its declaration's problem is reported
            }
            let p = Problem::error("optc::loss", format!("unknown loss `{}`", func.name), func.span, "unknown loss");
            let names = self.lib.losses.iter().map(|l| l.name.as_str());
            let p = if self.lib.regularizer(&func.name).is_some() {
                p.with_help(format!(
                    "`{}` is a regularizer: write it outside `E[...]`, as `λ·{}({})`",
                    func.name, func.name, cx.var.name
                ))
            } else {
                p.suggest(
                    &func.name,
                    names,
                    format!(
                        "the losses are {}",
                        self.lib.losses.iter().map(|l| format!("`{}`", l.name)).collect::<Vec<_>>().join(", ")
                    ),
                )
            };
            self.err(p);
            return None;
        };
        if args.len() != 2 {
            self.err(
                Problem::error(
                    "optc::loss",
                    format!("`{}` takes two arguments, found {}", def.name, args.len()),
                    inner.span,
                    "here",
                )
                .with_help(format!("write `{}({}, <{}, {}>)`", def.name, cx.label.name, cx.features.name, cx.var.name)),
            );
            return None;
        }
        let label_arg = &args[0].value;
        if label_arg.name() != Some(cx.label.name.as_str()) {
            self.err(
                Problem::error(
                    "optc::loss",
                    "the first argument of a loss is the label",
                    label_arg.span,
                    "not the label",
                )
                .with_help(format!("write `{}({}, ...)`", def.name, cx.label.name)),
            );
            return None;
        }
        let ok_kind = match def.label_kind {
            LabelKind::Labels => cx.label_kind == LabelKind::Labels,
            LabelKind::Real => cx.label_kind != LabelKind::Classes,
            LabelKind::Classes => cx.label_kind == LabelKind::Classes,
        };
        if !ok_kind {
            self.err(
                Problem::error(
                    "optc::loss",
                    format!(
                        "`{}` needs {} (`{}: {}`), but `{}` is declared `{}`",
                        def.name,
                        match def.label_kind {
                            LabelKind::Labels => "±1 labels",
                            LabelKind::Real => "real targets",
                            LabelKind::Classes => "class labels",
                        },
                        cx.label.name,
                        def.label_kind.name(),
                        cx.label.name,
                        cx.label_kind.name()
                    ),
                    label_arg.span,
                    "wrong kind of label",
                )
                .with_label(cx.label.span, "declared here")
                .with_help(match def.label_kind {
                    LabelKind::Labels => {
                        format!("declare `{}: labels`, or use `squared` for real targets", cx.label.name)
                    }
                    LabelKind::Real => format!("declare `{}: real` or `labels`", cx.label.name),
                    LabelKind::Classes => format!(
                        "declare `{}: classes` and `var W: mat[dim(x), classes({})]`",
                        cx.label.name, cx.label.name
                    ),
                }),
            );
            return None;
        }
        let margin = &args[1].value;
        let inner_ok = match &margin.kind {
            ExprKind::Inner(a, b) => {
                (a.name == cx.features.name && b.name == cx.var.name)
                    || (b.name == cx.features.name && a.name == cx.var.name)
            }
            _ => false,
        };
        if !inner_ok {
            self.err(
                Problem::error(
                    "optc::loss",
                    "the second argument of a loss is the margin ⟨x, w⟩",
                    margin.span,
                    "not ⟨features, variable⟩",
                )
                .with_help(format!("write `<{}, {}>`", cx.features.name, cx.var.name)),
            );
            return None;
        }
        match (def.multiclass, cx.shape) {
            (true, Shape::Vec(_)) => {
                self.err(
                    Problem::error(
                        "optc::shape",
                        format!("`{}` scores every class: it needs a matrix variable", def.name),
                        margin.span,
                        "a vector here",
                    )
                    .with_label(cx.var.span, "declared as a vector")
                    .with_help(
                        format!(
                            "declare `var {}: mat[dim({})), classes({})]`",
                            cx.var.name, cx.features.name, cx.label.name
                        )
                        .replace("))", ")"),
                    ),
                );
                None
            }
            (false, Shape::Mat(..)) => {
                self.err(
                    Problem::error(
                        "optc::shape",
                        format!("`{}` takes a scalar margin, but `{}` is a matrix", def.name, cx.var.name),
                        margin.span,
                        "scores of every class",
                    )
                    .with_label(cx.var.span, "declared as a matrix")
                    .with_help("use `softmax` for a matrix of class scores, or declare a `vec`"),
                );
                None
            }
            _ => Some(def),
        }
    }

    fn reg_call(&mut self, e: &ast::Expr, coef: Coef, term_span: Span, cx: &TermContext) -> Option<RegTerm> {
        let ExprKind::Call { func, args } = &e.kind else {
            return None;
        };
        let Some(def) = self.lib.regularizer(&func.name).cloned() else {
            if self.failed.contains(&func.name) {
                return None; // its declaration's problem is reported
            }
            let p = Problem::error(
                "optc::regularizer",
                format!("unknown regularizer `{}`", func.name),
                func.span,
                "unknown regularizer",
            );
            let p = if self.lib.loss(&func.name).is_some() {
                p.with_help(format!(
                    "`{}` is a loss: average it over the data, as `E[{}({}, <{}, {}>)]`",
                    func.name, func.name, cx.label.name, cx.features.name, cx.var.name
                ))
            } else {
                p.suggest(
                    &func.name,
                    self.lib.regularizers.iter().map(|r| r.name.as_str()),
                    format!(
                        "the regularizers are {}",
                        self.lib.regularizers.iter().map(|l| format!("`{}`", l.name)).collect::<Vec<_>>().join(", ")
                    ),
                )
            };
            self.err(p);
            return None;
        };
        let signature = def.params.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ");
        if args.len() != def.params.len() {
            self.err(
                Problem::error(
                    "optc::regularizer",
                    format!("`{}` takes {} argument(s), found {}", def.name, def.params.len(), args.len()),
                    e.span,
                    "here",
                )
                .with_help(format!("write `{}({signature})`", def.name)),
            );
            return None;
        }
        let mut operator = None;
        let mut groups = None;
        let mut scalars = vec![];
        for ((pname, ptype), arg) in def.params.iter().zip(args) {
            let a = &arg.value;
            match ptype {
                ParamType::Variable => match &a.kind {
                    ExprKind::Name(n) if *n == cx.var.name => {}
                    ExprKind::Apply(m, v) if v.name == cx.var.name => {
                        if !def.convex || def.separability == crate::stdlib::Separability::Group {
                            self.err(
                                Problem::error(
                                    "optc::composite",
                                    format!("`{}` cannot be composed with a matrix", def.name),
                                    m.span,
                                    "here",
                                )
                                .with_help("only the convex norms (l1, l2, linf, l2sq, ...) compose as ω(B w)"),
                            );
                            return None;
                        }
                        operator = Some(self.operator(m, cx)?);
                    }
                    _ => {
                        self.err(
                            Problem::error(
                                "optc::regularizer",
                                format!("`{}` regularizes the variable", def.name),
                                a.span,
                                format!("expected `{}`", cx.var.name),
                            )
                            .with_help(format!(
                                "write `{}({})` or `{}(B {})` with a matrix B",
                                def.name, cx.var.name, def.name, cx.var.name
                            )),
                        );
                        return None;
                    }
                },
                ParamType::Groups => match self.operator(a, cx)? {
                    g @ Operator::Groups(_) => groups = Some(g),
                    _ => {
                        self.err(
                            Problem::error("optc::regularizer", "expected a group structure", a.span, "not groups")
                                .with_help("write `groups(load(\"groups.txt\"))`"),
                        );
                        return None;
                    }
                },
                ParamType::Scalar => {
                    let v = self.constant(a)?;
                    scalars.push((pname.clone(), v));
                }
            }
        }
        if def.needs_matrix && matches!(cx.shape, Shape::Vec(_)) {
            self.err(
                Problem::error(
                    "optc::shape",
                    format!("`{}` ties the rows of a matrix, but `{}` is a vector", def.name, cx.var.name),
                    e.span,
                    "needs a matrix",
                )
                .with_label(cx.var.span, "declared as a vector")
                .with_help(format!(
                    "use `l1({})` for a vector, or declare `var W: mat[dim(x), classes(y)]`",
                    cx.var.name
                )),
            );
            return None;
        }
        if let (Some(_), Shape::Mat(..)) = (&operator, cx.shape) {
            self.err(
                Problem::error("optc::shape", "ω(B W) of a matrix variable is not supported", e.span, "here")
                    .with_help("compose with a matrix only for a vector variable"),
            );
            return None;
        }
        if let Some((name, v)) = scalars.iter().find(|(_, v)| *v < 0.0) {
            self.err(Problem::error(
                "optc::regularizer",
                format!("`{name}` of `{}` must be ≥ 0, found {v}", def.name),
                e.span,
                "here",
            ));
            return None;
        }
        let text = expr_text(e);
        let text = if coef.text.is_empty() { text } else { format!("{}·{text}", coef.text) };
        Some(RegTerm { def, coef, operator, groups, scalars, text, span: term_span })
    }

    fn operator(&mut self, m: &ast::Expr, cx: &TermContext) -> Option<Operator> {
        let ExprKind::Call { func, args } = &m.kind else {
            self.err(
                Problem::error("optc::operator", "expected a matrix", m.span, "not a matrix").with_help(
                    "matrices are `diff(n)`, `incidence(load(\"edges.txt\"))`, `groups(load(\"groups.txt\"))`",
                ),
            );
            return None;
        };
        let load_path = |args: &[ast::Arg]| -> Option<String> {
            match args {
                [a] => match &a.value.kind {
                    ExprKind::Call { func, args } if func.name == "load" && args.len() == 1 => {
                        match &args[0].value.kind {
                            ExprKind::Str(s) => Some(s.clone()),
                            _ => None,
                        }
                    }
                    _ => None,
                },
                _ => None,
            }
        };
        match func.name.as_str() {
            "diff" if args.len() == 1 => self
                .dim(&args[0].value, Some(cx.features), Some(&(cx.label.clone(), cx.label_kind)))
                .map(Operator::Diff),
            "incidence" | "groups" => match load_path(args) {
                Some(p) if func.name == "incidence" => Some(Operator::Incidence(p)),
                Some(p) => Some(Operator::Groups(p)),
                None => {
                    self.err(
                        Problem::error("optc::operator", format!("`{}` reads a file", func.name), m.span, "here")
                            .with_help(format!(
                                "write `{}(load(\"file.txt\"))`; the path is relative to the model file",
                                func.name
                            )),
                    );
                    None
                }
            },
            other => {
                let p = Problem::error("optc::operator", format!("unknown matrix `{other}`"), func.span, "unknown");
                let p = p.suggest(
                    other,
                    ["diff", "incidence", "groups"],
                    "matrices are `diff(n)`, `incidence(load(...))` and `groups(load(...))`",
                );
                self.err(p);
                None
            }
        }
    }

    fn constraint(&mut self, c: &ast::Constraint, cx: &TermContext) -> Option<ConstraintTerm> {
        if c.lhs.name() != Some(cx.var.name.as_str()) {
            self.err(
                Problem::error(
                    "optc::constraint",
                    "a constraint restricts the variable",
                    c.lhs.span,
                    format!("expected `{}`", cx.var.name),
                )
                .with_help(format!("write `{} ∈ SET`, `{} ≥ c` or `{} ≤ c`", cx.var.name, cx.var.name, cx.var.name)),
            );
            return None;
        }
        let text = format!(
            "{} {} {}",
            cx.var.name,
            match c.relation {
                ast::Relation::In => "∈",
                ast::Relation::Ge => "≥",
                ast::Relation::Le => "≤",
            },
            expr_text(&c.rhs)
        );
        let boxed = |lib: &Library, lo: f64, hi: f64| lib.set("Box").map(|s| (s.clone(), vec![lo, hi]));
        let (set, args) = match c.relation {
            ast::Relation::Ge => boxed(self.lib, self.constant(&c.rhs)?, f64::INFINITY)?,
            ast::Relation::Le => boxed(self.lib, f64::NEG_INFINITY, self.constant(&c.rhs)?)?,
            ast::Relation::In => {
                let (name, name_span, args): (&str, Span, &[ast::Arg]) = match &c.rhs.kind {
                    ExprKind::Name(n) => (n, c.rhs.span, &[]),
                    ExprKind::Call { func, args } => (&func.name, func.span, args),
                    _ => {
                        self.err(
                            Problem::error("optc::constraint", "expected a set", c.rhs.span, "not a set")
                                .with_help("sets are Box(lo, hi), NonNeg, L1Ball(r), L2Ball(r), Simplex"),
                        );
                        return None;
                    }
                };
                let Some(set) = self.lib.set(name).cloned() else {
                    let p =
                        Problem::error("optc::constraint", format!("unknown set `{name}`"), name_span, "unknown set");
                    let p = p.suggest(
                        name,
                        self.lib.sets.iter().map(|s| s.name.as_str()),
                        "sets are Box(lo, hi), NonNeg, L1Ball(r), L2Ball(r), Simplex",
                    );
                    self.err(p);
                    return None;
                };
                if args.len() != set.params.len() {
                    self.err(
                        Problem::error(
                            "optc::constraint",
                            format!("`{}` takes {} argument(s), found {}", set.name, set.params.len(), args.len()),
                            c.rhs.span,
                            "here",
                        )
                        .with_help(if set.params.is_empty() {
                            format!("write `{}`", set.name)
                        } else {
                            format!("write `{}({})`", set.name, set.params.join(", "))
                        }),
                    );
                    return None;
                }
                let mut vals = vec![];
                for a in args {
                    vals.push(self.constant(&a.value)?);
                }
                if set.name == "NonNeg" {
                    boxed(self.lib, 0.0, f64::INFINITY)?
                } else {
                    (set, vals)
                }
            }
        };
        if set.name == "Box" && args[0] > args[1] {
            self.err(
                Problem::error(
                    "optc::constraint",
                    format!("the box [{}, {}] is empty", args[0], args[1]),
                    c.span,
                    "lower bound above upper bound",
                )
                .with_help("write `Box(lo, hi)` with lo ≤ hi"),
            );
            return None;
        }
        if matches!(set.name.as_str(), "L1Ball" | "L2Ball") && args[0] < 0.0 {
            self.err(Problem::error("optc::constraint", "a ball needs a radius ≥ 0", c.rhs.span, "negative radius"));
            return None;
        }
        Some(ConstraintTerm { set, args, text, span: c.span })
    }

    fn solver(&mut self, s: &ast::SolveStmt) -> Option<SolverRequest> {
        let solvers = crate::solvers::names();
        if !solvers.contains(&s.solver.name.as_str()) {
            let p = Problem::error(
                "optc::solver",
                format!("unknown solver `{}`", s.solver.name),
                s.solver.span,
                "unknown solver",
            );
            let p = p.suggest(&s.solver.name, solvers.iter().copied(), format!("solvers are {}", solvers.join(", ")));
            self.err(p);
            return None;
        }
        let mut options = vec![];
        for (name, value) in &s.options {
            let sym = match to_sym(value) {
                Ok(s) => s,
                Err(p) => {
                    self.err(p);
                    continue;
                }
            };
            let Some(folded) = self.fold_params(&sym, value, &["t"]) else {
                continue;
            };
            options.push(SolverOption {
                name: name.name.clone(),
                value: symbolic::simplify(&folded),
                text: expr_text(value),
                span: name.span.join(value.span),
            });
        }
        Some(SolverRequest { name: s.solver.name.clone(), options, span: s.span })
    }
}

struct TermContext<'a> {
    features: &'a Named,
    label: &'a Named,
    label_kind: LabelKind,
    var: &'a Named,
    shape: &'a Shape,
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

/// The span of the first occurrence of a name inside an expression.
fn find_name(e: &ast::Expr, name: &str) -> Option<Span> {
    match &e.kind {
        ExprKind::Name(n) if n == name => Some(e.span),
        ExprKind::Neg(a) | ExprKind::Expect(a) => find_name(a, name),
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => find_name(a, name).or_else(|| find_name(b, name)),
        ExprKind::Call { args, .. } => args.iter().find_map(|a| find_name(&a.value, name)),
        ExprKind::Apply(m, _) => find_name(m, name),
        _ => None,
    }
}
