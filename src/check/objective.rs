//! The objective: a sum of terms, each a constant coefficient times one functional factor —
//! the expectation of a loss, or a regularizer.

use super::*;

impl Checker<'_> {
    pub(super) fn terms(&mut self, sum: &ast::Expr, cx: &TermContext) -> Option<(LossTerm, Vec<RegTerm>)> {
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

    pub(super) fn flatten_sum<'e>(&mut self, e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
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
    pub(super) fn split_term<'e>(
        &mut self,
        e: &'e ast::Expr,
        coefs: &mut Vec<(&'e ast::Expr, bool)>,
    ) -> Option<&'e ast::Expr> {
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
    pub(super) fn collect_factors<'e>(
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

    pub(super) fn functional<'e>(&mut self, e: &'e ast::Expr, divide: bool, found: &mut Vec<&'e ast::Expr>) -> bool {
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

    pub(super) fn no_functional(&mut self, e: &ast::Expr) -> Option<&'static ast::Expr> {
        self.err(
            Problem::error("optc::objective", "this term is a constant", e.span, "no loss or regularizer here")
                .with_help("a term is `E[loss(y, <x, w>)]` or `c·reg(w)`; constants do not change the minimizer"),
        );
        None
    }

    pub(super) fn coefficient(&mut self, coefs: &[(&ast::Expr, bool)]) -> Option<Coef> {
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
}

/// What the terms of an objective are checked against.
pub(super) struct TermContext<'a> {
    pub features: &'a Named,
    pub label: &'a Named,
    pub label_kind: LabelKind,
    pub var: &'a Named,
    pub shape: &'a Shape,
}
