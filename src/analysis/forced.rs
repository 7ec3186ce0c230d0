//! A solver the model forces (`solve with NAME(...)`): why it cannot run the model, and its
//! options parsed against the solver's declaration.

use super::*;

/// Why a forced solver cannot run the model: the reason, the span to blame and its label.
pub(super) fn forced_invalid(
    kind: SolverKind,
    model: &Model,
    terms: &[TermReport],
    constraints: &[TermReport],
    convex: bool,
    composite: bool,
    all_coordinate: bool,
) -> Option<(String, crate::source::Span, String)> {
    let needs = kind.spec().requires;
    let loss = &model.loss.def;
    let term_span = |k: usize| model.regs.get(k).map_or(model.objective_span, |r| r.span);
    match needs.convexity {
        Convexity::Convex if !convex => {
            let k = terms.iter().position(|t| !t.convex).unwrap_or(0);
            return Some((
                format!("`{}` is not convex, and `{}` needs a convex objective (use `dc`)", terms[k].text, kind.name()),
                term_span(k),
                "not convex".into(),
            ));
        }
        Convexity::NonConvex if convex => {
            return Some((
                "online DC is for non-convex penalties such as `logeps`".into(),
                model.objective_span,
                "convex".into(),
            ))
        }
        _ => {}
    }
    // A loss whose ℓ″ has no bound runs where only ℓ″ and a line search are read.
    let newton = matches!(kind, SolverKind::Scd | SolverKind::Tron)
        && loss.known().is_some_and(crate::stdlib::KnownLoss::newton_only);
    if needs.smooth_loss && loss.smooth.is_none() && !newton {
        return Some((
            format!("{} needs a smooth loss, and `{}` is not smooth", kind.name(), loss.name),
            model.loss.span,
            "not smooth".into(),
        ));
    }
    if needs.coordinate_separable && (!all_coordinate || composite) {
        let (text, span) = match terms.iter().position(|t| t.separability != Separability::Coordinate) {
            Some(k) => (terms[k].text.clone(), term_span(k)),
            None => {
                let c = constraints.iter().position(|t| t.separability != Separability::Coordinate).unwrap_or(0);
                (constraints[c].text.clone(), model.constraints[c].span)
            }
        };
        return Some((
            format!(
                "{} updates one coordinate at a time, and `{text}` is not separable per coordinate",
                kind.name().to_uppercase()
            ),
            span,
            "not separable per coordinate".into(),
        ));
    }
    if needs.dual_cd && !dual_cd_fits(model) {
        let why = "dual coordinate descent takes hinge, squared_hinge or logistic with λ·l2sq(w) and no other term or constraint";
        return Some((why.to_string(), model.objective_span, "not an ℓ2-regularized SVM".into()));
    }
    if needs.conjugate_prox && !primal_dual_fits(model) {
        return Some((
            format!(
                "pdhg takes a loss whose conjugate has a closed-form prox (hinge, squared_hinge or squared), on a vector w; `{}` is not one here",
                loss.name
            ),
            model.loss.span,
            "no closed-form prox of ℓ*".into(),
        ));
    }
    if needs.svm_only && !is_svm(model) {
        return Some((
            format!("{} solves the linear SVM, `E[hinge(y, <x, w>)] + λ·l2sq(w)` with no other term", kind.name()),
            model.objective_span,
            "not hinge + l2sq".into(),
        ));
    }
    if needs.l2sq_only {
        if let Some(misfit) = ridge::misfit(model) {
            return Some(misfit);
        }
    }
    if needs.l1_only {
        let why = match kind {
            SolverKind::Smidas => "ℓ1's step in the mirror coordinates is a per-coordinate shrink of θ (sign wⱼ = sign θⱼ); for any other term the step under the p-norm potential, which couples every coordinate through ‖θ‖_p, has no closed form",
            _ => "its only step beside the gradient's is the ℓ1 term's truncation (gravity)",
        };
        if let Some(k) = model.regs.iter().position(|r| r.def.prox != ProxKind::SoftThreshold || r.operator.is_some()) {
            return Some((
                format!("{} handles an ℓ1 penalty only: {why}", kind.name().to_uppercase()),
                term_span(k),
                "not ℓ1".into(),
            ));
        }
        if let Some(c) = model.constraints.first() {
            return Some((
                format!("{} handles no constraints: {why}", kind.name().to_uppercase()),
                c.span,
                "constraint".into(),
            ));
        }
    }
    None
}

/// `scd(newton = 0)` on a loss whose ℓ″ has no bound (Poisson's): its steps need one.
pub(super) fn curvature_bound_refused(
    kind: SolverKind,
    settings: &Settings,
    loss: &crate::stdlib::LossDef,
    at: crate::source::Span,
) -> Option<Problem> {
    (kind == SolverKind::Scd && settings.newton == Some(false) && loss.smooth.is_none()).then(|| {
        Problem::error(
            "optc::solver",
            format!("`scd(newton = 0)` takes curvature-bound steps, and `{}`'s ℓ″ has no bound", loss.name),
            at,
            "newton = 0 here",
        )
        .with_help("remove `newton = 0`: SCD's Newton-type steps need only ℓ″")
    })
}

pub(super) fn parse_settings(
    kind: SolverKind,
    req: &crate::check::SolverRequest,
    problems: &mut Vec<Problem>,
) -> Settings {
    let mut s = Settings::default();
    for o in &req.options {
        let Some(spec) = kind.option(&o.name) else {
            let names = kind.option_names();
            let p = Problem::error(
                "optc::solver",
                format!("`{}` has no option `{}`", kind.name(), o.name),
                o.span,
                "unknown option",
            );
            problems.push(p.suggest(
                &o.name,
                names.iter().copied(),
                format!("`{}` takes {}", kind.name(), names.join(", ")),
            ));
            continue;
        };
        if spec.kind == OptionKind::Schedule {
            let at_1 = o.value.eval(&|n| (n == "t").then_some(1.0));
            if !(at_1.is_finite() && at_1 > 0.0) {
                problems.push(
                    Problem::error(
                        "optc::solver",
                        format!("the step at t = 1 is {at_1}, not a positive number"),
                        o.span,
                        "here",
                    )
                    .with_help("a step schedule is a positive formula of t, e.g. `0.5/sqrt(t)`"),
                );
                continue;
            }
            s.step = Some(o.value.clone());
            s.step_text = Some(o.text.clone());
            continue;
        }
        let Some(v) = symbolic::simplify(&o.value).as_const() else {
            problems.push(Problem::error(
                "optc::solver",
                format!("`{}` must be a constant", o.name),
                o.span,
                "depends on t",
            ));
            continue;
        };
        let whole = v >= 0.0 && v.fract() == 0.0 && v < 1e15;
        let (valid, wanted) = match spec.kind {
            OptionKind::Count => (whole && v >= 1.0, "a whole number ≥ 1"),
            OptionKind::Seed => (whole, "a whole number"),
            OptionKind::Positive => (v > 0.0 && v.is_finite(), "a positive number"),
            OptionKind::Flag => (v == 0.0 || v == 1.0, "0 or 1"),
            OptionKind::Schedule => (true, ""),
        };
        if !valid {
            problems.push(
                Problem::error("optc::solver", format!("`{}` must be {wanted}", o.name), o.span, format!("found {v}"))
                    .with_help(format!("`{}`: {}", o.name, spec.help)),
            );
            continue;
        }
        match o.name.as_str() {
            "epochs" | "iterations" => s.epochs = Some(v as usize),
            "tol" => s.tol = Some(v),
            "seed" => s.seed = v as u64,
            "eta0" => s.eta0 = Some(v),
            "newton" => s.newton = Some(v == 1.0),
            "n0" => s.n0 = Some(v),
            "every" => s.every = Some(v as usize),
            "theta" => s.theta = Some(v),
            "batch" => s.batch = v == 1.0,
            "average" => s.average = v == 1.0,
            "delta" => s.delta = Some(v),
            "rda" => s.rda = v == 1.0,
            "shrinking" => s.shrinking = Some(v == 1.0),
            "weight" => s.weight = Some(v),
            // The options of solvers this build does not compile: the run stops before them.
            _ => {}
        }
    }
    // Batch DC averages nothing: n₀ and averaged outputs would be silently ignored.
    for (name, what) in
        [("n0", "weights the surrogates of online DC"), ("average", "averages the iterates of online DC")]
    {
        if let (true, Some(o)) = (s.batch, req.options.iter().find(|o| o.name == name)) {
            problems.push(
                Problem::error("optc::solver", format!("`{name}` {what}"), o.span, "ignored with batch = 1")
                    .with_help(format!("remove `{name}`, or remove `batch = 1` to run online DC")),
            );
        }
    }
    s
}
