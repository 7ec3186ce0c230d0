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
        if args.len() != 2 {
            let loss = def.name.clone();
            self.err(CheckError::LossArity { loss, found: args.len(), span: inner.span, names: cx.names() });
            return None;
        }
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
        let inner_ok = match &margin.kind {
            ExprKind::Inner(a, b) => {
                (a.name == cx.features.name && b.name == cx.var.name)
                    || (b.name == cx.features.name && a.name == cx.var.name)
            }
            _ => false,
        };
        if !inner_ok {
            let (features, var) = (cx.features.name.clone(), cx.var.name.clone());
            self.err(CheckError::NotAMargin { span: margin.span, features, var });
            return None;
        }
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
}
