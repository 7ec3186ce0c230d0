//! `E[loss(y, <x, w>)]`: the loss, its label and margin arguments, and their kinds.

use super::*;

impl Checker<'_> {
    pub(super) fn loss_call(&mut self, inner: &ast::Expr, cx: &TermContext) -> Option<LossDef> {
        let ExprKind::Call { func, args } = &inner.kind else {
            self.err(CheckError::NotALoss { span: inner.span, names: cx.names() });
            return None;
        };
        let Some(def) = self.lib.loss(&func.name).cloned() else {
            if self.failed.contains(&func.name) {
                return None; // its declaration's problem is reported
            }
            let (name, span) = (func.name.clone(), func.span);
            self.err(if self.lib.regularizer(&func.name).is_some() {
                CheckError::RegularizerInExpectation { name, span, var: cx.var.name.clone() }
            } else {
                let candidates = self.lib.losses.iter().map(|l| l.name.clone()).collect();
                CheckError::UnknownLoss { name, span, candidates }
            });
            return None;
        };
        if args.len() != 2 + def.constants.len() {
            let (loss, constants) = (def.name.clone(), def.constants.clone());
            self.err(CheckError::LossArity { loss, constants, found: args.len(), span: inner.span, names: cx.names() });
            return None;
        }
        // The constants after the margin: numbers or parameters (so `--set` tunes them).
        let mut values = Vec::with_capacity(def.constants.len());
        for a in &args[2..] {
            values.push(self.constant(&a.value)?);
        }
        let bound = def.bind(&values).and_then(|d| match d.known().map(|k| k.constants_hold(&values)) {
            Some(Err((k, must))) => Err((def.constants[k].clone(), format!("it must be {must}"))),
            _ => Ok(d),
        });
        let def = match bound {
            Ok(d) => d,
            Err((name, why)) => {
                let k = def.constants.iter().position(|c| *c == name).unwrap_or(0);
                let (loss, span) = (def.name.clone(), args[2 + k].value.span);
                self.err(CheckError::LossConstant { loss, name, value: values[k], why, span });
                return None;
            }
        };
        let label_arg = &args[0].value;
        if label_arg.name() != Some(cx.label.name.as_str()) {
            let (loss, label) = (def.name.clone(), cx.label.name.clone());
            self.err(CheckError::LabelArgument { loss, label, span: label_arg.span });
            return None;
        }
        let ok_kind = match def.label_kind {
            LabelKind::Labels => cx.label_kind == LabelKind::Labels,
            LabelKind::Real => cx.label_kind != LabelKind::Classes,
            LabelKind::Classes => cx.label_kind == LabelKind::Classes,
        };
        if !ok_kind {
            self.err(CheckError::WrongLabelKind {
                loss: def.name.clone(),
                needs: def.label_kind,
                label: cx.label.name.clone(),
                declared: cx.label_kind,
                span: label_arg.span,
                label_span: cx.label.span,
            });
            return None;
        }
        let margin = &args[1].value;
        self.margin(margin, cx)?;
        match (def.multiclass, cx.shape) {
            (true, Shape::Vec(_)) => {
                let loss = def.name.clone();
                self.err(CheckError::MulticlassOnVector {
                    loss,
                    span: margin.span,
                    var_span: cx.var.span,
                    names: cx.names(),
                });
                None
            }
            (false, Shape::Mat(..)) => {
                self.err(CheckError::ScalarLossOnMatrix {
                    loss: def.name.clone(),
                    var: cx.var.name.clone(),
                    span: margin.span,
                    var_span: cx.var.span,
                });
                None
            }
            _ => Some(def),
        }
    }

    /// `<x, w>`, or `<x, w> + b` / `b + <x, w>` with `b` the declared intercept (which must then
    /// be there: a declared unknown that nothing reads would be reported as fitted).
    fn margin(&mut self, margin: &ast::Expr, cx: &TermContext) -> Option<()> {
        let inner_ok = |e: &ast::Expr| match &e.kind {
            ExprKind::Inner(a, b) => {
                (a.name == cx.features.name && b.name == cx.var.name)
                    || (b.name == cx.features.name && a.name == cx.var.name)
            }
            _ => false,
        };
        let intercept = cx.intercept.map(|b| b.name.clone());
        let added = match &margin.kind {
            ExprKind::Binary(BinOp::Add, l, r) if inner_ok(l) && r.name().is_some() => Some(r),
            ExprKind::Binary(BinOp::Add, l, r) if inner_ok(r) && l.name().is_some() => Some(l),
            _ if inner_ok(margin) => None,
            _ => {
                let (features, var) = (cx.features.name.clone(), cx.var.name.clone());
                self.err(CheckError::NotAMargin { span: margin.span, features, var, intercept });
                return None;
            }
        };
        match (added, cx.intercept) {
            (Some(e), Some(b)) if e.name() == Some(b.name.as_str()) => Some(()),
            (Some(e), _) if e.name().is_some_and(|n| self.failed.iter().any(|f| f == n)) => None,
            (Some(e), _) => {
                let name = e.name().unwrap_or_default().to_string();
                self.err(CheckError::NotAnIntercept { name, span: e.span, intercept });
                None
            }
            (None, Some(b)) => {
                self.err(CheckError::InterceptUnused {
                    span: b.span,
                    margin: margin.span,
                    names: cx.names(),
                    intercept: b.name.clone(),
                });
                None
            }
            (None, None) => Some(()),
        }
    }
}
