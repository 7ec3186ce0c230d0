//! The lazy O(nnz) plan computes the same iterates as the eager O(d) reference, which applies
//! every step's prox to every coordinate (to 1e-12, on sparse data: each row of the fixture
//! touches about a fifth of the features, so most proxes are deferred).

mod common;

use common::{fixture, model_text, run, run_with};

/// Lazy and eager FOBOS runs of `model` end with the same weights (to 1e-12 relative).
fn assert_same(model: &str, data: &str, epochs: usize, seed: u64) {
    assert_same_with("fobos", model, data, epochs, seed);
}

fn assert_same_with(solver: &str, model: &str, data: &str, epochs: usize, seed: u64) {
    let lazy = run_with(solver, model, &fixture(data), epochs, seed, false);
    let eager = run_with(solver, model, &fixture(data), epochs, seed, true);
    assert!(lazy.plan.info.lazy && !eager.plan.info.lazy);
    let (a, b) = (lazy.outcome.state.weights(&lazy.plan), eager.outcome.state.weights(&eager.plan));
    assert_eq!(a.len(), b.len());
    for (j, (x, y)) in a.iter().zip(b).enumerate() {
        let tol = 1e-12 * x.abs().max(y.abs()).max(1.0);
        assert!((x - y).abs() <= tol, "{solver}: {model}, seed {seed}, {epochs} epochs: w[{j}] lazy {x} vs eager {y}");
    }
    assert!(a.iter().any(|x| *x != 0.0), "the run must move some weights for the comparison to mean anything");
}

fn same_iterates(objective: &str, kind: &str, data: &str, lambda: f64) {
    let model = model_text(kind, lambda, objective);
    for seed in [1, 7] {
        for epochs in [1, 3] {
            assert_same(&model, data, epochs, seed);
        }
    }
}

#[test]
fn l1() {
    same_iterates("minimize E[logistic(y, <x, w>)] + λ·l1(w)", "labels", "binary.svm", 0.01);
}

#[test]
fn l2sq() {
    same_iterates("minimize E[hinge(y, <x, w>)] + λ·l2sq(w)", "labels", "binary.svm", 0.25);
}

#[test]
fn elastic_net() {
    same_iterates("minimize E[logistic(y, <x, w>)] + λ·elastic(w, 2)", "labels", "binary.svm", 0.05);
}

#[test]
fn l1_with_a_box() {
    same_iterates("minimize E[squared(y, <x, w>)] + λ·l1(w) st w ∈ Box(-0.2, 0.3)", "real", "regression.svm", 0.01);
}

#[test]
fn l1_nonnegative() {
    same_iterates("minimize E[squared(y, <x, w>)] + λ·l1(w) st w ≥ 0", "real", "regression.svm", 0.01);
}

/// The elastic-net running sums are reset (after a full flush) before exp(L) overflows. Here
/// l2 = λα = 50 and η₀ ≥ 4 (rows of norm ≤ 1), so L = Σₜ log(1 + 50·η₀/√t) passes the reset
/// threshold 300 within the first ~150 of the 800 steps, several times over; l1 = λ = 1e-3 is
/// small enough that the weights stay non-zero, so the comparison means something.
#[test]
fn elastic_net_through_resets() {
    let model = model_text("labels", 1e-3, "minimize E[logistic(y, <x, w>)] + λ·elastic(w, 5e4)");
    assert_same(&model, "binary.svm", 4, 2);
    // The premise: the running sum really crosses the reset threshold, more than once.
    let r = run(&model, &fixture("binary.svm"), 4, 2, false);
    let param = |name: &str| {
        let k = r.plan.scalars.iter().position(|s| s.name == name).expect("parameter");
        r.outcome.state.scalars[k]
    };
    let (eta0, l2) = (param("η0"), param("l2"));
    let total: f64 = (1..=800).map(|t| (eta0 / (t as f64).sqrt() * l2).ln_1p()).sum();
    assert!(total > 2.0 * 300.0, "Σ log(1 + η·l2) = {total}: too small to force resets");
}

/// ½‖·‖² with a box keeps per-coordinate log-stamps (the global scale cannot express clamps).
#[test]
fn l2sq_with_a_box() {
    same_iterates("minimize E[logistic(y, <x, w>)] + λ·l2sq(w) st w ∈ Box(-0.4, 0.6)", "labels", "binary.svm", 0.15);
}

/// FOBOS on a multiclass W: the lazy plan defers each untouched row's prox and catches the row
/// up in one routine call (Duchi & Singer, Prop. 4); it must match the eager plan, which proxes
/// every row of W after every step.
fn same_matrix_iterates(penalty: &str, lambda: f64) {
    let model = format!(
        "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = {lambda}\nminimize E[softmax(y, <x, W>)] + {penalty}\n"
    );
    for seed in [1, 7] {
        for epochs in [1, 3] {
            assert_same(&model, "multiclass.svm", epochs, seed);
        }
    }
}

#[test]
fn matrix_l1() {
    same_matrix_iterates("λ·l1(W)", 0.02);
}

#[test]
fn matrix_l1l2_rows() {
    same_matrix_iterates("λ·l1l2(W)", 0.05);
}

#[test]
fn matrix_l1inf_rows() {
    same_matrix_iterates("λ·l1inf(W)", 0.05);
}

#[test]
fn matrix_rows_with_l2sq() {
    same_matrix_iterates("λ·l1l2(W) + λ·l2sq(W)", 0.05);
    same_matrix_iterates("λ·l1inf(W) + 0.5·l2sq(W)", 0.05);
}

#[test]
fn matrix_l2sq_and_elastic() {
    same_matrix_iterates("λ·l2sq(W)", 0.1);
    same_matrix_iterates("λ·elastic(W, 2)", 0.02);
}

/// ℓ1 per entry beside a row norm has no one-step catch-up: the plan stays eager and says so.
#[test]
fn matrix_sparse_group_is_eager() {
    let model = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = 0.01\nminimize E[softmax(y, <x, W>)] + λ·l1(W) + λ·l1l2(W)\n";
    let r = run(model, &fixture("multiclass.svm"), 1, 1, false);
    assert!(!r.plan.info.lazy);
    assert!(r.plan.info.summary.contains("no one-step catch-up"), "{}", r.plan.info.summary);
}

/// SMM with ℓ1: the lazy plan catches a coordinate up over the steps it missed in closed form
/// (binary search on the prefix sums of the weights, then the log-products); the eager plan
/// averages every coordinate at every step. Same iterates, on the dense-ish and the sparse
/// fixture, over several epochs (the history restarts at each), with the first step's ω = 1.
#[test]
fn smm_l1() {
    for (data, lambda) in [("binary.svm", 0.01), ("sparse_binary.svm", 0.0005)] {
        for n0 in [1.0, 100.0] {
            let model = model_text("labels", lambda, "minimize E[logistic(y, <x, w>)] + λ·l1(w)")
                + &format!("solve with smm(n0 = {n0})\n");
            for (epochs, seed) in [(1, 1), (3, 7)] {
                assert_same_with("smm", &model, data, epochs, seed);
            }
        }
    }
    let squared = model_text("real", 0.01, "minimize E[squared(y, <x, w>)] + λ·l1(w)");
    assert_same_with("smm", &squared, "regression.svm", 3, 2);
}

/// AdaGrad's lazy plan: a coordinate outside the row keeps its sⱼ, so the n proxes it missed
/// are one closed form (n·τ·l1 for ℓ1, Aⁿ for ½‖·‖², both for the elastic net; a box clamped
/// once). Every per-coordinate regularizer is lazy, and matches the eager plan. So does dual
/// averaging, whose weights are computed when read.
fn same_adagrad_iterates(objective: &str, kind: &str, data: &str, lambda: f64) {
    for solve in ["adagrad", "adagrad(rda = 1)"] {
        let model = model_text(kind, lambda, &format!("{objective}\nsolve with {solve}"));
        for seed in [1, 7] {
            for epochs in [1, 3] {
                assert_same_with("adagrad", &model, data, epochs, seed);
            }
        }
    }
}

#[test]
fn adagrad_l1() {
    same_adagrad_iterates("minimize E[logistic(y, <x, w>)] + λ·l1(w)", "labels", "binary.svm", 0.01);
    same_adagrad_iterates("minimize E[logistic(y, <x, w>)] + λ·l1(w)", "labels", "sparse_binary.svm", 5e-4);
}

#[test]
fn adagrad_l1_with_a_box() {
    same_adagrad_iterates(
        "minimize E[squared(y, <x, w>)] + λ·l1(w) st w ∈ Box(-0.2, 0.3)",
        "real",
        "regression.svm",
        0.01,
    );
    same_adagrad_iterates("minimize E[logistic(y, <x, w>)] + λ·l1(w) st w ≥ 0.05", "labels", "binary.svm", 0.01);
}

#[test]
fn adagrad_l2sq_and_elastic_net() {
    same_adagrad_iterates("minimize E[hinge(y, <x, w>)] + λ·l2sq(w)", "labels", "binary.svm", 0.25);
    same_adagrad_iterates("minimize E[logistic(y, <x, w>)] + λ·elastic(w, 2)", "labels", "binary.svm", 0.01);
    same_adagrad_iterates(
        "minimize E[logistic(y, <x, w>)] + λ·l2sq(w) st w ∈ Box(-0.4, 0.6)",
        "labels",
        "binary.svm",
        0.15,
    );
}

/// Truncated gradient: between two reads of a coordinate only the truncation T moves it, and
/// T(T(v, α), β) = T(v, α + β), so the lazy plan's one catch-up per read matches the eager
/// plan, which truncates every weight at every K-th step: with K = 1 and θ = ∞ (FOBOS's ℓ1
/// step), every K steps, and with a threshold θ that spares some weights and not others.
#[test]
fn truncated_gradient() {
    for (data, loss, lambda) in [("binary.svm", "logistic", 0.01), ("sparse_binary.svm", "hinge", 0.002)] {
        let objective = format!("minimize E[{loss}(y, <x, w>)] + λ·l1(w)");
        for solve in ["truncated", "truncated(every = 3)", "truncated(every = 5, theta = 0.1)"] {
            let model = model_text("labels", lambda, &objective) + &format!("solve with {solve}\n");
            for (epochs, seed) in [(1, 1), (3, 7)] {
                assert_same_with("truncated", &model, data, epochs, seed);
            }
        }
    }
    // The premise of the θ case: after the run some weights lie beyond θ (spared) and some
    // non-zero ones within it (truncated).
    let model = model_text("labels", 0.01, "minimize E[logistic(y, <x, w>)] + λ·l1(w)")
        + "solve with truncated(every = 5, theta = 0.1)\n";
    let r = run_with("truncated", &model, &fixture("binary.svm"), 3, 7, false);
    let w = r.outcome.state.weights(&r.plan);
    assert!(w.iter().any(|v| v.abs() > 0.1), "no weight beyond θ: {w:?}");
    assert!(w.iter().any(|v| *v != 0.0 && v.abs() <= 0.1), "no non-zero weight within θ: {w:?}");
}
