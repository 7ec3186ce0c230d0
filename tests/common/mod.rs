//! The one place the tests call optc's API: compile a model, bind data, run a back end.
#![allow(dead_code)]

use optc::data::{read_libsvm, Dataset, LabelMap};
use optc::exec::driver::{self, Outcome, RunSettings};
use optc::exec::evaluate::{evaluate, Evaluation};
use optc::exec::interp::Interpreter;
use optc::pipeline::{self, CompileOptions};
use optc::plan::Plan;
use optc::source::SourceFile;
use optc::stdlib::Library;
use std::path::{Path, PathBuf};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// The plan of `model`; the files it loads are read from tests/fixtures unless `opts` says
/// where.
pub fn compile(model: &str, opts: &CompileOptions) -> Plan {
    let file = SourceFile::new("test.opt", model);
    let opts = &CompileOptions { files: opts.files.clone().or_else(|| Some(fixture(""))), ..opts.clone() };
    let c = pipeline::front_end(&file, &Library::standard(), opts).unwrap_or_else(|e| panic!("{model}: {e:?}"));
    pipeline::plan(&c, opts).unwrap_or_else(|e| panic!("{model}: {e:?}"))
}

pub struct Run {
    pub plan: Plan,
    pub outcome: Outcome,
    pub eval: Evaluation,
}

/// Compiles `model` with FOBOS forced, reads `data`, runs the interpreter for `epochs` epochs.
pub fn run(model: &str, data: &Path, epochs: usize, seed: u64, eager: bool) -> Run {
    run_with("fobos", model, data, epochs, seed, eager)
}

/// As [`run`], with `solver` forced.
pub fn run_with(solver: &str, model: &str, data: &Path, epochs: usize, seed: u64, eager: bool) -> Run {
    let opts = CompileOptions { eager, solver: Some(solver.into()), ..Default::default() };
    let plan = compile(model, &opts);
    let d = read_libsvm(data).expect("fixture data reads");
    run_plan(plan, &d, &RunSettings::fixed(epochs, seed), None)
}

/// Runs `plan` on `d` with the interpreter, from `start` if given.
pub fn run_plan(plan: Plan, d: &Dataset, settings: &RunSettings, start: Option<optc::exec::State>) -> Run {
    run_plan_on(plan, d, settings, start, &fixture(""), false)
}

/// [`run_plan`], the `load` files of a composite read from `dir`.
pub fn run_plan_in(
    plan: Plan,
    d: &Dataset,
    settings: &RunSettings,
    start: Option<optc::exec::State>,
    dir: &Path,
) -> Run {
    run_plan_on(plan, d, settings, start, dir, false)
}

/// As [`run_plan_in`], compiled by the JIT when `jit` (the interpreter of a debug build is too
/// slow for O(d) steps over thousands of epochs' rows).
pub fn run_plan_on(
    plan: Plan,
    d: &Dataset,
    settings: &RunSettings,
    start: Option<optc::exec::State>,
    dir: &Path,
    jit: bool,
) -> Run {
    use optc::stdlib::LabelKind;
    let kind = match (plan.objective.softmax, plan.info.classification) {
        (true, _) => LabelKind::Classes,
        (false, true) => LabelKind::Labels,
        (false, false) => LabelKind::Real,
    };
    let map = LabelMap::fit(kind, d).expect("labels");
    let y = map.apply(d).expect("labels map");
    let classes = if kind == LabelKind::Classes { map.originals.len() } else { 0 };
    let columns = optc::data::LazyColumns::default();
    let operator =
        plan.objective.composite.as_ref().map(|c| optc::data::operator::bind(c, d.features(), dir).expect("binds"));
    let view = d.view(&y, d.features()).with_columns(&columns).with_classes(classes);
    let view = view.with_operator(operator.as_ref());
    let op_rows = operator.as_ref().map_or(0, |b| b.rows);
    let facts = d.complete_facts(&plan, optc::data::DataFacts { classes, op_rows, ..d.facts() });
    let outcome = if jit {
        let mut selected = optc::exec::select_backend(&plan, &facts, true);
        assert!(selected.fallback.is_none(), "the JIT compiles the plan");
        driver::run(&plan, selected.backend.as_mut(), &view, &facts, settings, start)
    } else {
        driver::run(&plan, &mut Interpreter { plan: &plan }, &view, &facts, settings, start)
    }
    .expect("no divergence");
    let eval = evaluate(&plan, &outcome.state, &view);
    Run { plan, outcome, eval }
}

/// A model over `x: sparse, y: KIND` with parameter λ.
pub fn model_text(kind: &str, lambda: f64, objective: &str) -> String {
    format!("data x: sparse, y: {kind}\nvar w: vec[dim(x)]\nparam λ = {lambda}\n{objective}\n")
}

/// Runs the optc binary.
pub fn optc(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_optc")).args(args).output().expect("optc runs")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Fails unless `report` contains every one of `lines`, naming the first that is missing.
pub fn assert_has_lines(report: &str, lines: &[&str]) {
    for line in lines {
        assert!(report.contains(line), "missing {line:?} in\n{report}");
    }
}

/// Writes `contents` to `dir/name`; the path.
pub fn write(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, contents).expect("write");
    p
}

/// Debian's `liblinear-predict` (package liblinear-tools), or None with a note when it is not on
/// PATH: a developer without it still gets a green run, while CI, which installs it, sets
/// OPTC_REQUIRE_LIBLINEAR=1 so that a lost install fails the run instead of skipping silently.
pub fn liblinear_predict(test: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("liblinear-predict"))
            .find(|f| f.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
    });
    if found.is_none() {
        let why = "`liblinear-predict` is not on PATH (Debian: apt-get install liblinear-tools)";
        if std::env::var("OPTC_REQUIRE_LIBLINEAR").as_deref() == Ok("1") {
            panic!("{test}: OPTC_REQUIRE_LIBLINEAR=1 but {why}");
        }
        // Straight to the process's stderr: the test harness captures `eprintln!` of a passing
        // test, and a skip nobody sees is the silent pass this note is for.
        let note = format!("note: {test} skipped: {why}; set OPTC_REQUIRE_LIBLINEAR=1 to make this a failure\n");
        let _ = std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes());
    }
    found
}

/// An l1-logistic model at λ = 0.01, for the binary fixture.
pub const L1_LOGISTIC: &str =
    "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n";

/// The certificate of `state` on `d` two ways: (F, the plain rescaled dual point's gap, the gap
/// with every dual point the certificate knows, the Newton-refined one included), reading the
/// data by columns or, with `by_rows`, through the rows only.
pub fn gaps(plan: &Plan, d: &Dataset, state: &optc::exec::State, by_rows: bool) -> (f64, f64, f64) {
    use optc::exec::certificate::{assess, check, DualHistory};
    let kind = if plan.info.classification { optc::stdlib::LabelKind::Labels } else { optc::stdlib::LabelKind::Real };
    let map = LabelMap::fit(kind, d).expect("labels");
    let y = map.apply(d).expect("labels map");
    let columns = optc::data::LazyColumns::default();
    let view = if by_rows { d.view(&y, d.features()) } else { d.view(&y, d.features()).with_columns(&columns) };
    let (eval, margins) = optc::exec::evaluate::evaluate_with_margins(plan, state, &view);
    let f = eval.objective;
    // A fresh history and no refinement: the plain point alone.
    let plain = assess(plan, state, &view, f, &margins, Some(&mut DualHistory::default())).expect("certificate");
    // No history (a one-off gap) and a target of 0: every dual point, the refined one included.
    let all = check(plan, state, &view, f, &margins, None, false, 0.0, &|| false).expect("certificate");
    (f, plain.gap, all.gap)
}

/// A fixture of `tests/fixtures/optima.json`: its model, its data file, and the optimum F*
/// CVXPY + Clarabel computed for it.
pub struct Fixture {
    pub model: String,
    pub data: PathBuf,
    /// The rows' weights, one a line, for a weighted model (`E[s·loss]`).
    pub weights: Option<PathBuf>,
    pub best: f64,
}

pub fn fixture_named(name: &str) -> Fixture {
    let text = std::fs::read_to_string(fixture("optima.json")).expect("optima.json");
    let all: serde_json::Value = serde_json::from_str(&text).expect("optima.json parses");
    let f = &all["fixtures"][name];
    let data = f["data"].as_str().expect("data");
    let (lambda, objective) = (f["lambda"].as_f64().expect("lambda"), f["model"].as_str().expect("model"));
    let model = if data.starts_with("multiclass") {
        format!("data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = {lambda}\n{objective}\n")
    } else {
        model_text(if data.contains("regression") { "real" } else { "labels" }, lambda, objective)
    };
    // A fixture with an optimal intercept fits `var b: scalar`; softmax's, one a class.
    let model = match &f["b"] {
        b if b.is_f64() => model.replace("var w: vec[dim(x)]\n", "var w: vec[dim(x)]\nvar b: scalar\n"),
        b if b.is_array() => model.replace("classes(y)]\n", "classes(y)]\nvar b: vec[classes(y)]\n"),
        _ => model,
    };
    // A weighted fixture's model reads `s` (`E[s·loss]`) from its weights file.
    let weights = f["weights"].as_str().map(fixture);
    let model = match weights {
        Some(_) => model.replacen("y: labels\n", "y: labels, s: weights\n", 1).replacen(
            "y: real\n",
            "y: real, s: weights\n",
            1,
        ),
        None => model,
    };
    Fixture { model, data: fixture(data), weights, best: f["objective"].as_f64().expect("objective") }
}

/// A one-vs-rest fixture of `tests/fixtures/optima.json` (`ovr_*`): a two-class model over
/// `y: labels` on multiclass data, with each class's optimum (CVXPY + Clarabel) in the order of
/// `classes`, the labels' first appearance in the file.
pub struct OvrFixture {
    pub model: String,
    pub data: PathBuf,
    pub classes: Vec<f64>,
    pub objectives: Vec<f64>,
    pub w: Vec<Vec<f64>>,
}

pub fn ovr_fixture_named(name: &str) -> OvrFixture {
    let text = std::fs::read_to_string(fixture("optima.json")).expect("optima.json");
    let all: serde_json::Value = serde_json::from_str(&text).expect("optima.json parses");
    let f = &all["fixtures"][name];
    let floats = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array().expect("a list").iter().map(|x| x.as_f64().expect("a number")).collect()
    };
    OvrFixture {
        model: model_text("labels", f["lambda"].as_f64().expect("lambda"), f["model"].as_str().expect("model")),
        data: fixture(f["data"].as_str().expect("data")),
        classes: floats(&f["classes"]),
        objectives: floats(&f["objectives"]),
        w: f["w"].as_array().expect("k lists").iter().map(floats).collect(),
    }
}

/// One-vs-rest problem `class` of `d` (in first-seen order): `plan` on `d` with labels +1 on
/// that class's rows and −1 on the rest, by the JIT, to `settings`.
pub fn run_class(plan: &Plan, d: &Dataset, class: usize, settings: &RunSettings) -> Run {
    use optc::stdlib::LabelKind;
    let map = LabelMap::one_vs_rest(LabelKind::Labels, d).expect("more than two labels");
    let y = optc::data::one_vs_rest_labels(&map.apply(d).expect("labels map"), class);
    let columns = optc::data::LazyColumns::default();
    let view = d.view(&y, d.features()).with_columns(&columns);
    let facts = d.complete_facts(plan, optc::data::DataFacts { ..d.facts() });
    let mut selected = optc::exec::select_backend(plan, &facts, true);
    let outcome = driver::run(plan, selected.backend.as_mut(), &view, &facts, settings, None).expect("no divergence");
    let eval = evaluate(plan, &outcome.state, &view);
    Run { plan: plan.clone(), outcome, eval }
}
