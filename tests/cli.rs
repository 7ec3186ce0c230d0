//! The command line as a user meets it: exit codes, messages, files written.

mod common;

use common::{assert_has_lines, fixture, liblinear_predict, model_text, optc, text, write, L1_LOGISTIC};
use std::path::Path;

/// `optc run MODEL DATA --json --quiet EXTRA...`, which must succeed; its JSON report.
fn run_json(model: &Path, data: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["run", model.to_str().unwrap(), data.to_str().unwrap(), "--json", "--quiet"];
    args.extend_from_slice(extra);
    let out = optc(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

#[test]
fn run_prints_a_summary_and_json() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--epochs", "5"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("objective") && s.contains("train error") && s.contains("200 rows × 30 features"), "{s}");

    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--json", "--test", data.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    for key in [
        "objective",
        "loss",
        "nnz",
        "solver",
        "epochs",
        "seconds",
        "parse_seconds",
        "train_error",
        "test_error",
        "test_loss",
        "gap",
        "status",
    ] {
        assert!(r.get(key).is_some(), "missing `{key}` in {r}");
    }
    assert_eq!(r["solver"], "scd", "smooth loss + ℓ1: coordinate descent by default");
    assert_eq!(r["status"], "converged", "{r}");
    let gap = r["gap"].as_f64().expect("a certified gap");
    assert!(gap <= 1e-4 * r["objective"].as_f64().unwrap(), "the default tolerance is 1e-4: {r}");
    assert!(r["epochs"].as_u64().unwrap() < 1000, "stopped on the certificate, not the cap: {r}");
    assert_eq!(r["test_error"], r["train_error"], "same data, same error");
    let f = r["objective"].as_f64().unwrap();
    let loss = r["loss"].as_f64().unwrap();
    assert!(f > loss && f < loss + 1.0, "F = loss + λ‖w‖₁: {f} vs {loss}");
}

#[test]
fn set_overrides_a_parameter_by_its_ascii_name() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let nnz = |extra: &[&str]| run_json(&m, &data, extra)["nnz"].as_u64().unwrap();
    assert!(nnz(&["--set", "lambda=1"]) < nnz(&["--set", "λ=1e-6"]), "a larger λ gives a sparser model");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--set", "lamda=1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("did you mean `λ`?"), "{}", text(&out.stderr));
}

/// A declared loss's constant after the margin is a `param` that `--set` moves: at c = ½ the
/// loss is `squared`, with its certificate and the built-in's optimum; at c = 2 it is another
/// loss, whose F is not the built-in's.
#[test]
fn set_moves_a_loss_constant() {
    let dir = tempfile::tempdir().expect("tmp");
    let declared = "loss sc(y: real, a, c) = c·(a - y)²\ndata x: sparse, y: real\nvar w: vec[dim(x)]\n\
                    param λ = 0.1\nparam k = 2\nminimize E[sc(y, <x, w>, k)] + λ·l2sq(w)\n";
    let builtin =
        "data x: sparse, y: real\nvar w: vec[dim(x)]\nparam λ = 0.1\nminimize E[squared(y, <x, w>)] + λ·l2sq(w)\n";
    let (m, b) = (write(dir.path(), "m.opt", declared), write(dir.path(), "b.opt", builtin));
    let data = fixture("regression.svm");
    let tight = ["--tol", "1e-10"];
    let want = run_json(&b, &data, &tight);
    let half = run_json(&m, &data, &[&tight[..], &["--set", "k=0.5"]].concat());
    assert!(half["gap"].as_f64().is_some(), "c = ½ is `squared`, certified: {half}");
    let (f, f_want) = (half["objective"].as_f64().unwrap(), want["objective"].as_f64().unwrap());
    assert!((f - f_want).abs() <= 1e-8 * f_want, "{f} against the built-in's {f_want}");
    let two = run_json(&m, &data, &tight);
    assert!(two["gap"].is_null(), "c = 2 is no built-in loss: {two}");
    assert!(two["objective"].as_f64().unwrap() > f + 1e-3, "four times the loss: {two}");
}

/// Poisson's loss on a negative count is a data error at its row; `scd(newton = 0)`, whose
/// steps need a bound on ℓ″, is refused for it at the option.
#[test]
fn poisson_refuses_negative_counts_and_curvature_bound_steps() {
    let dir = tempfile::tempdir().expect("tmp");
    let model =
        "data x: sparse, y: real\nvar w: vec[dim(x)]\nparam λ = 0.1\nminimize E[poisson(y, <x, w>)] + λ·l1(w)\n";
    let m = write(dir.path(), "m.opt", model);
    let data = write(dir.path(), "d.svm", "2 1:0.5\n0 2:1\n-1 1:0.25\n");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("d.svm:3") && err.contains("negative") && err.contains("poisson"), "{err}");
    let forced = write(dir.path(), "f.opt", &format!("{model}solve with scd(newton = 0)\n"));
    let out = optc(&["check", forced.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("newton = 0"), "{}", text(&out.stderr));
}

#[test]
fn save_then_predict_round_trips() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let saved = dir.path().join("model.txt");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--json", "--save", saved.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let model = std::fs::read_to_string(&saved).expect("saved");
    assert!(model.starts_with("solver_type L1R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 30\nbias -1\nw\n"), "{model}");

    let labels = dir.path().join("pred.txt");
    let out = optc(&["predict", saved.to_str().unwrap(), data.to_str().unwrap(), "--out", labels.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let predicted = std::fs::read_to_string(&labels).expect("labels");
    assert_eq!(predicted.lines().count(), 200);
    assert!(predicted.lines().all(|l| l == "1" || l == "-1"), "labels spelled as in the model");
    // predict's accuracy agrees with the training error run reported.
    let acc = 100.0 * (1.0 - r["train_error"].as_f64().unwrap());
    let line = text(&out.stdout);
    let shown: f64 =
        line.trim().strip_prefix("Accuracy = ").and_then(|s| s.split('%').next()).unwrap().parse().unwrap();
    assert!((shown - acc).abs() < 1e-3, "{line} vs {acc}");
}

/// A multiclass softmax model: W saved as K columns in the order the classes first appear
/// (LIBLINEAR's numbering), `nnz_rows` reported, and predictions that agree with the training
/// error the run reported.
#[test]
fn multiclass_save_then_predict_round_trips() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = 0.02\nminimize E[softmax(y, <x, W>)] + λ·l1l2(W)\n",
    );
    let data = fixture("multiclass.svm");
    let saved = dir.path().join("model.txt");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--json", "--save", saved.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(r["status"], "converged");
    let rows = r["nnz_rows"].as_u64().expect("nnz_rows for a matrix");
    assert!(rows <= 12 && rows as f64 >= r["nnz"].as_f64().unwrap() / 3.0, "{r}");
    let model = std::fs::read_to_string(&saved).expect("saved");
    // The fixture's first labels are 3, 2, 1.
    assert!(model.starts_with("solver_type L1R_LR\nnr_class 3\nlabel 3 2 1\nnr_feature 12\nbias -1\nw\n"), "{model}");
    let weight_lines: Vec<&str> = model.lines().skip(6).collect();
    assert_eq!(weight_lines.len(), 12);
    assert!(weight_lines.iter().all(|l| l.split_whitespace().count() == 3), "K values per line");

    let labels = dir.path().join("pred.txt");
    let out = optc(&["predict", saved.to_str().unwrap(), data.to_str().unwrap(), "--out", labels.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let predicted = std::fs::read_to_string(&labels).expect("labels");
    assert!(predicted.lines().all(|l| ["1", "2", "3"].contains(&l)));
    let acc = 100.0 * (1.0 - r["train_error"].as_f64().unwrap());
    let line = text(&out.stdout);
    let shown: f64 =
        line.trim().strip_prefix("Accuracy = ").and_then(|s| s.split('%').next()).unwrap().parse().unwrap();
    assert!((shown - acc).abs() < 1e-3, "{line} vs {acc}");
}

/// A multiclass model LIBLINEAR wrote (`-s 0`, three classes) predicts exactly what LIBLINEAR's
/// own predict wrote for it (tests/inputs/liblinear/README.md).
#[test]
fn liblinear_multiclass_models_predict_as_liblinear_does() {
    let dir = tempfile::tempdir().expect("tmp");
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inputs/liblinear");
    let out_file = dir.path().join("p.txt");
    let out = optc(&[
        "predict",
        here.join("multiclass_s0.model").to_str().unwrap(),
        fixture("multiclass.svm").to_str().unwrap(),
        "--out",
        out_file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ours = std::fs::read(&out_file).expect("written");
    let theirs = std::fs::read(here.join("multiclass_s0.predict")).expect("committed");
    assert!(ours == theirs, "prediction files differ");
}

/// Trains `model` on `train` with `--save`, then has LIBLINEAR's predict and `optc predict`
/// score each of `data` with the saved file: the prediction files must be byte-identical, and
/// so must the accuracy (or error) lines. Returns the saved model's text.
fn liblinear_reads_what_optc_saves(liblinear: &Path, model: &str, train: &Path, data: &[&Path]) -> String {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", model);
    let saved = dir.path().join("model.txt");
    let out =
        optc(&["run", m.to_str().unwrap(), train.to_str().unwrap(), "--quiet", "--save", saved.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for d in data {
        let (ours, theirs) = (dir.path().join("optc.pred"), dir.path().join("liblinear.pred"));
        let o = optc(&["predict", saved.to_str().unwrap(), d.to_str().unwrap(), "--out", ours.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let l = std::process::Command::new(liblinear)
            .args([d.as_os_str(), saved.as_os_str(), theirs.as_os_str()])
            .output()
            .expect("liblinear-predict runs");
        let model_text = std::fs::read_to_string(&saved).expect("saved");
        assert!(l.status.success(), "liblinear-predict failed on\n{model_text}\n{}", text(&l.stderr));
        let (ours, theirs) = (std::fs::read(&ours).expect("written"), std::fs::read(&theirs).expect("written"));
        if ours != theirs {
            let first = text(&ours).lines().zip(text(&theirs).lines()).position(|(a, b)| a != b);
            panic!(
                "{}: optc predict and liblinear-predict differ (first at line {}) on\n{model_text}",
                d.display(),
                first.map_or("end".into(), |k| (k + 1).to_string())
            );
        }
        assert_eq!(text(&o.stdout), text(&l.stdout), "{}: the summary lines", d.display());
    }
    std::fs::read_to_string(&saved).expect("saved")
}

/// `data` with one more feature on every row, past the last one it has: a file with features
/// the model never saw, which both predictors must ignore.
fn widened(dir: &Path, data: &Path, index: usize) -> std::path::PathBuf {
    let rows: String = std::fs::read_to_string(data)
        .expect("fixture")
        .lines()
        .enumerate()
        .map(|(k, line)| format!("{line} {index}:{}\n", 0.25 * (k % 7) as f64 - 0.5))
        .collect();
    write(dir, "widened.svm", &rows)
}

/// The other direction of `liblinear_multiclass_models_predict_as_liblinear_does`: K weight
/// columns in `label` order, read by LIBLINEAR as optc reads them, on the training data and on
/// data with features past the model's `nr_feature`.
#[test]
fn liblinear_predicts_optc_multiclass_models_as_optc_does() {
    let Some(liblinear) = liblinear_predict("liblinear_predicts_optc_multiclass_models_as_optc_does") else { return };
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("multiclass.svm");
    let wide = widened(dir.path(), &data, 20);
    let model = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = 0.02\nminimize E[softmax(y, <x, W>)] + λ·l1l2(W)\n";
    let saved = liblinear_reads_what_optc_saves(&liblinear, model, &data, &[&data, &wide]);
    assert!(saved.starts_with("solver_type L1R_LR\nnr_class 3\nlabel 3 2 1\nnr_feature 12\nbias -1\nw\n"), "{saved}");
}

/// A binary l1-logistic model: one weight column for the first label listed.
#[test]
fn liblinear_predicts_optc_binary_l1_models_as_optc_does() {
    let Some(liblinear) = liblinear_predict("liblinear_predicts_optc_binary_l1_models_as_optc_does") else { return };
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("binary.svm");
    let wide = widened(dir.path(), &data, 40);
    let saved = liblinear_reads_what_optc_saves(&liblinear, L1_LOGISTIC, &data, &[&data, &wide]);
    assert!(saved.starts_with("solver_type L1R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 30\nbias -1\nw\n"), "{saved}");
    assert!(saved.lines().skip(6).any(|l| l.trim() == "0"), "l1 left some weights at zero:\n{saved}");
}

/// What LIBLINEAR's format makes awkward: a softmax over two classes (LIBLINEAR reads one
/// weight column when `nr_class` is 2), labels of seven digits (LIBLINEAR reads `label` as
/// integers), and a regression model (LIBLINEAR prints predictions with 17 digits).
#[test]
fn liblinear_predicts_optc_models_of_awkward_shapes_as_optc_does() {
    let Some(liblinear) = liblinear_predict("liblinear_predicts_optc_models_of_awkward_shapes_as_optc_does") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let two: String = std::fs::read_to_string(fixture("multiclass.svm"))
        .expect("fixture")
        .lines()
        .filter(|l| !l.starts_with("+1 "))
        .map(|l| format!("{l}\n"))
        .collect();
    let two = write(dir.path(), "two.svm", &two);
    let softmax = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = 0.01\nminimize E[softmax(y, <x, W>)] + λ·l2sq(W)\n";
    let saved = liblinear_reads_what_optc_saves(&liblinear, softmax, &two, &[&two]);
    assert!(saved.starts_with("solver_type L2R_LR\nnr_class 2\nlabel 3 2\nnr_feature 12\nbias -1\nw\n"), "{saved}");

    let big: String = std::fs::read_to_string(fixture("binary.svm"))
        .expect("fixture")
        .lines()
        .map(|l| match l.split_once(' ') {
            Some(("-1", rest)) => format!("1000000 {rest}\n"),
            Some((_, rest)) => format!("1234567 {rest}\n"),
            None => unreachable!("fixture rows have features"),
        })
        .collect();
    let big = write(dir.path(), "big.svm", &big);
    let saved = liblinear_reads_what_optc_saves(&liblinear, L1_LOGISTIC, &big, &[&big]);
    assert!(saved.contains("\nlabel 1234567 1000000\n"), "{saved}");

    let lasso =
        "data x: sparse, y: real\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[squared(y, <x, w>)] + λ·l1(w)\n";
    let data = fixture("regression.svm");
    liblinear_reads_what_optc_saves(&liblinear, lasso, &data, &[&data]);
}

/// An intercept is saved as LIBLINEAR's bias: `bias 1`, `nr_feature` still d, b the last
/// weight line; LIBLINEAR's predict and optc's add it alike (regression and binary models), and
/// the JSON report carries it.
#[test]
fn liblinear_predicts_optc_models_with_an_intercept_as_optc_does() {
    let dir = tempfile::tempdir().expect("tmp");
    let lasso = "data x: sparse, y: real\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.01\nminimize E[squared(y, <x, w> + b)] + λ·l1(w)\n";
    let m = write(dir.path(), "m.opt", lasso);
    let data = fixture("offset_regression.svm");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--json", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let b = report["intercept"].as_f64().expect("the intercept in the report");
    assert!((b - 2.498).abs() < 1e-2, "b = {b}");

    let Some(liblinear) = liblinear_predict("liblinear_predicts_optc_models_with_an_intercept_as_optc_does") else {
        return;
    };
    let saved = liblinear_reads_what_optc_saves(&liblinear, lasso, &data, &[&data]);
    assert!(saved.contains("\nnr_feature 30\nbias 1\nw\n"), "{saved}");
    assert_eq!(saved.lines().count(), 5 + 31, "{saved}"); // no `label` line for a regression
    let last: f64 = saved.lines().last().and_then(|l| l.trim().parse().ok()).expect("b on the last line");
    assert!((last - b).abs() < 1e-12, "the last weight line is b: {last} vs {b}");
    let logistic = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.01\nminimize E[logistic(y, b + <x, w>)] + λ·l1(w)\n";
    let data = fixture("offset_binary.svm");
    let saved = liblinear_reads_what_optc_saves(&liblinear, logistic, &data, &[&data]);
    assert!(saved.starts_with("solver_type L1R_LR\nnr_class 2\n"), "{saved}");
    assert!(saved.contains("\nnr_feature 30\nbias 1\nw\n"), "{saved}");
}

/// `load("...")` files are read relative to the model when the data is bound; one that does
/// not fit the data names the file (and the line, for a malformed one), exit 1.
#[test]
fn composite_operator_files_are_checked_against_the_data() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: real\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[squared(y, <x, w>)] + λ·l1(incidence(load(\"g.txt\")) w)\n",
    );
    let data = fixture("regression.svm");
    write(dir.path(), "g.txt", "1 2\n2 31\n");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("g.txt: feature 31 is beyond the data's 30 features"), "{}", text(&out.stderr));
    write(dir.path(), "g.txt", "1 2\n2 x\n");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("g.txt:2:"), "{}", text(&out.stderr));
    write(dir.path(), "g.txt", "1 2\n2 3\n");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(r["status"], "converged");
    assert!(r["gap"].is_null(), "no certificate for ω∘B");
}

/// group_l2 over disjoint groups end to end: `optc check` says the groups are disjoint and the
/// prox is closed-form, `optc plan` shows the group shrink, and `optc run` with default options
/// reaches CVXPY's optimum within 1e-4, certified by an honest gap (F − gap ≤ F*).
#[test]
fn disjoint_groups_are_checked_planned_and_run_to_a_certified_optimum() {
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("optima.json")).expect("optima")).expect("json");
    let fx = &all["fixtures"]["disjoint_group_logistic"];
    let best = fx["objective"].as_f64().expect("F*");
    let dir = tempfile::tempdir().expect("tmp");
    let groups = std::fs::read_to_string(fixture("disjoint_groups.txt")).expect("groups");
    write(dir.path(), "disjoint_groups.txt", &groups);
    let model = format!(
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = {}\n{}\n",
        fx["lambda"].as_f64().expect("λ"),
        fx["model"].as_str().expect("model")
    );
    let m = write(dir.path(), "m.opt", &model);
    let out = optc(&["check", m.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert_has_lines(
        &s,
        &[
            "            convex, separable per group; prox ℓ2 shrink of each group\n",
            "            groups in \"disjoint_groups.txt\" are disjoint: closed-form ℓ2 prox per group\n",
            "composite   no: every term acts on the variable directly\n",
            "prox        closed form: ℓ2 shrink of each group\n",
            "solver      proxgrad — group_l2 over disjoint groups: its prox is the ℓ2 shrink of each group",
        ],
    );
    let out = optc(&["plan", m.to_str().unwrap()]);
    let s = text(&out.stdout);
    assert!(s.contains("  group_shrink(w[0..d], γ = 0.01 / L)") && !s.contains("picard("), "{s}");
    assert!(s.contains("R* of 0.01·Σ_g ‖w_g‖₂ (disjoint groups of B)"), "{s}");
    let r = run_json(&m, &fixture("binary.svm"), &[]);
    assert_eq!((r["status"].as_str(), r["solver"].as_str()), (Some("converged"), Some("proxgrad")), "{r}");
    let (f, gap) = (r["objective"].as_f64().expect("F"), r["gap"].as_f64().expect("a certified gap"));
    assert!(gap <= 1e-4 * f, "gap {gap} > tol·F");
    assert!(f - gap <= best * (1.0 + 1e-12), "F − gap = {} above F* = {best}: the gap is not a bound", f - gap);
    assert!((f - best).abs() <= 1e-4 * best, "F = {f} vs CVXPY's F* = {best}");
}

/// Overlapping groups keep the Picard prox, and `optc check` names a feature two groups share.
#[test]
fn overlapping_groups_keep_the_picard_prox_and_check_says_why() {
    let dir = tempfile::tempdir().expect("tmp");
    write(dir.path(), "g.txt", "1 2 3\n4 5 6\n# a comment line is not a group\n7 3 8\n");
    let m = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + 0.01·group_l2(groups(load(\"g.txt\")), w)\n",
    );
    let s = text(&optc(&["check", m.to_str().unwrap()]).stdout);
    assert_has_lines(
        &s,
        &[
        "            convex, not separable; prox ℓ2 shrink of each group\n",
        "            groups in \"g.txt\" overlap (feature 3 is in groups 1 and 3): Picard fixed point on the stacked group selections\n",
        "composite   yes: ω(B w) needs an inner fixed-point prox\n",
        "solver      proxgrad — ω∘B is not separable",
        ],
    );
    let s = text(&optc(&["plan", m.to_str().unwrap()]).stdout);
    assert!(s.contains("  picard(w[0..d], dual z[0..p]") && !s.contains("group_shrink("), "{s}");
}

/// A groups file that is missing or malformed is a diagnostic of `optc check`, `plan` and `run`
/// alike (exit 1, before any data is read): the file, the line, what is wrong, at the term
/// that loads it.
#[test]
fn bad_groups_files_are_diagnostics_before_the_data_is_read() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + 0.01·group_l2(groups(load(\"g.txt\")), w)\n",
    );
    let no_data = dir.path().join("no-such-data.svm");
    let commands: [&[&str]; 3] = [&["check"], &["plan"], &["run"]];
    let runs = |expected: &[&str]| {
        for cmd in commands {
            let mut args = cmd.to_vec();
            args.push(m.to_str().unwrap());
            if cmd[0] == "run" {
                args.push(no_data.to_str().unwrap());
            }
            let out = optc(&args);
            assert_eq!(out.status.code(), Some(1), "{cmd:?}");
            let err = text(&out.stderr);
            for e in expected {
                assert!(err.contains(e), "{cmd:?}: missing {e:?} in\n{err}");
            }
            assert!(!err.contains("no-such-data"), "{cmd:?}: the groups file is reported first\n{err}");
        }
    };
    runs(&["optc::load", "g.txt: ", "loads \"g.txt\"", "relative to the model file's directory"]);
    write(dir.path(), "g.txt", "1 2\n\n3 x 4\n");
    runs(&["g.txt:3: `x` is not a feature index (a whole number ≥ 1)", "loads \"g.txt\"", "one group per line"]);
    write(dir.path(), "g.txt", "1 2\n3 3\n");
    runs(&["g.txt:2: feature 3 appears twice in this group"]);
}

#[test]
fn trace_writes_one_line_per_epoch() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let csv = dir.path().join("t.csv");
    let out = optc(&[
        "run",
        m.to_str().unwrap(),
        fixture("binary.svm").to_str().unwrap(),
        "--epochs",
        "4",
        "--quiet",
        "--trace",
        csv.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = std::fs::read_to_string(csv).expect("trace");
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "epoch,seconds,objective,loss,nnz,gap,test_error,test_loss");
    assert_eq!(lines.len(), 5, "--epochs 4 without --tol is exactly 4 epochs: {t}");
    let f = |l: &str, k: usize| l.split(',').nth(k).unwrap().parse::<f64>().unwrap();
    assert!(f(lines[4], 2) < f(lines[1], 2), "the objective goes down over epochs: {t}");
    assert!(f(lines[4], 5) < f(lines[1], 5), "and so does the certified gap: {t}");
    assert!(lines[1..].iter().all(|l| l.ends_with(",,")), "no --test, empty test cells: {t}");
}

#[test]
fn trace_follows_the_test_set_epoch_by_epoch() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let csv = dir.path().join("t.csv");
    let svg = dir.path().join("t.svg");
    let r = run_json(
        &m,
        &data,
        &[
            "--solver",
            "fobos",
            "--epochs",
            "6",
            "--test",
            data.to_str().unwrap(),
            "--trace",
            csv.to_str().unwrap(),
            "--plot",
            svg.to_str().unwrap(),
        ],
    );
    let t = std::fs::read_to_string(&csv).expect("trace");
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "epoch,seconds,objective,loss,nnz,gap,test_error,test_loss");
    assert_eq!(lines.len(), 7, "one line per epoch: {t}");
    let cells = |l: &str| l.split(',').map(str::to_string).collect::<Vec<_>>();
    for (k, l) in lines[1..].iter().enumerate() {
        let c = cells(l);
        assert_eq!(c.len(), 8, "{l}");
        assert_eq!(c[0], (k + 1).to_string());
        let error: f64 = c[6].parse().expect("a test error");
        let loss: f64 = c[7].parse().expect("a test loss");
        assert!((0.0..=1.0).contains(&error) && loss > 0.0, "{l}");
        // The test set is the training set: its loss is the training loss.
        let train_loss: f64 = c[3].parse().unwrap();
        assert!((loss - train_loss).abs() <= 1e-12 * train_loss, "{l}");
    }
    let last = cells(lines[6]);
    let (traced, reported) = (last[6].parse::<f64>().unwrap(), r["test_error"].as_f64().unwrap());
    assert!((traced - reported).abs() <= 1e-6 * reported, "the last epoch is the report's: {traced} vs {reported}");
    let svg = std::fs::read_to_string(&svg).expect("plot");
    let s = svg.trim();
    assert!(s.starts_with("<svg") && s.ends_with("</svg>"), "{}", &s[..s.len().min(300)]);
    assert!(s.contains("<polyline") || s.contains("<path"), "no lines drawn");
    for label in ["against epochs", "time (s)", "test error (%)", "relative suboptimality"] {
        assert!(s.contains(label), "missing {label:?}");
    }
    assert_eq!(s.matches("<text").count(), s.matches("</text>").count());
}

#[test]
fn regression_traces_the_test_mse() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(
        dir.path(),
        "lasso.opt",
        "data x: sparse, y: real\nvar w: vec[dim(x)]\nparam λ = 1e-3\nminimize E[squared(y, <x, w>)] + λ·l1(w)\n",
    );
    let data = fixture("regression.svm");
    let csv = dir.path().join("t.csv");
    run_json(&m, &data, &["--epochs", "3", "--test", data.to_str().unwrap(), "--trace", csv.to_str().unwrap()]);
    let t = std::fs::read_to_string(&csv).expect("trace");
    assert!(t.starts_with("epoch,seconds,objective,loss,nnz,gap,test_mse,test_loss\n"), "{t}");
    assert_eq!(t.lines().count(), 4, "{t}");
    assert!(t.lines().skip(1).all(|l| !l.split(',').nth(6).unwrap().is_empty()), "{t}");
}

#[test]
fn plot_needs_a_writable_path_and_shares_standard_output() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let (m, data) = (m.to_str().unwrap(), data.to_str().unwrap());
    for bad in ["/nonexistent-folder/p.svg", dir.path().to_str().unwrap()] {
        let out = optc(&["run", m, data, "--plot", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(&format!("cannot write {bad}")), "{}", text(&out.stderr));
    }
    let out = optc(&["run", m, data, "--plot", "-", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--plot -"), "{}", text(&out.stderr));
    let out = optc(&["run", m, data, "--epochs", "2", "--quiet", "--plot", "-"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.trim_start().starts_with("<svg") && s.trim_end().ends_with("</svg>"), "{s}");
}

#[test]
fn broken_models_exit_1_with_a_diagnostic() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("binary.svm");
    for (model, expect) in [
        ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistc(y, <x, w>)]\n", "did you mean `logistic`?"),
        ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)\n", "expected `]` to close `E[`"),
        ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + l1inf(w)\n", "`w` is a vector"),
        ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + l2(w)\nsolve with scd\n", "not separable per coordinate"),
        ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[hinge(y, <x, w>)]\nsolve with smm\n", "needs a smooth loss"),
        ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + 0.1·l2sq(w)\nsolve with smidas\n", "SMIDAS handles an ℓ1 penalty only"),
        ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[hinge(y, <x, w>)] + 0.1·l1(w)\nsolve with smidas\n", "needs a smooth loss"),
        ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[hinge(y, <x, w>)] + 0.1·l1(w) st w ≥ 0\nsolve with truncated\n", "TRUNCATED handles no constraints"),
        ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + logeps(w, 0.1)\nsolve with fobos\n", "is not convex"),
        ("", "the model has no objective"),
        ("\u{0}\u{1}garbage ((((", "expected"),
    ] {
        let m = write(dir.path(), "bad.opt", model);
        let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{model}: {err}");
        assert!(err.contains(expect), "{model}: expected `{expect}` in\n{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn broken_data_exits_1_with_file_line_column() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    for (data, expect) in [
        ("1 1:0.5\n-1 0:1\n", "bad.svm:2:4: feature index 0: indices are 1-based"),
        ("1 1:0.5 3:x\n", "bad.svm:1:11: value `x` is not a number"),
        ("1 4:1 2:1\n", "bad.svm:1:7: feature indices must increase: 2 comes after 4"),
        ("1:2 3:1\n", "bad.svm:1:1: missing label"),
        ("1 1:nan\n", "bad.svm:1:5: value `nan` of feature 1 is not finite"),
        ("", "bad.svm:1:1: the file is empty"),
        // Whole-number labels are classes, trained one-vs-rest (tests/ovr.rs); fractional ones
        // are regression targets.
        ("0.5 1:1\n1.5 1:1\n2.5 2:1\n", "bad.svm:3: a third distinct label `2.5`"),
    ] {
        let d = write(dir.path(), "bad.svm", data);
        let out = optc(&["run", m.to_str().unwrap(), d.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{data:?}: {err}");
        assert!(err.contains(expect), "{data:?}: expected `{expect}` in\n{err}");
    }
    let out = optc(&["run", m.to_str().unwrap(), "/no/such/file.svm"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("/no/such/file.svm"));
}

#[test]
fn usage_errors_exit_2() {
    let out = optc(&["run"]);
    assert_eq!(out.status.code(), Some(2));
    let out = optc(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let out = optc(&["run", m.to_str().unwrap(), fixture("binary.svm").to_str().unwrap(), "--solver", "fobs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("did you mean `fobos`?"));
    let out = optc(&["run", m.to_str().unwrap(), fixture("binary.svm").to_str().unwrap(), "--set", "λ=abc"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_diverging_solver_exits_3_and_names_the_step() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: real\nvar w: vec[dim(x)]\nminimize E[squared(y, <x, w>)]\nsolve with fobos(step = 1e6)\n",
    );
    let out = optc(&["run", m.to_str().unwrap(), fixture("regression.svm").to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("diverged") && err.contains("step t =") && err.contains("hint"), "{err}");
}

#[test]
fn check_and_plan_print_the_structure() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let out = optc(&["check", m.to_str().unwrap()]);
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert!(s.contains("β = 0.25") && s.contains("separable per coordinate") && s.contains("solver      scd"), "{s}");
    let out = optc(&["plan", m.to_str().unwrap(), fixture("binary.svm").to_str().unwrap()]);
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert!(s.contains("m = 200, d = 30") && s.contains("for j in perm(d):") && s.contains("col(Xc, j)"), "{s}");
    assert!(
        s.contains("c/m = 5e-3") && s.contains("repeat at most 30 until ok > 0.5") && s.contains("check   duality gap"),
        "{s}"
    );
    let out = optc(&[
        "plan",
        m.to_str().unwrap(),
        fixture("binary.svm").to_str().unwrap(),
        "--set",
        "λ=0.02",
        "--solver",
        "scd",
    ]);
    assert!(text(&out.stdout).contains("repeat at most"), "{}", text(&out.stdout));
    let out = optc(&["plan", m.to_str().unwrap(), "--solver", "fobos"]);
    assert!(text(&out.stdout).contains("w[j] = soft(w[j], Λ - Λlast[j])"), "{}", text(&out.stdout));
}

#[test]
fn jit_and_no_jit_report_the_same_objective() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let (jit, interp) = (run_json(&m, &data, &[]), run_json(&m, &data, &["--no-jit"]));
    assert_eq!(jit["backend"], "jit");
    assert_eq!(interp["backend"], "interpreter");
    assert_eq!(jit["objective"], interp["objective"], "bit-identical weights give the same F");
    for r in [&jit, &interp] {
        let c = r["compile_seconds"].as_f64().expect("compile_seconds in the report");
        assert!(c > 0.0, "{r}");
    }
}

#[test]
fn plan_emits_cranelift_ir_and_machine_code() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let out = optc(&["plan", m.to_str().unwrap(), "--emit", "clif", "--solver", "fobos"]);
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert!(s.contains("; optc_epoch") && s.contains("function u0:0(i64) -> i64") && s.contains("sqrt"), "{s}");
    let out = optc(&["plan", m.to_str().unwrap(), "--emit", "clif"]);
    assert!(text(&out.stdout).contains("; optc_init"), "SCD's init phase is compiled too");
    let out = optc(&["plan", m.to_str().unwrap(), "--emit", "asm"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("; optc_finish"));
}

#[test]
fn eta0_is_calibrated_on_a_sample_unless_given() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("binary.svm");
    let run_model = |model: &str| run_json(&write(dir.path(), "m.opt", model), &data, &["--solver", "fobos"]);
    let r = run_model(L1_LOGISTIC);
    let c = &r["eta0_calibration"];
    let tried = c["tried"].as_array().expect("candidates");
    assert_eq!(tried.len(), 6);
    assert_eq!(c["rows"], 200, "a small set is calibrated on all of its rows (at most 1000)");
    let default = c["default"].as_f64().unwrap();
    let best = tried
        .iter()
        .filter_map(|t| Some((t[0].as_f64()?, t[1].as_f64()?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("some candidate converged");
    assert_eq!(r["eta0"].as_f64().unwrap(), best.0, "the run uses the candidate with the lowest sample objective");
    assert!(tried.iter().any(|t| t[0].as_f64() == Some(default)), "the default is among the candidates");

    let given = run_model(&L1_LOGISTIC.replace("minimize", "solve with fobos(eta0 = 0.5)\nminimize"));
    assert!(given["eta0_calibration"].is_null());
    assert_eq!(given["eta0"], 0.5);
}

/// docs/algorithms.md §9: a budget of one or two passes (`--epochs 1`, or `solve with auto(epochs =
/// 1)` in the model) makes SMM the default for a smooth loss with a per-coordinate R, and the
/// n₀ it tuned is reported; a larger budget keeps SCD.
#[test]
fn a_one_pass_budget_chooses_smm() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let one = run_json(&m, &data, &["--epochs", "1"]);
    assert_eq!(one["solver"], "smm");
    assert!(one["n0"].as_f64().is_some_and(|n| n >= 1.0), "{one}");
    assert!(one["n0_calibration"]["tried"].as_array().is_some_and(|t| t.len() > 1), "{one}");
    assert_eq!(run_json(&m, &data, &["--epochs", "3"])["solver"], "scd");
    let auto = write(dir.path(), "auto.opt", &format!("{L1_LOGISTIC}solve with auto(epochs = 1)\n"));
    let out = optc(&["check", auto.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("recommended smm"), "{}", text(&out.stdout));
}

/// SMIDAS from the command line: its η₀ tuned on a sample from its half-decade grid and shown
/// as the per-epoch step it is; a step too large diverges with a hint that names `smidas`.
/// Truncated gradient reports itself lazy, with FOBOS's calibrated η₀/√t.
#[test]
fn smidas_and_truncated_gradient_from_the_command_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("binary.svm");
    let solve = |line: &str| write(dir.path(), "m.opt", &format!("{L1_LOGISTIC}{line}\n"));
    let r = run_json(&solve("solve with smidas"), &data, &["--epochs", "5"]);
    assert_eq!(r["solver"], "smidas");
    assert_eq!(r["lazy"], false);
    let tried = r["eta0_calibration"]["tried"].as_array().expect("candidates");
    assert_eq!(tried.len(), 15);
    let eta0 = r["eta0"].as_f64().expect("η0");
    assert_eq!(r["step"], format!("{}/sqrt(epoch)", optc::symbolic::fmt_num(eta0)));

    let r = run_json(&solve("solve with truncated(every = 4)"), &data, &["--epochs", "5"]);
    assert_eq!((&r["solver"], &r["lazy"]), (&"truncated".into(), &true.into()));
    assert!(r["step"].as_str().is_some_and(|s| s.ends_with("/sqrt(t)")), "{}", r["step"]);

    let m = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: real\nvar w: vec[dim(x)]\nminimize E[squared(y, <x, w>)] + 0.01·l1(w)\nsolve with smidas(eta0 = 1e6)\n",
    );
    let out = optc(&["run", m.to_str().unwrap(), fixture("regression.svm").to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("diverged") && err.contains("`solve with smidas(eta0 = "), "{err}");
}

/// A non-convex model runs by default (online DC) and with `batch = 1`; the report never calls
/// anything certified, and says what the run stopped on.
#[test]
fn dc_runs_say_what_they_stopped_on() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/logeps_logistic.opt");
    let data = fixture("binary.svm");
    let out = optc(&["run", example.to_str().unwrap(), data.to_str().unwrap(), "--epochs", "20", "--tol", "1e-4"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("optc: dc (online)") && s.contains("gap          none: F is not convex"), "{s}");
    assert!(s.contains("max_epochs: the epoch cap (20); no test applies"), "{s}");
    assert!(!s.contains("certified") && text(&out.stderr).is_empty(), "{s}{}", text(&out.stderr));

    let dir = tempfile::tempdir().expect("tmp");
    let model = std::fs::read_to_string(&example).expect("example") + "solve with dc(batch = 1)\n";
    let m = write(dir.path(), "batch.opt", &model);
    let r = run_json(&m, &data, &[]);
    assert_eq!(r["solver"], "dc");
    assert_eq!(r["status"], "converged", "{r}");
    assert!(r["gap"].is_null(), "{r}");
    assert!(r["stopped_by"].as_str().unwrap().contains("the reweighting settled"), "{r}");
}

/// `--init` from the optimum (saved by `--save`) is done after one epoch for proxgrad, and at the
/// check SCD makes before its first epoch on these few features; the same model written with LIBLINEAR's other label order (the
/// weights negated) is the same start. A file with a bias term, or other labels, is refused
/// with the file named.
#[test]
fn init_from_the_optimum_converges_in_one_epoch() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let saved = dir.path().join("opt.model");
    // Proxgrad from zero takes many iterations (SCD's first check may already polish this small
    // problem to its optimum), so one epoch below is the warm start's doing.
    let cold = run_json(&m, &data, &["--tol", "1e-9", "--solver", "proxgrad", "--save", saved.to_str().unwrap()]);
    assert_eq!(cold["status"], "converged", "{cold}");
    assert!(cold["epochs"].as_u64().unwrap() > 1, "{cold}");
    for solver in ["scd", "proxgrad"] {
        let warm = run_json(&m, &data, &["--tol", "1e-6", "--init", saved.to_str().unwrap(), "--solver", solver]);
        assert_eq!(warm["status"], "converged", "{solver}: {warm}");
        assert_eq!(warm["epochs"], if solver == "scd" { 0 } else { 1 }, "{solver}: {warm}");
        assert!((warm["objective"].as_f64().unwrap() - cold["objective"].as_f64().unwrap()).abs() <= 1e-8);
    }
    // The other label order: `label -1 1` and −w.
    let text_of = std::fs::read_to_string(&saved).expect("saved model");
    let mut flipped = String::new();
    let mut in_w = false;
    for line in text_of.lines() {
        if line.starts_with("label ") {
            let labels: Vec<&str> = line.split_whitespace().skip(1).collect();
            flipped.push_str(&format!("label {} {}\n", labels[1], labels[0]));
        } else if in_w {
            let v: f64 = line.trim().parse().expect("a weight");
            flipped.push_str(&format!("{}\n", -v));
        } else {
            flipped.push_str(line);
            flipped.push('\n');
        }
        in_w |= line == "w";
    }
    let other = write(dir.path(), "flipped.model", &flipped);
    let warm = run_json(&m, &data, &["--tol", "1e-6", "--init", other.to_str().unwrap()]);
    assert_eq!(warm["epochs"], 0, "{warm}");
    // A bias term: this model has no intercept.
    let biased = write(dir.path(), "bias.model", &text_of.replace("bias -1", "bias 1").replace("\nw\n", "\nw\n0\n"));
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--init", biased.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("bias.model") && text(&out.stderr).contains("intercept"),
        "{}",
        text(&out.stderr)
    );
    let relabelled = write(dir.path(), "labels.model", &text_of.replace("label 1 -1", "label 3 4"));
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--init", relabelled.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("labels (3 4)"), "{}", text(&out.stderr));
}

/// The rows of `optc path`'s CSV: (λ, nnz, epochs, status).
fn path_rows(csv: &str) -> Vec<(f64, usize, usize, String)> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} in {header:?}"));
    let (nnz, epochs, status) = (col("nnz"), col("epochs"), col("status"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[nnz].parse().unwrap(), f[epochs].parse().unwrap(), f[status].to_string())
        })
        .collect()
}

/// `optc path`: one row per grid point, λ decreasing from λ_max (w = 0 there, not just below),
/// every point certified, the support growing, and warm starts cheaper in epochs than solving
/// each point from 0 (`--cold`). The default solver's first check solves each point of this
/// small fixture from either start (one epoch a point), so the saving is asserted under
/// proximal gradient, whose epochs are the work; the default's warm path takes no more.
#[test]
fn path_is_a_warm_started_grid_from_lambda_max() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let csv_path = dir.path().join("path.csv");
    let path_of = |extra: &[&str]| {
        let mut args = vec!["path", m.to_str().unwrap(), data.to_str().unwrap(), "--param", "lambda", "--quiet"];
        args.extend_from_slice(extra);
        let out = optc(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let warm = path_rows(&path_of(&["--steps", "12", "--test", data.to_str().unwrap()]));
    assert_eq!(warm.len(), 12);
    assert!(warm.windows(2).all(|p| p[1].0 < p[0].0), "λ decreases: {warm:?}");
    assert!(warm.iter().all(|p| p.3 == "converged"), "{warm:?}");
    assert_eq!(warm[0].1, 0, "w = 0 at λ_max");
    assert!(warm[11].1 >= warm[0].1 && warm[11].1 > 0, "{warm:?}");
    let cold = path_rows(&path_of(&["--steps", "12", "--cold"]));
    let total = |rows: &[(f64, usize, usize, String)]| rows.iter().map(|r| r.2).sum::<usize>();
    assert!(total(&warm) <= total(&cold), "warm {} epochs, cold {}", total(&warm), total(&cold));
    let pg_warm = path_rows(&path_of(&["--steps", "12", "--solver", "proxgrad"]));
    let pg_cold = path_rows(&path_of(&["--steps", "12", "--solver", "proxgrad", "--cold"]));
    assert!(pg_warm.iter().chain(&pg_cold).all(|p| p.3 == "converged"), "{pg_warm:?} {pg_cold:?}");
    assert!(total(&pg_warm) < total(&pg_cold), "proxgrad: warm {} epochs, cold {}", total(&pg_warm), total(&pg_cold));
    // Just below λ_max some weight is non-zero; --out writes the same CSV to a file.
    let lmax = warm[0].0;
    let below = format!("{}", lmax * 0.98);
    let out = optc(&[
        "path",
        m.to_str().unwrap(),
        data.to_str().unwrap(),
        "--param",
        "λ",
        "--from",
        &below,
        "--steps",
        "1",
        "--out",
        csv_path.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows = path_rows(&std::fs::read_to_string(&csv_path).expect("the CSV"));
    assert!(rows[0].1 > 0, "{rows:?}");
    // No closed-form λ_max for an ℓ2 ball: --from is asked for; an unknown parameter is usage.
    let ball = write(
        dir.path(),
        "ball.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam r = 1\nminimize E[logistic(y, <x, w>)] st w ∈ L2Ball(r)\n",
    );
    let out = optc(&["path", ball.to_str().unwrap(), data.to_str().unwrap(), "--param", "r"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--from"), "{}", text(&out.stderr));
    let out = optc(&["path", m.to_str().unwrap(), data.to_str().unwrap(), "--param", "mu"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// `optc completions SHELL` prints a script that names the subcommands and their options; the
/// bash one is valid bash. An unknown shell is a usage error.
#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = optc(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        // fish spells `--init` as `-l init`.
        for word in ["run", "path", "predict", "init", "param", "holdout"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    let dir = tempfile::tempdir().expect("tmp");
    let bash = write(dir.path(), "optc.bash", &text(&optc(&["completions", "bash"]).stdout));
    if let Ok(check) = std::process::Command::new("bash").arg("-n").arg(&bash).output() {
        assert!(check.status.success(), "bash -n: {}", text(&check.stderr));
    }
    assert_eq!(optc(&["completions", "tcsh"]).status.code(), Some(2));
}

/// `optc path --plot` writes an SVG of the path (sparsity, test error, the largest weights);
/// `--plot -` needs the CSV sent elsewhere.
#[test]
fn path_plot_is_an_svg() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let svg = dir.path().join("path.svg");
    let (m, d) = (m.to_str().unwrap(), data.to_str().unwrap());
    let out =
        optc(&["path", m, d, "--param", "λ", "--steps", "6", "--test", d, "--plot", svg.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = std::fs::read_to_string(&svg).expect("the SVG");
    assert!(s.trim_start().starts_with("<svg") && s.trim_end().ends_with("</svg>"), "{}", &s[..200.min(s.len())]);
    for label in ["non-zero weights", "test error", "largest weights", "w"] {
        assert!(s.contains(label), "no {label}");
    }
    assert_eq!(s.matches("<text").count(), s.matches("</text>").count());
    let out = optc(&["path", m, d, "--param", "λ", "--plot", "-"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// `--holdout FRACTION`: the run trains on the rest, stops when the held-out loss has not
/// improved for `--patience` epochs, says so in its status, and reports the best epoch.
#[test]
fn holdout_stops_early_and_says_why() {
    let dir = tempfile::tempdir().expect("tmp");
    let m =
        write(dir.path(), "m.opt", "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)]\n");
    let data = fixture("binary.svm");
    let r = run_json(&m, &data, &["--solver", "fobos", "--epochs", "300", "--holdout", "0.3", "--patience", "3"]);
    assert_eq!(r["status"], "early_stopped", "{r}");
    assert!(r["stopped_by"].as_str().unwrap().contains("held-out loss"), "{r}");
    assert_eq!(r["rows"], 140, "{r}");
    assert_eq!(r["holdout"]["rows"], 60, "{r}");
    let best = r["holdout"]["best_epoch"].as_u64().unwrap();
    assert_eq!(r["epochs"].as_u64().unwrap(), best + 3, "{r}");
    for bad in ["0", "1", "-0.2", "nan"] {
        let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--holdout", bad]);
        assert_eq!(out.status.code(), Some(2), "--holdout {bad}: {}", text(&out.stderr));
    }
}

/// `--init` with an intercept: the saved `bias 1` row becomes b, so a start from the optimum
/// is done after one epoch (regression and logistic); a file with a bias needs a model with one.
/// Proxgrad, whose cold start takes many epochs (SCD's first check solves these in one).
#[test]
fn init_restores_the_intercept() {
    let dir = tempfile::tempdir().expect("tmp");
    for (kind, loss, data) in
        [("real", "squared", "offset_regression.svm"), ("labels", "logistic", "offset_binary.svm")]
    {
        let m = write(
            dir.path(),
            "b.opt",
            &format!("data x: sparse, y: {kind}\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.01\nminimize E[{loss}(y, <x, w> + b)] + λ·l1(w)\n"),
        );
        let data = fixture(data);
        let saved = dir.path().join("b.model");
        let cold = run_json(&m, &data, &["--tol", "1e-9", "--solver", "proxgrad", "--save", saved.to_str().unwrap()]);
        assert!(cold["epochs"].as_u64().unwrap() > 1, "{cold}");
        let warm = run_json(&m, &data, &["--tol", "1e-6", "--solver", "proxgrad", "--init", saved.to_str().unwrap()]);
        assert_eq!(warm["epochs"], 1, "{loss}: {warm}");
        assert!((warm["intercept"].as_f64().unwrap() - cold["intercept"].as_f64().unwrap()).abs() <= 1e-6, "{warm}");
    }
}

/// The report says how b enters F: unregularized, or penalised with its μ (LIBLINEAR's `-B 1`),
/// and so does the plan's F.
#[test]
fn the_report_says_whether_the_intercept_is_penalised() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("offset_binary.svm");
    for (ridge, words) in [("", "(unregularized)"), (" + 2·λ·l2sq(b)", "(penalised: μ·½b², μ = 0.02)")] {
        let m = write(
            dir.path(),
            "b.opt",
            &format!("data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.01\nminimize E[hinge(y, <x, w> + b)] + λ·l2sq(w){ridge}\n"),
        );
        let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let report = text(&out.stdout);
        assert!(
            report.lines().any(|l| l.starts_with("  intercept    b = ") && l.ends_with(words)),
            "{ridge}: {report}"
        );
        let plan = text(&optc(&["plan", m.to_str().unwrap(), data.to_str().unwrap()]).stdout);
        assert_eq!(plan.contains("+ μ·½b², after finish"), !ridge.is_empty(), "{plan}");
        let json = run_json(&m, &data, &[]);
        let penalty = if ridge.is_empty() { serde_json::Value::Null } else { serde_json::json!(0.02) };
        assert_eq!(json.get("intercept_penalty").cloned().unwrap_or_default(), penalty, "{json}");
    }
}

/// λ_max with an intercept is taken where b is optimal for w = 0 (as glmnet's): w = 0 there,
/// and some weight enters just below it.
#[test]
fn path_lambda_max_with_an_intercept() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(
        dir.path(),
        "b.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.01\nminimize E[logistic(y, <x, w> + b)] + λ·l1(w)\n",
    );
    let data = fixture("offset_binary.svm");
    let (m, d) = (m.to_str().unwrap(), data.to_str().unwrap());
    let out = optc(&["path", m, d, "--param", "λ", "--steps", "1", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let top = path_rows(&text(&out.stdout));
    assert_eq!(top[0].1, 0, "{top:?}");
    let below = format!("{}", top[0].0 * 0.97);
    let out = optc(&["path", m, d, "--param", "λ", "--steps", "1", "--quiet", "--from", &below]);
    assert!(path_rows(&text(&out.stdout))[0].1 > 0);
}

/// `--init` from a model Debian's `liblinear-train` wrote (L1R_LR at C = 1/(λ·m), tight
/// tolerance): optc certifies it at the check before its first epoch.
#[test]
fn init_from_a_model_liblinear_trained() {
    let Some(predict) = liblinear_predict("init_from_a_model_liblinear_trained") else { return };
    let train_tool = predict.with_file_name("liblinear-train");
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let saved = dir.path().join("ll.model");
    // λ = 0.01 and m = 200 rows: C = 1/(λ·m) = 0.5.
    let out = std::process::Command::new(&train_tool)
        .args(["-s", "6", "-c", "0.5", "-e", "1e-8", "-q"])
        .arg(&data)
        .arg(&saved)
        .output()
        .expect("liblinear-train runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let warm = run_json(&m, &data, &["--tol", "1e-6", "--init", saved.to_str().unwrap()]);
    assert_eq!(warm["status"], "converged", "{warm}");
    // SCD on these 30 features checks before its first epoch.
    assert_eq!(warm["epochs"], 0, "{warm}");
}

/// A stochastic run started at the optimum ends a little above it: that is not divergence
/// (which is measured against w = 0), and SMM's surrogates start at the given weights.
#[test]
fn a_stochastic_warm_start_at_the_optimum_is_not_divergence() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", L1_LOGISTIC);
    let data = fixture("binary.svm");
    let saved = dir.path().join("opt.model");
    let best = run_json(&m, &data, &["--tol", "1e-10", "--save", saved.to_str().unwrap()]);
    let f_star = best["objective"].as_f64().unwrap();
    let cold = run_json(&m, &data, &["--solver", "smm", "--epochs", "1"]);
    for solver in ["smm", "fobos"] {
        let warm = run_json(&m, &data, &["--solver", solver, "--epochs", "1", "--init", saved.to_str().unwrap()]);
        assert_eq!(warm["status"], "max_epochs", "{solver}: {warm}");
        assert!(warm["objective"].as_f64().unwrap() >= f_star - 1e-12);
        if solver == "smm" {
            assert!(warm["objective"].as_f64() < cold["objective"].as_f64(), "{warm} vs cold {cold}");
        }
    }
}

/// The binary fixture (30 features), and its rows written into `dir` with the first given one
/// more feature, at column 2000: d = 2000.
fn narrow_and_wide(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let narrow = fixture("binary.svm");
    let rows = std::fs::read_to_string(&narrow).expect("fixture");
    let wide = write(dir, "wide.svm", &rows.replacen('\n', " 2000:0.5\n", 1));
    (narrow, wide)
}

/// The default that depends on the data's shape is settled once the data is read, and the run
/// says which solver it chose and why: ℓ2-logistic on 30 features runs SCD, on 2,000 (a column
/// far out, more features than the 200 rows) dual CD; the squared hinge runs SCD on 30
/// features and dcd on 2,000; both run dcd under a strong ridge (C·mean ‖xᵢ‖² ≤ 0.5). `optc
/// check` says what it would choose for which shapes. A forced solver is kept whatever the shape.
#[test]
fn the_default_for_l2_models_follows_the_datas_shape() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (narrow, wide) = narrow_and_wide(dir.path());
    for (loss, few, many, wide_reason) in
        [("logistic", "scd", "dcd", "d = 2000 > m = 200"), ("squared_hinge", "scd", "dcd", "d = 2000 > 1500, m = 200")]
    {
        // C = 1/(λm) = 5 here, and the fixture's mean ‖xᵢ‖² is about 1: a weak ridge.
        let at = |lambda: f64| {
            write(
                dir.path(),
                &format!("{loss}_{lambda}.opt"),
                &format!(
                    "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[{loss}(y, <x, w>)] + {lambda}·l2sq(w)\n"
                ),
            )
        };
        let model = at(0.001);
        for (data, want, d) in [(&narrow, few, "d = 30 ≤ 1500"), (&wide, many, wide_reason)] {
            let r = run_json(&model, data, &[]);
            assert_eq!(r["solver"], want, "{loss} on {}: {r}", data.display());
            assert!(r["solver_reason"].as_str().is_some_and(|s| s.starts_with(d)), "{r}");
            assert_eq!(r["status"], "converged");
            let human = optc(&["run", model.to_str().expect("utf-8"), data.to_str().expect("utf-8")]);
            assert!(text(&human.stdout).contains(&format!("  solver       {want} — {d}")), "{}", text(&human.stdout));
        }
        let forced = run_json(&model, &narrow, &["--solver", many]);
        assert_eq!(forced["solver"], many);
        let check = optc(&["check", model.to_str().expect("utf-8")]);
        assert!(
            text(&check.stdout).contains(&format!("by shape    d ≤ 1500 features: {few} — ")),
            "{}",
            text(&check.stdout)
        );
        // C = 0.05: C·mean ‖xᵢ‖² about 0.05, on either shape.
        let strong = at(0.1);
        for data in [&narrow, &wide] {
            let r = run_json(&strong, data, &[]);
            assert_eq!(r["solver"], "dcd", "{loss} with a strong ridge on {}: {r}", data.display());
            assert!(r["solver_reason"].as_str().is_some_and(|s| s.starts_with("C·mean ‖xᵢ‖² = 0.0")), "{r}");
            assert_eq!(r["status"], "converged");
        }
        let check = optc(&["check", strong.to_str().expect("utf-8")]);
        assert!(
            text(&check.stdout).contains("by shape    C·mean ‖xᵢ‖² ≤ 0.5 (here C = 10/m): dcd — a strong ridge"),
            "{}",
            text(&check.stdout)
        );
    }
}

/// With a free intercept, dual CD keeps Σᵢ αᵢyᵢ = 0 by an augmented Lagrangian, so few features
/// keep SCD under a strong ridge too (its first check's Newton steps take b as one more
/// coordinate); beyond few features the strong ridge's choice stands, dcd for the squared hinge
/// and tron for logistic. `optc check` says where the strong ridge's rule applies.
#[test]
fn a_free_intercept_keeps_few_features_on_scd_under_a_strong_ridge() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (narrow, wide) = narrow_and_wide(dir.path());
    for (loss, beyond) in [("squared_hinge", "dcd"), ("logistic", "tron")] {
        // C = 0.05: C·mean ‖xᵢ‖² about 0.05, a strong ridge.
        let model = write(
            dir.path(),
            &format!("{loss}.opt"),
            &format!(
                "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nminimize E[{loss}(y, <x, w> + b)] + 0.1·l2sq(w)\n"
            ),
        );
        for (data, want, why) in [(&narrow, "scd", "d = 30 ≤ 1500"), (&wide, beyond, "C·mean ‖xᵢ‖² = 0.0")] {
            let r = run_json(&model, data, &[]);
            assert_eq!(r["solver"], want, "{loss} with b under a strong ridge on {}: {r}", data.display());
            assert!(r["solver_reason"].as_str().is_some_and(|s| s.starts_with(why)), "{r}");
            assert_eq!(r["status"], "converged", "{r}");
        }
        let check = optc(&["check", model.to_str().expect("utf-8")]);
        let rule = format!("by shape    C·mean ‖xᵢ‖² ≤ 0.5, d > 1500 (here C = 10/m): {beyond} — ");
        assert!(text(&check.stdout).contains(&rule), "{}", text(&check.stdout));
    }
}

/// The hinge with ½‖w‖² on few features runs `alm` (its Newton steps on the rows at the kink, b
/// one more coordinate) under a weak ridge, with or without b, and dual CD under a strong one or
/// once a d × d factor costs more than a step's passes over the data (here 2,000 features on 200
/// rows of binary.svm): each run says why and certifies. `optc check` prints the rule.
#[test]
fn the_hinge_takes_alm_on_few_features_under_a_weak_ridge() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (narrow, wide) = narrow_and_wide(dir.path());
    for intercept in ["", " + b"] {
        let head = if intercept.is_empty() { "" } else { "var b: scalar\n" };
        for (lambda, data, want, why) in [
            ("1e-4", &narrow, "alm", "d = 30 ≤ 1500, d³/3 within"),
            ("0.1", &narrow, "dcd", "C·mean ‖xᵢ‖²"),
            ("1e-4", &wide, "dcd", "d = 2000 > 1500"),
        ] {
            let model = write(
                dir.path(),
                "hinge.opt",
                &format!("data x: sparse, y: labels\nvar w: vec[dim(x)]\n{head}minimize E[hinge(y, <x, w>{intercept})] + {lambda}·l2sq(w)\n"),
            );
            let r = run_json(&model, data, &[]);
            assert_eq!(r["solver"], want, "hinge{intercept} at λ = {lambda} on {}: {r}", data.display());
            assert!(r["solver_reason"].as_str().is_some_and(|s| s.starts_with(why)), "{r}");
            assert_eq!(r["status"], "converged", "{r}");
            let check = optc(&["check", model.to_str().expect("utf-8")]);
            assert!(
                text(&check.stdout).contains("by shape    d ≤ 1500 features, d³ ≤ 96·nnz(X): alm — "),
                "{}",
                text(&check.stdout)
            );
        }
    }
}

/// Per-class intercepts are saved as LIBLINEAR's bias row (`bias 1`, b[c] last), which its
/// predict reads as optc's does.
#[test]
fn per_class_intercepts_are_liblinears_bias_row() {
    let Some(liblinear) = liblinear_predict("per_class_intercepts_are_liblinears_bias_row") else { return };
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("multiclass.svm");
    let wide = widened(dir.path(), &data, 20);
    let model = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nvar b: vec[classes(y)]\nparam λ = 0.01\nminimize E[softmax(y, <x, W> + b)] + λ·l2sq(W)\n";
    let saved = liblinear_reads_what_optc_saves(&liblinear, model, &data, &[&data, &wide]);
    assert!(saved.contains("\nnr_feature 12\nbias 1\nw\n"), "{saved}");
    assert_eq!(saved.lines().count(), 6 + 12 + 1, "{saved}");
}

/// LIBLINEAR's `-B 1`, written in optc: `λ·l2sq(w) + λ·l2sq(b)`. optc saves it as LIBLINEAR
/// does (`bias 1`, b the last weight), LIBLINEAR's predict reads it as optc's does, and a model
/// `liblinear-train -B 1` made is read by `optc predict` as by LIBLINEAR's.
#[test]
fn a_regularized_bias_is_liblinears_bias_both_ways() {
    let Some(liblinear) = liblinear_predict("a_regularized_bias_is_liblinears_bias_both_ways") else { return };
    let dir = tempfile::tempdir().expect("tmp");
    let data = fixture("offset_binary.svm");
    let wide = widened(dir.path(), &data, 40);
    for loss in ["hinge", "squared_hinge", "logistic"] {
        let model = format!(
            "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.01\nminimize E[{loss}(y, <x, w> + b)] + λ·l2sq(w) + λ·l2sq(b)\n"
        );
        let saved = liblinear_reads_what_optc_saves(&liblinear, &model, &data, &[&data, &wide]);
        assert!(saved.contains("\nnr_feature 30\nbias 1\nw\n"), "{saved}");
    }
    // The other way: LIBLINEAR's own -B 1 model, through optc predict.
    let train = liblinear.with_file_name("liblinear-train");
    if !train.exists() {
        return;
    }
    let made = dir.path().join("ll.model");
    let t = std::process::Command::new(&train)
        .args(["-s", "2", "-c", "5", "-B", "1", "-q"])
        .args([data.as_os_str(), made.as_os_str()])
        .output()
        .expect("liblinear-train runs");
    assert!(t.status.success(), "{}", text(&t.stderr));
    let (ours, theirs) = (dir.path().join("o.pred"), dir.path().join("l.pred"));
    let o = optc(&["predict", made.to_str().unwrap(), wide.to_str().unwrap(), "--out", ours.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let l = std::process::Command::new(&liblinear)
        .args([wide.as_os_str(), made.as_os_str(), theirs.as_os_str()])
        .output()
        .expect("liblinear-predict runs");
    assert!(l.status.success());
    assert_eq!(std::fs::read(&ours).expect("ours"), std::fs::read(&theirs).expect("theirs"));
}

/// Gap Safe screening reaches the report: on 600 features, of which only the first 3 carry the
/// label, ℓ1-logistic at a λ that keeps a few non-zero proves most of the others zero, and it
/// never counts more features than the returned weights leave at zero. (That only true zeros are
/// screened is the unit test's, on a problem whose zeros are known.)
#[test]
fn working_set_runs_report_the_features_screening_proved_zero() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut rows = String::new();
    let mut state = 12345u64;
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as f64 / (1u64 << 31) as f64
    };
    for i in 0..200 {
        let y = if i % 2 == 0 { 1 } else { -1 };
        let mut line = format!("{y}");
        for j in 1..=600 {
            let signal = if j <= 3 { 0.5 * f64::from(y) } else { 0.0 };
            let v = signal + next() - 0.5;
            if j <= 3 || next() < 0.05 {
                line += &format!(" {j}:{v:.4}");
            }
        }
        rows += &line;
        rows.push('\n');
    }
    let data = write(dir.path(), "wide.svm", &rows);
    let m = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + 0.02·l1(w)\n",
    );
    let saved = dir.path().join("w.model");
    let r = run_json(&m, &data, &["--tol", "1e-8", "--save", saved.to_str().unwrap()]);
    let screened = r["screened"].as_u64().expect("a working-set run reports `screened`");
    let nnz = r["nnz"].as_u64().expect("nnz");
    assert!(screened >= 300, "only {screened} of 600 features screened (nnz {nnz})");
    assert!(screened + nnz <= 600, "{screened} screened and {nnz} non-zero of 600");
    let human = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap(), "--tol", "1e-8"]);
    let report = text(&human.stdout);
    assert!(report.contains(&format!("screened     {screened} of 600 features")), "{report}");
}

/// Started by mpirun as one of several processes, an optc built without MPI refuses to run the
/// whole problem on each of them (they would race to one --save), and says how to build one
/// that splits it. The launcher is simulated by its environment.
#[cfg(not(feature = "mpi"))]
#[test]
fn several_processes_without_mpi_are_refused() {
    let model = fixture("../../examples/l1_logistic.opt");
    let data = fixture("binary.svm");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_optc"))
        .args(["run", model.to_str().expect("utf-8"), data.to_str().expect("utf-8")])
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .expect("optc runs");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("started 2 processes") && err.contains("--features mpi"), "{err}");
}

/// `--trace` watches a run without steering it: the checks it adds between the rules' checks
/// leave the dual history the rules' checks read as it was, so the run takes the same epochs to
/// the same F. They used to add their dual points and F to it, and the stall test and the
/// extrapolation of the next rule's check then saw another run (here 6 epochs instead of 8).
#[test]
fn a_trace_does_not_change_the_run_it_traces() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.opt", &model_text("labels", 1e-5, "minimize E[logistic(y, <x, w>)] + λ·l1(w)"));
    let data = fixture("sparse_large.svm.xz");
    let trace = dir.path().join("t.csv");
    let plain = run_json(&m, &data, &["--tol", "1e-6"]);
    let traced = run_json(&m, &data, &["--tol", "1e-6", "--trace", trace.to_str().unwrap()]);
    assert_eq!(plain["epochs"], traced["epochs"], "plain {plain}\ntraced {traced}");
    let (a, b) = (plain["objective"].as_f64().unwrap(), traced["objective"].as_f64().unwrap());
    assert!((a - b).abs() <= 1e-12 * a.abs(), "F {a} without the trace, {b} with it");
    // Every epoch's gap bounds F − F*, those of the checks only the trace made (which read the
    // run's best dual bound and refine nothing) too: F − gap ≤ F* ≤ the run's last F.
    let csv = std::fs::read_to_string(&trace).expect("the trace");
    let mut rows = 0;
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let (f, gap): (f64, f64) = (cells[2].parse().unwrap(), cells[5].parse().unwrap());
        assert!(f - gap <= a + 1e-12 * a.abs(), "epoch {}: F − gap = {} above the run's F {a}", cells[0], f - gap);
        rows += 1;
    }
    assert_eq!(traced["epochs"].as_u64(), Some(rows), "{csv}");
}

/// A run its first check solves says so, with the figures of that choice: a Newton step's
/// Hessian (Σᵢ eᵢ(eᵢ + 1)/2 for rows of eᵢ entries) and factor (d³/3) against an epoch (2·nnz),
/// in the report, in `--json`, and in `optc plan MODEL DATA`, whose plan is the one the run
/// settles on this data. A run that does not check first has no such line.
#[test]
fn a_run_solved_before_its_first_epoch_prints_the_figures_of_that_choice() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Rows of 3, 2, 1 and 1 entries on 3 features: 6 + 3 + 1 + 1 Hessian products, 7 entries
    // read twice an epoch.
    let data = write(dir.path(), "d.svm", "1 1:1 2:0.5 3:-1\n-1 1:-0.5 3:2\n1 2:1\n-1 1:0.25\n");
    let m = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.1\nminimize E[logistic(y, <x, w> + b)] + λ·l2sq(w)\n",
    );
    let r = run_json(&m, &data, &[]);
    assert_eq!(r["epochs"], 0, "{r}");
    let f = &r["first_check"];
    assert_eq!((f["hessian_flops"].as_f64(), f["epoch_flops"].as_f64()), (Some(11.0), Some(14.0)), "{r}");
    assert_eq!(f["factor_flops"].as_f64(), Some(9.0), "{r}");
    let out = optc(&["run", m.to_str().unwrap(), data.to_str().unwrap()]);
    assert_has_lines(
        &text(&out.stdout),
        &["method       checked before the first epoch: Newton steps on all 3 features"],
    );
    let out = optc(&["plan", m.to_str().unwrap(), data.to_str().unwrap()]);
    assert_has_lines(&text(&out.stdout), &["plan scd", "first   checked before the first epoch"]);
    // A fixed epoch count is not a check before the first epoch.
    let r = run_json(&m, &data, &["--epochs", "3"]);
    assert!(r["first_check"].is_null(), "{r}");
}
