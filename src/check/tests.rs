//! The checker's verdicts on small models, matched by kind: the wording is the snapshots' job.

use super::{check, check_dictionary_errors, check_errors, CheckError, Column};
use crate::source::SourceFile;
use crate::stdlib::{LabelKind, Library};
use crate::syntax;

const HEAD: &str = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.1\n";

/// The errors of a model that must not check.
fn errors(text: &str) -> Vec<CheckError> {
    let program = syntax::parse(&SourceFile::new("test.opt", text)).expect("the test model parses");
    match check_errors(&program, &Library::standard(), &[]) {
        Ok(_) => panic!("checked without errors:\n{text}"),
        Err(e) => e,
    }
}

/// The one error of a model, after the usual header.
fn error(body: &str) -> CheckError {
    let mut e = errors(&format!("{HEAD}{body}\n"));
    assert_eq!(e.len(), 1, "{e:?}");
    e.remove(0)
}

#[test]
fn a_good_model_checks() {
    let text = format!("{HEAD}minimize E[logistic(y, <x, w>)] + λ·l1(w) st w ∈ Box(-1, 1)\n");
    let program = syntax::parse(&SourceFile::new("test.opt", text)).expect("parses");
    assert!(check_errors(&program, &Library::standard(), &[]).is_ok());
}

#[test]
fn unknown_losses_and_regularizers() {
    let e = error("minimize E[logistik(y, <x, w>)]");
    assert!(
        matches!(&e, CheckError::UnknownLoss { name, candidates, .. }
            if name == "logistik" && candidates.iter().any(|c| c == "logistic")),
        "{e:?}"
    );
    let e = error("minimize E[l1(y, <x, w>)]");
    assert!(matches!(&e, CheckError::RegularizerInExpectation { name, var, .. } if name == "l1" && var == "w"));
    let e = error("minimize E[hinge(y, <x, w>)] + λ·l3(w)");
    assert!(matches!(&e, CheckError::UnknownRegularizer { name, .. } if name == "l3"), "{e:?}");
    let e = error("minimize E[hinge(y, <x, w>)] + λ·logistic(w)");
    assert!(matches!(&e, CheckError::LossAsRegularizer { name, .. } if name == "logistic"), "{e:?}");
}

#[test]
fn missing_declarations() {
    let e = errors("var w: vec[3]\nminimize E[hinge(y, <x, w>)]\n");
    assert!(matches!(e.as_slice(), [CheckError::NoFeatures { .. }]), "{e:?}");
    let e = errors("data x: sparse\nvar w: vec[dim(x)]\nminimize E[hinge(y, <x, w>)]\n");
    assert!(matches!(e.as_slice(), [CheckError::NoLabels { .. }]), "{e:?}");
    let e = errors("data x: sparse, y: labels\nminimize E[hinge(y, <x, w>)]\n");
    assert!(matches!(e.as_slice(), [CheckError::NoVariable { .. }]), "{e:?}");
    let e = errors(HEAD);
    assert!(matches!(e.as_slice(), [CheckError::NoObjective { .. }]), "{e:?}");
}

#[test]
fn things_declared_twice() {
    let e = error("var v: vec[dim(x)]\nminimize E[hinge(y, <x, w>)]");
    assert!(matches!(e, CheckError::SecondVariable { .. }), "{e:?}");
    // The second declaration wins, so the loss then reads the wrong features too.
    let e = errors(&format!("{HEAD}data z: sparse\nminimize E[hinge(y, <x, w>)]\n"));
    assert!(matches!(e.as_slice(), [CheckError::ColumnTwice { column: Column::Features, .. }, ..]), "{e:?}");
    let e = error("param λ = 2\nminimize E[hinge(y, <x, w>)]");
    assert!(matches!(&e, CheckError::ParamTwice { name, .. } if name == "λ"), "{e:?}");
}

#[test]
fn shapes_and_label_kinds() {
    let e = errors("data x: sparse, y: classes\nvar w: vec[dim(x)]\nminimize E[softmax(y, <x, w>)]\n").remove(0);
    assert!(matches!(&e, CheckError::MulticlassOnVector { loss, .. } if loss == "softmax"), "{e:?}");
    let e = error("minimize E[hinge(y, <x, w>)] + λ·l1inf(w)");
    assert!(matches!(&e, CheckError::RowsOfVector { regularizer, .. } if regularizer == "l1inf"), "{e:?}");
    let e = errors("data x: sparse, y: real\nvar w: vec[dim(x)]\nminimize E[hinge(y, <x, w>)]\n");
    assert!(
        matches!(
            e.as_slice(),
            [CheckError::WrongLabelKind { needs: LabelKind::Labels, declared: LabelKind::Real, .. }]
        ),
        "{e:?}"
    );
    let e = errors("data x: sparse, y: labels\nvar w: vec[dim(y)]\nminimize E[hinge(y, <x, w>)]\n");
    assert!(
        matches!(e.as_slice(), [CheckError::DimNotFeatures { features: Some(f), .. }, CheckError::NoVariable { .. }] if f == "x"),
        "{e:?}"
    );
}

#[test]
fn the_terms_of_the_objective() {
    let e = error("minimize E[hinge(y, <x, w>)] - λ·l1(w)");
    assert!(matches!(e, CheckError::SubtractedTerm { .. }), "{e:?}");
    let e = error("minimize E[hinge(y, <x, w>)] + (0 - λ)·l1(w)");
    assert!(matches!(e, CheckError::NegativeWeight { weight: Some(w), .. } if w == -0.1), "{e:?}");
    let e = error("minimize λ·l1(w)");
    assert!(matches!(e, CheckError::NoDataTerm { .. }), "{e:?}");
    let e = error("minimize E[hinge(y, <x, w>)] + μ·l1(w)");
    assert!(matches!(&e, CheckError::UnknownName { name, .. } if name == "μ"), "{e:?}");
}

#[test]
fn bad_constraints() {
    let e = error("minimize E[hinge(y, <x, w>)] st w ∈ Box(1, -1)");
    assert!(matches!(e, CheckError::EmptyBox { lo, hi, .. } if lo == 1.0 && hi == -1.0), "{e:?}");
    let e = error("minimize E[hinge(y, <x, w>)] st w ∈ Bx(0, 1)");
    assert!(matches!(&e, CheckError::UnknownSet { name, .. } if name == "Bx"), "{e:?}");
    let e = error("minimize E[hinge(y, <x, w>)] st w ∈ Box(0)");
    assert!(matches!(&e, CheckError::SetArity { set, found: 1, .. } if set == "Box"), "{e:?}");
    let e = error("minimize E[hinge(y, <x, w>)] st w ∈ L2Ball(-1)");
    assert!(matches!(e, CheckError::NegativeRadius { .. }), "{e:?}");
}

#[test]
fn solver_requests() {
    let e = error("minimize E[hinge(y, <x, w>)]\nsolve with fobs");
    assert!(matches!(&e, CheckError::UnknownSolver { name, candidates, .. }
        if name == "fobs" && candidates.iter().any(|c| c == "fobos")));
    let e = error("minimize E[hinge(y, <x, w>)]\nsolve with fobos(step = 1/sqrt(s))");
    assert!(matches!(&e, CheckError::UnknownName { name, free, .. } if name == "s" && free == &["t"]), "{e:?}");
}

/// `check` renders at the boundary: the same problems, in the same order, as the kinds say.
#[test]
fn check_renders_the_kinds_in_order() {
    let text = "data x: sparse, y: labels, z: dense2\nvar w: vec[dim(x)]\nminimize E[logistik(y, <x, w>)] + l3(w)\n";
    let program = syntax::parse(&SourceFile::new("test.opt", text)).expect("parses");
    let lib = Library::standard();
    let kinds = check_errors(&program, &lib, &[]).expect_err("has errors");
    let problems = check(&program, &lib, &[]).expect_err("has errors");
    assert!(matches!(
        kinds.as_slice(),
        [CheckError::UnknownDataKind { .. }, CheckError::UnknownLoss { .. }, CheckError::UnknownRegularizer { .. }]
    ));
    let codes: Vec<_> = problems.iter().map(|p| p.code).collect();
    assert_eq!(codes, ["optc::data", "optc::loss", "optc::regularizer"]);
    for (k, p) in kinds.iter().zip(&problems) {
        assert_eq!(k.to_problem().message, p.message);
    }
}

/// A parameter that evaluates to NaN is an error, not a stack overflow in the simplifier
/// (NaN never equals itself, so "simplify until nothing changes" compared constants by bits).
#[test]
fn a_nan_parameter_is_an_error() {
    for value in ["sqrt(0-1)", "0*(1e308*1e308)"] {
        let e = errors(&format!(
            "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam a = {value}\nminimize E[logistic(y, <x, w>)] + a·l1(w)\n"
        ));
        assert!(e.iter().any(|e| matches!(e, CheckError::NanValue { .. })), "{value}: {e:?}");
    }
}

/// The centred trace norm's spelling, and what is refused around it.
#[test]
fn centred_trace_norm_spelling() {
    let head = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = 0.1\n";
    let ok = format!("{head}minimize E[softmax(y, <x, W>)] + λ·nuclear(center(classes(y)) Wᵀ)\n");
    let program = syntax::parse(&SourceFile::new("test.opt", ok)).expect("parses");
    assert!(check_errors(&program, &Library::standard(), &[]).is_ok());
    for bad in ["λ·l1(center(classes(y)) Wᵀ)", "λ·nuclear(center(dim(x)) Wᵀ)", "λ·nuclear(diff(classes(y)) W')"]
    {
        let e = errors(&format!("{head}minimize E[softmax(y, <x, W>)] + {bad}\n"));
        assert!(matches!(e.as_slice(), [CheckError::CenteringOnly { .. }]), "{bad}: {e:?}");
    }
}

/// `μ·l2sq(b)` is the intercept's ridge, not a regularizer of w; two of them add up, and one
/// whose coefficient is 0 leaves b free, as a model without it does.
#[test]
fn the_intercepts_ridge_is_kept_apart_from_the_regularizers() {
    let ridge = |terms: &str| {
        let text = format!(
            "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam μ = 0\nminimize E[hinge(y, <x, w> + b)] + 0.1·l2sq(w){terms}\n"
        );
        let program = syntax::parse(&SourceFile::new("test.opt", text)).expect("parses");
        let model = check_errors(&program, &Library::standard(), &[]).expect("checks");
        assert_eq!(model.regs.len(), 1, "{terms}: only l2sq(w) is a regularizer of w");
        model.intercept_l2.map(|r| r.coef)
    };
    assert_eq!(ridge(" + 0.5·l2sq(b)"), Some(0.5));
    assert_eq!(ridge(" + 0.5·l2sq(b) + 0.25·l2sq(b)"), Some(0.75));
    assert_eq!(ridge(" + μ·l2sq(b)"), None);
    assert_eq!(ridge(""), None);
}

const DICTIONARY: &str = "data x: sparse\nvar D: mat[dim(x), 64]\nparam λ = 0.1, γ = 1e-3\n";

/// A dictionary model's verdict: the model, or its errors.
fn dictionary(body: &str) -> Result<super::Dictionary, Vec<CheckError>> {
    let text = format!("{DICTIONARY}{body}\n");
    let program = syntax::parse(&SourceFile::new("test.opt", text)).expect("the test model parses");
    assert!(super::is_dictionary(&program), "{body}");
    check_dictionary_errors(&program, &Library::standard(), &[])
}

/// The model (Mairal 2013 §4.3), with `param a = …, b = …` on one line: K = 64 atoms,
/// λ₁ and λ₂ folded, the structured penalty and the ball.
#[test]
fn a_dictionary_model_checks() {
    let d = dictionary(
        "minimize E[sparse_code(x, D, λ, 0.01)] + γ·group_linf(groups(load(\"squares.txt\")), D)\nst columns(D) ∈ L2Ball(1)",
    )
    .expect("checks");
    assert_eq!((d.atoms, d.lambda1, d.lambda2), (64, 0.1, 0.01));
    assert_eq!(d.penalties.len(), 1);
    assert_eq!((d.penalties[0].def.name.as_str(), d.penalties[0].coef.value), ("group_linf", 1e-3));
    assert_eq!(d.ball.as_ref().map(|b| b.radius), Some(1.0));
    // A ridge bounds the atoms as well as the ball does.
    let d = dictionary("minimize E[sparse_code(x, D, λ, 0)] + λ·l1(D) + γ·l2sq(D)").expect("checks");
    assert!(d.ball.is_none() && d.penalties.len() == 2);
    // A supervised command is told what it was given.
    let program = syntax::parse(&SourceFile::new(
        "t.opt",
        format!("{DICTIONARY}minimize E[sparse_code(x, D, λ, 0.01)] + γ·l2sq(D)\n"),
    ))
    .expect("parses");
    let e = check_errors(&program, &Library::standard(), &[]).expect_err("not a supervised model");
    assert!(matches!(e.as_slice(), [CheckError::DictionaryModel { .. }]), "{e:?}");
}

#[test]
fn dictionary_models_that_do_not_check() {
    let one = |body: &str| {
        let e = dictionary(body).expect_err(body);
        assert_eq!(e.len(), 1, "{body}: {e:?}");
        e.into_iter().next().expect("one")
    };
    let ball = "\nst columns(D) ∈ L2Ball(1)";
    let e = one(&format!("minimize E[sparse_code(x, D, λ)]{ball}"));
    assert!(
        matches!(&e, CheckError::SparseCodeArguments { features, var, .. } if features == "x" && var == "D"),
        "{e:?}"
    );
    let e = one(&format!("minimize E[sparse_code(D, x, λ, 0.01)]{ball}"));
    assert!(matches!(&e, CheckError::SparseCodeArguments { .. }), "{e:?}");
    let e = one(&format!("minimize E[sparse_code(x, D, -1, 0.01)]{ball}"));
    assert!(matches!(&e, CheckError::NegativeWeight { weight: Some(w), .. } if *w == -1.0), "{e:?}");
    let e = one(&format!("minimize E[sparse_code(x, D, λ, 0.01)] + λ·l1inf(D){ball}"));
    assert!(matches!(&e, CheckError::NotAColumnPenalty { name, .. } if name == "l1inf"), "{e:?}");
    let e = one("minimize E[sparse_code(x, D, λ, 0.01)]\nst D ∈ L2Ball(1)");
    assert!(matches!(&e, CheckError::DictionaryConstraint { var, .. } if var == "D"), "{e:?}");
    let e = one(&format!("minimize E[sparse_code(x, D, λ, 0.01)]{ball}, columns(D) ∈ L2Ball(2)"));
    assert!(matches!(&e, CheckError::DictionaryConstraint { .. }), "{e:?}");
    let e = one("minimize E[sparse_code(x, D, λ, 0.01)] + λ·l1(D)");
    assert!(matches!(&e, CheckError::UnboundedAtoms { var, .. } if var == "D"), "{e:?}");
    // The shape: atoms of dim(x), a number of them.
    let text = "data x: sparse\nvar D: vec[dim(x)]\nminimize E[sparse_code(x, D, 0.1, 0.01)]\n";
    let program = syntax::parse(&SourceFile::new("t.opt", text)).expect("parses");
    let e = check_dictionary_errors(&program, &Library::standard(), &[]).expect_err("a vector");
    assert!(matches!(e.as_slice(), [CheckError::DictionaryShape { var, .. }] if var == "D"), "{e:?}");
}

/// A declared loss's constants after the margin: set at the call by numbers or parameters (so
/// `--set` reaches them), counted, and held to the bounds the loss declares at their values.
#[test]
fn the_constants_of_a_loss() {
    let text = |body: &str| {
        format!(
            "loss hub(y: real, r, h) = h·abs(r - y) - ½·h² + ½·max(0, h - abs(r - y))²\n    smooth 1, lipschitz h\n\
             data x: sparse, y: real\nvar w: vec[dim(x)]\nparam δ = 2\n{body}\n"
        )
    };
    let checked = |body: &str, overrides: &[(String, f64)]| {
        let program = syntax::parse(&SourceFile::new("test.opt", text(body))).expect("parses");
        check_errors(&program, &Library::standard(), overrides).expect("checks")
    };
    // ℓ′ at r − y = d is the clamp of d to [−h, h].
    let slope = |def: &crate::stdlib::LossDef, d: f64| {
        let f = def.derivative.as_ref().expect("a scalar loss's derivative");
        f.eval(&|n| Some(if n == def.label { 0.0 } else { d }))
    };
    let m = checked("minimize E[hub(y, <x, w>, δ)]", &[]);
    assert_eq!(
        (m.loss.def.bound.as_slice(), m.loss.def.lipschitz, m.loss.def.smooth),
        (&[2.0][..], Some(2.0), Some(1.0))
    );
    assert_eq!((slope(&m.loss.def, 5.0), slope(&m.loss.def, -0.5)), (2.0, -0.5));
    let m = checked("minimize E[hub(y, <x, w>, δ)]", &[("δ".into(), 0.25)]);
    assert_eq!((m.loss.def.lipschitz, slope(&m.loss.def, 5.0)), (Some(0.25), 0.25));
    let m = checked("minimize E[hub(y, <x, w>, 3·δ)]", &[]);
    assert_eq!(m.loss.def.bound, vec![6.0]);

    let e = errors(&text("minimize E[hub(y, <x, w>)]"));
    assert!(matches!(&e[..], [CheckError::LossArity { found: 2, constants, .. }] if constants == &["h"]), "{e:?}");
    let e = errors(&text("minimize E[hub(y, <x, w>, ε)]"));
    assert!(matches!(&e[..], [CheckError::UnknownName { name, .. }] if name == "ε"), "{e:?}");
    let e = errors(&text("minimize E[hub(y, <x, w>, 0 - δ)]"));
    assert!(matches!(&e[..], [CheckError::LossConstant { name, value, .. }] if name == "h" && *value == -2.0), "{e:?}");
    let e = errors(&text("minimize E[hinge(y, <x, w>, δ)]").replace("y: real", "y: labels"));
    assert!(matches!(&e[..], [CheckError::LossArity { found: 3, constants, .. }] if constants.is_empty()), "{e:?}");
}

/// The built-in losses' constants where they mean what they say: δ > 0, τ strictly between 0
/// and 1, ε ≥ 0 (a diagnostic at the constant, not a run that answers another problem).
#[test]
fn the_built_in_losses_check_their_constants() {
    let head = "data x: sparse, y: real\nvar w: vec[dim(x)]\nparam λ = 0.1\n";
    let verdict = |call: &str| {
        let text = format!("{head}minimize E[{call}] + λ·l1(w)\n");
        let program = syntax::parse(&SourceFile::new("test.opt", text)).expect("parses");
        check_errors(&program, &Library::standard(), &[]).map(|_| ())
    };
    for good in [
        "huber(y, <x, w>, 1.35)",
        "quantile(y, <x, w>, 0.1)",
        "eps_insensitive(y, <x, w>, 0)",
        "squared_eps_insensitive(y, <x, w>, 0.5)",
    ] {
        assert!(verdict(good).is_ok(), "{good}");
    }
    for (bad, constant, value) in [
        ("huber(y, <x, w>, 0)", "δ", 0.0),
        ("quantile(y, <x, w>, 1)", "τ", 1.0),
        ("quantile(y, <x, w>, 0 - 0.5)", "τ", -0.5),
        ("eps_insensitive(y, <x, w>, 0 - 1)", "ε", -1.0),
        ("squared_eps_insensitive(y, <x, w>, 0 - 1)", "ε", -1.0),
    ] {
        let e = verdict(bad).expect_err(bad);
        assert!(
            matches!(&e[..], [CheckError::LossConstant { name, value: v, .. }] if name == constant && *v == value),
            "{bad}: {e:?}"
        );
    }
}
