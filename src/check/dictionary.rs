//! Dictionary learning's model: `E[sparse_code(x, D, λ₁, λ₂)]`, penalties that act on each atom
//! of D, and `st columns(D) ∈ L2Ball(r)`. The declarations are read as a supervised model's,
//! without labels.

use super::*;

/// The penalties a dictionary takes: each is a sum over the atoms of the same function.
const COLUMN_PENALTIES: [&str; 4] = ["l1", "l2sq", "group_l2", "group_linf"];

/// Whether the program's objective is an expectation of `sparse_code`: a dictionary model.
pub fn is_dictionary(program: &ast::Program) -> bool {
    program.items.iter().any(|i| match i {
        ast::Item::Minimize(o) => mentions_sparse_code(&o.sum),
        _ => false,
    })
}

fn mentions_sparse_code(e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Expect(inner) => matches!(&inner.kind, ExprKind::Call { func, .. } if func.name == "sparse_code"),
        ExprKind::Binary(_, a, b) => mentions_sparse_code(a) || mentions_sparse_code(b),
        _ => false,
    }
}

impl Checker<'_> {
    pub(super) fn dictionary(&mut self, program: &ast::Program, overrides: &[(String, f64)]) -> Option<Dictionary> {
        let Declared { features, label: _, weights, var, objective, solve, .. } =
            self.declarations(program, overrides, false);
        let objective = objective?;
        if let Some(s) = weights {
            // Dictionary learning's sparse codes take no row weights.
            self.err(CheckError::WeightsUnused { span: s.span, expectation: objective.span, weights: s.name });
            return None;
        }
        let Some(features) = features else {
            self.err(CheckError::NoFeatures { objective: objective.span });
            return None;
        };
        let Some((var, shape)) = var else {
            self.err(CheckError::NoVariable { objective: objective.span });
            return None;
        };
        let atoms = match &shape {
            Shape::Mat(Dim::Features, Dim::Fixed(k)) => *k,
            _ => {
                self.err(CheckError::DictionaryShape {
                    span: var.span,
                    var: var.name.clone(),
                    features: features.name.clone(),
                });
                return None;
            }
        };
        // The terms are read as a supervised model's with no label: nothing below reads it.
        let no_label = Named { name: String::new(), span: Span::default() };
        let cx = TermContext {
            features: &features,
            label: &no_label,
            label_kind: LabelKind::Real,
            var: &var,
            shape: &shape,
            intercept: None,
            weights: None,
        };
        let mut parts = vec![];
        self.flatten_sum(&objective.sum, &mut parts);
        let mut code: Option<(Coef, f64, f64, String, Span)> = None;
        let mut penalties = vec![];
        for part in parts {
            let mut coefs = vec![];
            let Some(functional) = self.split_term(part, &mut coefs) else { continue };
            let Some(coef) = self.coefficient(&coefs) else { continue };
            if coef.value < 0.0 || coef.value.is_nan() {
                self.err(CheckError::NegativeWeight { span: part.span, weight: Some(coef.value) });
                continue;
            }
            match &functional.kind {
                ExprKind::Expect(inner) => {
                    if let Some((_, _, _, _, first)) = &code {
                        self.err(CheckError::TwoDataTerms { span: functional.span, first: *first });
                        continue;
                    }
                    if let Some((l1, l2)) = self.sparse_code(inner, &cx) {
                        code = Some((coef, l1, l2, expr_text(functional), functional.span));
                    }
                }
                ExprKind::Call { func, .. } => {
                    let name = func.name.clone();
                    let span = functional.span;
                    if let Some(r) = self.reg_call(functional, coef, part.span, &cx) {
                        if COLUMN_PENALTIES.contains(&r.def.name.as_str()) && r.operator.is_none() {
                            penalties.push(r);
                        } else {
                            self.err(CheckError::NotAColumnPenalty { name, span, var: var.name.clone() });
                        }
                    }
                }
                _ => unreachable!("split_term returns an expectation or a call"),
            }
        }
        let mut ball = None;
        // A constraint that did not check is reported: no second problem about the atoms' bound.
        let mut failed = false;
        for c in &objective.constraints {
            match self.column_ball(c, &var) {
                Some(b) if ball.is_none() => ball = Some(b),
                Some(b) => self.err(CheckError::DictionaryConstraint { span: b.span, var: var.name.clone() }),
                None => failed = true,
            }
        }
        let solver = solve.and_then(|s| self.solver(s));
        let (coef, lambda1, lambda2, loss_text, loss_span) = code?;
        if failed {
            return None;
        }
        if ball.is_none() && !penalties.iter().any(|p| p.def.name == "l2sq") {
            self.err(CheckError::UnboundedAtoms { span: objective.span, var: var.name.clone() });
            return None;
        }
        Some(Dictionary {
            features,
            var,
            atoms,
            lambda1,
            lambda2,
            coef,
            loss_text,
            loss_span,
            penalties,
            ball,
            params: std::mem::take(&mut self.params),
            solver,
            objective_span: objective.span,
        })
    }

    /// `sparse_code(x, D, λ₁, λ₂)`: the features, the variable, and two constants ≥ 0.
    fn sparse_code(&mut self, inner: &ast::Expr, cx: &TermContext) -> Option<(f64, f64)> {
        let bad = |ck: &mut Self| {
            ck.err(CheckError::SparseCodeArguments {
                span: inner.span,
                features: cx.features.name.clone(),
                var: cx.var.name.clone(),
            })
        };
        let ExprKind::Call { func, args } = &inner.kind else { return None };
        if func.name != "sparse_code" {
            // Another loss beside sparse_code would be a second data term; alone it is not here.
            bad(self);
            return None;
        }
        let [x, d, l1, l2] = args.as_slice() else {
            bad(self);
            return None;
        };
        if x.value.name() != Some(cx.features.name.as_str()) || d.value.name() != Some(cx.var.name.as_str()) {
            bad(self);
            return None;
        }
        let (l1v, l2v) = (self.constant(&l1.value)?, self.constant(&l2.value)?);
        for (v, e) in [(l1v, &l1.value), (l2v, &l2.value)] {
            if v < 0.0 {
                self.err(CheckError::NegativeWeight { span: e.span, weight: Some(v) });
                return None;
            }
        }
        Some((l1v, l2v))
    }

    /// `columns(D) ∈ L2Ball(r)`, r > 0.
    fn column_ball(&mut self, c: &ast::Constraint, var: &Named) -> Option<ColumnBall> {
        let lhs_ok = matches!(&c.lhs.kind, ExprKind::Call { func, args }
            if func.name == "columns" && matches!(args.as_slice(), [a] if a.value.name() == Some(var.name.as_str())));
        let rhs = match (&c.rhs.kind, c.relation) {
            (ExprKind::Call { func, args }, ast::Relation::In) if func.name == "L2Ball" && args.len() == 1 => {
                Some(&args[0].value)
            }
            _ => None,
        };
        let (true, Some(r)) = (lhs_ok, rhs) else {
            self.err(CheckError::DictionaryConstraint { span: c.span, var: var.name.clone() });
            return None;
        };
        let radius = self.constant(r)?;
        if radius <= 0.0 {
            self.err(CheckError::NegativeRadius { span: c.rhs.span });
            return None;
        }
        let text = format!("columns({}) ∈ L2Ball({})", var.name, expr_text(r));
        Some(ColumnBall { radius, text, span: c.span })
    }
}
