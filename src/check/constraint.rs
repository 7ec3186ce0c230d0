//! `st w ∈ Set(...)`, `w ≥ c`, `w ≤ c`.

use super::*;

impl Checker<'_> {
    pub(super) fn constraint(&mut self, c: &ast::Constraint, cx: &TermContext) -> Option<ConstraintTerm> {
        if let Some(b) = cx.intercept.filter(|b| c.lhs.name() == Some(b.name.as_str())) {
            let (intercept, declared) = (b.name.clone(), b.span);
            self.err(CheckError::InterceptRegularized { intercept, span: c.lhs.span, declared });
            return None;
        }
        if c.lhs.name() != Some(cx.var.name.as_str()) {
            self.err(CheckError::ConstrainsOther { var: cx.var.name.clone(), span: c.lhs.span });
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
                        self.err(CheckError::NotASet { span: c.rhs.span });
                        return None;
                    }
                };
                let Some(set) = self.lib.set(name).cloned() else {
                    let candidates = self.lib.sets.iter().map(|s| s.name.clone()).collect();
                    self.err(CheckError::UnknownSet { name: name.to_string(), span: name_span, candidates });
                    return None;
                };
                if args.len() != set.params.len() {
                    self.err(CheckError::SetArity {
                        set: set.name.clone(),
                        params: set.params.clone(),
                        found: args.len(),
                        span: c.rhs.span,
                    });
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
            self.err(CheckError::EmptyBox { lo: args[0], hi: args[1], span: c.span });
            return None;
        }
        if matches!(set.name.as_str(), "L1Ball" | "L2Ball") && args[0] < 0.0 {
            self.err(CheckError::NegativeRadius { span: c.rhs.span });
            return None;
        }
        Some(ConstraintTerm { set, args, text, span: c.span })
    }
}
