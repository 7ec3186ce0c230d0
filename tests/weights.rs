//! The rows' weights (`E[s·loss(...)]`, `--weights FILE`, `--class-weight LABEL=W`): integer
//! weights are repeated rows, a weight of 0 is the row left out, both back ends agree, and bad
//! weights are named by file and line with nothing written.

mod common;

use common::{fixture, optc, text, write};
use optc::data::read_libsvm;
use optc::exec::driver::RunSettings;
use optc::plan::ScalarRole;
use std::path::Path;

/// The head of a weighted model over `x`, `y` and `s`, with an intercept b.
fn weighted(lambda: f64, objective: &str) -> String {
    format!("data x: sparse, y: labels, s: weights\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = {lambda}\nminimize E[s·{objective}\n")
}

/// The same model without weights.
fn plain(lambda: f64, objective: &str) -> String {
    format!(
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = {lambda}\nminimize E[{objective}\n"
    )
}

/// `optc run MODEL DATA EXTRA... --json --quiet` (the model written to `dir/name`), which must
/// succeed: its JSON report.
fn report(dir: &Path, name: &str, model: &str, data: &Path, extra: &[&str]) -> serde_json::Value {
    let m = write(dir, name, model);
    let mut args = vec!["run", m.to_str().unwrap(), data.to_str().unwrap(), "--json", "--quiet"];
    args.extend_from_slice(extra);
    let out = optc(&args);
    assert!(out.status.success(), "{model}\n{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// `optc run` to `--tol 1e-10`, which must succeed: F from its JSON report, and the weights
/// (b last) from its saved model.
fn solve(dir: &Path, model: &str, data: &Path, extra: &[&str]) -> (f64, Vec<f64>, serde_json::Value) {
    let saved = dir.join("saved.model");
    let mut args = vec!["--tol", "1e-10", "--epochs", "100000", "--save", saved.to_str().unwrap()];
    args.extend_from_slice(extra);
    let r = report(dir, "m.opt", model, data, &args);
    assert_eq!(r["status"], "converged", "{model}\n{r}");
    let saved = std::fs::read_to_string(&saved).expect("saved");
    let w: Vec<f64> = saved
        .lines()
        .skip_while(|l| l.trim() != "w")
        .skip(1)
        .map(|l| l.split_whitespace().next().expect("a weight").parse().expect("a number"))
        .collect();
    (r["objective"].as_f64().expect("F"), w, r)
}

/// A saved multiclass model's columns (the offsets last), by label in sorted order: the files
/// list the classes in the order the rows first show them, which leaving rows out changes.
fn by_label(path: &Path) -> Vec<(String, Vec<f64>)> {
    let text = std::fs::read_to_string(path).expect("saved");
    let labels: Vec<String> = text
        .lines()
        .find_map(|l| l.strip_prefix("label "))
        .expect("a label line")
        .split_whitespace()
        .map(String::from)
        .collect();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip_while(|l| l.trim() != "w")
        .skip(1)
        .map(|l| l.split_whitespace().map(|v| v.parse().expect("a number")).collect())
        .collect();
    let mut out: Vec<(String, Vec<f64>)> =
        labels.iter().enumerate().map(|(c, l)| (l.clone(), rows.iter().map(|r| r[c]).collect())).collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// A seeded weight in {0, 1, 2, 3} for row i.
fn weight(i: usize) -> usize {
    (i * 7 + i / 3) % 4
}

/// The fixture's rows, each repeated `weights[i]` times (LIBSVM text), and its weight file.
fn repeated(dir: &Path, weights: &[usize]) -> (std::path::PathBuf, std::path::PathBuf) {
    repeated_of("binary.svm", dir, weights)
}

/// [`repeated`] of the fixture `name`.
fn repeated_of(name: &str, dir: &Path, weights: &[usize]) -> (std::path::PathBuf, std::path::PathBuf) {
    let rows = std::fs::read_to_string(fixture(name)).expect("fixture");
    let rows: Vec<&str> = rows.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(rows.len(), weights.len());
    let mut out = String::new();
    for (row, &k) in rows.iter().zip(weights) {
        for _ in 0..k {
            out.push_str(row);
            out.push('\n');
        }
    }
    let file: String = weights.iter().map(|w| format!("{w}\n")).collect();
    (write(dir, "repeated.svm", &out), write(dir, "w.txt", &file))
}

/// With S = Σᵢ sᵢ, the weighted model at λ·S/m has the minimiser of the rows repeated sᵢ times
/// at λ, and its F is S/m times theirs: for each solver that takes weights, with an intercept.
#[test]
fn integer_weights_are_repeated_rows() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = 200;
    let weights: Vec<usize> = (0..m).map(weight).collect();
    let s: usize = weights.iter().sum();
    assert!(weights.contains(&0) && s != m, "the weights leave rows out and change the count");
    let (rows, file) = repeated(dir.path(), &weights);
    let ratio = s as f64 / m as f64;
    for (solver, objective, lambda) in [
        ("scd", "logistic(y, <x, w> + b)] + λ·l1(w)", 0.02),
        ("proxgrad", "logistic(y, <x, w> + b)] + λ·l1(w)\nsolve with proxgrad", 0.02),
        ("scd", "logistic(y, <x, w> + b)] + λ·l1(w)\nsolve with scd(newton = 0)", 0.02),
        ("scd", "logistic(y, <x, w> + b)] + λ·l2sq(w)", 0.01),
        ("tron", "logistic(y, <x, w> + b)] + λ·l2sq(w)\nsolve with tron", 0.01),
        ("scd", "squared_hinge(y, <x, w> + b)] + λ·l2sq(w)", 0.01),
        ("dcd", "squared_hinge(y, <x, w> + b)] + λ·l2sq(w)\nsolve with dcd", 0.01),
        ("scd", "squared(y, <x, w> + b)] + λ·l2sq(w)", 0.01),
        ("scd", "squared(y, <x, w> + b)] + λ·l1(w) + λ·l2sq(w)", 0.01),
        ("scd", "squared(y, <x, w> + b)] + λ·l1(w)", 0.01),
        ("dcd", "hinge(y, <x, w> + b)] + λ·l2sq(w)", 0.01),
        ("alm", "hinge(y, <x, w> + b)] + λ·l2sq(w)\nsolve with alm", 0.01),
        ("dcd", "logistic(y, <x, w> + b)] + λ·l2sq(w)\nsolve with dcd", 0.01),
        ("tron", "squared_hinge(y, <x, w> + b)] + λ·l2sq(w)\nsolve with tron", 0.01),
    ] {
        let (f_w, w_w, r) = solve(
            dir.path(),
            &weighted(lambda * ratio, objective),
            &fixture("binary.svm"),
            &["--weights", file.to_str().unwrap()],
        );
        assert_eq!(r["solver"], solver, "{objective}: {r}");
        let (f_r, w_r, _) = solve(dir.path(), &plain(lambda, objective), &rows, &[]);
        assert!((f_w - ratio * f_r).abs() <= 1e-9 * f_w.abs(), "{objective}: F {f_w} against {ratio}·{f_r}");
        assert_eq!(w_w.len(), w_r.len());
        let far = w_w.iter().zip(&w_r).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(far <= 1e-4, "{objective}: the minimisers differ by {far}");
    }
}

/// Softmax with per-class offsets, by tron (½‖W‖²) and by proxgrad (ℓ1, its Newton
/// refinement on every entry of W): integer weights are repeated rows here too.
#[test]
fn softmax_weights_are_repeated_rows() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = std::fs::read_to_string(fixture("multiclass.svm")).expect("fixture");
    let m = text.lines().filter(|l| !l.trim().is_empty()).count();
    let weights: Vec<usize> = (0..m).map(weight).collect();
    let s: usize = weights.iter().sum();
    let (rows, file) = repeated_of("multiclass.svm", dir.path(), &weights);
    let ratio = s as f64 / m as f64;
    let head = |weighted: bool, lambda: f64| {
        format!(
            "data x: sparse, y: classes{}\nvar W: mat[dim(x), classes(y)]\nvar b: vec[classes(y)]\nparam λ = {lambda}\n",
            if weighted { ", s: weights" } else { "" }
        )
    };
    for (solver, penalty, lambda) in [("tron", "l2sq", 0.01), ("proxgrad", "l1", 0.01)] {
        let weighted = format!("{}minimize E[s·softmax(y, <x, W> + b)] + λ·{penalty}(W)\n", head(true, lambda * ratio));
        let plain = format!("{}minimize E[softmax(y, <x, W> + b)] + λ·{penalty}(W)\n", head(false, lambda));
        let (f_w, _, r) =
            solve(dir.path(), &weighted, &fixture("multiclass.svm"), &["--weights", file.to_str().unwrap()]);
        assert_eq!(r["solver"], solver, "{penalty}: {r}");
        let w_w = by_label(&dir.path().join("saved.model"));
        let (f_r, _, _) = solve(dir.path(), &plain, &rows, &[]);
        let w_r = by_label(&dir.path().join("saved.model"));
        assert!((f_w - ratio * f_r).abs() <= 1e-9 * f_w, "{penalty}: F {f_w} against {ratio}·{f_r}");
        // Softmax is blind to a constant added to a row of W (and to the offsets), which ℓ1 may
        // leave free: the rows are compared centred.
        assert_eq!(w_w.len(), w_r.len());
        let centred = |w: &[(String, Vec<f64>)], c: usize, j: usize| {
            w[c].1[j] - w.iter().map(|(_, col)| col[j]).sum::<f64>() / w.len() as f64
        };
        for (c, ((label, a), (same, _))) in w_w.iter().zip(&w_r).enumerate() {
            assert_eq!(label, same);
            let far = (0..a.len()).map(|j| (centred(&w_w, c, j) - centred(&w_r, c, j)).abs()).fold(0.0, f64::max);
            assert!(far <= 1e-4, "{penalty}: class {label}'s weights differ by {far}");
        }
    }
}

/// A weight of 0 is the row left out (S = m − 1), and `--class-weight` multiplies the file's
/// weights: a class weight of 0 leaves that class's rows out.
#[test]
fn a_zero_weight_is_the_row_left_out() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = 200;
    let mut weights = vec![1; m];
    weights[17] = 0;
    let (rows, file) = repeated(dir.path(), &weights);
    let objective = "logistic(y, <x, w> + b)] + λ·l2sq(w)";
    let ratio = (m - 1) as f64 / m as f64;
    let (f_w, w_w, _) = solve(
        dir.path(),
        &weighted(0.01 * ratio, objective),
        &fixture("binary.svm"),
        &["--weights", file.to_str().unwrap()],
    );
    let (f_r, w_r, _) = solve(dir.path(), &plain(0.01, objective), &rows, &[]);
    assert!((f_w - ratio * f_r).abs() <= 1e-9 * f_w, "F {f_w} against {ratio}·{f_r}");
    let far = w_w.iter().zip(&w_r).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    // ½λ‖Δw‖² ≤ the two gaps (1e-10·F each): ‖Δw‖ ≤ 1.2e-4 at λ = 0.01.
    assert!(far <= 1e-4, "the minimisers differ by {far}");

    // Class weights: 2 on the positive rows is each of them twice.
    let data = std::fs::read_to_string(fixture("binary.svm")).expect("fixture");
    let doubled: Vec<usize> =
        data.lines().filter(|l| !l.trim().is_empty()).map(|l| if l.starts_with("-1") { 1 } else { 2 }).collect();
    let s: usize = doubled.iter().sum();
    let (rows, _) = repeated(dir.path(), &doubled);
    let ratio = s as f64 / m as f64;
    let (f_c, w_c, _) =
        solve(dir.path(), &weighted(0.01 * ratio, objective), &fixture("binary.svm"), &["--class-weight", "1=2"]);
    let (f_r, w_r, _) = solve(dir.path(), &plain(0.01, objective), &rows, &[]);
    assert!((f_c - ratio * f_r).abs() <= 1e-9 * f_c, "F {f_c} against {ratio}·{f_r}");
    let far = w_c.iter().zip(&w_r).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(far <= 1e-4, "class weights: the minimisers differ by {far}");
}

/// The interpreter and the JIT run a weighted plan to the same bits.
#[test]
fn the_back_ends_agree_on_weighted_plans() {
    let mut d = read_libsvm(&fixture("binary.svm")).expect("fixture");
    d.weights = Some((0..d.rows()).map(|i| weight(i) as f64 * 0.5).collect());
    let mut k = read_libsvm(&fixture("multiclass.svm")).expect("fixture");
    k.weights = Some((0..k.rows()).map(|i| weight(i) as f64 * 0.5).collect());
    let softmax = "data x: sparse, y: classes, s: weights\nvar W: mat[dim(x), classes(y)]\nvar b: vec[classes(y)]\nparam λ = 0.01\nminimize E[s·softmax(y, <x, W> + b)] + λ·";
    for (text, data) in [
        (format!("{softmax}l2sq(W)\n"), &k),
        (format!("{softmax}l1(W)\n"), &k),
        (format!("{softmax}l1(W)\nsolve with fobos\n").replace("var b: vec[classes(y)]\n", "").replace(" + b", ""), &k),
    ] {
        let plan = common::compile(&text, &Default::default());
        assert!(plan.row_weights().is_some(), "{text}: the plan reads ω");
        let settings = RunSettings::fixed(5, 1);
        let jit = common::run_plan_on(plan.clone(), data, &settings, None, Path::new("."), true);
        let interp = common::run_plan_on(plan.clone(), data, &settings, None, Path::new("."), false);
        for (k, decl) in plan.vectors.iter().enumerate().filter(|(_, v)| !v.role.is_input()) {
            assert_eq!(jit.outcome.state.vectors[k], interp.outcome.state.vectors[k], "{text}: {}", decl.name);
        }
    }
    for objective in [
        "logistic(y, <x, w> + b)] + λ·l1(w)",
        "logistic(y, <x, w> + b)] + λ·l1(w)\nsolve with proxgrad",
        "squared(y, <x, w> + b)] + λ·l1(w)",
        "logistic(y, <x, w> + b)] + λ·l1(w)\nsolve with scd(newton = 0)",
        "logistic(y, <x, w> + b)] + λ·l2sq(w)",
        "hinge(y, <x, w> + b)] + λ·l2sq(w)",
        "squared_hinge(y, <x, w> + b)] + λ·l2sq(w)\nsolve with dcd",
        "logistic(y, <x, w> + b)] + λ·l2sq(w)\nsolve with dcd",
        "hinge(y, <x, w> + b)] + λ·l2sq(w)\nsolve with fobos",
        "hinge(y, <x, w> + b)] + λ·l2sq(w)\nsolve with alm",
        "logistic(y, <x, w> + b)] + λ·l1(w)\nsolve with adagrad",
        "logistic(y, <x, w> + b)] + λ·l1(w)\nsolve with adagrad(rda = 1)",
        "logistic(y, <x, w> + b)] + λ·l1(w)\nsolve with smidas",
        "logistic(y, <x, w> + b)] + λ·l1(w)\nsolve with smm",
    ] {
        let text = weighted(0.01, objective);
        let plan = common::compile(&text, &Default::default());
        assert!(plan.row_weights().is_some(), "{objective}: the plan reads s");
        let settings = RunSettings::fixed(7, 1);
        let dir = Path::new(".");
        let jit = common::run_plan_on(plan.clone(), &d, &settings, None, dir, true);
        let interp = common::run_plan_on(plan.clone(), &d, &settings, None, dir, false);
        // The data's buffers aside (the JIT reads y and s in place): every state the same bits.
        for (k, decl) in plan.vectors.iter().enumerate().filter(|(_, v)| !v.role.is_input()) {
            assert_eq!(jit.outcome.state.vectors[k], interp.outcome.state.vectors[k], "{objective}: {}", decl.name);
        }
        for (k, decl) in plan.scalars.iter().enumerate().filter(|(_, s)| s.role != ScalarRole::Local) {
            assert_eq!(jit.outcome.state.scalars[k], interp.outcome.state.scalars[k], "{objective}: {}", decl.name);
        }
        assert!(jit.outcome.state.weights(&plan).iter().any(|v| *v != 0.0), "{objective}: the weights moved");
    }
}

/// Bad weights get a diagnostic that names the file and the line (or the label), and nothing is
/// written; weights for a model whose loss is not weighted are refused with the way to say it.
#[test]
fn bad_weights_are_named_and_nothing_is_written() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", &weighted(0.01, "logistic(y, <x, w> + b)] + λ·l2sq(w)"));
    let data = fixture("binary.svm");
    let saved = dir.path().join("out.model");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", m.to_str().unwrap(), data.to_str().unwrap(), "--save", saved.to_str().unwrap()];
        args.extend_from_slice(extra);
        optc(&args)
    };
    let ones = "1\n".repeat(200);
    for (name, contents, says) in [
        ("short.txt", "1\n".repeat(199), "short.txt:199:1: 199 weights for the data's 200 rows".to_string()),
        ("long.txt", "1\n".repeat(201), "long.txt:201:1: more weights than the data's 200 rows".to_string()),
        ("negative.txt", ones.replacen("1\n", "-0.5\n", 1), "negative.txt:1:1: the weight -0.5 is negative".into()),
        ("nan.txt", format!("{}nan\n", "1\n".repeat(199)), "nan.txt:200:1: the weight `nan` is not finite".into()),
        ("word.txt", ones.replacen("1\n", "one\n", 1), "word.txt:1:1: `one` is not a number".into()),
    ] {
        let w = write(dir.path(), name, &contents);
        let out = run(&["--weights", w.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(&says), "{name}: {}", text(&out.stderr));
        assert!(!saved.exists(), "{name}: a refused run wrote its model");
    }
    let out = run(&["--class-weight", "3=2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--class-weight 3=2: the data has no label 3 (its labels are -1, 1)"),
        "{}",
        text(&out.stderr)
    );
    assert!(!saved.exists());

    let unweighted = write(dir.path(), "plain.opt", &plain(0.01, "logistic(y, <x, w> + b)] + λ·l2sq(w)"));
    let w = write(dir.path(), "ones.txt", &ones);
    let out = optc(&["run", unweighted.to_str().unwrap(), data.to_str().unwrap(), "--weights", w.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--weights: the model's loss is not weighted"), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("`E[s·logistic(...)]`"), "{}", text(&out.stderr));
}

/// Each weighted fixture (CVXPY + Clarabel's optimum of (1/m)·Σᵢ ωᵢℓᵢ + R, tests/fixtures/make.py)
/// from `optc run --weights`: certified to 1e-6, its F within that of F*, and F − gap ≤ F*.
#[test]
fn the_weighted_fixtures_reach_their_optima_with_true_certificates() {
    let dir = tempfile::tempdir().expect("tmp");
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("optima.json")).expect("optima")).expect("parses");
    let names: Vec<&String> = all["fixtures"]
        .as_object()
        .expect("fixtures")
        .iter()
        .filter(|(_, v)| v["weights"].is_string())
        .map(|(k, _)| k)
        .collect();
    assert!(names.len() >= 4, "{names:?}");
    for name in names {
        let fx = common::fixture_named(name);
        let weights = fx.weights.as_ref().expect("a weights file");
        let extra = ["--weights", weights.to_str().unwrap(), "--tol", "1e-6", "--epochs", "200000"];
        let r = report(dir.path(), "m.opt", &fx.model, &fx.data, &extra);
        assert_eq!(r["status"], "converged", "{name}: {r}");
        let (f, gap) = (r["objective"].as_f64().unwrap(), r["gap"].as_f64().unwrap());
        assert!(f - gap <= fx.best * (1.0 + 1e-12), "{name}: F − gap = {} above F* = {}", f - gap, fx.best);
        let rel = (f - fx.best) / fx.best;
        assert!((-1e-7..=1e-6 + 2e-8).contains(&rel), "{name}: F = {f}, F* = {} ({rel:.2e})", fx.best);
    }
}

/// `optc path --weights`: λ_max with integer weights is S/m times the repeated rows' (the
/// intercept-only b and the gradient at w = 0 both weighted), and so is F at every point of
/// the grid it scales with.
#[test]
fn a_weighted_path_starts_at_the_repeated_rows_lambda_max() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = 200;
    let weights: Vec<usize> = (0..m).map(weight).collect();
    let ratio = weights.iter().sum::<usize>() as f64 / m as f64;
    let (rows, file) = repeated(dir.path(), &weights);
    let objective = "logistic(y, <x, w> + b)] + λ·l1(w)";
    let path_of = |model: &str, data: &Path, extra: &[&str]| -> Vec<(f64, f64)> {
        let m = write(dir.path(), "p.opt", model);
        let mut args = vec!["path", m.to_str().unwrap(), data.to_str().unwrap(), "--param", "λ", "--steps", "4"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--tol", "1e-9"]);
        let out = optc(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
            .lines()
            .skip_while(|l| !l.starts_with("λ,"))
            .skip(1)
            .map(|l| {
                let f: Vec<f64> = l.split(',').take(2).map(|v| v.parse().expect("a number")).collect();
                (f[0], f[1])
            })
            .collect()
    };
    let weighted = path_of(&weighted(0.01, objective), &fixture("binary.svm"), &["--weights", file.to_str().unwrap()]);
    let plain = path_of(&plain(0.01, objective), &rows, &[]);
    assert_eq!(weighted.len(), 4);
    for ((lw, fw), (lr, fr)) in weighted.iter().zip(&plain) {
        // The CSV writes λ to 7 digits, F to 17.
        assert!((lw - ratio * lr).abs() <= 1e-6 * lw, "λ {lw} against {ratio}·{lr}");
        assert!((fw - ratio * fr).abs() <= 1e-7 * fw, "F {fw} against {ratio}·{fr}");
    }
}

/// A two-class loss on three labels trains one-vs-rest, each problem with the rows' weights:
/// `--class-weight 2=3` is the class-2 rows repeated three times.
#[test]
fn one_vs_rest_takes_class_weights() {
    let dir = tempfile::tempdir().expect("tmp");
    let text_of = std::fs::read_to_string(fixture("multiclass.svm")).expect("fixture");
    let counts: Vec<usize> =
        text_of.lines().filter(|l| !l.trim().is_empty()).map(|l| if l.starts_with("+2 ") { 3 } else { 1 }).collect();
    let (rows, _) = repeated_of("multiclass.svm", dir.path(), &counts);
    let ratio = counts.iter().sum::<usize>() as f64 / counts.len() as f64;
    let head = |weighted: bool, lambda: f64| {
        format!(
            "data x: sparse, y: labels{}\nvar w: vec[dim(x)]\nparam λ = {lambda}\nminimize E[{}squared_hinge(y, <x, w>)] + λ·l2sq(w)\n",
            if weighted { ", s: weights" } else { "" },
            if weighted { "s·" } else { "" }
        )
    };
    let run = |model: &str, data: &Path, extra: &[&str]| -> Vec<f64> {
        let mut args = vec!["--tol", "1e-10"];
        args.extend_from_slice(extra);
        let r = report(dir.path(), "o.opt", model, data, &args);
        let mut by_label: Vec<(String, f64)> = r["classes"]
            .as_array()
            .expect("one-vs-rest classes")
            .iter()
            .map(|c| (c["label"].to_string(), c["objective"].as_f64().expect("F")))
            .collect();
        by_label.sort_by(|a, b| a.0.cmp(&b.0));
        by_label.into_iter().map(|(_, f)| f).collect()
    };
    let weighted = run(&head(true, 0.01 * ratio), &fixture("multiclass.svm"), &["--class-weight", "2=3"]);
    let repeated = run(&head(false, 0.01), &rows, &[]);
    assert_eq!(weighted.len(), 3);
    for (fw, fr) in weighted.iter().zip(&repeated) {
        assert!((fw - ratio * fr).abs() <= 1e-8 * fw, "F {fw} against {ratio}·{fr}");
    }
}

/// `--stream` reads the weights with the blocks: a weighted FOBOS run's certified gap bounds
/// its distance to the in-memory optimum, and the repeated rows streamed reach the same F
/// (S/m times it); a class weight for a label the file lacks is named there too.
#[test]
fn a_streamed_run_takes_the_rows_weights() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = 200;
    let weights: Vec<usize> = (0..m).map(weight).collect();
    let ratio = weights.iter().sum::<usize>() as f64 / m as f64;
    let (_, file) = repeated(dir.path(), &weights);
    let model = weighted(0.02 * ratio, "logistic(y, <x, w> + b)] + λ·l1(w)");
    let (best, _, _) = solve(dir.path(), &model, &fixture("binary.svm"), &["--weights", file.to_str().unwrap()]);
    let data = fixture("binary.svm");
    let extra = ["--stream", "--block-rows", "64", "--weights", file.to_str().unwrap(), "--epochs", "300"];
    let r = report(dir.path(), "s.opt", &model, &data, &extra);
    let (f, gap) = (r["objective"].as_f64().unwrap(), r["gap"].as_f64().expect("a streamed gap"));
    assert!(f >= best * (1.0 - 1e-12), "F {f} below F* {best}");
    assert!(f - gap <= best * (1.0 + 1e-12), "F − gap = {} above F* = {best}", f - gap);
    assert!(f - best <= 1e-2 * best, "300 epochs of FOBOS land near F*: {f} against {best}");
    let m_opt = dir.path().join("s.opt");
    let out = optc(&["run", m_opt.to_str().unwrap(), data.to_str().unwrap(), "--stream", "--class-weight", "3=2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("the data has no label 3"), "{}", text(&out.stderr));
}

/// `--class-weight 1=5` is LIBLINEAR's `-w1 5`: ℓ2-logistic at C = 1/(λ·m) reaches the F of
/// Debian's `liblinear-train -s 0 -w1 5 -e 1e-10` to 1e-6, F computed here from both saved
/// models, and both predict the same label on every training row.
#[test]
fn class_weights_are_liblinears() {
    let Some(predict) = common::liblinear_predict("class_weights_are_liblinears") else { return };
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("binary.svm");
    let reference = dir.path().join("ll.model");
    // λ = 0.01 on 200 rows: C = 1/(λ·m) = 0.5.
    let out = std::process::Command::new(predict.with_file_name("liblinear-train"))
        .args(["-s", "0", "-c", "0.5", "-w1", "5", "-e", "1e-10", "-q"])
        .arg(&data)
        .arg(&reference)
        .output()
        .expect("liblinear-train runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let model = "data x: sparse, y: labels, s: weights\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[s·logistic(y, <x, w>)] + λ·l2sq(w)\n";
    let (f_optc, _, r) = solve(dir.path(), model, &data, &["--class-weight", "1=5"]);
    assert_eq!(r["status"], "converged", "{r}");
    let d = read_libsvm(&data).expect("fixture");
    // The weights scoring +1: a LIBLINEAR file that lists −1 first scores −1.
    let scoring_positive = |path: &Path| -> Vec<f64> {
        let text = std::fs::read_to_string(path).expect("model");
        let first = text.lines().find_map(|l| l.strip_prefix("label ")).and_then(|l| l.split_whitespace().next());
        let sign = if first == Some("-1") { -1.0 } else { 1.0 };
        text.lines()
            .skip_while(|l| l.trim() != "w")
            .skip(1)
            .map(|l| sign * l.split_whitespace().next().expect("a weight").parse::<f64>().expect("a number"))
            .collect()
    };
    let (ours, theirs) = (scoring_positive(&dir.path().join("saved.model")), scoring_positive(&reference));
    let (indptr, indices, values) = d.csr();
    let margins = |w: &[f64]| -> Vec<f64> {
        (0..d.rows())
            .map(|i| (indptr[i]..indptr[i + 1]).map(|k| values[k] * w.get(indices[k] as usize).unwrap_or(&0.0)).sum())
            .collect()
    };
    let f_of = |w: &[f64]| -> f64 {
        let loss: f64 = margins(w)
            .iter()
            .zip(&d.labels)
            .map(|(a, &y)| if y > 0.0 { 5.0 } else { 1.0 } * (-y * a).exp().ln_1p())
            .sum();
        loss / d.rows() as f64 + 0.005 * w.iter().map(|v| v * v).sum::<f64>()
    };
    let (f_ours, f_theirs) = (f_of(&ours), f_of(&theirs));
    assert!((f_ours - f_optc).abs() <= 1e-12 * f_optc, "the report's F {f_optc} is the model's {f_ours}");
    assert!((f_ours - f_theirs).abs() <= 1e-6 * f_theirs, "F {f_ours} against LIBLINEAR's {f_theirs}");
    let same = margins(&ours).iter().zip(margins(&theirs)).all(|(a, b)| (*a > 0.0) == (b > 0.0));
    assert!(same, "the two models predict different labels");
}

/// The stochastic solvers that take weights (FOBOS, AdaGrad in both forms, SMIDAS): each run's
/// certified gap bounds its distance to the weighted optimum SCD certifies.
#[test]
fn stochastic_weighted_runs_have_true_gaps() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = 200;
    let weights: Vec<usize> = (0..m).map(weight).collect();
    let (_, file) = repeated(dir.path(), &weights);
    let objective = "logistic(y, <x, w> + b)] + λ·l1(w)";
    let (best, _, _) =
        solve(dir.path(), &weighted(0.02, objective), &fixture("binary.svm"), &["--weights", file.to_str().unwrap()]);
    for solver in ["fobos", "adagrad", "adagrad(rda = 1)", "smidas", "smm"] {
        let model = format!("{}solve with {solver}\n", weighted(0.02, objective));
        let extra = ["--weights", file.to_str().unwrap(), "--epochs", "50", "--tol", "1e-12"];
        let r = report(dir.path(), "st.opt", &model, &fixture("binary.svm"), &extra);
        let (f, gap) = (r["objective"].as_f64().unwrap(), r["gap"].as_f64().expect("a gap"));
        assert!(f >= best * (1.0 - 1e-12), "{solver}: F {f} below F* {best}");
        assert!(f - gap <= best * (1.0 + 1e-12), "{solver}: F − gap = {} above F* = {best}", f - gap);
        assert!(f - best <= 0.05 * best, "{solver}: 50 epochs land near F*: {f} against {best}");
    }
}
