//! optc as a library (`optc::session`): the CLI's answer bit for bit, from a file and from
//! arrays; errors as values; warm solves after a parameter change.

mod common;

use common::{fixture, optc, text, write};
use optc::session::{Data, Error, Options, Problem, Session};
use serde_json::Value;

const MODEL: &str = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.02\n\
                     minimize E[logistic(y, <x, w>)] + λ·l1(w)\n";

/// The fixture's rows as CSR arrays with i64 indices (0-based), parsed here, not by optc.
fn arrays(path: &std::path::Path) -> (Vec<i64>, Vec<i64>, Vec<f64>, Vec<f64>) {
    let (mut indptr, mut indices, mut values, mut labels) = (vec![0i64], vec![], vec![], vec![]);
    for line in std::fs::read_to_string(path).expect("fixture").lines() {
        let mut parts = line.split_whitespace();
        labels.push(parts.next().expect("a label").parse().expect("a number"));
        for pair in parts {
            let (j, v) = pair.split_once(':').expect("j:v");
            indices.push(j.parse::<i64>().expect("an index") - 1);
            values.push(v.parse().expect("a value"));
        }
        indptr.push(indices.len() as i64);
    }
    (indptr, indices, values, labels)
}

/// The library solves as `optc run` does: the same F and epochs, to the bit, from the file
/// and from arrays built outside optc; and the report serializes.
#[test]
fn a_solve_is_the_clis_to_the_bit_from_a_file_and_from_arrays() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = write(dir.path(), "m.opt", MODEL);
    let data = fixture("binary.svm");
    let out = optc(&["run", model.to_str().expect("utf-8"), data.to_str().expect("utf-8"), "--json", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cli: Value = serde_json::from_slice(&out.stdout).expect("json");
    let objective = cli["objective"].as_f64().expect("F");

    let from_file = Session::new(Problem::from_file(&model).expect("model"), Data::from_file(&data, 2).expect("data"))
        .solve(&Options::default())
        .expect("solved");
    assert_eq!(from_file.objective.to_bits(), objective.to_bits(), "{from_file:?} vs {cli}");
    assert_eq!(Some(from_file.epochs as u64), cli["epochs"].as_u64());
    assert_eq!(from_file.status, "converged");
    assert!(from_file.gap.is_some_and(|g| g <= 1e-4 * objective.abs()));

    let (indptr, indices, values, labels) = arrays(&data);
    let data = Data::from_csr(&indptr, &indices, &values, &labels, None).expect("arrays");
    let from_arrays =
        Session::new(Problem::from_text(MODEL).expect("model"), data).solve(&Options::default()).expect("solved");
    assert_eq!(from_arrays.objective.to_bits(), objective.to_bits());
    assert_eq!(from_arrays.weights, from_file.weights);
    let json: Value = serde_json::to_value(&from_arrays).expect("serializes");
    assert_eq!(json["status"], "converged");
}

/// A model that does not compile, arrays that are not a matrix and an unknown parameter are
/// values that say where, not panics.
#[test]
fn errors_are_values_that_say_where() {
    match Problem::from_text("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistc(y, <x, w>)]\n") {
        Err(Error::Model(m)) => assert!(m.contains("logistc") && m.contains("3:"), "{m}"),
        other => panic!("{other:?}"),
    }
    let bad = Data::from_csr(&[0u32, 2, 1], &[0u32, 1], &[1.0, 2.0], &[1.0, -1.0], None);
    match bad {
        Err(Error::Input(m)) => assert!(m.contains("indptr[2]"), "{m}"),
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("accepted"),
    }
    let negative = Data::from_csr(&[0i32, 1], &[-3i32], &[1.0], &[1.0], None);
    assert!(matches!(negative, Err(Error::Input(m)) if m.contains("row 0, position 0")));
    let problem = Problem::from_text(MODEL).expect("model");
    assert!(matches!(problem.with("μ", 1.0), Err(Error::Usage(m)) if m.contains("no parameter `μ`")));
}

/// After `set`, a solve starts from the last answer and reaches the same certified optimum
/// as a cold one: the two F differ by no more than their gaps.
#[test]
fn a_warm_solve_after_a_parameter_change_reaches_the_cold_optimum() {
    let data = || Data::from_file(&fixture("binary.svm"), 1).expect("data");
    let mut session = Session::new(Problem::from_text(MODEL).expect("model"), data());
    session.solve(&Options::default()).expect("first");
    session.set("λ", 0.005).expect("λ");
    let warm = session.solve(&Options::default()).expect("warm");
    let problem = Problem::from_text(MODEL).expect("model").with("lambda", 0.005).expect("alias");
    let cold = Session::new(problem, data()).solve(&Options { cold: true, ..Options::default() }).expect("cold");
    let (gw, gc) = (warm.gap.expect("a gap"), cold.gap.expect("a gap"));
    assert!((warm.objective - cold.objective).abs() <= gw + gc, "{warm:?} vs {cold:?}");
    assert_eq!((warm.status.as_str(), cold.status.as_str()), ("converged", "converged"));
}
