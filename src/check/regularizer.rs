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
            let (name, span) = (func.name.clone(), func.span);
            self.err(if self.lib.loss(&func.name).is_some() {
                CheckError::LossAsRegularizer { name, span, names: cx.names() }
            } else {
                let candidates = self.lib.regularizers.iter().map(|r| r.name.clone()).collect();
                CheckError::UnknownRegularizer { name, span, candidates }
            });
            return None;
        };
        if args.len() != def.params.len() {
            self.err(CheckError::RegularizerArity {
                regularizer: def.name.clone(),
                params: def.params.iter().map(|(n, _)| n.clone()).collect(),
                found: args.len(),
                span: e.span,
            });
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
                    ExprKind::Name(n) if cx.intercept.is_some_and(|b| b.name == *n) => {
                        let declared = cx.intercept.map_or(a.span, |b| b.span);
                        self.err(CheckError::InterceptRegularized { intercept: n.clone(), span: a.span, declared });
                        return None;
                    }
                    // A name the model never declared (`l2sq(b)` without `var b: scalar`).
                    ExprKind::Name(n)
                        if ![&cx.features.name, &cx.label.name].contains(&n)
                            && !self.params.iter().any(|p| p.name == *n)
                            && !self.failed.contains(n) =>
                    {
                        let (regularizer, var) = (def.name.clone(), cx.var.name.clone());
                        self.err(CheckError::UndeclaredArgument { name: n.clone(), regularizer, var, span: a.span });
                        return None;
                    }
                    ExprKind::ApplyT(m, v) if v.name == cx.var.name => {
                        let centered = def.prox == crate::stdlib::ProxKind::Svt
                            && matches!(&m.kind, ExprKind::Call { func, .. } if func.name == "center");
                        let Shape::Mat(_, cols) = cx.shape else {
                            self.err(CheckError::CenteringOnly { span: a.span });
                            return None;
                        };
                        match self.operator(m, cx)? {
                            Operator::Center(k) if centered && k == *cols => operator = Some(Operator::Center(k)),
                            _ => {
                                self.err(CheckError::CenteringOnly { span: a.span });
                                return None;
                            }
                        }
                    }
                    ExprKind::Apply(m, v) if v.name == cx.var.name => {
                        if !def.convex || def.separability == crate::stdlib::Separability::Group {
                            self.err(CheckError::NotComposable { regularizer: def.name.clone(), span: m.span });
                            return None;
                        }
                        operator = Some(self.operator(m, cx)?);
                    }
                    _ => {
                        let (regularizer, var) = (def.name.clone(), cx.var.name.clone());
                        self.err(CheckError::NotTheVariable { regularizer, var, span: a.span });
                        return None;
                    }
                },
                ParamType::Groups => match self.operator(a, cx)? {
                    g @ Operator::Groups(_) => groups = Some(g),
                    _ => {
                        self.err(CheckError::NotGroups { span: a.span });
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
            self.err(CheckError::RowsOfVector {
                regularizer: def.name.clone(),
                var: cx.var.name.clone(),
                span: e.span,
                var_span: cx.var.span,
            });
            return None;
        }
        if let (Some(op), Shape::Mat(..)) = (&operator, cx.shape) {
            if matches!(op, Operator::Center(_)) {
                // `nuclear(center(k) Wᵀ)`, checked above.
            } else {
                self.err(CheckError::ComposedMatrixVariable { span: e.span });
                return None;
            }
        }
        if let Some((name, v)) = scalars.iter().find(|(_, v)| *v < 0.0) {
            let (regularizer, param) = (def.name.clone(), name.clone());
            self.err(CheckError::NegativeScalar { regularizer, param, value: *v, span: e.span });
            return None;
        }
        let text = expr_text(e);
        let text = if coef.text.is_empty() { text } else { format!("{}·{text}", coef.text) };
        Some(RegTerm { def, coef, operator, groups, scalars, text, span: term_span })
    }

    pub(super) fn operator(&mut self, m: &ast::Expr, cx: &TermContext) -> Option<Operator> {
        let ExprKind::Call { func, args } = &m.kind else {
            self.err(CheckError::NotAMatrix { span: m.span });
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
            "center" if args.len() == 1 => self
                .dim(&args[0].value, Some(cx.features), Some(&(cx.label.clone(), cx.label_kind)))
                .map(Operator::Center),
            "incidence" | "groups" => match load_path(args) {
                Some(p) if func.name == "incidence" => Some(Operator::Incidence(p)),
                Some(p) => Some(Operator::Groups(p)),
                None => {
                    self.err(CheckError::OperatorWithoutFile { operator: func.name.clone(), span: m.span });
                    None
                }
            },
            other => {
                self.err(CheckError::UnknownMatrix { name: other.to_string(), span: func.span });
                None
            }
        }
    }
}
