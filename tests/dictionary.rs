//! Dictionary learning (Mairal 2013 §4.3): the sparse coder against an independent solve.

use optc::runtime::dictionary::Dictionary;
use serde_json::Value;

fn fixture() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sparse_codes.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("sparse_codes.json")).expect("json")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().expect("array").iter().map(|x| x.as_f64().expect("number")).collect()
}

/// The codes and the cost ℓ(x, D) of every signal match CVXPY + Clarabel's (tests/fixtures/make.py
/// sparse_codes) to 1e-6, at three (λ₁, λ₂), one of them without the ridge.
#[test]
fn codes_match_an_independent_elastic_net_solve() {
    let f = fixture();
    let rows: Vec<Vec<f64>> = f["D"].as_array().expect("D").iter().map(floats).collect();
    let (m, k) = (rows.len(), rows[0].len());
    // The atoms are the columns of D: K rows of m.
    let d: Vec<f64> = (0..k).flat_map(|a| rows.iter().map(move |r| r[a])).collect();
    let dict = Dictionary { atoms: k, dim: m, d, a: 0.0, b: vec![0.0; k * m] };
    let signals: Vec<Vec<f64>> = f["x"].as_array().expect("x").iter().map(floats).collect();
    let gram = dict.gram();
    let indices: Vec<u32> = (0..m as u32).collect();
    for case in f["cases"].as_array().expect("cases") {
        let (l1, l2) = (case["lambda1"].as_f64().expect("λ₁"), case["lambda2"].as_f64().expect("λ₂"));
        for (s, x) in signals.iter().enumerate() {
            let (alpha, cost) = dict.code(&gram, &indices, x, l1, l2);
            let want = floats(&case["codes"][s]);
            for (a, w) in alpha.iter().zip(&want) {
                assert!((a - w).abs() < 1e-6, "λ = ({l1}, {l2}), signal {s}: {alpha:?} vs {want:?}");
            }
            let want_cost = case["costs"][s].as_f64().expect("cost");
            assert!(
                (cost - want_cost).abs() < 1e-8 * (1.0 + want_cost),
                "λ = ({l1}, {l2}), signal {s}: {cost} vs {want_cost}"
            );
        }
    }
}

mod common;

use common::{assert_has_lines, optc, text, write};

/// `optc check` describes a dictionary model (the spelling, with its squares file): the
/// dictionary, the loss, the structured penalty per atom, the ball, non-convexity, and SMM with
/// its batch and passes; `solve with smm(...)` sets them, another solver or option is refused,
/// and `optc run` says training is not in this build yet.
#[test]
fn check_describes_a_dictionary_model_and_run_refuses_it_for_now() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "squares.txt", "1 2 9 10\n2 3 10 11\n");
    let head = "data  x: sparse\nvar   D: mat[dim(x), 64]\nparam λ = 0.1, γ = 1e-3\n\
                minimize E[sparse_code(x, D, λ, 0.01)] + γ·group_linf(groups(load(\"squares.txt\")), D)\n\
                st columns(D) ∈ L2Ball(1)\n";
    let model = write(dir.path(), "dict.opt", head);
    let out = optc(&["check", model.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_has_lines(
        &text(&out.stdout),
        &[
            "variable    D: mat[dim(x), 64] — the dictionary, 64 atoms (its columns)",
            "term        γ·group_linf(groups(load(\"squares.txt\")), D)",
            "constraint  columns(D) ∈ L2Ball(1): each atom projected on the ball after the prox",
            "convex      no: bilinear in D and the codes; a stationary point, no duality gap",
        ],
    );
    assert!(text(&out.stdout).contains("solver      smm — dictionary learning: SMM on D with the proximal-gradient surrogate (Mairal 2013, eq. 5), mini-batches of 100, 1 pass:"));
    let set = write(dir.path(), "set.opt", &format!("{head}solve with smm(batch = 50, epochs = 3)\n"));
    let out = optc(&["check", set.to_str().expect("utf-8")]);
    assert!(text(&out.stdout).contains("mini-batches of 50, 3 passes:"), "{}", text(&out.stdout));
    for (solve, says) in [
        ("solve with scd", "`scd` does not learn dictionaries"),
        ("solve with smm(batch = 0)", "`batch` is a count of at least 1"),
        ("solve with smm(step = 1)", "smm on a dictionary does not take `step`"),
    ] {
        let bad = write(dir.path(), "bad.opt", &format!("{head}{solve}\n"));
        let out = optc(&["check", bad.to_str().expect("utf-8")]);
        assert_eq!(out.status.code(), Some(1), "{solve}");
        assert!(text(&out.stderr).contains(says), "{solve}: {}", text(&out.stderr));
    }
    let data = write(dir.path(), "signals.svm", "0 1:0.5 2:0.25\n0 3:1\n");
    let out = optc(&["run", model.to_str().expect("utf-8"), data.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("dictionary learning (`sparse_code`) is not trained by this build yet"));
}
