//! Stopping a solve from outside: the library's cancel flag, and Ctrl-C (SIGINT) in `optc run`.

mod common;

use common::{fixture, text};
use optc::exec::cancel::Cancel;
use optc::session::{Data, Options, Problem, Session};
use serde_json::Value;

/// A flag set before the solve stops it after its first epoch: status `interrupted`, the rule
/// says so, and the answer is that epoch's iterate with its F.
#[test]
fn a_cancelled_solve_ends_interrupted_with_its_last_iterate() {
    let problem = Problem::from_text(
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-3\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n",
    )
    .expect("model");
    let data = Data::from_file(&fixture("binary.svm"), 1).expect("data");
    let cancel = Cancel::default();
    cancel.cancel();
    let opts = Options { solver: Some("fobos".into()), epochs: Some(1000), cancel, ..Options::default() };
    let report = Session::new(problem, data).solve(&opts).expect("a report");
    assert_eq!((report.status.as_str(), report.epochs), ("interrupted", 1), "{report:?}");
    assert!(report.rule.contains("interrupt"), "{}", report.rule);
    assert!(report.objective.is_finite() && report.weights.iter().any(|w| *w != 0.0));
}

/// SIGINT during `optc run`: the run stops after its epoch, prints its report (status
/// `interrupted`), writes --save, and exits 130.
#[test]
fn ctrl_c_stops_optc_run_which_reports_saves_and_exits_130() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = common::write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-6\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\nsolve with fobos\n",
    );
    let saved = dir.path().join("w.txt");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_optc"))
        .args([
            "run",
            model.to_str().expect("utf-8"),
            fixture("sparse_large.svm.xz").to_str().expect("utf-8"),
            "--epochs",
            "100000000",
            "--json",
            "--quiet",
            "--save",
            saved.to_str().expect("utf-8"),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("optc starts");
    // The handler is installed before the data is read; give the solve time to start.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    assert!(killed.success());
    let out = child.wait_with_output().expect("optc ends");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    assert_eq!(report["status"], "interrupted", "{report}");
    assert!(report["objective"].as_f64().is_some_and(f64::is_finite));
    assert!(std::fs::read_to_string(&saved).expect("--save was written").starts_with("solver_type"));
}
