//! A reader that goes away ends optc quietly, as it ends `git log | head`: every command that
//! writes to standard output exits 0 or by SIGPIPE, with nothing on standard error, when its
//! standard output is closed early.

mod common;

use common::{fixture, optc, text, write};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// SIGPIPE's number on Linux and the BSDs.
const SIGPIPE: i32 = 13;

const MODEL: &str = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.02\n\
                     minimize E[logistic(y, <x, w>)] + λ·l1(w)\n";

/// `optc ARGS` (with `stdin` written to its standard input), its standard output closed after
/// the first line when `first_line`, else before it writes anything: how it ended, and its
/// standard error.
fn closed_early(args: &[&str], stdin: &str, first_line: bool) -> (std::process::ExitStatus, String) {
    let home = tempfile::tempdir().expect("tmp");
    let mut child = Command::new(env!("CARGO_BIN_EXE_optc"))
        .args(args)
        .env("XDG_DATA_HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("optc runs");
    let stdout = child.stdout.take().expect("stdout");
    if first_line {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("a first line");
        assert!(!line.is_empty(), "{args:?} wrote nothing");
    } else {
        drop(stdout);
    }
    // A reader that left also takes its input away; a REPL script is written whole before.
    let mut input = child.stdin.take().expect("stdin");
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    let out = child.wait_with_output().expect("optc ends");
    (out.status, text(&out.stderr))
}

/// Rows enough that the scores overflow a pipe's buffer (64 KiB) many times over.
fn many_rows(dir: &Path) -> std::path::PathBuf {
    let mut s = String::new();
    for i in 0..20_000 {
        let y = if i % 3 == 0 { 1 } else { -1 };
        s += &format!("{y} 1:{} 2:{} 3:1\n", (i % 7) as f64 / 7.0, (i % 11) as f64 / 11.0);
    }
    write(dir, "many.svm", &s)
}

#[test]
fn every_command_ends_quietly_when_its_reader_goes_away() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(dir.path(), "m.opt", MODEL);
    let data = fixture("binary.svm");
    let saved = dir.path().join("m.model");
    let (m, d, s) = (model.to_str().expect("utf-8"), data.to_str().expect("utf-8"), saved.to_str().expect("utf-8"));
    let trained = optc(&["run", m, d, "--save", s, "--quiet"]);
    assert!(trained.status.success(), "{}", text(&trained.stderr));
    let many = many_rows(dir.path());
    let many = many.to_str().expect("utf-8");

    let cases: Vec<(Vec<&str>, &str, bool)> = vec![
        (vec!["predict", s, many, "--scores", "--quiet"], "", true),
        (vec!["predict", s, many, "--quiet"], "", true),
        (vec!["plan", "examples/l1_logistic.opt", "--emit", "asm"], "", true),
        (vec!["plan", m], "", false),
        (vec!["check", m], "", false),
        (vec!["run", m, d, "--json", "--quiet"], "", false),
        (vec!["path", m, d, "--param", "λ", "--quiet"], "", false),
        (vec!["completions", "bash"], "", true),
        (vec!["repl", m, d], ":plan\n:run\n:show\n:quit\n", false),
    ];
    for (args, stdin, first_line) in cases {
        let (status, stderr) = closed_early(&args, stdin, first_line);
        let quiet = status.success() || status.signal() == Some(SIGPIPE);
        assert!(quiet, "{args:?} ended with {status:?}\n{stderr}");
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{args:?}\n{stderr}");
    }
}
