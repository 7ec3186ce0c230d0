//! Hostile or careless input, as a new user or an administrator meets it: huge indices, garbage
//! runs, binary files, byte-order marks, predictions on data the model never saw.

mod common;

use common::{fixture, optc, text, write, L1_LOGISTIC};

#[test]
fn a_huge_feature_index_is_refused_before_allocating_with_line_and_memory() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let d = write(dir.path(), "huge.svm", "-1 2:1\n+1 1:0.5 4294967295:1\n");
    let out = optc(&["run", m.to_str().unwrap(), d.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("huge.svm:2: feature index 4294967295"), "{err}");
    assert!(err.contains("GB of memory") && err.contains("available"), "{err}");
    assert!(!err.contains("panicked") && !err.contains("memory allocation"), "{err}");
}

#[test]
fn a_model_declaring_a_huge_vector_is_refused_too() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[100000000000]\nminimize E[logistic(y, <x, w>)]\n",
    );
    let out = optc(&["run", m.to_str().unwrap(), fixture("binary.svm").to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("declares `w` with 100000000000 entries"), "{err}");
}

fn run_model(model: &str, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", model);
    let mut args = vec!["run", m.to_str().unwrap()];
    let data = fixture("binary.svm");
    args.push(data.to_str().unwrap());
    args.extend_from_slice(extra);
    optc(&args)
}

const MODEL_HEAD: &str =
    "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n";

#[test]
fn a_run_that_ends_worse_than_it_started_is_diverged_exit_3() {
    for (solve, step_shown) in
        [("solve with fobos(step = 1e9, epochs = 10)", "1000000000"), ("solve with fobos(eta0 = 1e6)", "1000000/√t")]
    {
        let out = run_model(&format!("{MODEL_HEAD}{solve}\n"), &[]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{solve}: {err}");
        assert!(err.contains("diverged") && err.contains("cold start"), "{err}");
        assert!(err.contains(step_shown) && err.contains("hint:"), "{solve}: {err}");
        let out = run_model(&format!("{MODEL_HEAD}{solve}\n"), &["--json", "--quiet"]);
        assert_eq!(out.status.code(), Some(3));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
        assert_eq!(r["status"], "diverged");
        assert!(r["objective"].as_f64().unwrap() > r["start_objective"].as_f64().unwrap());
    }
}

#[test]
fn a_good_run_reports_the_schedule_it_used() {
    let out = run_model(&format!("{MODEL_HEAD}solve with fobos(step = 0.5/sqrt(t))\n"), &[]);
    let o = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(o.contains("step η_t = 0.5/sqrt(t)"), "{o}");
    assert!(!o.contains("0.2857"), "{o}");
    let out = run_model(&format!("{MODEL_HEAD}solve with fobos(step = 0.5/sqrt(t))\n"), &["--json", "--quiet"]);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(r["step"], "0.5/sqrt(t)");
    assert!(r["eta0"].is_null());
    assert_eq!(r["status"], "max_epochs");
}

#[test]
fn a_byte_order_mark_is_accepted() {
    let out = run_model(&format!("\u{feff}{L1_LOGISTIC}"), &["--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_parameter_that_divides_by_zero_is_one_diagnostic() {
    let out = run_model(
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1/0\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n",
        &[],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("not a finite number") && err.contains("divides by zero"), "{err}");
    assert!(!err.contains("unknown name"), "a cascade: {err}");
}

#[test]
fn real_targets_with_a_classification_loss_suggest_a_regression() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let out = optc(&["run", m.to_str().unwrap(), fixture("regression.svm").to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("`y: real`") && err.contains("`squared`"), "{err}");
    assert!(!err.contains("y: classes"), "{err}");
}

#[test]
fn a_binary_file_as_data_is_escaped_in_the_message() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let bin = dir.path().join("binary.bin");
    std::fs::write(&bin, b"\x7fELF\x02\x01\x1b[31m\x00\x00\xff\xfe 1:2\n").expect("write");
    let out = optc(&["run", m.to_str().unwrap(), bin.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let raw = &out.stderr;
    let controls = raw.iter().filter(|&&b| b < 0x20 && b != b'\n').count();
    assert_eq!(controls, 0, "raw control bytes reached the terminal: {}", text(raw));
    let err = text(raw);
    assert!(err.contains("\\x7fELF") && err.contains("\\x1b[31m") && err.contains("\\xff"), "{err}");
}

fn saved_model(dir: &std::path::Path) -> std::path::PathBuf {
    let m = write(dir, "m.opt", L1_LOGISTIC);
    let saved = dir.join("m.model");
    let out = optc(&[
        "run",
        m.to_str().unwrap(),
        fixture("binary.svm").to_str().unwrap(),
        "--quiet",
        "--save",
        saved.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    saved
}

#[test]
fn predict_warns_about_unknown_features_and_labels_and_is_quiet_with_q() {
    let dir = tempfile::tempdir().expect("tmp");
    let saved = saved_model(dir.path());
    let d = write(dir.path(), "new.svm", "1 1:1 5000:2\n-1 2:1\n7 3:1\n");
    let out = optc(&["predict", saved.to_str().unwrap(), d.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("features up to 5000 but the model has 30; the extra features are ignored"), "{err}");
    assert!(err.contains("new.svm:3: label 7 never seen by the model (its labels: 1, -1)"), "{err}");
    assert_eq!(text(&out.stdout).lines().count(), 3);
    let out = optc(&["predict", "-q", saved.to_str().unwrap(), d.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(text(&out.stderr), "", "-q prints nothing but the labels");
    assert_eq!(text(&out.stdout).lines().count(), 3);
}

#[test]
fn check_spells_each_penalty_out_in_plain_math() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[hinge(y, <x, w>)] + λ·l2sq(w) + λ·elastic(w, 0.5)\n",
    );
    let out = optc(&["check", m.to_str().unwrap()]);
    let o = text(&out.stdout);
    assert!(o.contains("penalty 5e-5·‖w‖²\n"), "{o}");
    assert!(o.contains("penalty 1e-4·‖w‖₁ + 2.5e-5·‖w‖²\n"), "{o}");
}

#[test]
fn data_progress_never_reaches_a_pipe() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let out = optc(&["run", m.to_str().unwrap(), fixture("binary.svm").to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    assert!(!text(&out.stderr).contains("reading"), "{}", text(&out.stderr));
}

#[test]
fn the_svm_example_penalises_lambda_times_half_the_squared_norm() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/svm.opt")).expect("example");
    assert!(text.contains("+ λ·l2sq(w)"), "{text}");
}

/// Found by fuzzing: unclosed nested calls made the parser backtrack exponentially. Now a call
/// is parsed once, and a parse has a bounded number of rule calls.
#[test]
fn deeply_nested_unclosed_brackets_are_a_prompt_diagnostic() {
    let dir = tempfile::tempdir().expect("tmp");
    for unit in ["f(", "E[f(", "E[", "(("] {
        let m = write(dir.path(), "deep.opt", &format!("minimize {}\n", unit.repeat(3000)));
        let out = optc(&["check", m.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{unit}: {err}");
        // Which of the three depends on the build: a debug build's larger stack frames reach
        // pest's stack guard ("stack limit reached") on `((` × 500 already; a release build
        // parses `((` × 3000 to the end and reports the missing operand.
        assert!(
            ["nested too deeply", "expected `", "expected an expression, found end of line"]
                .iter()
                .any(|m| err.contains(m)),
            "{unit}: {err}"
        );
    }
    let applied =
        "data x: sparse, y: real\nvar w: vec[dim(x)]\nminimize E[squared(y, <x, w>)] + 0.1·l1(diff(dim(x)) w)\n";
    let m = write(dir.path(), "fused.opt", applied);
    let out = optc(&["check", m.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("composite   yes"), "{}", text(&out.stdout));
}

/// Every option is honoured or refused: a value of the wrong kind, or an option the solver does
/// not have, is a diagnostic naming the option.
#[test]
fn solver_options_are_honoured_or_refused() {
    for (solve, expect) in [
        ("solve with scd(newton = 2)", "`newton` must be 0 or 1"),
        ("solve with scd(eta0 = 0.1)", "`scd` has no option `eta0`"),
        ("solve with proxgrad(seed = 3)", "`proxgrad` has no option `seed`"),
        ("solve with fobos(tol = -1)", "`tol` must be a positive number"),
        ("solve with scd(epochs = 2.5)", "`epochs` must be a whole number ≥ 1"),
    ] {
        let out = run_model(&format!("{MODEL_HEAD}{solve}\n"), &[]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{solve}: {err}");
        assert!(err.contains(expect), "{solve}: {err}");
    }
    let out = run_model(&format!("{MODEL_HEAD}solve with scd(tol = 1e-6, epochs = 500)\n"), &["--json", "--quiet"]);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(r["tol"], 1e-6, "the model's tol is the run's");
    assert!(r["relative_gap"].as_f64().unwrap() <= 1e-6, "{r}");
}
