//! `optc repl` driven through standard input, as a script would drive it.

mod common;

use common::{fixture, optc, text, write, L1_LOGISTIC};
use std::io::Write;
use std::process::{Command, Stdio};

struct Session {
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

/// Runs `optc repl ARGS` with `script` on standard input.
fn repl(args: &[&str], script: &str) -> Session {
    let home = tempfile::tempdir().expect("tmp");
    let mut child = spawn_repl(args, home.path());
    child.stdin.take().expect("stdin").write_all(script.as_bytes()).expect("script written");
    let out = child.wait_with_output().expect("optc ends");
    Session { stdout: text(&out.stdout), stderr: text(&out.stderr), code: out.status.code() }
}

/// `optc repl ARGS` with its history under `home`, every stream piped.
fn spawn_repl(args: &[&str], home: &std::path::Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_optc"))
        .arg("repl")
        .args(args)
        .env("XDG_DATA_HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("optc runs")
}

/// The epoch counts of the runs, in order.
fn epochs(stdout: &str) -> Vec<usize> {
    stdout.lines().filter_map(|l| l.trim().strip_prefix("epochs")).map(|n| n.trim().parse().expect("a count")).collect()
}

#[test]
fn a_session_edits_solves_warm_shows_and_saves() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(dir.path(), "m.opt", L1_LOGISTIC);
    let saved = dir.path().join("saved.model");
    let data = fixture("binary.svm");
    let script = format!(
        ":data {}\n:check\n:plan\n:run --tol 1e-6\nparam lambda = 0.012\n:run --tol 1e-6\nparam λ = )\nminimize E[logistic(y, <x, w>)] + λ·l3(w)\n:show 3\n:save {}\n:path --param λ --steps 5\n:quit\n:run\n",
        data.display(),
        saved.display()
    );
    let s = repl(&[model.to_str().unwrap()], &script);
    let (out, err) = (&s.stdout, &s.stderr);
    // The two bad lines make the exit status 1, but the session went on past them.
    assert_eq!(s.code, Some(1), "{out}\n{err}");
    assert!(out.contains("binary.svm — 200 rows × 30 features"), "{out}");
    assert!(out.contains("recommended "), ":check prints the structure: {out}");
    assert!(out.contains("plan scd"), ":plan prints the plan: {out}");
    assert!(out.contains("λ = 0.012 (was 0.01)"), "the ASCII spelling sets `λ`: {out}");
    assert!(out.contains("warm start from the previous solution"), "{out}");
    let e = epochs(out);
    assert!(e.len() >= 2 && e[1] <= e[0], "the warm run needs no more epochs: {e:?}\n{out}");
    assert_eq!(out.matches("status       converged").count(), 3, "both runs and :show: {out}");
    // The syntax error and the unknown regularizer: diagnostics, and the model unchanged.
    assert!(err.contains("<input>"), "a syntax error points into the line: {err}");
    assert!(err.contains("l3"), "{err}");
    assert!(err.contains("the line was not applied"), "{err}");
    // :show 3 after the bad lines still shows the solution.
    let weights: Vec<&str> = out.lines().filter(|l| l.trim_start().starts_with("feature ")).collect();
    assert_eq!(weights.len(), 3, "{out}");
    assert!(out.contains("saved "), "{out}");
    // :path prints the path's CSV: a header and one row per point, λ_max first with w = 0.
    let csv: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("λ,objective")).take(6).collect();
    assert_eq!(csv.len(), 6, "{out}");
    assert_eq!(csv[1].split(',').nth(4), Some("0"), "{out}");
    // Nothing after :quit ran.
    assert_eq!(out.matches("backend").count(), 2, "{out}");
    let p = optc(&["predict", saved.to_str().unwrap(), data.to_str().unwrap()]);
    assert!(p.status.success(), "{}", text(&p.stderr));
    let said = format!("{}{}", text(&p.stdout), text(&p.stderr));
    assert!(said.contains("Accuracy = "), "{said}");
}

#[test]
fn a_model_typed_line_by_line_solves_to_the_tolerance() {
    let script = format!(
        ":run\ndata x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.05\n:check\nminimize E[hinge(y, <x, w>)] + λ·l2sq(w)\n:data {}\n:run --tol 1e-3 --seed 3\n:model\nsolve with fobos(epochs = 3)\n:run\n",
        fixture("binary.svm").display()
    );
    let s = repl(&[], &script);
    let (out, err) = (&s.stdout, &s.stderr);
    assert!(err.contains("no model yet"), "{err}");
    assert!(err.contains("no objective yet"), "{err}");
    assert!(out.contains("objective set"), "{out}");
    assert!(out.contains("status       converged"), "{out}");
    assert!(out.contains("gap          "), "{out}");
    assert!(out.contains("minimize E[hinge(y, <x, w>)] + λ·l2sq(w)\n"), ":model lists the text: {out}");
    assert!(out.contains("solver set"), "{out}");
    assert!(out.contains("cold start: the model changed"), "a new solver is a new model: {out}");
    assert!(out.contains("fobos on ") && out.contains("status       max_epochs"), "{out}");
    assert_eq!(s.code, Some(1), "the first two lines failed");
}

#[test]
fn commands_that_go_wrong_say_why_and_the_session_goes_on() {
    let s = repl(&[], ":shwo\n:show\n:run --bogus\n:data /nonexistent.svm\n:help\n");
    let (out, err) = (&s.stdout, &s.stderr);
    assert!(err.contains("did you mean `:show`?"), "{err}");
    assert!(err.contains("no solution yet"), "{err}");
    assert!(err.contains("--bogus"), "{err}");
    assert!(err.contains("/nonexistent.svm"), "{err}");
    assert!(out.contains(":save FILE"), ":help still answered: {out}");
    assert_eq!(s.code, Some(1));
    let fine = repl(&[], ":help\n");
    assert_eq!(fine.code, Some(0), "{}", fine.stderr);
    assert!(!fine.stdout.contains("optc>"), "no prompt off a terminal: {}", fine.stdout);
}

/// `:run --shards K` shards the epochs as `optc run` does, and the report says so; a solver
/// that does not take shards is refused and the session goes on.
#[test]
fn a_run_in_the_repl_may_shard_its_epochs() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(dir.path(), "m.opt", L1_LOGISTIC);
    let script = format!(
        ":data {}\n:run --shards 2\n:run --solver fobos --shards 2 --epochs 3\n:quit\n",
        fixture("binary.svm").display()
    );
    let s = repl(&[model.to_str().unwrap()], &script);
    assert!(s.stderr.contains("`scd` does not take shards"), "{}", s.stderr);
    assert!(s.stdout.contains("epochs       3 (each in 2 shards on 2 threads, averaged)"), "{}", s.stdout);
}

/// Ctrl-C during a `:run` ends that solve (status `interrupted`) and not the session: the
/// next `:run` runs, and `:quit` exits 0.
#[test]
fn ctrl_c_stops_a_solve_and_the_session_goes_on() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-6\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\nsolve with fobos\n",
    );
    let home = tempfile::tempdir().expect("tmp");
    let data = fixture("sparse_large.svm.xz");
    let mut child = spawn_repl(&[model.to_str().expect("utf-8"), data.to_str().expect("utf-8")], home.path());
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b":run --epochs 100000000\n").expect("written");
    stdin.flush().expect("flushed");
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let killed = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    assert!(killed.success());
    stdin.write_all(b":run --epochs 2\n:quit\n").expect("written");
    drop(stdin);
    let out = child.wait_with_output().expect("optc ends");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("status       interrupted: an interrupt after epoch"), "{stdout}");
    assert_eq!(epochs(&stdout).last(), Some(&2), "{stdout}");
}
