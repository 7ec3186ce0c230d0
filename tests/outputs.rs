//! Output files (`--save`, `--trace`, `--plot`, `predict --out`) as an administrator would check them:
//! links survive, devices and pipes are written through, modes are what a shell would give, and
//! a bad path fails before any work.

mod common;

use common::{fixture, optc, text, write, L1_LOGISTIC};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).expect("exists").permissions().mode() & 0o7777
}

fn run_saving(model: &Path, save: &str) -> std::process::Output {
    let data = fixture("binary.svm");
    optc(&["run", model.to_str().unwrap(), data.to_str().unwrap(), "--quiet", "--save", save])
}

fn no_temporaries(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
}

#[test]
fn saving_through_a_symlink_keeps_the_link_and_replaces_its_target() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    std::fs::create_dir(dir.path().join("models")).expect("mkdir");
    let real = write(&dir.path().join("models"), "real.model", "old\n");
    let link = dir.path().join("current.model");
    std::os::unix::fs::symlink("models/real.model", &link).expect("symlink");
    let out = run_saving(&m, link.to_str().unwrap());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::symlink_metadata(&link).expect("link").file_type().is_symlink(), "the link was replaced");
    assert!(std::fs::read_to_string(&real).expect("target").starts_with("solver_type L1R_LR"));
    no_temporaries(dir.path());
    no_temporaries(&dir.path().join("models"));
}

#[test]
fn a_dangling_symlink_creates_its_target() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let link = dir.path().join("latest.model");
    std::os::unix::fs::symlink("made.model", &link).expect("symlink");
    let out = run_saving(&m, link.to_str().unwrap());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::symlink_metadata(&link).expect("link").file_type().is_symlink());
    assert!(std::fs::read_to_string(dir.path().join("made.model")).expect("target").starts_with("solver_type"));
}

#[test]
fn a_link_to_standard_output_and_dev_stdout_are_written_through() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let link = dir.path().join("s");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).expect("symlink");
    for target in [link.to_str().unwrap(), "/dev/stdout", "-"] {
        let out = run_saving(&m, target);
        assert!(out.status.success(), "{target}: {}", text(&out.stderr));
        assert!(text(&out.stdout).starts_with("solver_type L1R_LR\n"), "{target}: {}", text(&out.stdout));
    }
    assert!(std::fs::symlink_metadata(&link).expect("link").file_type().is_symlink(), "the link was replaced");
    let dev = std::fs::symlink_metadata("/dev/stdout").expect("/dev/stdout");
    assert!(!dev.file_type().is_file(), "/dev/stdout became a regular file");
}

#[test]
fn a_pipe_is_written_through() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    // The reader of the pipe, as `>(gzip > p.gz)` would be.
    let reader = Command::new("cat").arg(&fifo).stdout(Stdio::piped()).spawn().expect("cat");
    let out = run_saving(&m, fifo.to_str().unwrap());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = reader.wait_with_output().expect("cat ends");
    assert!(text(&got.stdout).starts_with("solver_type L1R_LR\n"));
    assert!(std::fs::symlink_metadata(&fifo).expect("fifo").file_type().is_fifo());
}

#[test]
fn new_files_get_0666_minus_the_umask_and_replaced_files_keep_their_mode() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let run_with_umask = |umask: &str, save: &Path| {
        let cmd = format!("umask {umask}; exec \"$0\" run \"$1\" \"$2\" --quiet --save \"$3\" --trace \"$3.csv\"",);
        let out = Command::new("sh")
            .args(["-c", &cmd, env!("CARGO_BIN_EXE_optc"), m.to_str().unwrap(), data.to_str().unwrap()])
            .arg(save)
            .output()
            .expect("sh");
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    let fresh = dir.path().join("fresh.model");
    run_with_umask("022", &fresh);
    assert_eq!(mode(&fresh), 0o644);
    assert_eq!(mode(&dir.path().join("fresh.model.csv")), 0o644);
    let strict = dir.path().join("strict.model");
    run_with_umask("027", &strict);
    assert_eq!(mode(&strict), 0o640);
    for keep in [0o644, 0o600, 0o664, 0o755] {
        let existing = write(dir.path(), "existing.model", "old\n");
        std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(keep)).expect("chmod");
        run_with_umask("077", &existing);
        assert_eq!(mode(&existing), keep, "mode {keep:o} was not kept");
        assert!(std::fs::read_to_string(&existing).expect("read").starts_with("solver_type"));
    }
    no_temporaries(dir.path());
}

#[test]
fn bad_output_paths_fail_before_the_data_is_read() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    // The data does not exist: had optc read it first, it would complain about the data (exit 1).
    let missing_data = dir.path().join("never-read.svm");
    for flag in ["--save", "--trace", "--plot"] {
        for bad in ["/nonexistent-folder/out", dir.path().to_str().unwrap()] {
            let out = optc(&["run", m.to_str().unwrap(), missing_data.to_str().unwrap(), flag, bad]);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{flag} {bad}: {err}");
            assert!(err.contains(&format!("cannot write {bad}")), "{err}");
        }
    }
    let out = optc(&["predict", "no-model", missing_data.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let model = dir.path().join("saved.model");
    assert!(run_saving(&m, model.to_str().unwrap()).status.success());
    let out = optc(&["predict", model.to_str().unwrap(), missing_data.to_str().unwrap(), "--out", "/nonexistent/p"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn a_failed_run_leaves_the_previous_file_untouched() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let previous = write(dir.path(), "keep.model", "previous contents\n");
    let bad_data = write(dir.path(), "bad.svm", "+1 1:1\n-1 0:2\n");
    let out = optc(&["run", m.to_str().unwrap(), bad_data.to_str().unwrap(), "--save", previous.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&previous).expect("read"), "previous contents\n");
    no_temporaries(dir.path());
}

#[test]
fn dash_reads_data_from_standard_input() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = std::fs::read(fixture("binary.svm")).expect("fixture");
    let compressed = gzip(&data);
    for input in [data, compressed] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_optc"))
            .args(["run", m.to_str().unwrap(), "-", "--json", "--quiet"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("optc");
        let mut stdin = child.stdin.take().expect("stdin");
        std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &input).expect("feed"));
        let out = child.wait_with_output().expect("optc ends");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(r["rows"], 200);
        assert_eq!(r["data"], "<stdin>");
    }
}

/// gzip through the system tool, so the test needs no compression crate of its own.
fn gzip(data: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip").arg("-c").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("gzip");
    let mut stdin = child.stdin.take().expect("stdin");
    let owned = data.to_vec();
    std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &owned).expect("feed"));
    child.wait_with_output().expect("gzip ends").stdout
}

#[test]
fn two_outputs_cannot_share_standard_output() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--json", "--save", "-"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("standard output"));
}
