//! The objective: a sum of terms, each a constant coefficient times one functional factor —
//! the expectation of a loss, or a regularizer.

use super::*;

impl Checker<'_> {
    /// The loss, the regularizers of the variable, and `μ·l2sq(b)` on the intercept if any.
    pub(super) fn terms(
        &mut self,
        sum: &ast::Expr,
        cx: &TermContext,
    ) -> Option<(LossTerm, Vec<RegTerm>, Option<InterceptL2>)> {
        let mut parts = vec![];
        self.flatten_sum(sum, &mut parts);
        let mut loss: Option<LossTerm> = None;
        let mut saw_expectation = false;
        let mut regs = vec![];
        let mut intercept_l2: Option<InterceptL2> = None;
        for part in parts {
            let mut coefs = vec![];
            let Some(functional) = self.split_term(part, &mut coefs) else {
                continue;
            };
            let coef = self.coefficient(&coefs)?;
            if coef.value < 0.0 || coef.value.is_nan() {
                self.err(CheckError::NegativeWeight { span: part.span, weight: Some(coef.value) });
                continue;
            }
            match &functional.kind {
                ExprKind::Expect(inner) => {
                    saw_expectation = true;
                    if let Some(prev) = &loss {
                        self.err(CheckError::TwoDataTerms { span: functional.span, first: prev.span });
                        continue;
                    }
                    let Some((inner, weighted)) = self.weights_factor(inner, cx) else {
                        continue;
                    };
                    if let Some(def) = self.loss_call(inner, cx) {
                        loss = Some(LossTerm { def, coef, weighted, span: functional.span });
                    }
                }
                ExprKind::Call { func, args } if is_intercept_l2(func, args, cx) => {
                    let text = format!(
                        "{}{}",
                        if coef.text.is_empty() { String::new() } else { format!("{}·", coef.text) },
                        expr_text(functional)
                    );
                    intercept_l2 = Some(match intercept_l2 {
                        // Two terms add up, as two `l2sq(w)` do.
                        Some(prev) => InterceptL2 {
                            coef: prev.coef + coef.value,
                            text: format!("{} + {text}", prev.text),
                            span: prev.span,
                        },
                        None => InterceptL2 { coef: coef.value, text, span: part.span },
                    });
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
            // `0·l2sq(b)` (a parameter set to 0, say) penalises nothing: b is free, as without it.
            Some(l) => Some((l, regs, intercept_l2.filter(|r| r.coef > 0.0))),
            // The data term was written but is wrong: that problem is already reported.
            None if saw_expectation => None,
            None => {
                self.err(CheckError::NoDataTerm { span: sum.span, names: cx.names() });
                None
            }
        }
    }

    /// `s·loss(...)` or `loss(...)·s` inside `E[...]`, with `s` the declared weights: the loss
    /// call and true. Any other product is reported; anything else is the loss call itself.
    fn weights_factor<'e>(&mut self, inner: &'e ast::Expr, cx: &TermContext) -> Option<(&'e ast::Expr, bool)> {
        let ExprKind::Binary(BinOp::Mul, a, b) = &inner.kind else {
            return Some((inner, false));
        };
        let weights = cx.weights.map(|s| s.name.as_str());
        let is_weights = |e: &ast::Expr| e.name().is_some() && e.name() == weights;
        match (is_weights(a), is_weights(b)) {
            (true, false) => Some((b, true)),
            (false, true) => Some((a, true)),
            _ => {
                let factor = if matches!(a.kind, ExprKind::Call { .. }) { b } else { a };
                self.err(CheckError::NotWeights { span: factor.span, weights: weights.map(str::to_string) });
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
                self.err(CheckError::SubtractedTerm { span: b.span });
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
                self.err(CheckError::ProductOfTerms { span: second.span });
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
                self.err(CheckError::NegativeWeight { span: e.span, weight: None });
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
            self.err(CheckError::InDenominator { span: e.span });
            return false;
        }
        found.push(e);
        true
    }

    pub(super) fn no_functional(&mut self, e: &ast::Expr) -> Option<&'static ast::Expr> {
        self.err(CheckError::ConstantTerm { span: e.span });
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
    pub intercept: Option<&'a Named>,
    /// The data's `s: weights` column, if declared.
    pub weights: Option<&'a Named>,
}

impl TermContext<'_> {
    /// The model's names, for hints that spell out a term.
    pub fn names(&self) -> Names {
        Names { features: self.features.name.clone(), label: self.label.name.clone(), var: self.var.name.clone() }
    }
}

/// `l2sq(b)` with `b` the declared intercept: its ridge, not a regularizer of the variable.
fn is_intercept_l2(func: &ast::Ident, args: &[ast::Arg], cx: &TermContext) -> bool {
    func.name == "l2sq"
        && matches!(args, [a] if matches!(&a.value.kind, ExprKind::Name(n) if cx.intercept.is_some_and(|b| b.name == *n)))
}
