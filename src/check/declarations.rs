//! The declarations: `data`, `param` (constants folded, `--set` applied), `var` and its
//! dimensions.

use super::*;

impl Checker<'_> {
    pub(super) fn data(
        &mut self,
        d: &ast::DataDecl,
        features: &mut Option<Named>,
        label: &mut Option<(Named, LabelKind)>,
    ) {
        for (name, kind) in &d.bindings {
            let named = Named { name: name.name.clone(), span: name.span };
            match kind.name.as_str() {
                "sparse" | "dense" => {
                    if let Some(prev) = features {
                        let p = Problem::error("optc::data", "features are declared twice", name.span, "second")
                            .with_label(prev.span, "first");
                        self.err(p);
                    }
                    *features = Some(named);
                }
                k => match LabelKind::from_name(k) {
                    Some(lk) => {
                        if let Some((prev, _)) = label {
                            let p = Problem::error("optc::data", "labels are declared twice", name.span, "second")
                                .with_label(prev.span, "first");
                            self.err(p);
                        }
                        *label = Some((named, lk));
                    }
                    None => {
                        let kinds = ["sparse", "labels", "classes", "real"];
                        let p =
                            Problem::error("optc::data", format!("unknown data kind `{k}`"), kind.span, "unknown kind");
                        let p = p.suggest(
                            k,
                            kinds,
                            "a data column is `sparse` (features), `labels` (±1), `classes` or `real`",
                        );
                        self.err(p);
                    }
                },
            }
        }
    }

    pub(super) fn param(&mut self, p: &ast::ParamDecl, overrides: &[(String, f64)]) {
        if let Some(prev) = self.params.iter().find(|q| q.name == p.name.name) {
            let pr = Problem::error(
                "optc::param",
                format!("parameter `{}` is declared twice", p.name.name),
                p.name.span,
                "again",
            )
            .with_label(prev.span, "first declared here");
            self.err(pr);
            return;
        }
        let overridden = overrides.iter().find(|(n, _)| *n == p.name.name);
        let value = match overridden {
            Some((_, v)) => Some(*v),
            None => self.constant(&p.value),
        };
        if value.is_none() {
            // Reported already; later uses of the name must not add "unknown name".
            self.failed.push(p.name.name.clone());
        }
        if let Some(value) = value {
            self.params.push(Param {
                name: p.name.name.clone(),
                value,
                span: p.name.span,
                overridden: overridden.is_some(),
            });
        }
    }

    /// Evaluates a constant expression (numbers, parameters, arithmetic, scalar functions).
    pub(super) fn constant(&mut self, e: &ast::Expr) -> Option<f64> {
        let sym = match to_sym(e) {
            Ok(s) => s,
            Err(p) => {
                self.err(p);
                return None;
            }
        };
        let sym = self.fold_params(&sym, e, &[])?;
        let v = symbolic::simplify(&sym).as_const();
        match v {
            Some(v) if v.is_nan() => {
                self.err(Problem::error("optc::param", "this value is not a number (NaN)", e.span, "evaluates to NaN"));
                None
            }
            Some(v) if v.is_infinite() => {
                self.err(Problem::error("optc::param", "this value is infinite", e.span, "evaluates to ±∞"));
                None
            }
            Some(v) => Some(v),
            None => {
                let mut free = vec![];
                symbolic::simplify(&sym).vars(&mut free);
                let p = if free.is_empty() {
                    Problem::error("optc::param", "this value is not a finite number", e.span, "divides by zero")
                        .with_help("a parameter must evaluate to a finite number")
                } else {
                    Problem::error("optc::param", "expected a constant", e.span, "not a constant")
                };
                self.err(p);
                None
            }
        }
    }

    /// Replaces parameter names by their values; `free` names (like `t`) stay symbolic.
    pub(super) fn fold_params(&mut self, sym: &Sym, at: &ast::Expr, free: &[&str]) -> Option<Sym> {
        let mut names = vec![];
        sym.vars(&mut names);
        let declared: Vec<String> = self.params.iter().map(|p| p.name.clone()).collect();
        for n in &names {
            if free.contains(&n.as_str()) || resolve_param(&declared, n).is_some() {
                continue;
            }
            if resolve_param(&self.failed, n).is_some() {
                return None; // its declaration was reported
            }
            let span = find_name(at, n).unwrap_or(at.span);
            let p = Problem::error("optc::name", format!("unknown name `{n}`"), span, "not a parameter");
            let p = match suggest_param(n, &declared) {
                Some(s) => p.with_help(format!("did you mean `{s}`?")),
                None if free.is_empty() => p.with_help("declare it first: `param NAME = VALUE`"),
                None => p.with_help(format!("a value here may use parameters and {}", free.join(", "))),
            };
            self.err(p);
            return None;
        }
        let params = &self.params;
        Some(sym.substitute(&|n| {
            let d: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
            let name = resolve_param(&d, n)?;
            params.iter().find(|p| &p.name == name).map(|p| Sym::Const(p.value))
        }))
    }

    pub(super) fn var_shape(
        &mut self,
        v: &ast::VarDecl,
        features: Option<&Named>,
        label: Option<&(Named, LabelKind)>,
    ) -> Option<Shape> {
        let dims: Vec<Dim> = v.dims.iter().filter_map(|d| self.dim(d, features, label)).collect();
        if dims.len() != v.dims.len() {
            return None;
        }
        match (v.kind.name.as_str(), dims.as_slice()) {
            ("vec", [d]) => Some(Shape::Vec(d.clone())),
            ("mat", [r, c]) => Some(Shape::Mat(r.clone(), c.clone())),
            ("vec", _) => {
                self.err(
                    Problem::error("optc::shape", "`vec` takes one dimension", v.span, "here")
                        .with_help("write `vec[dim(x)]`"),
                );
                None
            }
            ("mat", _) => {
                self.err(
                    Problem::error("optc::shape", "`mat` takes two dimensions", v.span, "here")
                        .with_help("write `mat[dim(x), classes(y)]`"),
                );
                None
            }
            (k, _) => {
                let p = Problem::error("optc::shape", format!("unknown variable type `{k}`"), v.kind.span, "here");
                let p = p.suggest(k, ["vec", "mat"], "a variable is a `vec[n]` or a `mat[n, k]`");
                self.err(p);
                None
            }
        }
    }

    pub(super) fn dim(
        &mut self,
        e: &ast::Expr,
        features: Option<&Named>,
        label: Option<&(Named, LabelKind)>,
    ) -> Option<Dim> {
        match &e.kind {
            ExprKind::Number(n) if *n >= 1.0 && n.fract() == 0.0 => Some(Dim::Fixed(*n as usize)),
            ExprKind::Call { func, args } if func.name == "dim" && args.len() == 1 => {
                let arg = args[0].value.name().unwrap_or("");
                if features.is_some_and(|f| f.name == arg) {
                    Some(Dim::Features)
                } else {
                    let p = Problem::error(
                        "optc::shape",
                        "`dim` takes the features",
                        args[0].value.span,
                        "not the features",
                    );
                    let p = match features {
                        Some(f) => p.with_help(format!("write `dim({})`", f.name)),
                        None => p.with_help("declare `data x: sparse, y: labels` before the variable"),
                    };
                    self.err(p);
                    None
                }
            }
            ExprKind::Call { func, args } if func.name == "classes" && args.len() == 1 => {
                let arg = args[0].value.name().unwrap_or("");
                match label {
                    Some((l, LabelKind::Classes)) if l.name == arg => Some(Dim::Classes),
                    Some((l, k)) if l.name == arg => {
                        let p = Problem::error(
                            "optc::shape",
                            format!("`classes({arg})` needs `{arg}: classes`, but `{arg}` is `{}`", k.name()),
                            e.span,
                            "here",
                        )
                        .with_label(l.span, "declared here")
                        .with_help(format!("declare `{arg}: classes` in the `data` line"));
                        self.err(p);
                        None
                    }
                    _ => {
                        self.err(Problem::error("optc::shape", "`classes` takes the labels", e.span, "not the labels"));
                        None
                    }
                }
            }
            _ => {
                self.err(
                    Problem::error("optc::shape", "expected a dimension", e.span, "not a dimension")
                        .with_help("a dimension is `dim(x)`, `classes(y)` or a whole number"),
                );
                None
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // The objective
}
