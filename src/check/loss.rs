//! `E[loss(y, <x, w>)]`: the loss, its label and margin arguments, and their kinds.

use super::*;

impl Checker<'_> {
    pub(super) fn loss_call(&mut self, inner: &ast::Expr, cx: &TermContext) -> Option<LossDef> {
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
}
