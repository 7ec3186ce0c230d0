//! FOBOS reaches the optima that CVXPY + Clarabel computed independently
//! (tests/fixtures/make.py → tests/fixtures/optima.json).

mod common;

use common::{fixture, model_text, run};

fn optima() -> serde_json::Value {
    let text = std::fs::read_to_string(fixture("optima.json")).expect("optima.json");
    serde_json::from_str(&text).expect("optima.json parses")
}

fn check_fixture(name: &str) {
    let all = optima();
    let f = &all["fixtures"][name];
    let data = f["data"].as_str().expect("data");
    let kind = if data.starts_with("regression") { "real" } else { "labels" };
    let model = model_text(kind, f["lambda"].as_f64().expect("lambda"), f["model"].as_str().expect("model"));
    let best = f["objective"].as_f64().expect("objective");
    let r = run(&model, &fixture(data), 1000, 1, false);
    let gap = (r.eval.objective - best) / best;
    assert!(gap <= 1e-3, "{name}: F = {} vs F* = {best} (relative gap {gap:.2e})", r.eval.objective);
    // Nobody beats the optimum by more than the reference solver's tolerance.
    assert!(gap >= -1e-6, "{name}: F = {} below F* = {best}: the objective is evaluated wrongly", r.eval.objective);
}

#[test]
fn l1_logistic() {
    check_fixture("l1_logistic");
}

#[test]
fn linear_svm() {
    check_fixture("svm");
}

#[test]
fn l2_logistic() {
    check_fixture("l2_logistic");
}

#[test]
fn elastic_net_logistic() {
    check_fixture("elastic_logistic");
}

#[test]
fn box_constrained_logistic() {
    check_fixture("box_logistic");
}

#[test]
fn lasso() {
    check_fixture("lasso");
}

#[test]
fn nonnegative_lasso() {
    check_fixture("nonneg_lasso");
}

/// The box holds at every returned weight, and l1 gives exact zeros (not tiny values).
#[test]
fn constraints_hold_and_l1_is_sparse() {
    let model = model_text("labels", 0.02, "minimize E[logistic(y, <x, w>)] + λ·l1(w) st w ∈ Box(-0.3, 0.4)");
    let r = run(&model, &fixture("binary.svm"), 50, 3, false);
    let w = r.outcome.state.weights(&r.plan);
    assert!(w.iter().all(|v| (-0.3..=0.4).contains(v)), "{w:?}");
    let zeros = w.iter().filter(|v| **v == 0.0).count();
    assert!(zeros >= 5, "λ = 0.02 should zero out several weights exactly, got {zeros} zeros: {w:?}");
}

/// A box away from 0 starts the weights inside it, and stays feasible.
#[test]
fn box_excluding_zero() {
    let model = model_text("labels", 0.01, "minimize E[logistic(y, <x, w>)] + λ·l1(w) st w ∈ Box(0.1, 2)");
    for eager in [false, true] {
        let r = run(&model, &fixture("binary.svm"), 5, 1, eager);
        let w = r.outcome.state.weights(&r.plan);
        assert!(w.iter().all(|v| (0.1..=2.0).contains(v)), "eager={eager}: {w:?}");
    }
}
