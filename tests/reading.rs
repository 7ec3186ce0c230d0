//! `--threads` and `--cache` as a user meets them: the same run whatever the thread count, a
//! cache written, then used, then refused once the data file changes.

mod common;

use common::{fixture, optc, text, write, L1_LOGISTIC};
use std::path::Path;

fn run(model: &Path, data: &Path, extra: &[&str]) -> (serde_json::Value, String) {
    let mut args = vec!["run", model.to_str().unwrap(), data.to_str().unwrap(), "--json", "--epochs", "5"];
    args.extend_from_slice(extra);
    let out = optc(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    (serde_json::from_slice(&out.stdout).expect("one JSON object"), text(&out.stderr))
}

#[test]
fn the_thread_count_changes_nothing_but_the_time() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("sparse_large.svm.xz");
    let (one, _) = run(&m, &data, &["--threads", "1"]);
    for n in ["2", "3"] {
        let (many, _) = run(&m, &data, &["--threads", n]);
        assert_eq!(many["objective"], one["objective"], "--threads {n}");
        assert_eq!(many["nnz"], one["nnz"], "--threads {n}");
    }
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--threads", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("at least 1"), "{}", text(&out.stderr));
}

/// The passes at a check (F, the margins, the certificate's Xᵀu) split the rows into blocks of
/// 4096 between the threads: on data of several blocks, a run to a certificate reports the same
/// F, gap and weights, to the bit, whatever the thread count.
#[test]
fn checks_on_several_threads_certify_the_same_numbers() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = dir.path().join("synth.svm");
    let synth = std::process::Command::new(env!("CARGO_BIN_EXE_optc-synth"))
        .args(["--rows", "10000", "--features", "300", "--seed", "5", "--quiet", "-o", data.to_str().unwrap()])
        .output()
        .expect("optc-synth runs");
    assert!(synth.status.success(), "{}", text(&synth.stderr));
    let certified = |threads: &str| {
        let saved = dir.path().join(format!("w{threads}.model"));
        let out = optc(&[
            "run",
            m.to_str().unwrap(),
            data.to_str().unwrap(),
            "--json",
            "--tol",
            "1e-6",
            "--threads",
            threads,
            "--save",
            saved.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        (report, std::fs::read(&saved).expect("saved weights"))
    };
    let (one, weights) = certified("1");
    assert_eq!(one["status"], "converged", "{one}");
    for n in ["2", "3"] {
        let (many, w) = certified(n);
        for key in ["objective", "gap", "epochs", "nnz"] {
            assert_eq!(many[key], one[key], "{key} with --threads {n}");
        }
        assert!(w == weights, "the weights with --threads {n}");
    }
}

#[test]
fn a_cache_is_written_used_and_refused_when_the_data_changes() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = dir.path().join("d.svm");
    std::fs::copy(fixture("binary.svm"), &data).expect("copy");
    let cache = dir.path().join("d.svm.optc-cache");

    let (cold, notes) = run(&m, &data, &["--cache"]);
    assert!(notes.contains("note: data cache written to") && cache.exists(), "{notes}");
    let (warm, notes) = run(&m, &data, &["--cache"]);
    assert!(notes.contains("note: data read from the cache"), "{notes}");
    assert_eq!(warm["objective"], cold["objective"]);
    let (plain, notes) = run(&m, &data, &[]);
    assert!(!notes.contains("cache"), "no --cache, no cache: {notes}");
    assert_eq!(plain["objective"], cold["objective"]);

    // One label flipped: a new file, and a new objective.
    let flipped = std::fs::read_to_string(&data).expect("data").replacen("-1 ", "+1 ", 1);
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&data, flipped).expect("rewrite");
    let (changed, notes) = run(&m, &data, &["--cache"]);
    assert!(notes.contains("stale (the data file changed); rewritten"), "{notes}");
    assert_ne!(changed["objective"], cold["objective"]);
    let (again, notes) = run(&m, &data, &["--cache"]);
    assert!(notes.contains("read from the cache"), "{notes}");
    assert_eq!(again["objective"], changed["objective"]);

    // --cache=DIR puts it there; --cache DIR would be a stray argument, not a directory.
    let elsewhere = dir.path().join("caches");
    let (_, notes) = run(&m, &data, &[&format!("--cache={}", elsewhere.display())]);
    assert!(notes.contains(&elsewhere.display().to_string()), "{notes}");
    assert!(std::fs::read_dir(&elsewhere).expect("created").count() == 1);
}

#[test]
fn path_and_the_repl_take_the_reading_flags() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let caches = format!("--cache={}", dir.path().join("c").display());
    let out = optc(&[
        "path",
        m.to_str().unwrap(),
        data.to_str().unwrap(),
        "--param",
        "lambda",
        "--steps",
        "2",
        "--threads",
        "2",
        &caches,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 3, "a header and two points");

    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_optc"))
        .args(["repl", m.to_str().unwrap(), data.to_str().unwrap(), "--threads", "1", &caches])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("optc repl");
    use std::io::Write;
    child.stdin.take().expect("stdin").write_all(b":run --epochs 2 --threads 2\n:quit\n").expect("script");
    let out = child.wait_with_output().expect("repl ends");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("data read from the cache"), "the path run wrote it: {s}");
    assert!(s.contains("objective"), "{s}");
}
