//! What a new user meets on the way (#31): the flags LIBLINEAR users type, and messages that
//! name what is wrong in the user's terms.

mod common;

use common::{fixture, optc, text, write};

const MODEL: &str = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.02\n\
                     minimize E[logistic(y, <x, w>)] + λ·l1(w)\n";

/// `-q` is `--quiet` wherever `--quiet` is: `run`, `path` and `predict`.
#[test]
fn dash_q_is_quiet_everywhere() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(dir.path(), "m.opt", MODEL);
    let (m, d) = (model.to_str().expect("utf-8"), fixture("binary.svm"));
    let d = d.to_str().expect("utf-8");
    let saved = dir.path().join("m.model");
    let run = optc(&["run", m, d, "-q", "--save", saved.to_str().expect("utf-8")]);
    assert!(run.status.success() && run.stderr.is_empty(), "{}", text(&run.stderr));
    let path = optc(&["path", m, d, "--param", "λ", "--steps", "3", "-q"]);
    assert!(path.status.success() && path.stderr.is_empty(), "{}", text(&path.stderr));
    let predict = optc(&["predict", saved.to_str().expect("utf-8"), d, "-q"]);
    assert!(predict.status.success() && predict.stderr.is_empty(), "{}", text(&predict.stderr));
}

/// `path --param NAME` for a parameter the model does not declare names `--param`, and the
/// parameters there are.
#[test]
fn an_unknown_path_parameter_names_param() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(dir.path(), "m.opt", MODEL);
    let d = fixture("binary.svm");
    let out = optc(&["path", model.to_str().expect("utf-8"), d.to_str().expect("utf-8"), "--param", "mu"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--param mu: the model has no parameter `mu`") && err.contains("declares λ"), "{err}");
    assert!(!err.contains("--set"), "{err}");
}

/// A file that cannot be read is named by its role, with the reason in plain words: the data,
/// the test file, the model, the saved model, `--init`'s, and a file the model loads.
#[test]
fn an_unreadable_file_is_named_by_its_role() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(dir.path(), "m.opt", MODEL);
    let groups = write(
        dir.path(),
        "g.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + 0.1·group_l2(groups(load(\"nothere.txt\")), w)\n",
    );
    let (m, d) = (model.to_str().expect("utf-8"), fixture("binary.svm"));
    let d = d.to_str().expect("utf-8");
    let folder = dir.path().to_str().expect("utf-8");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", m, "nothere.svm"], "cannot read data file nothere.svm: no such file"),
        (vec!["run", m, "nothere.svm", "--stream"], "cannot read data file nothere.svm: no such file"),
        (vec!["run", m, folder], "it is a folder"),
        (vec!["run", m, d, "--test", "nothere.svm"], "cannot read test file nothere.svm: no such file"),
        (vec!["run", m, d, "--init", "nothere.model"], "cannot read --init model file nothere.model: no such file"),
        (vec!["run", "nothere.opt", d], "cannot read model nothere.opt: no such file"),
        (vec!["predict", "nothere.model", d], "cannot read model file nothere.model: no such file"),
        (vec!["run", groups.to_str().expect("utf-8"), d], "nothere.txt: no such file"),
    ];
    for (args, says) in cases {
        let out = optc(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("os error"), "{args:?}: {err}");
    }
}

/// `λ·l2sq(b)` with `b` never declared says so, and how to declare an intercept, instead of
/// asking for `w`.
#[test]
fn an_undeclared_intercept_is_said_to_be_undeclared() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.1\nminimize E[hinge(y, <x, w>)] + λ·l2sq(w) + λ·l2sq(b)\n",
    );
    let out = optc(&["check", model.to_str().expect("utf-8")]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("`b` is not declared") && err.contains("var b: scalar"), "{err}");
    assert!(!err.contains("expected `w`"), "{err}");
}

/// `run --lambda 0.1` (a parameter typed as an option) gets a tip naming `--set λ=0.1` and the
/// parameters the model declares, not clap's "to pass '--lambda' as a value".
#[test]
fn a_parameter_typed_as_an_option_is_shown_set() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(dir.path(), "m.opt", MODEL);
    let (m, d) = (model.to_str().expect("utf-8"), fixture("binary.svm"));
    let d = d.to_str().expect("utf-8");
    for args in [vec!["run", m, d, "--lambda", "0.1"], vec!["run", m, d, "--lambda=0.1"]] {
        let out = optc(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("`--set λ=0.1`") && err.contains("the model declares λ"), "{err}");
        assert!(!err.contains("to pass '--lambda' as a value"), "{err}");
    }
    // An option that is no parameter keeps clap's words.
    let out = optc(&["run", m, d, "--mu", "0.1"]);
    assert!(text(&out.stderr).contains("unexpected argument '--mu'"), "{}", text(&out.stderr));
}

/// The shells' completions offer `--solver`'s and `--emit`'s values, and no file names for
/// `--param`.
#[test]
fn completions_offer_the_values_of_solver_emit_and_param() {
    let out = optc(&["completions", "bash"]);
    let script = text(&out.stdout);
    let case = |flag: &str| {
        let at = script.find(&format!("{flag})")).unwrap_or_else(|| panic!("no case for {flag}"));
        script[at..].lines().nth(1).unwrap_or("").to_string()
    };
    assert!(
        case("--solver").contains("compgen -W \"fobos") && case("--solver").contains("tron"),
        "{}",
        case("--solver")
    );
    assert!(case("--emit").contains("clif asm"), "{}", case("--emit"));
    assert!(!case("--param").contains("compgen -f"), "{}", case("--param"));
    for shell in ["zsh", "fish"] {
        let out = optc(&["completions", shell]);
        assert!(text(&out.stdout).contains("dcd"), "{shell}");
    }
}

/// `optc path` starts at λ_max for the elastic net and the ℓ∞ norm too (the dual norm of
/// ∇f(0)), and reports the points at λ ≥ λ_max as w = 0 with their certificate, without a
/// solver: the box-constrained model whose forced FOBOS ended above F(0) there now runs.
#[test]
fn paths_start_at_lambda_max_where_zero_is_known_optimal() {
    let d = fixture("binary.svm");
    let dir = tempfile::tempdir().expect("tmp");
    let groups = std::fs::read_to_string(fixture("disjoint_groups.txt")).expect("groups");
    write(dir.path(), "groups.txt", &groups);
    let grouped = write(
        dir.path(),
        "g.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[logistic(y, <x, w>)] + λ·group_l2(groups(load(\"groups.txt\")), w)\n",
    );
    let grouped = grouped.to_str().expect("utf-8");
    for model in ["examples/elastic_logistic.opt", "examples/linf_logistic.opt", "examples/box_logistic.opt", grouped] {
        let out = optc(&["path", model, d.to_str().expect("utf-8"), "--param", "λ", "--steps", "3", "-q"]);
        let csv = text(&out.stdout);
        assert!(out.status.success(), "{model}: {}", text(&out.stderr));
        let first: Vec<&str> = csv.lines().nth(1).expect("a first point").split(',').collect();
        // λ, objective, gap, status, nnz, …, epochs last.
        assert_eq!((first[3], first[4], *first.last().expect("epochs")), ("converged", "0", "0"), "{model}: {csv}");
        let (objective, gap): (f64, f64) = (first[1].parse().expect("F"), first[2].parse().expect("gap"));
        assert!(gap <= 1e-9 * objective, "{model}: {csv}");
        let second: Vec<&str> = csv.lines().nth(2).expect("a second point").split(',').collect();
        assert_ne!(second[4], "0", "{model}: below λ_max some weight moves: {csv}");
    }
}

/// The first row of a path's CSV (λ, objective, gap, status, nnz, …, epochs) and its λ.
fn first_point(model: &str, data: &str, param: &str, from: Option<f64>) -> (f64, Vec<String>) {
    let mut args = vec!["path", model, data, "--param", param, "--steps", "1", "-q"];
    let below;
    if let Some(v) = from {
        below = format!("{v}");
        args.extend(["--from", below.as_str()]);
    }
    let out = optc(&args);
    assert!(out.status.success(), "{model} --param {param}: {}", text(&out.stderr));
    let row: Vec<String> = text(&out.stdout).lines().nth(1).expect("a point").split(',').map(String::from).collect();
    (row[0].parse().expect("λ"), row)
}

/// Every norm of the language has its λ_max (#31 §4): the rows of W (ℓ1/ℓ2, ℓ1/ℓ∞), the nuclear
/// norm, ℓ1 beside ℓ2 (either parameter), overlapping groups under ℓ2 and ℓ∞, and models with an
/// free intercept, where the start is w = 0 with the intercept-only b.
/// At λ_max the point is w = 0, reported without a solve and, where the plan has a certificate,
/// with a gap that certifies it (independently of how λ_max was found); 3% below, the solver
/// moves some weight, so λ_max is not just any value where 0 is optimal. Where there is no
/// certificate (overlapping groups), a solve at the value itself finds nothing better than w = 0.
#[test]
fn every_norm_has_its_lambda_max() {
    let dir = tempfile::tempdir().expect("tmp");
    let groups = std::fs::read_to_string(fixture("groups.txt")).expect("groups");
    write(dir.path(), "groups.txt", &groups);
    let binary = fixture("binary.svm");
    let multiclass = fixture("multiclass.svm");
    let offset = fixture("offset_binary.svm");
    let head = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\n";
    let bias = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.01\n";
    let classes = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = 0.01\n";
    let cases: Vec<(&str, String, &std::path::Path, &str, bool)> = vec![
        (
            "overlapping ℓ2 groups",
            format!("{head}minimize E[logistic(y, <x, w>)] + λ·group_l2(groups(load(\"groups.txt\")), w)\n"),
            &binary,
            "λ",
            false,
        ),
        (
            "overlapping ℓ∞ groups",
            format!("{head}minimize E[logistic(y, <x, w>)] + λ·group_linf(groups(load(\"groups.txt\")), w)\n"),
            &binary,
            "λ",
            false,
        ),
        (
            "ℓ1 beside ℓ2, λ",
            format!("{head}param μ = 0.05\nminimize E[logistic(y, <x, w>)] + λ·l1(w) + μ·l2(w)\n"),
            &binary,
            "λ",
            true,
        ),
        (
            "ℓ1 beside ℓ2, μ",
            format!("{head}param μ = 0.05\nminimize E[logistic(y, <x, w>)] + λ·l1(w) + μ·l2(w)\n"),
            &binary,
            "μ",
            true,
        ),
        ("ℓ1/ℓ2 rows of W", format!("{classes}minimize E[softmax(y, <x, W>)] + λ·l1l2(W)\n"), &multiclass, "λ", true),
        ("ℓ1/ℓ∞ rows of W", format!("{classes}minimize E[softmax(y, <x, W>)] + λ·l1inf(W)\n"), &multiclass, "λ", true),
        ("nuclear norm", format!("{classes}minimize E[softmax(y, <x, W>)] + λ·nuclear(W)\n"), &multiclass, "λ", true),
        (
            "free b, squared hinge",
            format!("{bias}minimize E[squared_hinge(y, <x, w> + b)] + λ·l1(w)\n"),
            &offset,
            "λ",
            true,
        ),
    ];
    for (name, text_, data, param, certified) in &cases {
        let model = write(dir.path(), "m.opt", text_);
        let (m, d) = (model.to_str().expect("utf-8"), data.to_str().expect("utf-8"));
        let (lambda_max, row) = first_point(m, d, param, None);
        let objective: f64 = row[1].parse().expect("F");
        assert_eq!(
            (row[3].as_str(), row[4].as_str(), row.last().map(String::as_str)),
            ("converged", "0", Some("0")),
            "{name}: {row:?}"
        );
        if *certified {
            let gap: f64 = row[2].parse().unwrap_or_else(|_| panic!("{name}: a certified gap: {row:?}"));
            assert!(gap <= 1e-9 * objective.abs().max(1.0), "{name}: {row:?}");
        } else {
            let set = format!("{param}={lambda_max}");
            let out = optc(&["run", m, d, "--set", &set, "--tol", "1e-12", "--epochs", "20000", "--json"]);
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
            let f = json["objective"].as_f64().expect("F");
            assert!(f >= objective * (1.0 - 1e-9), "{name}: F = {f} below F(0) = {objective} above λ_max");
        }
        let (_, below) = first_point(m, d, param, Some(lambda_max * 0.97));
        assert_ne!(below[4], "0", "{name}: below λ_max some weight moves: {below:?}");
    }
}

/// A model with no sparsifying term has no λ_max; its path gets glmnet's range for a ridge (from
/// the intercept-only b, free, penalised or per class, where the model has one) and says so,
/// instead of asking for --from.
#[test]
fn a_ridge_path_gets_a_default_range() {
    let dir = tempfile::tempdir().expect("tmp");
    let softmax = write(
        dir.path(),
        "softmax.opt",
        "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nvar b: vec[classes(y)]\nparam λ = 0.01\nminimize E[softmax(y, <x, W> + b)] + λ·l2sq(W)\n",
    );
    let (binary, multiclass) = (fixture("binary.svm"), fixture("multiclass.svm"));
    let bias = write(
        dir.path(),
        "bias.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.01\nminimize E[hinge(y, <x, w> + b)] + λ·l2sq(w) + 0.1·l2sq(b)\n",
    );
    let offset = fixture("offset_binary.svm");
    let cases = [
        ("examples/svm.opt", &binary),
        ("examples/l2loss_svm.opt", &binary),
        (softmax.to_str().expect("utf-8"), &multiclass),
        (bias.to_str().expect("utf-8"), &offset),
    ];
    for (model, d) in cases {
        let out = optc(&["path", model, d.to_str().expect("utf-8"), "--param", "λ", "--steps", "3"]);
        assert!(out.status.success(), "{model}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("glmnet's range for a ridge"), "{model}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout).lines().count(), 4, "{model}");
    }
}

/// The hinge's best intercept for w = 0 sits on its kink, where the loss has no one derivative:
/// the path does not take a λ_max from one subgradient there (on these rows it would say 1/3
/// where w = 0 stops being optimal at 2/3, and report the points between as solved), but asks
/// for --from.
#[test]
fn a_hinge_with_an_intercept_claims_no_lambda_max() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = write(dir.path(), "d.svm", "+1 1:2\n+1 1:2\n+1 1:2\n+1 1:2\n-1 2:1\n-1 2:1\n");
    let model = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.1\nminimize E[hinge(y, <x, w> + b)] + λ·l1(w)\n",
    );
    let out =
        optc(&["path", model.to_str().expect("utf-8"), data.to_str().expect("utf-8"), "--param", "λ", "--steps", "2"]);
    assert!(!out.status.success(), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("give --from"), "{}", text(&out.stderr));
}
