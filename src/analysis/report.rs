//! The text `optc check` prints: the model, each term, its prox, the constraints, convexity
//! and the solver with the reason it was chosen.

use super::*;

/// The text `optc check` prints.
pub fn report(model: &Model, st: &Structure, file_name: &str) -> String {
    let mut o = String::new();
    let shape = match &model.shape {
        Shape::Vec(d) => format!("vec[{}]", dim_text(d, model)),
        Shape::Mat(r, c) => format!("mat[{}, {}]", dim_text(r, model), dim_text(c, model)),
    };
    let _ = writeln!(o, "model       {file_name}");
    let _ = writeln!(
        o,
        "data        {}: sparse features, {}: {}",
        model.features.name,
        model.label.name,
        label_text(model)
    );
    if let (true, Some(s)) = (model.loss.weighted, &model.weights) {
        let _ = writeln!(
            o,
            "weights     {}: one a row, ≥ 0; the loss is (1/m)·Σᵢ {}ᵢ·ℓᵢ, not renormalised",
            s.name, s.name
        );
    }
    let _ = writeln!(o, "variable    {}: {shape}", model.var.name);
    match (&model.intercept, &model.intercept_l2) {
        (Some(b), None) if model.intercept_per_class => {
            _ = writeln!(o, "intercept   {}: vec[classes], one offset per class's score, unregularized", b.name)
        }
        (Some(b), None) => _ = writeln!(o, "intercept   {}: scalar, added to every margin, unregularized", b.name),
        (Some(b), Some(r)) => _ = writeln!(
            o,
            "intercept   {}: scalar, added to every margin, penalised by {} = {}·{}² (LIBLINEAR's -B 1 when it matches λ·l2sq({}))",
            b.name,
            r.text,
            fmt_num(r.coef / 2.0),
            b.name,
            model.var.name
        ),
        _ => {}
    }
    if !model.params.is_empty() {
        let ps: Vec<String> = model
            .params
            .iter()
            .map(|p| format!("{} = {}{}", p.name, fmt_num(p.value), if p.overridden { " (--set)" } else { "" }))
            .collect();
        let _ = writeln!(o, "params      {}", ps.join(", "));
    }
    let loss = &model.loss.def;
    let _ = writeln!(o);
    let _ = writeln!(o, "loss        {}({}, {}) = {}", loss.name, loss.label, loss.margin, loss.formula_text);
    match (loss.smooth, loss.lipschitz) {
        (Some(b), Some(g)) => _ = writeln!(o, "            smooth, β = {}; Lipschitz, G = {}", fmt_num(b), fmt6(g)),
        (Some(b), None) => _ = writeln!(o, "            smooth, β = {}; not Lipschitz (unbounded ℓ′)", fmt_num(b)),
        (None, Some(g)) => _ = writeln!(o, "            not smooth (subgradients); Lipschitz, G = {}", fmt6(g)),
        (None, None) => _ = writeln!(o, "            not smooth, not Lipschitz"),
    }
    match &st.derivative {
        Some(d) => _ = writeln!(o, "            ℓ′ = {d}   (derived)"),
        None => _ = writeln!(o, "            ℓ′ = softmax(a) − e_y   (vector of scores)"),
    }
    if model.loss.coef.value != 1.0 {
        let _ = writeln!(o, "            weight {} = {}", model.loss.coef.text, fmt_num(model.loss.coef.value));
    }
    for (t, r) in st.terms.iter().zip(&model.regs) {
        let _ = writeln!(o, "term        {}", t.text);
        let _ = writeln!(o, "            penalty {}", penalty_text(r, &model.var.name));
        let _ = writeln!(
            o,
            "            {}, {}; prox {}",
            if t.convex { "convex" } else { "NOT convex" },
            t.separability.describe(),
            r.def.prox.describe()
        );
        if let Some(c) = &t.composite {
            let _ = writeln!(o, "            composite {c}");
        }
        if let Some(g) = &t.groups {
            let _ = writeln!(o, "            groups {g}");
        }
    }
    for t in &st.constraints {
        let _ = writeln!(o, "constraint  {}", t.text);
        let _ = writeln!(o, "            convex, {}; prox {}", t.separability.describe(), t.prox.describe());
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "convex      {}", if st.convex { "yes" } else { "no" });
    let _ = writeln!(
        o,
        "composite   {}",
        if st.composite {
            "yes: ω(B w) needs an inner fixed-point prox"
        } else {
            "no: every term acts on the variable directly"
        }
    );
    match &st.prox {
        Some(ProxShape::Coordinate(p)) if p.tangent.is_some() => {
            _ = writeln!(o, "prox        per coordinate, of the convex DC surrogate: {}", p.describe())
        }
        Some(ProxShape::Coordinate(p)) => _ = writeln!(o, "prox        per coordinate, closed form: {}", p.describe()),
        Some(ProxShape::Vector(p, t)) if p.l1 > 0.0 || p.l2 > 0.0 => {
            _ = writeln!(
                o,
                "prox        closed form: {} of {}, after the per-coordinate {}",
                t.routine().name(),
                t.describe(),
                p.describe()
            )
        }
        Some(ProxShape::Vector(_, t)) => {
            _ = writeln!(o, "prox        closed form: {} of {}", t.routine().name(), t.describe())
        }
        Some(ProxShape::Multiclass(p, rows)) => {
            let entry = (p.l1 > 0.0 || p.l2 > 0.0 || p.has_box()).then(|| format!("per entry of W {}", p.describe()));
            let row = rows.map(|t| {
                let which = if t.whole_matrix() { "W" } else { "each row of W" };
                format!("{} of {which}", t.routine().name())
            });
            let parts: Vec<String> = entry.into_iter().chain(row).collect();
            let what = if parts.is_empty() { "none (R = 0)".to_string() } else { parts.join(", then ") };
            let _ = writeln!(o, "prox        closed form: {what}");
        }
        Some(ProxShape::Composite(p, c)) if c.prox == super::CompositeProx::GroupShrink => {
            let after = if p.l2 > 0.0 { format!(", after the per-coordinate {}", p.describe()) } else { String::new() };
            _ = writeln!(o, "prox        closed form: ℓ2 shrink of each group{after}")
        }
        Some(ProxShape::Composite(..)) | None => _ = writeln!(o, "prox        term by term (see above)"),
    }
    let _ = writeln!(o, "recommended {} — {}", st.recommended.solver.name(), st.recommended.reason);
    if let Some(rule) = &st.by_shape {
        if let Some(c) = &rule.few_features {
            // A choice that factors a d × d system each step also needs the factor to cost no
            // more than the step's passes over the data's non-zeros.
            let factor = if rule.factored { ", d³ ≤ 96·nnz(X)" } else { "" };
            let _ = writeln!(o, "by shape    d ≤ {FEW_FEATURES} features{factor}: {} — {}", c.solver.name(), c.reason);
        }
        if let Some(c) = &rule.wide {
            let _ = writeln!(o, "by shape    d > m (wide): {} — {}", c.solver.name(), c.reason);
        }
        if let Some((c, ridge)) = &rule.strong {
            // With a free intercept the few features' choice stands under a strong ridge too.
            let beyond = match rule.free_intercept && rule.few_features.is_some() {
                true => format!(", d > {FEW_FEATURES}"),
                false => String::new(),
            };
            let _ = writeln!(
                o,
                "by shape    C·mean ‖xᵢ‖² ≤ {STRONG_RIDGE}{beyond} (here C = {}/m): {} — {}",
                fmt_num(1.0 / ridge),
                c.solver.name(),
                c.reason
            );
        }
    }
    match (&st.chosen, &st.unavailable) {
        (Some(c), _) => _ = writeln!(o, "solver      {} — {}", c.solver.name(), c.reason),
        (None, Some(why)) => _ = writeln!(o, "solver      none in this build — {why}"),
        (None, None) => {}
    }
    o
}

/// A penalty term in plain math with its coefficient multiplied out, e.g. `λ·l2sq(w)` with
/// λ = 1e-4 → `5e-5·‖w‖²`: `l2sq` is ½‖·‖², which a user converting LIBLINEAR's C can miss.
pub(crate) fn penalty_text(r: &crate::check::RegTerm, var: &str) -> String {
    let c = r.coef.value;
    let scalar = |name: &str| r.scalars.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    let arg = match &r.operator {
        Some(Operator::Diff(_)) => format!("D{var}"),
        Some(Operator::Center(_)) => format!("{var}(I − 11ᵀ/k)"),
        Some(_) => format!("B{var}"),
        None => var.to_string(),
    };
    let times = |k: f64, what: String| if k == 1.0 { what } else { format!("{}·{what}", fmt_num(k)) };
    match r.def.name.as_str() {
        "l1" => times(c, format!("‖{arg}‖₁")),
        "l2sq" => times(c / 2.0, format!("‖{arg}‖²")),
        "elastic" => {
            let a = scalar("α").unwrap_or(0.0);
            format!("{} + {}", times(c, format!("‖{arg}‖₁")), times(c * a / 2.0, format!("‖{arg}‖²")))
        }
        "l2" => times(c, format!("‖{arg}‖₂")),
        "linf" => times(c, format!("‖{arg}‖∞")),
        "l1l2" => times(c, format!("Σᵢ ‖{arg}ᵢ‖₂ (rows)")),
        "l1inf" => times(c, format!("Σᵢ ‖{arg}ᵢ‖∞ (rows)")),
        "group_l2" => times(c, format!("Σ_g ‖{arg}_g‖₂")),
        "group_linf" => times(c, format!("Σ_g ‖{arg}_g‖∞")),
        "nuclear" => times(c, format!("‖{arg}‖_* (sum of singular values)")),
        "logeps" => times(c, format!("Σⱼ log({} + |{arg}ⱼ|)", fmt_num(scalar("ε").unwrap_or(0.0)))),
        _ => times(c, format!("{}  ({} = {})", r.text, r.def.name, r.def.formula_text)),
    }
}

/// Six significant digits (√2 → 1.41421).
pub(super) fn fmt6(v: f64) -> String {
    format!("{v:.5e}").parse::<f64>().map_or_else(|_| v.to_string(), fmt_num)
}

pub(super) fn dim_text(d: &crate::check::Dim, model: &Model) -> String {
    match d {
        crate::check::Dim::Features => format!("dim({})", model.features.name),
        crate::check::Dim::Classes => format!("classes({})", model.label.name),
        crate::check::Dim::Fixed(n) => n.to_string(),
    }
}

pub(super) fn label_text(model: &Model) -> &'static str {
    match model.label_kind {
        crate::stdlib::LabelKind::Labels => "labels (±1; 0/1 and other pairs mapped to −1/+1)",
        crate::stdlib::LabelKind::Real => "real targets",
        crate::stdlib::LabelKind::Classes => "classes (k distinct labels)",
    }
}
