//! The lazy O(nnz) plan computes the same iterates as the eager O(d) reference, which applies
//! every step's prox to every coordinate (to 1e-12, on sparse data: each row of the fixture
//! touches about a fifth of the features, so most proxes are deferred).

mod common;

use common::{fixture, model_text, run};

fn same_iterates(objective: &str, kind: &str, data: &str, lambda: f64) {
    let model = model_text(kind, lambda, objective);
    for seed in [1, 7] {
        for epochs in [1, 3] {
            let lazy = run(&model, &fixture(data), epochs, seed, false);
            let eager = run(&model, &fixture(data), epochs, seed, true);
            assert!(lazy.plan.info.lazy && !eager.plan.info.lazy);
            let (a, b) = (lazy.outcome.state.weights(&lazy.plan), eager.outcome.state.weights(&eager.plan));
            assert_eq!(a.len(), b.len());
            let mut moved = 0;
            for (j, (x, y)) in a.iter().zip(b).enumerate() {
                let tol = 1e-12 * x.abs().max(y.abs()).max(1.0);
                assert!(
                    (x - y).abs() <= tol,
                    "{objective}, seed {seed}, {epochs} epochs: w[{j}] lazy {x} vs eager {y}"
                );
                moved += usize::from(*x != 0.0);
            }
            assert!(moved > 0, "the run must move some weights for the comparison to mean anything");
        }
    }
}

#[test]
fn l1() {
    same_iterates("minimize E[logistic(y, <x, w>)] + λ·l1(w)", "labels", "binary.svm", 0.01);
}

#[test]
fn l2sq() {
    same_iterates("minimize E[hinge(y, <x, w>)] + λ/2·l2sq(w)", "labels", "binary.svm", 0.5);
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

/// The elastic-net running sums are reset (after a full flush) before exp(L) overflows; a
/// strong l2 term and many steps force several resets, and the iterates still agree.
#[test]
fn elastic_net_through_resets() {
    let model = model_text("labels", 50.0, "minimize E[logistic(y, <x, w>)] + λ·elastic(w, 1)");
    let lazy = run(&model, &fixture("binary.svm"), 4, 2, false);
    let eager = run(&model, &fixture("binary.svm"), 4, 2, true);
    let (a, b) = (lazy.outcome.state.weights(&lazy.plan), eager.outcome.state.weights(&eager.plan));
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-12 * x.abs().max(1.0), "lazy {x} vs eager {y}");
    }
}
