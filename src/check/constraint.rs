//! `st w ∈ Set(...)`, `w ≥ c`, `w ≤ c`.

use super::*;

impl Checker<'_> {
    pub(super) fn constraint(&mut self, c: &ast::Constraint, cx: &TermContext) -> Option<ConstraintTerm> {
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
}
