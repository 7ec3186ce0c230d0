//! optc as a library (`optc::session`): the CLI's answer bit for bit, from a file and from
//! arrays; errors as values; warm solves after a parameter change.

mod common;

use common::{fixture, optc, text, write};
use optc::session::{Data, Error, InPlaceIndex, Options, Problem, Report, Session};
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
        Err(Error::Model(m)) => {
            assert!(m.message.contains("logistc") && m.message.contains("3:"), "{m}");
            assert_eq!((m.line, m.column), (3, 12), "the first diagnostic's place");
        }
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

/// A two-class loss on k > 2 labels solves k one-vs-rest problems, as `optc run` does: each
/// class's F and epochs to the bit, the same argmax training error, and LIBLINEAR's d × k
/// weights; a second solve warm-starts every class from its column.
#[test]
fn one_vs_rest_is_the_clis_class_by_class() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = write(dir.path(), "m.opt", MODEL);
    let data = fixture("multiclass.svm");
    let out = optc(&["run", model.to_str().expect("utf-8"), data.to_str().expect("utf-8"), "--json", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cli: Value = serde_json::from_slice(&out.stdout).expect("json");
    let cli_classes = cli["classes"].as_array().expect("classes");

    let mut session =
        Session::new(Problem::from_file(&model).expect("model"), Data::from_file(&data, 2).expect("data"));
    let report = session.solve(&Options::default()).expect("solved");
    assert_eq!(report.classes.len(), cli_classes.len());
    for (ours, theirs) in report.classes.iter().zip(cli_classes) {
        assert_eq!(Some(ours.label), theirs["label"].as_f64());
        assert_eq!(Some(ours.objective.to_bits()), theirs["objective"].as_f64().map(f64::to_bits), "{ours:?}");
        assert_eq!(Some(ours.epochs as u64), theirs["epochs"].as_u64());
        assert_eq!(ours.status, "converged");
    }
    assert_eq!(report.train_error, cli["train_error"].as_f64());
    assert_eq!(report.weights.len(), report.features * report.classes.len());
    // Class c's weights are column c of the matrix.
    let k = report.classes.len();
    assert!(report.weights.iter().skip(1).step_by(k).any(|v| *v != 0.0));

    session.set("λ", 0.01).expect("λ");
    let warm = session.solve(&Options::default()).expect("warm");
    let problem = Problem::from_file(&model).expect("model").with("λ", 0.01).expect("λ");
    let cold = Session::new(problem, Data::from_file(&data, 2).expect("data"))
        .solve(&Options { cold: true, ..Options::default() })
        .expect("cold");
    for (w, c) in warm.classes.iter().zip(&cold.classes) {
        let (gw, gc) = (w.gap.expect("a gap"), c.gap.expect("a gap"));
        assert!((w.objective - c.objective).abs() <= gw + gc, "{w:?} vs {c:?}");
    }
}

/// The same rows given as CSC arrays, or as owned CSR vectors the data takes without a copy,
/// solve to the same bits as the file.
#[test]
fn csc_arrays_and_owned_vectors_solve_as_the_file_does() {
    let data = fixture("binary.svm");
    let solve = |d: Data| Session::new(Problem::from_text(MODEL).expect("model"), d).solve(&Options::default());
    let from_file = solve(Data::from_file(&data, 2).expect("data")).expect("solved");
    let (indptr, indices, values, labels) = arrays(&data);
    // The transpose, made here: column j's (row, value) pairs in row order.
    let features = indices.iter().map(|&j| j as usize + 1).max().unwrap_or(0);
    let mut columns: Vec<Vec<(i64, f64)>> = vec![vec![]; features];
    for r in 0..labels.len() {
        for k in indptr[r] as usize..indptr[r + 1] as usize {
            columns[indices[k] as usize].push((r as i64, values[k]));
        }
    }
    let mut col_ptr = vec![0i64];
    let (mut rows, mut col_values) = (vec![], vec![]);
    for c in &columns {
        for &(r, v) in c {
            rows.push(r);
            col_values.push(v);
        }
        col_ptr.push(rows.len() as i64);
    }
    let from_csc = solve(Data::from_csc(&col_ptr, &rows, &col_values, &labels).expect("csc")).expect("solved");
    assert_eq!(from_csc.objective.to_bits(), from_file.objective.to_bits());
    assert_eq!(from_csc.weights, from_file.weights);

    let owned = Data::from_csr_vecs(
        indptr.iter().map(|&p| p as usize).collect(),
        indices.iter().map(|&j| j as u32).collect(),
        values.clone(),
        labels.clone(),
        None,
    )
    .expect("vectors");
    let from_vecs = solve(owned).expect("solved");
    assert_eq!(from_vecs.objective.to_bits(), from_file.objective.to_bits());

    let bad = Data::from_csc(&[0u32, 1], &[5u32], &[1.0], &[1.0, -1.0]);
    assert!(matches!(bad, Err(Error::Input(m)) if m.contains("column 0, position 0")));
}

/// Arrays read in place (the Python package's path): the matrix reads the caller's buffers, the
/// answer is the copied arrays' to the bit, and every check of `from_csr` names the row.
#[test]
fn arrays_read_in_place_give_the_copied_arrays_answer() {
    use optc::data::store::Store;
    use std::sync::Arc;
    let problem = Problem::from_text(
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n",
    )
    .expect("compiles");
    let (indptr, indices, values, labels) = (
        vec![0usize, 2, 3, 5, 6],
        vec![0u32, 2, 1, 0, 1, 2],
        vec![1.0, -0.5, 2.0, -1.0, 0.5, 1.5],
        vec![1.0, -1.0, 1.0, -1.0],
    );
    let foreign = |v: &Arc<Vec<u32>>| {
        let keep: Arc<dyn Send + Sync> = v.clone();
        // SAFETY: the Arc'd vector is never written and outlives the store (which holds it).
        #[allow(unsafe_code)]
        unsafe {
            Store::foreign(keep, v.as_ptr(), v.len())
        }
    };
    let kept = Arc::new(indices.clone());
    let values_kept = Arc::new(values.clone());
    let in_place = {
        let keep: Arc<dyn Send + Sync> = values_kept.clone();
        #[allow(unsafe_code)]
        let values = unsafe { Store::foreign(keep, values_kept.as_ptr(), values_kept.len()) };
        Data::from_csr_in_place(indptr.clone(), foreign(&kept), values, labels.clone(), 3).expect("canonical")
    };
    assert_eq!(in_place.addresses(), (kept.as_ptr() as usize, values_kept.as_ptr() as usize));
    let copied = Data::from_csr(&indptr, &indices, &values, &labels, Some(3)).expect("valid");
    let a = Session::new(problem.clone(), in_place).solve(&Options::default()).expect("solves");
    let b = Session::new(problem, copied).solve(&Options::default()).expect("solves");
    assert_eq!((a.objective, a.epochs), (b.objective, b.epochs));
    // Out of order, out of range and not finite: named by row.
    for (idx, vals, says) in [
        (vec![2u32, 0, 1, 0, 1, 2], values.clone(), "row 0, position 1: column indices do not increase"),
        (vec![0u32, 3, 1, 0, 1, 2], values.clone(), "row 0, position 1: column index 3 is not in 0..3"),
        (indices.clone(), vec![1.0, -0.5, f64::NAN, -1.0, 0.5, 1.5], "row 1, column 1: the value NaN"),
    ] {
        let got = Data::from_csr_in_place(indptr.clone(), Store::Owned(idx), Store::Owned(vals), labels.clone(), 3);
        match got {
            Err(Error::Input(m)) => assert!(m.contains(says), "{m}"),
            other => panic!("{:?}", other.err()),
        }
    }
}

/// int64 column indices read in place (scipy's wide index arrays) are read as the low halves of
/// their pairs: every back end, on every kind of loop (rows in the compiled kernels and the
/// interpreter, columns through the CSC copy, the certificate's passes, the dual and Newton
/// solvers), gives the u32 arrays' answer to the bit.
#[test]
fn int64_indices_read_in_place_give_the_u32_answer_on_every_back_end() {
    use optc::data::store::Store;
    let set = optc::data::read_libsvm(&fixture("binary.svm")).expect("reads");
    let (indptr, indices, values) = set.csr();
    let (indptr, indices, values) = (indptr.to_vec(), indices.to_vec(), values.to_vec());
    let wide: Vec<i64> = indices.iter().map(|&j| i64::from(j)).collect();
    let d = set.features();
    let cases = [
        ("logistic(y, <x, w>)", "l1(w)", ["fobos", "adagrad", "scd", "proxgrad"].as_slice()),
        ("hinge(y, <x, w>)", "l2sq(w)", ["dcd"].as_slice()),
        ("logistic(y, <x, w>)", "l2sq(w)", ["tron"].as_slice()),
    ];
    for (loss, reg, solvers) in cases {
        let problem = Problem::from_text(&format!(
            "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[{loss}] + λ·{reg}\n"
        ))
        .expect("compiles");
        for &solver in solvers {
            for no_jit in [false, true] {
                let opts = Options { solver: Some(solver.into()), epochs: Some(4), no_jit, ..Options::default() };
                fn solve<I: InPlaceIndex>(
                    p: &Problem,
                    o: &Options,
                    rows: (&[usize], &[I], &[f64], &[f64], usize),
                ) -> Report {
                    let (indptr, indices, values, labels, d) = rows;
                    let (i, v) = (Store::Owned(indices.to_vec()), Store::Owned(values.to_vec()));
                    let data = Data::from_csr_in_place(indptr.to_vec(), i, v, labels.to_vec(), d).expect("canonical");
                    Session::new(p.clone(), data).solve(o).expect("solves")
                }
                let a = solve(&problem, &opts, (&indptr, &indices, &values, &set.labels, d));
                let b = solve(&problem, &opts, (&indptr, &wide, &values, &set.labels, d));
                let at = format!("{loss} + {reg}, {solver}, no_jit {no_jit}");
                assert_eq!((a.objective.to_bits(), a.epochs), (b.objective.to_bits(), b.epochs), "{at}");
                assert_eq!(a.weights, b.weights, "{at}");
            }
        }
    }
    // An index past 2³² whose low half (0) is a column is refused, not read as 0.
    let mut past = wide.clone();
    past[indptr[2] - 1] = 1 << 32;
    let got = Data::from_csr_in_place(indptr.clone(), Store::Owned(past), Store::Owned(values), set.labels.clone(), d);
    assert!(matches!(got, Err(Error::Input(m)) if m.contains("row 1") && m.contains("4294967296 is not in 0..")));
}

/// Dual CD stopped by its cap above F(0) has not converged; it has not diverged. On 100 rows
/// near (100, 100) with random labels and λ = 1e-4 (scikit-learn's `check_fit_check_is_fitted`
/// data), w(α) after the cap is worse than w = 0 while the dual still rises: the answer is the
/// run's, with status `max_epochs` and a gap that says how far it is, not an error.
#[test]
fn dual_cd_at_its_cap_above_the_cold_start_is_unconverged_not_diverged() {
    let problem = Problem::from_text(
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[hinge(y, <x, w>)] + λ·l2sq(w)\nsolve with dcd\n",
    )
    .expect("compiles");
    let data = Data::from_file(&fixture("near_collinear.svm"), 1).expect("the fixture");
    let opts = Options::default();
    let report = Session::new(problem, data).solve(&opts).expect("an answer, not an error");
    assert_eq!(report.solver.to_string(), "dcd");
    let gap = report.gap.expect("certified by its dual iterate");
    assert_eq!(report.status, "max_epochs", "{}", report.rule);
    assert!(report.objective > 1.0, "the case: F = {} above F(0) = 1", report.objective);
    assert!(gap > 1e-4 * report.objective.abs(), "the gap says it is not done: {gap}");
    assert!(report.objective - gap <= 1.0, "F − gap bounds F* ≤ F(0)");
}

/// A dense row-major array read in place (every entry stored, its indices made natively) is the
/// matrix of its CSR arrays: the same answer on both back ends; its values are read where they
/// are; a value that is not finite is named by row and column, and a length that is not rows ×
/// columns is refused.
#[test]
fn a_dense_array_read_in_place_is_its_csr_matrix() {
    use optc::data::store::Store;
    use std::sync::Arc;
    let problem = Problem::from_text(
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.05\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n",
    )
    .expect("compiles");
    let (rows, d) = (5, 3);
    let dense: Vec<f64> = (0..rows * d).map(|k| ((k * 7 % 5) as f64 - 2.0) / 2.0).collect();
    let labels = vec![1.0, -1.0, 1.0, -1.0, -1.0];
    let indptr: Vec<usize> = (0..=rows).map(|r| r * d).collect();
    let indices: Vec<u32> = (0..rows * d).map(|k| (k % d) as u32).collect();
    let kept = Arc::new(dense.clone());
    let in_place = || {
        let keep: Arc<dyn Send + Sync> = kept.clone();
        // SAFETY: the Arc'd vector is never written and outlives the store (which holds it).
        #[allow(unsafe_code)]
        let values = unsafe { Store::foreign(keep, kept.as_ptr(), kept.len()) };
        Data::from_dense_in_place(values, labels.clone(), d).expect("a dense array")
    };
    assert_eq!(in_place().addresses().1, kept.as_ptr() as usize);
    for no_jit in [false, true] {
        let opts = Options { tol: Some(1e-8), no_jit, ..Options::default() };
        let copied = Data::from_csr(&indptr, &indices, &dense, &labels, Some(d)).expect("valid");
        let a = Session::new(problem.clone(), in_place()).solve(&opts).expect("solves");
        let b = Session::new(problem.clone(), copied).solve(&opts).expect("solves");
        assert_eq!((a.objective.to_bits(), a.epochs), (b.objective.to_bits(), b.epochs), "no_jit {no_jit}");
        assert_eq!(a.weights, b.weights);
    }
    let mut bad = dense.clone();
    bad[7] = f64::INFINITY;
    let got = Data::from_dense_in_place(Store::Owned(bad), labels.clone(), d);
    assert!(matches!(got, Err(Error::Input(m)) if m.contains("row 2, column 1: the value inf")));
    let got = Data::from_dense_in_place(Store::Owned(dense[1..].to_vec()), labels.clone(), d);
    assert!(matches!(got, Err(Error::Input(m)) if m.contains("14 values for 5 rows of 3 columns")));
}
