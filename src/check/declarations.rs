//! The declarations: `data`, `param` (constants folded, `--set` applied), `var` and its
//! dimensions.

use super::*;

impl Checker<'_> {
    pub(super) fn data(
        &mut self,
        d: &ast::DataDecl,
        features: &mut Option<Named>,
        label: &mut Option<(Named, LabelKind)>,
        weights: &mut Option<Named>,
    ) {
        for (name, kind) in &d.bindings {
            let named = Named { name: name.name.clone(), span: name.span };
            match kind.name.as_str() {
                "sparse" | "dense" => {
                    if let Some(prev) = features {
                        self.err(CheckError::ColumnTwice {
                            column: Column::Features,
                            span: name.span,
                            first: prev.span,
                        });
                    }
                    *features = Some(named);
                }
                "weights" => {
                    if let Some(prev) = weights {
                        let first = prev.span;
                        self.err(CheckError::ColumnTwice { column: Column::Weights, span: name.span, first });
                    }
                    *weights = Some(named);
                }
                k => match LabelKind::from_name(k) {
                    Some(lk) => {
                        if let Some((prev, _)) = label {
                            let first = prev.span;
                            self.err(CheckError::ColumnTwice { column: Column::Labels, span: name.span, first });
                        }
                        *label = Some((named, lk));
                    }
                    None => self.err(CheckError::UnknownDataKind { kind: k.to_string(), span: kind.span }),
                },
            }
        }
    }

    pub(super) fn param(&mut self, p: &ast::ParamDecl, overrides: &[(String, f64)]) {
        if let Some(prev) = self.params.iter().find(|q| q.name == p.name.name) {
            self.err(CheckError::ParamTwice { name: p.name.name.clone(), span: p.name.span, first: prev.span });
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
                self.err(CheckError::Formula(p));
                return None;
            }
        };
        let sym = self.fold_params(&sym, e, &[])?;
        let v = symbolic::simplify(&sym).as_const();
        match v {
            Some(v) if v.is_nan() => {
                self.err(CheckError::NanValue { span: e.span });
                None
            }
            Some(v) if v.is_infinite() => {
                self.err(CheckError::InfiniteValue { span: e.span });
                None
            }
            Some(v) => Some(v),
            None => {
                let mut free = vec![];
                symbolic::simplify(&sym).vars(&mut free);
                self.err(if free.is_empty() {
                    CheckError::DividesByZero { span: e.span }
                } else {
                    CheckError::NotConstant { span: e.span }
                });
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
            let free = free.iter().map(|f| f.to_string()).collect();
            self.err(CheckError::UnknownName { name: n.clone(), span, declared, free });
            return None;
        }
        let params = &self.params;
        Some(sym.substitute(&|n| {
            let d: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
            let name = resolve_param(&d, n)?;
            params.iter().find(|p| &p.name == name).map(|p| Sym::Const(p.value))
        }))
    }

    /// Whether a `var` declares an intercept rather than the weights: `scalar`, or — beside a
    /// matrix W — a `vec` over the classes (a per-class intercept).
    pub(super) fn is_intercept(&self, v: &ast::VarDecl, var: Option<&(Named, Shape)>) -> bool {
        let per_class = matches!(var, Some((_, Shape::Mat(..))))
            && v.kind.name == "vec"
            && matches!(v.dims.as_slice(), [d] if matches!(&d.kind, ExprKind::Call { func, .. } if func.name == "classes"));
        (v.kind.name == "scalar" && v.dims.is_empty()) || per_class
    }

    /// A `scalar`, or (beside W, see [`Self::is_intercept`]) one per class (`per_class`).
    pub(super) fn intercept(&mut self, v: &ast::VarDecl, intercept: &mut Option<Named>, per_class: &mut bool) {
        if let Some(first) = intercept {
            self.err(CheckError::SecondIntercept { span: v.name.span, first: first.span });
        } else {
            *intercept = Some(Named { name: v.name.name.clone(), span: v.name.span });
            *per_class = v.kind.name != "scalar";
        }
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
                self.err(CheckError::VecDimensions { span: v.span });
                None
            }
            ("mat", _) => {
                self.err(CheckError::MatDimensions { span: v.span });
                None
            }
            (k, _) => {
                self.err(CheckError::UnknownVariableType { kind: k.to_string(), span: v.kind.span });
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
                    let features = features.map(|f| f.name.clone());
                    self.err(CheckError::DimNotFeatures { span: args[0].value.span, features });
                    None
                }
            }
            ExprKind::Call { func, args } if func.name == "classes" && args.len() == 1 => {
                let arg = args[0].value.name().unwrap_or("");
                match label {
                    Some((l, LabelKind::Classes)) if l.name == arg => Some(Dim::Classes),
                    Some((l, k)) if l.name == arg => {
                        let label = arg.to_string();
                        self.err(CheckError::ClassesOfOtherKind { label, kind: *k, span: e.span, declared: l.span });
                        None
                    }
                    _ => {
                        self.err(CheckError::ClassesNotLabels { span: e.span });
                        None
                    }
                }
            }
            _ => {
                self.err(CheckError::NotADimension { span: e.span });
                None
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // The objective
}
