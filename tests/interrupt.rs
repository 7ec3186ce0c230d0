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

/// Rows enough that the first pass of `--stream --cache` is still writing its log when the
/// signals come (tens of milliseconds in a release build, longer in a debug one).
fn many_rows(dir: &std::path::Path) -> std::path::PathBuf {
    let mut s = String::with_capacity(40 << 20);
    let mut x: u64 = 1;
    for i in 0..300_000u64 {
        s += if i % 2 == 0 { "1" } else { "-1" };
        for j in 0..10u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s += &format!(" {}:{:.3}", 1 + j * 20 + (x >> 60), (x >> 40) as f64 / (1u64 << 24) as f64);
        }
        s += "\n";
    }
    let path = dir.join("many.svm");
    std::fs::write(&path, s).expect("data");
    path
}

/// The temporary files in `dir`.
fn temporaries(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".optc-"))
                .collect()
        })
        .unwrap_or_default()
}

/// `optc run --stream --cache` started, once its log's temporary file exists.
fn writing_a_log(model: &std::path::Path, data: &std::path::Path, caches: &std::path::Path) -> std::process::Child {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_optc"))
        .args(["run", model.to_str().expect("utf-8"), data.to_str().expect("utf-8"), "--stream", "--quiet"])
        .arg(format!("--cache={}", caches.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("optc runs");
    for _ in 0..2000 {
        if temporaries(caches).iter().any(|n| writer(n) == Some(child.id())) {
            return child;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("no temporary log appeared in {}", caches.display());
}

fn signal(child: &std::process::Child, name: &str) {
    let sent = std::process::Command::new("kill").args([name, &child.id().to_string()]).status().expect("kill");
    assert!(sent.success());
}

/// Signals mid-write leave no temporary file behind: two Ctrl-C (the second ends the process
/// at once) remove the log being written; a `kill -9`, which nothing can catch, leaves it, and
/// the next run that writes beside it removes it.
#[test]
fn temporary_files_do_not_outlive_an_interrupted_or_killed_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = common::write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-3\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n",
    );
    let data = many_rows(dir.path());
    let caches = dir.path().join("caches");

    let child = writing_a_log(&model, &data, &caches);
    signal(&child, "-INT");
    std::thread::sleep(std::time::Duration::from_millis(20));
    signal(&child, "-INT");
    let status = child.wait_with_output().expect("optc ends").status;
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(temporaries(&caches), Vec::<String>::new());

    let mut child = writing_a_log(&model, &data, &caches);
    signal(&child, "-KILL");
    child.wait().expect("optc ends");
    assert_eq!(temporaries(&caches).len(), 1, "kill -9 leaves the log it was writing");
    let again = writing_a_log(&model, &data, &caches);
    let second = again.id();
    signal(&again, "-KILL");
    let _ = again.wait_with_output();
    // The second run swept the first one's file; only its own remains.
    let left = temporaries(&caches);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(writer(&left[0]), Some(second), "{left:?}");
}

/// The writer's process id in a temporary file's name, `.optc-PID-…`.
fn writer(name: &str) -> Option<u32> {
    name.strip_prefix(".optc-")?.split_once('-')?.0.parse().ok()
}
