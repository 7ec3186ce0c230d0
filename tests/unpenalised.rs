//! No penalty (`LogisticRegression(C=np.inf)`, `lam=0`): F = (c/m)·Σᵢ ℓᵢ has no regularizer to
//! bound the dual, so a damped Newton method stops on the gradient's norm and says so; it
//! reaches scikit-learn's optimum at tight tolerance (tests/fixtures/make.py), and both back
//! ends agree on its plan.

mod common;

use common::{fixture, fixture_named, optc, text, write};
use optc::data::read_libsvm;
use optc::exec::driver::RunSettings;
use optc::plan::ScalarRole;
use std::path::Path;

#[test]
fn the_unpenalised_fixture_reaches_its_optimum_on_the_gradient_rule() {
    let dir = tempfile::tempdir().expect("tmp");
    let fx = fixture_named("unpenalised_logistic_intercept");
    let m = write(dir.path(), "m.opt", &fx.model);
    for tol in ["1e-4", "1e-9"] {
        let out = optc(&["run", m.to_str().unwrap(), fx.data.to_str().unwrap(), "--tol", tol, "--json", "--quiet"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(r["solver"], "tron", "{r}");
        assert_eq!(r["status"], "converged", "{r}");
        assert!(r["gap"].is_null(), "no penalty, no gap: {r}");
        assert!(r["stopped_by"].as_str().unwrap().contains("the gradient's norm"), "{r}");
        let f = r["objective"].as_f64().unwrap();
        assert!(f >= fx.best * (1.0 - 1e-12), "F {f} below F* {}", fx.best);
        let allowed = if tol == "1e-9" { 1e-10 } else { 1e-4 };
        assert!(f - fx.best <= allowed * fx.best, "tol {tol}: F {f} against F* {}", fx.best);
    }
}

/// Without a penalty the Newton system is singular along what no row's curvature reaches (an
/// empty column here, and softmax's W + v·1ᵀ and b + t·1): the damping keeps every step finite,
/// F falls at every epoch, and the interpreter and the JIT agree.
#[test]
fn unpenalised_newton_steps_are_damped_and_agree_across_back_ends() {
    let binary = read_libsvm(&fixture("binary.svm")).expect("fixture");
    let classes = read_libsvm(&fixture("multiclass.svm")).expect("fixture");
    for (text, data) in [
        ("data x: sparse, y: labels\nvar w: vec[40]\nvar b: scalar\nminimize E[logistic(y, <x, w> + b)]\n", &binary),
        ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[squared_hinge(y, <x, w>)]\n", &binary),
        (
            "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nvar b: vec[classes(y)]\nminimize E[softmax(y, <x, W> + b)]\n",
            &classes,
        ),
    ] {
        let plan = common::compile(text, &Default::default());
        assert_eq!(plan.info.solver.name(), "tron", "{text}");
        assert!(plan.certificate.is_none(), "{text}");
        let mut previous = f64::INFINITY;
        for epochs in [1, 2, 4, 6] {
            let run = common::run_plan_on(plan.clone(), data, &RunSettings::fixed(epochs, 1), None, Path::new("."), true);
            let f = run.eval.objective;
            assert!(f.is_finite() && f <= previous + 1e-12, "{text}: F {f} after {epochs} epochs, {previous} before");
            previous = f;
        }
        let jit = common::run_plan_on(plan.clone(), data, &RunSettings::fixed(4, 1), None, Path::new("."), true);
        let interp = common::run_plan_on(plan.clone(), data, &RunSettings::fixed(4, 1), None, Path::new("."), false);
        for (k, decl) in plan.vectors.iter().enumerate().filter(|(_, v)| !v.role.is_input()) {
            assert_eq!(jit.outcome.state.vectors[k], interp.outcome.state.vectors[k], "{text}: {}", decl.name);
        }
        for (k, decl) in plan.scalars.iter().enumerate().filter(|(_, s)| s.role != ScalarRole::Local) {
            assert_eq!(jit.outcome.state.scalars[k], interp.outcome.state.scalars[k], "{text}: {}", decl.name);
        }
    }
}

/// The gradient rule's reference is ∇F at w = 0 (LIBLINEAR's), not the run's first iterate: a
/// run started at the optimum stops after one epoch instead of chasing a tol of its own tiny
/// gradient. A penalised intercept beside no penalty on w is refused, with a diagnostic.
#[test]
fn a_warm_start_at_the_unpenalised_optimum_stops_at_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let fx = fixture_named("unpenalised_logistic_intercept");
    let m = write(dir.path(), "m.opt", &fx.model);
    let saved = dir.path().join("opt.model");
    let (m, data) = (m.to_str().unwrap(), fx.data.to_str().unwrap());
    let out = optc(&["run", m, data, "--tol", "1e-10", "--save", saved.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = optc(&["run", m, data, "--tol", "1e-6", "--init", saved.to_str().unwrap(), "--json", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(r["status"], "converged", "{r}");
    assert_eq!(r["epochs"], 1, "{r}");
    // Softmax on W, as a library caller's second fit continues from its first.
    let softmax = write(
        dir.path(),
        "s.opt",
        "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nminimize E[softmax(y, <x, W>)]\n",
    );
    let classes = fixture("multiclass.svm");
    let (softmax, classes) = (softmax.to_str().unwrap(), classes.to_str().unwrap());
    let best = dir.path().join("softmax.model");
    let out = optc(&["run", softmax, classes, "--tol", "1e-10", "--save", best.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = optc(&["run", softmax, classes, "--tol", "1e-6", "--init", best.to_str().unwrap(), "--json", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!((r["status"].as_str(), r["epochs"].as_u64()), (Some("converged"), Some(1)), "{r}");

    let penalised_b = write(
        dir.path(),
        "b.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nminimize E[logistic(y, <x, w> + b)] + 0.1·l2sq(b)\n",
    );
    let out = optc(&["run", penalised_b.to_str().unwrap(), data]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("penalised intercept"), "{}", text(&out.stderr));
}
