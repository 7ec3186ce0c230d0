//! One-vs-rest (docs/algorithms.md §11): a two-class loss on data with k > 2 labels is k binary
//! problems in LIBLINEAR's class order, each solved to its certified optimum, saved as
//! LIBLINEAR's k-column model and predicted by the argmax of the k decision values.

mod common;

use common::{assert_has_lines, compile, fixture, liblinear_predict, optc, ovr_fixture_named, run_class, text, write};
use optc::exec::driver::RunSettings;
use optc::pipeline::CompileOptions;
use std::path::Path;

const FIXTURES: [&str; 3] = ["ovr_svm", "ovr_sqhinge", "ovr_logistic"];

/// `optc run MODEL DATA --json --quiet EXTRA...`, which must succeed; its JSON report.
fn run_json(model: &Path, data: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["run", model.to_str().unwrap(), data.to_str().unwrap(), "--json", "--quiet"];
    args.extend_from_slice(extra);
    let out = optc(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

/// Each class's problem, solved by the library to a tight tolerance, reaches the CVXPY optimum
/// of its fixture, in the fixture's class order, and its certificate holds: F − gap ≤ F*.
#[test]
fn every_class_reaches_its_optimum() {
    for name in FIXTURES {
        let f = ovr_fixture_named(name);
        let d = optc::data::read_libsvm(&f.data).expect("fixture reads");
        let map = optc::data::LabelMap::one_vs_rest(optc::stdlib::LabelKind::Labels, &d).expect("3 labels");
        assert_eq!(map.originals, f.classes, "{name}: LIBLINEAR's order, first appearance");
        let plan = compile(&f.model, &CompileOptions::default());
        for (c, best) in f.objectives.iter().enumerate() {
            let r = run_class(&plan, &d, c, &RunSettings::to_tolerance(1e-10, 200_000, 1));
            let (obj, gap) = (r.eval.objective, r.outcome.gap.expect("certified"));
            assert!((obj - best).abs() <= 1e-6 * best, "{name} class {}: F = {obj}, F* = {best}", f.classes[c]);
            assert!(obj - gap <= best + 1e-12, "{name} class {}: F − gap = {} > F* = {best}", f.classes[c], obj - gap);
        }
    }
}

/// The command line gets the same: the `classes` array of `--json` in first-seen order, each
/// class's F at its optimum, the run's F the mean and its gap the largest relative one.
#[test]
fn optc_run_reports_every_class() {
    let dir = tempfile::tempdir().expect("tmp");
    for name in FIXTURES {
        let f = ovr_fixture_named(name);
        let m = write(dir.path(), "m.opt", &f.model);
        let r = run_json(&m, &f.data, &["--tol", "1e-10"]);
        assert_eq!(r["one_vs_rest"], true, "{r}");
        assert_eq!(r["status"], "converged", "{r}");
        let classes = r["classes"].as_array().expect("classes");
        assert_eq!(classes.len(), 3, "{r}");
        let mut largest: f64 = 0.0;
        for ((c, label), best) in classes.iter().zip(&f.classes).zip(&f.objectives) {
            assert_eq!(c["label"].as_f64(), Some(*label), "{name}: {r}");
            assert_eq!(c["status"], "converged", "{name}: {c}");
            // A class's first check may solve it before any epoch (few features).
            assert!(c["epochs"].as_u64().is_some(), "{c}");
            let (obj, gap) = (c["objective"].as_f64().unwrap(), c["gap"].as_f64().unwrap());
            assert!((obj - best).abs() <= 1e-6 * best, "{name} class {label}: F = {obj}, F* = {best}");
            assert!(obj - gap <= best + 1e-12, "{name} class {label}");
            largest = largest.max(c["relative_gap"].as_f64().unwrap());
        }
        let mean = f.objectives.iter().sum::<f64>() / 3.0;
        assert!((r["objective"].as_f64().unwrap() - mean).abs() <= 1e-6 * mean, "{r}");
        assert_eq!(r["relative_gap"].as_f64(), Some(largest), "{r}");
        let err = r["train_error"].as_f64().expect("the argmax predictor's error");
        assert!((0.0..0.5).contains(&err), "{r}");
    }
}

/// `--save` writes LIBLINEAR's three-column model in first-seen label order, each column the
/// fixture's w for its class.
#[test]
fn the_saved_model_has_a_column_per_class() {
    let dir = tempfile::tempdir().expect("tmp");
    let f = ovr_fixture_named("ovr_svm");
    let m = write(dir.path(), "m.opt", &f.model);
    let saved = dir.path().join("ovr.model");
    run_json(&m, &f.data, &["--tol", "1e-10", "--save", saved.to_str().unwrap()]);
    let text = std::fs::read_to_string(&saved).expect("saved");
    let header = "solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 3\nlabel 3 2 1\nnr_feature 12\nbias -1\nw\n";
    assert!(text.starts_with(header), "{text}");
    let rows: Vec<Vec<f64>> = text[header.len()..]
        .lines()
        .map(|l| l.split_whitespace().map(|v| v.parse().expect("a weight")).collect())
        .collect();
    assert_eq!(rows.len(), 12, "{text}");
    for (j, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), 3, "{text}");
        for (c, v) in row.iter().enumerate() {
            // The hinge's optimal w is unique (½‖w‖² is strongly convex).
            assert!((v - f.w[c][j]).abs() < 1e-4, "w_{}[{j}] = {v}, CVXPY {}", f.classes[c], f.w[c][j]);
        }
    }
}

/// The k problems on two threads give the same bits as on one, saved model and report alike.
#[test]
fn threads_do_not_change_the_weights() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("multiclass.svm");
    for name in FIXTURES {
        let m = write(dir.path(), "m.opt", &ovr_fixture_named(name).model);
        let saved = |threads: &str| {
            let path = dir.path().join(format!("{name}-{threads}.model"));
            let r = run_json(&m, &data, &["--threads", threads, "--save", path.to_str().unwrap()]);
            (std::fs::read(&path).expect("saved"), r)
        };
        let ((one, r1), (two, r2)) = (saved("1"), saved("2"));
        assert!(one == two, "{name}: the saved models differ");
        assert_eq!(r1["objective"], r2["objective"], "{name}");
        assert_eq!(r2["problems_at_once"], 2, "{r2}");
    }
}

/// LIBLINEAR's predict reads optc's k-column model and predicts what `optc predict` does, row
/// for row; and the other way round, `optc predict` on a model `liblinear-train -s 1` wrote
/// predicts what LIBLINEAR's predict does.
#[test]
fn liblinear_and_optc_predict_alike() {
    let Some(liblinear) = liblinear_predict("liblinear_and_optc_predict_alike") else { return };
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("multiclass.svm");
    let predictions = |model: &Path| {
        let (ours, theirs) = (dir.path().join("optc.pred"), dir.path().join("liblinear.pred"));
        let o = optc(&["predict", model.to_str().unwrap(), data.to_str().unwrap(), "--out", ours.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let l = std::process::Command::new(&liblinear)
            .args([data.as_os_str(), model.as_os_str(), theirs.as_os_str()])
            .output()
            .expect("liblinear-predict runs");
        assert!(l.status.success(), "{}", text(&l.stderr));
        assert_eq!(text(&o.stdout), text(&l.stdout), "the accuracy lines");
        (std::fs::read_to_string(ours).expect("written"), std::fs::read_to_string(theirs).expect("written"))
    };
    for name in FIXTURES {
        let m = write(dir.path(), "m.opt", &ovr_fixture_named(name).model);
        let saved = dir.path().join("ovr.model");
        let r = run_json(&m, &data, &["--save", saved.to_str().unwrap()]);
        let (ours, theirs) = predictions(&saved);
        assert_eq!(ours.lines().count(), 150);
        assert!(ours == theirs, "{name}: optc predict and liblinear-predict differ");
        // The run's train error is the argmax predictor's: the one predict reports.
        let rows = std::fs::read_to_string(&data).expect("fixture");
        let wrong = ours
            .lines()
            .zip(rows.lines())
            .filter(|(p, row)| p.parse::<f64>().ok() != row.split_whitespace().next().and_then(|y| y.parse().ok()))
            .count();
        assert_eq!(r["train_error"].as_f64(), Some(wrong as f64 / 150.0), "{name}");
    }
    let trained = dir.path().join("ll.model");
    let out = std::process::Command::new(liblinear.with_file_name("liblinear-train"))
        .args(["-s", "1", "-q"])
        .arg(&data)
        .arg(&trained)
        .output()
        .expect("liblinear-train runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (ours, theirs) = predictions(&trained);
    assert!(ours == theirs, "optc predict and liblinear-predict differ on LIBLINEAR's -s 1 model");
}

/// A k-column model warm-starts every class from its own column, whatever the file's label
/// order: started at the optimum, each class certifies at its first check.
#[test]
fn init_starts_each_class_from_its_column() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("multiclass.svm");
    let f = ovr_fixture_named("ovr_logistic");
    let m = write(dir.path(), "m.opt", &f.model);
    // The fixture's optimum with its columns in another order than the data's (1 2 3).
    let mut file = String::from("solver_type L2R_LR\nnr_class 3\nlabel 1 2 3\nnr_feature 12\nbias -1\nw\n");
    for j in 0..12 {
        file += &format!("{} {} {}\n", f.w[2][j], f.w[1][j], f.w[0][j]);
    }
    let init = write(dir.path(), "init.model", &file);
    let cold = run_json(&m, &data, &["--tol", "1e-6", "--solver", "proxgrad"]);
    let warm = run_json(&m, &data, &["--tol", "1e-6", "--solver", "proxgrad", "--init", init.to_str().unwrap()]);
    for (c, w) in cold["classes"].as_array().unwrap().iter().zip(warm["classes"].as_array().unwrap()) {
        assert_eq!(w["status"], "converged", "{warm}");
        assert!(w["epochs"].as_u64() < c["epochs"].as_u64(), "{w} against a cold start's {c}");
    }
}

/// The human report: a line per class and the combined predictor's error.
#[test]
fn the_report_has_a_line_per_class() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", &ovr_fixture_named("ovr_svm").model);
    let data = fixture("multiclass.svm");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--test", data.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert_has_lines(
        &report,
        &[
            "one-vs-rest  3 classes, labels 3, 2, 1",
            "  class 3 ",
            "  class 2 ",
            "  class 1 ",
            "train error",
            "test error",
        ],
    );
    let check = optc(&["check", m.to_str().unwrap()]);
    assert!(text(&check.stdout).contains("one-vs-rest"), "{}", text(&check.stdout));
}

/// What follows one problem refuses data with more than two labels (exit 2, saying why):
/// `--stream`, `--holdout`, `--trace`, `--plot`, `optc path`. Fractional labels stay the
/// regression-data diagnostic (exit 1).
#[test]
fn what_follows_one_problem_refuses_more_than_two_labels() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", &ovr_fixture_named("ovr_svm").model);
    let (m, data) = (m.to_str().unwrap(), fixture("multiclass.svm"));
    let d = data.to_str().unwrap();
    let trace = dir.path().join("t.csv");
    for args in [
        vec!["run", m, d, "--stream"],
        vec!["run", m, d, "--holdout", "0.2"],
        vec!["run", m, d, "--trace", trace.to_str().unwrap()],
        vec!["path", m, d, "--param", "λ"],
    ] {
        let out = optc(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("one-vs-rest"), "{args:?}: {}", text(&out.stderr));
    }
    let real = write(dir.path(), "real.svm", "0.5 1:1\n1.5 1:2\n2.25 2:1\n");
    let out = optc(&["run", m, real.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("real-valued targets"), "{}", text(&out.stderr));
}
