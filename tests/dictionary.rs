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
