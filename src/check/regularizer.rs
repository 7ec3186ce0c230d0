//! `c·reg(w)` and `c·reg(B w)`: the regularizer, its scalar parameters, and the structured
//! operators `diff`, `incidence(load(..))`, `groups(load(..))`.

use super::*;

impl Checker<'_> {
    pub(super) fn reg_call(&mut self, e: &ast::Expr, coef: Coef, term_span: Span, cx: &TermContext) -> Option<RegTerm> {
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

    pub(super) fn operator(&mut self, m: &ast::Expr, cx: &TermContext) -> Option<Operator> {
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
}
