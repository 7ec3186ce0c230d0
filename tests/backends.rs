//! Two back ends, one meaning: every plan optc emits runs under the interpreter and the JIT,
//! and they produce the same state bit for bit (same operations in the same order; the
//! transcendentals are the same Rust functions).

mod common;

use common::fixture;
use optc::data::{read_libsvm, LabelMap};
use optc::exec::driver::{self, RunSettings};
use optc::exec::{interp::Interpreter, jit, select_backend, Backend, Orders, State};
use optc::pipeline::{self, CompileOptions};
use optc::plan::{Expr, Intrinsic, Plan, Stmt};
use optc::source::SourceFile;
use optc::stdlib::{LabelKind, Library};
use std::path::Path;

fn examples() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("examples/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "opt"))
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).expect("reads")))
        .collect();
    out.sort();
    assert!(out.len() >= 6, "the examples are the differential suite");
    out
}

/// The plan optc picks for `text` (eager: FOBOS's eager reference).
fn plan_of(text: &str, eager: bool) -> Plan {
    plan_with(text, eager, None)
}

fn plan_with(text: &str, eager: bool, solver: Option<&str>) -> Plan {
    try_plan(text, eager, solver).expect("plans")
}

/// examples/, where the examples' `load` files are.
fn examples_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// The plan, or None where the model does not fit the solver (SCD with hinge); the files it
/// loads are read from examples/.
fn try_plan(text: &str, eager: bool, solver: Option<&str>) -> Option<Plan> {
    let file = SourceFile::new("m.opt", text);
    let solver = solver.map(String::from).or_else(|| eager.then(|| "fobos".into()));
    let opts = CompileOptions { eager, solver, files: Some(examples_dir()), ..Default::default() };
    let c = pipeline::front_end(&file, &Library::standard(), &opts).ok()?;
    pipeline::plan(&c, &opts).ok()
}

/// Runs `plan` on the fixture its labels need, with both back ends; returns both final states.
/// The examples' `load` files are read from examples/.
fn both(plan: &Plan, epochs: usize, seed: u64) -> (State, State) {
    both_with_files(plan, epochs, seed, &examples_dir())
}

/// [`both`], the `load` files read from `dir`. A file may name more features than the fixture
/// has (a9a's attribute groups, 123): the plan then runs with d widened to them, the extra
/// columns empty, as for a model declaring `vec[n]` wider than its data.
fn both_with_files(plan: &Plan, epochs: usize, seed: u64, dir: &Path) -> (State, State) {
    both_with_settings(plan, &RunSettings::fixed(epochs, seed), dir)
}

/// [`both_with_files`] under any settings (a tolerance, which some plans read).
fn both_with_settings(plan: &Plan, settings: &RunSettings, dir: &Path) -> (State, State) {
    let (data, kind) = match (plan.objective.softmax, plan.info.classification) {
        (true, _) => ("multiclass.svm", LabelKind::Classes),
        (false, true) => ("binary.svm", LabelKind::Labels),
        (false, false) => ("regression.svm", LabelKind::Real),
    };
    let d = read_libsvm(&fixture(data)).expect("fixture");
    let map = LabelMap::fit(kind, &d).expect("labels");
    let y = map.apply(&d).expect("labels");
    let classes = if kind == LabelKind::Classes { map.originals.len() } else { 0 };
    use optc::data::operator::{bind, OperatorError};
    let features = match plan.objective.composite.as_ref().map(|c| bind(c, d.features(), dir)) {
        Some(Err(OperatorError::Beyond { index, .. })) => index as usize,
        _ => d.features(),
    };
    let columns = optc::data::LazyColumns::default();
    let operator = plan.objective.composite.as_ref().map(|c| bind(c, features, dir).expect("binds"));
    let view = d.view(&y, features).with_columns(&columns).with_classes(classes);
    let view = view.with_operator(operator.as_ref());
    let op_rows = operator.as_ref().map_or(0, |b| b.rows);
    let facts = d.complete_facts(plan, optc::data::DataFacts { classes, op_rows, features, ..d.facts() });
    let mut interp = Interpreter { plan };
    let a = driver::run(plan, &mut interp, &view, &facts, settings, None).expect("interpreter runs");
    let kernel = jit::compile(plan, &optc::exec::bound_scalars(plan, &facts)).expect("the JIT compiles every example");
    let mut compiled = jit::JitBackend { plan, kernel };
    let b = driver::run(plan, &mut compiled, &view, &facts, settings, None).expect("JIT runs");
    (a.state, b.state)
}

/// Parameters, state scalars and every vector must match; per-step temporaries are not state.
fn assert_bitwise(plan: &Plan, name: &str, a: &State, b: &State) {
    for (k, (x, y)) in a.scalars.iter().zip(&b.scalars).enumerate() {
        if plan.scalars[k].role == optc::plan::ScalarRole::Local {
            continue;
        }
        assert_eq!(x.to_bits(), y.to_bits(), "{name}: scalar #{k}: interpreter {x} vs JIT {y}");
    }
    for (k, (u, v)) in a.vectors.iter().zip(&b.vectors).enumerate() {
        for (j, (x, y)) in u.iter().zip(v).enumerate() {
            assert_eq!(x.to_bits(), y.to_bits(), "{name}: vector #{k}[{j}]: interpreter {x} vs JIT {y}");
        }
    }
}

#[test]
fn every_example_runs_the_same_under_both_back_ends() {
    for (name, text) in examples() {
        for eager in [false, true] {
            // The eager reference is FOBOS's: none for a vector prox (only proxgrad has it).
            let Some(plan) = try_plan(&text, eager, None) else {
                assert!(eager, "{name}: no plan");
                continue;
            };
            for seed in [1, 2, 3] {
                let (a, b) = both(&plan, 3, seed);
                assert_bitwise(&plan, &format!("{name} (eager: {eager}, seed {seed})"), &a, &b);
                let w = a.weights(&plan);
                assert!(w.iter().any(|v| *v != 0.0), "{name}: the run moved the weights");
            }
        }
    }
}

/// Every compiled solver on every example it accepts: FOBOS and AdaGrad (lazy), SCD (columns,
/// init phase, perm(d)), proxgrad (0..m, 0..d, momentum), SMM, SMIDAS (the O(d) truncation of
/// θ), truncated gradient, tron (nested repeats) and pdhg (its restarts and Halpern steps),
/// through both back ends.
#[test]
fn every_solver_runs_the_same_under_both_back_ends() {
    let solvers = ["fobos", "adagrad", "scd", "proxgrad", "smm", "smidas", "truncated", "dc", "dcd", "tron", "pdhg"];
    let mut ran = std::collections::BTreeSet::new();
    for (name, text) in examples() {
        for solver in solvers {
            let Some(plan) = try_plan(&text, false, Some(solver)) else { continue };
            assert_eq!(plan.info.solver, solver);
            for seed in [1, 2] {
                let (a, b) = both(&plan, 4, seed);
                assert_bitwise(&plan, &format!("{name} ({solver}, seed {seed})"), &a, &b);
                assert!(a.weights(&plan).iter().any(|v| *v != 0.0), "{name} ({solver}): the weights moved");
            }
            ran.insert(solver);
        }
    }
    assert_eq!(ran.len(), solvers.len(), "every solver ran on some example: {ran:?}");
    // The paper's SCD steps on a logistic model (the default there is the Newton-type plan).
    let text = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + 0.01·l1(w) st w ≥ -0.3\nsolve with scd(newton = 0)\n";
    let plan = plan_of(text, false);
    for seed in [1, 2] {
        let (a, b) = both(&plan, 4, seed);
        assert_bitwise(&plan, &format!("scd(newton = 0), seed {seed}"), &a, &b);
    }
}

/// newGLMNET's one-pass exit in scd's Newton plan: the first epoch's first pass is the run's
/// yardstick σ₁ (and the fraction decides that epoch), the second epoch's first pass measures
/// less, so that epoch is one pass and τ₁ falls from 1 to ¼, under both back ends alike. Later
/// one-pass epochs quarter it again, and the plan's `init` run again after the start (as a
/// polish runs it) ends the rule: τ₁ = 0.
#[test]
fn the_newton_plan_takes_one_pass_epochs_until_a_polish() {
    let text = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + 0.01·l1(w)\n";
    let plan = plan_of(text, false);
    assert_eq!(plan.info.solver, "scd");
    let id = |name: &str| plan.scalars.iter().position(|s| s.name == name).expect("the plan declares it");
    let (first, one_pass) = (id("σ₁"), id("τ₁"));
    let (a, b) = both(&plan, 1, 1);
    assert_bitwise(&plan, "one epoch", &a, &b);
    assert!(a.scalars[first] > 0.0, "σ₁ holds the run's first pass measure");
    assert_eq!(a.scalars[one_pass], 1.0, "the first epoch's passes are the fraction's");
    let (a, b) = both(&plan, 2, 1);
    assert_bitwise(&plan, "two epochs", &a, &b);
    assert_eq!(a.scalars[one_pass], 0.25, "the second epoch ended after one pass");
    let (mut a, b) = both(&plan, 6, 1);
    assert_bitwise(&plan, "six epochs", &a, &b);
    let quarters = a.scalars[one_pass].log(0.25);
    assert!(quarters >= 1.0 && quarters.fract() == 0.0, "τ₁ = ¼ᵏ after one-pass epochs: {}", a.scalars[one_pass]);
    let d = read_libsvm(&fixture("binary.svm")).expect("fixture");
    let y = LabelMap::fit(LabelKind::Labels, &d).and_then(|m| m.apply(&d)).expect("labels");
    let columns = optc::data::LazyColumns::default();
    let view = d.view(&y, d.features()).with_columns(&columns);
    Interpreter { plan: &plan }.init(&mut a, &view).expect("init runs");
    assert_eq!(a.scalars[one_pass], 0.0, "an init after the start ends the one-pass rule");
}

/// Dual coordinate descent on hinge and squared hinge, with shrinking (whose rows leave and come
/// back over 40 epochs, and whose driver orders hold the active rows only) and without, cold
/// and warm-started from weights alone (the α its init derives from their margins): same bits
/// from both back ends.
#[test]
fn dual_cd_for_regression_runs_the_same_under_both_back_ends() {
    // The box duals of the ε-insensitive losses and the pinball loss (LIBLINEAR's SVR steps).
    let head = "data x: sparse, y: real\nvar w: vec[dim(x)]\n";
    let losses =
        ["eps_insensitive(y, <x, w>, 0.1)", "squared_eps_insensitive(y, <x, w>, 0.1)", "quantile(y, <x, w>, 0.3)"];
    for (loss, options) in losses.iter().flat_map(|l| [(l, "(shrinking = 1)"), (l, "(shrinking = 0)")]) {
        let text = format!("{head}minimize E[{loss}] + 0.01·l2sq(w)\nsolve with dcd{options}\n");
        let plan = plan_of(&text, false);
        assert_eq!(plan.info.solver, "dcd");
        for seed in [1, 2] {
            let (a, b) = both(&plan, 20, seed);
            assert_bitwise(&plan, &format!("dcd{options} on {loss}, seed {seed}"), &a, &b);
            assert!(a.weights(&plan).iter().any(|v| *v != 0.0), "{loss}: the weights moved");
        }
    }
    // With b: free (the augmented Lagrangian of Σᵢ βᵢ = 0, with and without shrinking) and
    // penalised (`μ·l2sq(b)`, a feature of value √(λ/μ)).
    let head = "data x: sparse, y: real\nvar w: vec[dim(x)]\nvar b: scalar\n";
    for loss in ["eps_insensitive(y, <x, w> + b, 0.1)", "quantile(y, <x, w> + b, 0.3)"] {
        for (penalty, options) in
            [("", ""), ("", "(shrinking = 0)"), (" + 0.03·l2sq(b)", ""), (" + 0.03·l2sq(b)", "(shrinking = 0)")]
        {
            let text = format!("{head}minimize E[{loss}] + 0.01·l2sq(w){penalty}\nsolve with dcd{options}\n");
            let plan = plan_of(&text, false);
            let (a, b) = both(&plan, 20, 3);
            assert_bitwise(&plan, &format!("dcd{options} on {loss}{penalty}"), &a, &b);
            assert!(a.intercept(&plan) != 0.0, "{loss}{penalty}: b moved");
        }
    }
}

#[test]
fn dual_cd_runs_the_same_under_both_back_ends() {
    let head = "data x: sparse, y: labels\nvar w: vec[dim(x)]\n";
    // Logistic's steps have no shrinking (its αᵢ stay inside (0, C)): `dcd` alone.
    for (loss, options) in [
        ("hinge", "(shrinking = 1)"),
        ("hinge", "(shrinking = 0)"),
        ("squared_hinge", "(shrinking = 1)"),
        ("squared_hinge", "(shrinking = 0)"),
        ("logistic", ""),
    ] {
        let text = format!("{head}minimize E[{loss}(y, <x, w>)] + 0.01·l2sq(w)\nsolve with dcd{options}\n");
        let plan = plan_of(&text, false);
        assert_eq!(plan.info.solver, "dcd");
        let name = format!("dcd{options} on {loss}");
        let (a, b) = both(&plan, 40, 5);
        assert_bitwise(&plan, &name, &a, &b);
        // From the weights alone: the dual state zeroed.
        let mut start = a.clone();
        for (v, decl) in start.vectors.iter_mut().zip(&plan.vectors) {
            if decl.name == "α" {
                v.iter_mut().for_each(|x| *x = 0.0);
            }
        }
        let d = read_libsvm(&fixture("binary.svm")).expect("fixture");
        let map = LabelMap::fit(LabelKind::Labels, &d).expect("labels");
        let y = map.apply(&d).expect("labels");
        let view = d.view(&y, d.features());
        let facts = d.complete_facts(&plan, d.facts());
        let settings = RunSettings::fixed(3, 7);
        let mut interp = Interpreter { plan: &plan };
        let warm_a = driver::run(&plan, &mut interp, &view, &facts, &settings, Some(start.clone())).expect("runs");
        let kernel = jit::compile(&plan, &optc::exec::bound_scalars(&plan, &facts)).expect("compiles");
        let mut compiled = jit::JitBackend { plan: &plan, kernel };
        let warm_b = driver::run(&plan, &mut compiled, &view, &facts, &settings, Some(start)).expect("runs");
        assert_bitwise(&plan, &format!("{name}, warm from weights"), &warm_a.state, &warm_b.state);
    }
    // Per-class offsets on softmax's scores (tron's k more coordinates).
    let plan = plan_of(
        "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nvar b: vec[classes(y)]\nminimize E[softmax(y, <x, W> + b)] + 0.01·l2sq(W)\n",
        false,
    );
    let (a, b) = both(&plan, 4, 1);
    assert_bitwise(&plan, "tron with per-class intercepts", &a, &b);
    // And proxgrad's gradient step on them, with ℓ1 on W.
    let plan = plan_of(
        "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nvar b: vec[classes(y)]\nminimize E[softmax(y, <x, W> + b)] + 0.01·l1(W)\n",
        false,
    );
    assert_eq!(plan.info.solver.to_string(), "proxgrad");
    let (a, b) = both(&plan, 6, 1);
    assert_bitwise(&plan, "proxgrad with per-class intercepts", &a, &b);
    let offsets = plan.objective.class_intercept.expect("the plan fits b");
    assert!(a.vectors[offsets.0].iter().any(|&v| v != 0.0), "the offsets moved");
    // A regularized bias (`μ·l2sq(b)`): dual CD's feature of value √(λ/μ), tron's ridge on b.
    let bias = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nminimize E[squared_hinge(y, <x, w> + b)] + 0.01·l2sq(w) + 0.03·l2sq(b)\n";
    let logistic = bias.replace("squared_hinge", "logistic");
    for (text, solver) in [(bias, "dcd"), (bias, "tron"), (logistic.as_str(), "dcd")] {
        let plan = plan_with(text, false, Some(solver));
        let (a, b) = both(&plan, 20, 3);
        assert_bitwise(&plan, &format!("{solver} with a regularized bias"), &a, &b);
        assert!(a.intercept(&plan) != 0.0, "{solver}: b moved");
    }
    // A free b under dual CD: the hinges' augmented Lagrangian, with and without shrinking.
    for (loss, options) in [("hinge", ""), ("hinge", "(shrinking = 0)"), ("squared_hinge", ""), ("logistic", "")] {
        let text = format!("data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nminimize E[{loss}(y, <x, w> + b)] + 0.01·l2sq(w)\nsolve with dcd{options}\n");
        let plan = plan_with(&text, false, Some("dcd"));
        let (a, b) = both(&plan, 20, 3);
        assert_bitwise(&plan, &format!("dcd{options} on {loss} with a free intercept"), &a, &b);
        assert!(a.intercept(&plan) != 0.0, "{loss}: b moved");
    }
}

/// SMM and online DC with averaged outputs; SMIDAS with each of its step rules (η₀/√e per epoch, a `step` formula), a weighted loss and
/// no penalty at all; truncated gradient every K steps, with and without the threshold θ, lazy
/// and eager: same bits from both back ends.
#[test]
fn smidas_and_truncated_gradient_run_the_same_under_both_back_ends() {
    let head = "data x: sparse, y: labels\nvar w: vec[dim(x)]\n";
    let l1 = "minimize E[logistic(y, <x, w>)] + 0.01·l1(w)";
    for (objective, solve, eager) in [
        (l1, "smm(average = 1)", false),
        ("minimize E[logistic(y, <x, w>)] + 1e-3·logeps(w, 0.01)", "dc(average = 1, n0 = 10)", false),
        (l1, "smidas", false),
        (l1, "smidas(step = 0.5/sqrt(t))", false),
        ("minimize 2·E[logistic(y, <x, w>)] + 0.01·l1(w)", "smidas(eta0 = 3)", false),
        ("minimize E[logistic(y, <x, w>)]", "smidas", false),
        (l1, "truncated(every = 3)", false),
        (l1, "truncated(every = 3)", true),
        ("minimize E[hinge(y, <x, w>)] + 0.02·l1(w)", "truncated(every = 4, theta = 0.05)", false),
        ("minimize E[hinge(y, <x, w>)] + 0.02·l1(w)", "truncated(every = 4, theta = 0.05)", true),
    ] {
        let text = format!("{head}{objective}\nsolve with {solve}\n");
        let plan = plan_with(&text, eager, solve.split('(').next());
        for seed in [1, 2] {
            let (a, b) = both(&plan, 3, seed);
            assert_bitwise(&plan, &format!("{solve} on {objective} (eager: {eager}, seed {seed})"), &a, &b);
            assert!(a.weights(&plan).iter().any(|v| *v != 0.0), "{solve}: the weights moved");
        }
    }
}

/// Every routine of the runtime library, called from a plan (proxgrad's vector prox), and
/// each composition with per-coordinate terms that the analysis accepts: same bits from the
/// interpreter's direct call and the JIT's call through the C ABI.
#[test]
fn every_runtime_routine_runs_the_same_under_both_back_ends() {
    let classify = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)]";
    let regress = "data x: sparse, y: real\nvar w: vec[dim(x)]\nminimize E[squared(y, <x, w>)]";
    for (head, tail, routine) in [
        (classify, " + 0.05·l2(w)", "shrink_l2"),
        (classify, " + 0.002·l1(w) + 0.02·l2(w)", "shrink_l2"),
        (classify, " + 0.01·linf(w)", "prox_linf"),
        (classify, " + 0.01·l2sq(w) + 0.05·linf(w)", "prox_linf"),
        (regress, " st w ∈ L1Ball(2)", "proj_l1ball"),
        (classify, " st w ∈ L2Ball(0.5)", "proj_l2ball"),
        (regress, " + 0.01·l2sq(w) st w ∈ Simplex", "proj_simplex"),
    ] {
        let text = format!("{head}{tail}\n");
        let plan = plan_of(&text, false);
        assert_eq!(plan.info.solver, "proxgrad", "{tail}");
        let mut called = vec![];
        for phase in [&plan.init, &plan.epoch] {
            optc::plan::walk::stmts(phase, &mut |s| {
                if let Stmt::Call(r, _, _) = s {
                    called.push(r.name());
                }
            });
        }
        assert!(called.contains(&routine), "{tail}: calls {called:?}");
        for seed in [1, 2] {
            let (a, b) = both(&plan, 5, seed);
            assert_bitwise(&plan, &format!("{tail} (seed {seed})"), &a, &b);
            assert!(a.weights(&plan).iter().any(|v| *v != 0.0), "{tail}: the weights moved");
        }
    }
}

/// group_l2's two proxes on the fixtures' groups: the closed-form `group_shrink` over disjoint
/// groups (the interpreter's direct call, the JIT's through its C-ABI entry), alone and beside
/// ½‖·‖², and Picard over overlapping ones: the same bits from both back ends. A group-shrink
/// kernel refuses to run without an operator bound.
#[test]
fn group_prox_plans_run_the_same_under_both_back_ends() {
    let head = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)]";
    for (tail, closed_form) in [
        (" + 0.01·group_l2(groups(load(\"disjoint_groups.txt\")), w)", true),
        (" + 0.01·group_l2(groups(load(\"disjoint_groups.txt\")), w) + 0.02·l2sq(w)", true),
        (" + 0.01·group_l2(groups(load(\"groups.txt\")), w)", false),
    ] {
        let file = SourceFile::new("m.opt", format!("{head}{tail}\n"));
        let opts = CompileOptions { files: Some(fixture("")), ..Default::default() };
        let c = pipeline::front_end(&file, &Library::standard(), &opts).expect("checks");
        let plan = pipeline::plan(&c, &opts).expect("plans");
        let mut shrinks = false;
        optc::plan::walk::stmts(&plan.epoch, &mut |s| shrinks |= matches!(s, Stmt::GroupShrink(..)));
        assert_eq!(shrinks, closed_form, "{tail}");
        for seed in [1, 2] {
            let (a, b) = both_with_files(&plan, 5, seed, &fixture(""));
            assert_bitwise(&plan, &format!("{tail} (seed {seed})"), &a, &b);
            assert!(a.weights(&plan).iter().any(|v| *v != 0.0), "{tail}: the weights moved");
        }
        if closed_form {
            let d = read_libsvm(&fixture("binary.svm")).expect("fixture");
            let y = LabelMap::fit(LabelKind::Labels, &d).and_then(|m| m.apply(&d)).expect("labels");
            let state = State::new(&plan, &d.facts(), &y);
            let err = jit::check_shapes(&plan, &state, &d.view(&y, d.features()), &Orders::NONE).expect_err("refused");
            assert!(err.contains("operator"), "{err}");
        }
    }
}

/// Every lazy scheme of the lowering, whether or not an example uses it: additive (ℓ1),
/// multiplicative (½‖·‖² with a box), affine (elastic net), scaled (½‖·‖² alone), and none;
/// and AdaGrad's catch-ups (n·τ·l1, Aⁿ, both), eager and lazy, and its dual averaging.
#[test]
fn every_lazy_scheme_runs_the_same_under_both_back_ends() {
    let head = "data x: sparse, y: labels\nvar w: vec[dim(x)]\n";
    for objective in [
        "minimize E[logistic(y, <x, w>)] + 0.01·l1(w) st w ≥ -0.2",
        "minimize E[logistic(y, <x, w>)] + 0.3·l2sq(w) st w ∈ Box(-0.4, 0.6)",
        "minimize E[hinge(y, <x, w>)] + 0.01·elastic(w, 3) st w ≤ 0.5",
        "minimize E[logistic(y, <x, w>)] + 0.3·l2sq(w)",
        "minimize E[logistic(y, <x, w>)] st w ∈ Box(-1, 1)",
    ] {
        for (solver, options, eager) in
            [("fobos", "", false), ("adagrad", "", false), ("adagrad", "", true), ("adagrad", "(rda = 1)", false)]
        {
            let text = format!("{head}{objective}\nsolve with {solver}{options}\n");
            let plan = plan_with(&text, eager, Some(solver));
            for seed in [4, 9] {
                let (a, b) = both(&plan, 2, seed);
                let name = format!("{objective} ({solver}{options}, eager: {eager}, seed {seed})");
                assert_bitwise(&plan, &name, &a, &b);
            }
        }
    }
}

/// The elastic-net plan's renormalisation branch (`if L > 300`) runs in both back ends.
#[test]
fn elastic_net_resets_agree() {
    let text =
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + 1e-3·elastic(w, 5e4)\n";
    let plan = plan_with(text, false, Some("fobos"));
    let (a, b) = both(&plan, 4, 5);
    assert_bitwise(&plan, "elastic resets", &a, &b);
}

/// A guard fires at the same step and row in both back ends.
#[test]
fn divergence_is_reported_identically() {
    let text =
        "data x: sparse, y: real\nvar w: vec[dim(x)]\nminimize E[squared(y, <x, w>)]\nsolve with fobos(step = 1e6)\n";
    let plan = plan_of(text, false);
    let d = read_libsvm(&fixture("regression.svm")).expect("fixture");
    let view = d.view(&d.labels, d.features());
    let settings = RunSettings::fixed(2, 1);
    let fault = |stopped| match stopped {
        driver::Stopped::Fault(f) => f,
        driver::Stopped::Refused(why) => panic!("refused: {why}"),
    };
    let e1 = fault(
        driver::run(&plan, &mut Interpreter { plan: &plan }, &view, &d.facts(), &settings, None).expect_err("diverges"),
    );
    let kernel = jit::compile(&plan, &optc::exec::bound_scalars(&plan, &d.facts())).expect("compiles");
    let e2 = fault(
        driver::run(&plan, &mut jit::JitBackend { plan: &plan, kernel }, &view, &d.facts(), &settings, None)
            .expect_err("diverges"),
    );
    assert_eq!((e1.step, e1.row, &e1.what), (e2.step, e2.row, &e2.what));
    assert!(e1.step >= 1.0 && !e1.value.is_finite());
}

/// A plan the JIT cannot compile falls back to the interpreter with the reason, never a crash.
#[test]
fn a_plan_the_jit_refuses_falls_back_to_the_interpreter() {
    let mut plan = plan_with(&examples()[0].1, false, Some("fobos"));
    // Break it: soft-thresholding with one argument.
    plan.finish.push(Stmt::For(
        optc::plan::Range::Upto(optc::plan::Len::Features),
        vec![Stmt::Store(
            plan.weights().expect("w"),
            optc::plan::Index::Feature,
            Expr::Call(Intrinsic::Soft, vec![Expr::Const(1.0)]),
        )],
    ));
    let facts = optc::data::DataFacts {
        rows: 1,
        features: 1,
        classes: 0,
        op_rows: 0,
        nnz: 0,
        max_row_norm_sq: Some(1.0),
        mean_weight: 1.0,
        max_weight: 1.0,
        gram_norm: None,
    };
    let err = jit::compile(&plan, &optc::exec::bound_scalars(&plan, &facts)).err().expect("refused");
    assert!(err.to_string().contains("takes 2 argument(s), given 1"), "{err}");
    let selected = select_backend(&plan, &facts, true);
    assert_eq!(selected.backend.name(), "interpreter");
    assert!(selected.fallback.expect("a reason").contains("running the interpreter"));
}

/// The kernel's inputs are checked before native code runs: a state of the wrong shape is an
/// error, not a wild write.
#[test]
fn mismatched_inputs_are_refused_before_the_kernel_runs() {
    let plan = plan_with(&examples()[0].1, false, Some("fobos"));
    let d = read_libsvm(&fixture("binary.svm")).expect("fixture");
    let y = LabelMap::fit(LabelKind::Labels, &d).and_then(|m| m.apply(&d)).expect("labels");
    let view = d.view(&y, d.features());
    let mut state = State::new(&plan, &d.facts(), &y);
    let w = plan.weights().expect("w");
    state.vectors[w.0].pop();
    let order: Vec<u32> = (0..d.rows() as u32).collect();
    let orders = Orders::rows(&order);
    assert!(jit::check_shapes(&plan, &state, &view, &orders).is_err());
    let bad_order = vec![d.rows() as u32];
    let state = State::new(&plan, &d.facts(), &y);
    assert!(jit::check_shapes(&plan, &state, &view, &Orders::rows(&bad_order)).is_err());
    let bad_cols = vec![d.features() as u32];
    assert!(jit::check_shapes(&plan, &state, &view, &Orders { rows: &[], cols: &bad_cols, ranks: None }).is_err());
    // A column plan's CSC must be of this data: d columns, built from no more rows than it has
    // (the arrays themselves are sound by construction: only `Columns::of` makes them).
    let scd = plan_with(&examples()[0].1, false, Some("scd"));
    let state = State::new(&scd, &d.facts(), &y);
    let (indptr, indices, values) = d.csr();
    let fewer = optc::data::LazyColumns::built(optc::data::Columns::of(indptr, indices, values, d.features() - 1, 1));
    let err = jit::check_shapes(&scd, &state, &view.with_columns(&fewer), &Orders::NONE).expect_err("refused");
    assert!(err.contains("the columns are"), "{err}");
    let more_rows: Vec<usize> = indptr.iter().copied().chain([*indptr.last().expect("rows")]).collect();
    let taller = optc::data::LazyColumns::built(optc::data::Columns::of(&more_rows, indices, values, d.features(), 1));
    let err = jit::check_shapes(&scd, &state, &view.with_columns(&taller), &Orders::NONE).expect_err("refused");
    assert!(err.contains("more rows"), "{err}");
    let fits = optc::data::LazyColumns::built(optc::data::Columns::of(indptr, indices, values, d.features(), 1));
    assert_eq!(jit::check_shapes(&scd, &state, &view.with_columns(&fits), &Orders::NONE), Ok(()));
}

/// `optc plan --emit clif` for one small model, pinned.
#[test]
fn clif_of_l1_logistic() {
    let text =
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n";
    let plan = plan_with(text, false, Some("fobos"));
    let facts = optc::data::DataFacts {
        rows: 0,
        features: 0,
        classes: 0,
        op_rows: 0,
        nnz: 0,
        max_row_norm_sq: Some(1.0),
        mean_weight: 1.0,
        max_weight: 1.0,
        gram_norm: None,
    };
    let kernel =
        jit::compile_with(&plan, &optc::exec::bound_scalars(&plan, &facts), jit::Emit::Clif).expect("compiles");
    insta::assert_snapshot!(kernel.clif);
}

/// Rank-2 buffers, the class dimension k, the class index as a number and a `call` on one row
/// of a matrix — what multiclass plans are made of — in a plan built by hand: one proximal
/// gradient step of softmax regression with the row-wise ℓ1/ℓ2 penalty, W ← prox(W − G/L) with
/// G = (1/m)·Σᵢ xᵢ(softmax(Wᵀxᵢ) − e_{yᵢ})ᵀ. Both back ends give the same bits, and the step
/// matches a plain Rust computation of it.
#[test]
fn rank_two_buffers_and_row_calls_run_the_same_and_right() {
    use optc::plan::build::*;
    use optc::plan::{
        Index, Len, Objective, ParamInit, PlanInfo, Range, Routine, ScalarDecl, ScalarId, ScalarRole, Slice, VecDecl,
        VecId, VecRole,
    };
    use optc::symbolic::{Cmp, Func};
    let (nk, lip, tau) = (3usize, 2.0, 0.05);
    let scalar = |name: &str, role, v: f64| ScalarDecl {
        name: name.into(),
        role,
        init: ParamInit::Value(v),
        note: String::new(),
    };
    let buffer = |name: &str, len, cols, role| VecDecl { name: name.into(), len, cols, role, init: 0.0 };
    let (y, w, g, sc) = (VecId(0), VecId(1), VecId(2), VecId(3));
    let (l, t, inv_m, mx, z) = (ScalarId(0), ScalarId(1), ScalarId(2), ScalarId(3), ScalarId(4));
    let (i, j, c) = (Index::Row, Index::Feature, Index::Class);
    let classes = |body: Vec<Stmt>| each(Range::Upto(Len::Classes), body);
    let onehot = Expr::Select(
        Cmp::Lt,
        Box::new(call(Func::Abs, vec![sub(at(y, i), Expr::Idx(c))])),
        Box::new(k(0.5)),
        Box::new(k(1.0)),
        Box::new(k(0.0)),
    );
    let epoch = vec![
        each(Range::Upto(Len::Features), vec![classes(vec![Stmt::StoreAt(g, j, c, k(0.0))])]),
        each(
            Range::Upto(Len::Rows),
            vec![
                classes(vec![Stmt::Store(sc, c, k(0.0))]),
                each(
                    Range::RowNonZeros,
                    vec![classes(vec![Stmt::Store(sc, c, add(at(sc, c), mul(Expr::Value, Expr::LoadAt(w, j, c))))])],
                ),
                Stmt::Set(mx, k(-1e300)),
                classes(vec![Stmt::Set(mx, call(Func::Max, vec![s(mx), at(sc, c)]))]),
                Stmt::Set(z, k(0.0)),
                classes(vec![
                    Stmt::Store(sc, c, call(Func::Exp, vec![sub(at(sc, c), s(mx))])),
                    Stmt::Set(z, add(s(z), at(sc, c))),
                ]),
                classes(vec![Stmt::Store(sc, c, sub(div(at(sc, c), s(z)), onehot))]),
                each(
                    Range::RowNonZeros,
                    vec![classes(vec![Stmt::StoreAt(
                        g,
                        j,
                        c,
                        add(Expr::LoadAt(g, j, c), mul(s(inv_m), mul(Expr::Value, at(sc, c)))),
                    )])],
                ),
            ],
        ),
        each(
            Range::Upto(Len::Features),
            vec![
                classes(vec![Stmt::StoreAt(w, j, c, sub(Expr::LoadAt(w, j, c), div(Expr::LoadAt(g, j, c), s(l))))]),
                Stmt::Call(Routine::ShrinkL2, Slice { buf: w, row: Some(j) }, div(s(t), s(l))),
            ],
        ),
    ];
    let d = read_libsvm(&fixture("regression.svm")).expect("fixture");
    let (m, features) = (d.rows(), d.features());
    let plan = Plan {
        info: PlanInfo {
            solver: optc::solvers::SolverKind::Proxgrad,
            summary: String::new(),
            lazy: false,
            classification: false,
        },
        scalars: vec![
            scalar("L", ScalarRole::Param, lip),
            scalar("τ", ScalarRole::Param, tau),
            scalar("1/m", ScalarRole::Param, 1.0 / m as f64),
            scalar("mx", ScalarRole::Local, 0.0),
            scalar("z", ScalarRole::Local, 0.0),
        ],
        vectors: vec![
            buffer("y", Len::Rows, None, VecRole::Labels),
            buffer("W", Len::Features, Some(Len::Classes), VecRole::Weights),
            buffer("G", Len::Features, Some(Len::Classes), VecRole::State),
            buffer("s", Len::Classes, None, VecRole::State),
        ],
        init: vec![],
        epoch,
        finish: vec![],
        step_counter: None,
        cadence: None,
        active_rows: None,
        estimate: None,
        tolerance: None,
        objective: Objective {
            loss: k(0.0),
            dloss: k(0.0),
            margin: ScalarId(3),
            intercept: None,
            intercept_l2: 0.0,
            class_intercept: None,
            loss_weight: 1.0,
            penalty: k(0.0),
            vector: None,
            composite: None,
            dual: None,
            dual_only: false,
            softmax: false,
            dictionary: None,
        },
        certificate: None,
        uncertified: optc::plan::Uncertified::Progress,
    };
    optc::plan::verify::verify(&plan).expect("the hand-built plan verifies");
    let dump = optc::plan::dump::dump(&plan, None);
    assert!(dump.contains("W: mat[d, k] = 0") && dump.contains("call shrink_l2(W[j, 0..k], τ / L)"), "{dump}");

    let labels: Vec<f64> = (0..m).map(|r| (r % nk) as f64).collect();
    let view = d.view(&labels, features).with_classes(nk);
    let facts = optc::data::DataFacts { classes: nk, ..d.facts() };
    let mut start = State::new(&plan, &facts, &labels);
    assert_eq!(start.vectors[w.0].len(), features * nk);
    for (e, x) in start.vectors[w.0].iter_mut().enumerate() {
        *x = ((e * 7 % 11) as f64 - 5.0) / 10.0;
    }
    let w0 = start.vectors[w.0].clone();
    let mut a = start.clone();
    Interpreter { plan: &plan }.epoch(&mut a, &view, &Orders::NONE).expect("interpreter runs");
    let kernel = jit::compile(&plan, &optc::exec::bound_scalars(&plan, &facts)).expect("compiles");
    let mut b = start.clone();
    jit::JitBackend { plan: &plan, kernel }.epoch(&mut b, &view, &Orders::NONE).expect("JIT runs");
    assert_bitwise(&plan, "rank-2 softmax step", &a, &b);

    // The same step, written directly.
    let (indptr, indices, values) = d.csr();
    let mut grad = vec![0.0; features * nk];
    for r in 0..m {
        let mut scores = vec![0.0; nk];
        for p in indptr[r]..indptr[r + 1] {
            for (cl, sc) in scores.iter_mut().enumerate() {
                *sc += values[p] * w0[indices[p] as usize * nk + cl];
            }
        }
        let top = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let total: f64 = scores.iter().map(|x| (x - top).exp()).sum();
        for p in indptr[r]..indptr[r + 1] {
            for cl in 0..nk {
                let prob = (scores[cl] - top).exp() / total - if cl == r % nk { 1.0 } else { 0.0 };
                grad[indices[p] as usize * nk + cl] += values[p] * prob / m as f64;
            }
        }
    }
    for jj in 0..features {
        let row: Vec<f64> = (0..nk).map(|cl| w0[jj * nk + cl] - grad[jj * nk + cl] / lip).collect();
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
        let factor = if norm > tau / lip { 1.0 - tau / lip / norm } else { 0.0 };
        for (cl, x) in row.iter().enumerate() {
            let want = x * factor;
            let got = a.vectors[w.0][jj * nk + cl];
            assert!((got - want).abs() <= 1e-12 * (1.0 + want.abs()), "W[{jj}, {cl}]: plan {got} vs direct {want}");
        }
    }
    assert!(a.vectors[w.0].iter().zip(&w0).any(|(x, y)| x != y), "the step moved W");
}

/// FOBOS on a multiclass W with each kind of row catch-up, lazy and eager: routine calls on
/// rows inside the non-zeros loop, per-row stamps, the affine reset.
#[test]
fn fobos_on_a_matrix_runs_the_same_under_both_back_ends() {
    let head =
        "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = 0.02\nminimize E[softmax(y, <x, W>)] + ";
    for penalty in
        ["λ·l1inf(W)", "λ·l1l2(W) + λ·l2sq(W)", "λ·l2sq(W)", "λ·elastic(W, 2) st W ≥ -0.1", "λ·l1(W) + λ·l1l2(W)"]
    {
        for eager in [false, true] {
            let plan = plan_with(&format!("{head}{penalty}\nsolve with fobos\n"), eager, Some("fobos"));
            let (a, b) = both(&plan, 3, 5);
            assert_bitwise(&plan, &format!("{penalty} (eager: {eager})"), &a, &b);
            assert!(a.weights(&plan).iter().any(|v| *v != 0.0), "{penalty}: the weights moved");
        }
    }
}

/// DC on the log penalty, online (SMM with averaged tangent weights) and batch (an epoch is a
/// Newton iteration or a reweighting, chosen in the plan by the inner optimality test), on a
/// classification and a regression model and beside the convex terms the prox folds in; the
/// batch runs are long enough to reweight.
#[test]
fn dc_runs_the_same_under_both_back_ends() {
    for (kind, objective) in [
        ("labels", "E[logistic(y, <x, w>)] + 1e-4·logeps(w, 0.01)"),
        ("labels", "E[logistic(y, <x, w>)] + 1e-4·logeps(w, 0.01) + 1e-3·l1(w) + 1e-3·l2sq(w) st w ∈ Box(-0.5, 0.5)"),
        ("real", "E[squared(y, <x, w>)] + 1e-3·logeps(w, 0.01)"),
    ] {
        for solve in ["dc(n0 = 10)", "dc(batch = 1)"] {
            let text =
                format!("data x: sparse, y: {kind}\nvar w: vec[dim(x)]\nminimize {objective}\nsolve with {solve}\n");
            let plan = plan_of(&text, false);
            assert_eq!(plan.info.solver, "dc");
            for seed in [1, 2] {
                let (a, b) = both(&plan, 12, seed);
                assert_bitwise(&plan, &format!("{objective} ({solve}, seed {seed})"), &a, &b);
                assert!(a.weights(&plan).iter().any(|v| *v != 0.0), "{objective} ({solve}): the weights moved");
                if let optc::plan::Uncertified::Reweighting { rounds, .. } = plan.uncertified {
                    assert!(a.scalars[rounds.0] >= 1.0, "{objective}: 12 epochs reweight at least once");
                }
            }
        }
    }
}

/// The intercept's plans on a logistic model (examples/intercept_regression.opt covers the
/// squared loss): SCD's Newton-type steps with the intercept's row of the quadratic model,
/// proxgrad's momentum on b, and each stochastic step on b, lazy and eager: same bits.
#[test]
fn intercept_plans_run_the_same_under_both_back_ends() {
    let base = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nminimize E[logistic(y, <x, w> + b)] + 0.01·l1(w)\n";
    for (solve, eager) in [
        ("scd", false),
        ("scd(newton = 0)", false),
        ("proxgrad", false),
        ("fobos", false),
        ("fobos", true),
        ("adagrad", false),
        ("adagrad(rda = 1)", false),
        ("smm(n0 = 10)", false),
        ("smm(n0 = 10, average = 1)", false),
        ("smidas", false),
        ("truncated", false),
    ] {
        let text = format!("{base}solve with {solve}\n");
        let plan = plan_with(&text, eager, None);
        assert!(plan.objective.intercept.is_some(), "{solve}: the plan fits b");
        for seed in [1, 2] {
            let (a, b) = both(&plan, 4, seed);
            assert_bitwise(&plan, &format!("intercept, {solve} (eager: {eager}, seed {seed})"), &a, &b);
            assert!(a.intercept(&plan) != 0.0, "{solve}: the intercept moved");
        }
    }
}

/// tron's Newton-CG plans (nested `repeat`s: CG inside the epoch, the line search after it) on
/// a scalar loss with and without an intercept, a quadratic loss (constant ℓ″), a weighted
/// loss, and softmax on W (mat[m, k] buffers of scores and probabilities): same bits from both
/// back ends, and the runs move the weights and the intercept. Runs to a tolerance too: the
/// driver hands it to the plan, whose last CG then goes on to the certificate's accuracy.
#[test]
fn tron_runs_the_same_under_both_back_ends() {
    let labels = "data x: sparse, y: labels\nvar w: vec[dim(x)]\n";
    let with_b = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\n";
    let real_b = "data x: sparse, y: real\nvar w: vec[dim(x)]\nvar b: scalar\n";
    let classes = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\n";
    for (head, objective) in [
        (labels, "minimize E[logistic(y, <x, w>)] + 0.01·l2sq(w)"),
        (labels, "minimize 2·E[logistic(y, <x, w>)] + 0.003·l2sq(w) + 0.001·l2sq(w)"),
        (with_b, "minimize E[logistic(y, <x, w> + b)] + 0.01·l2sq(w)"),
        (real_b, "minimize E[squared(y, <x, w> + b)] + 0.05·l2sq(w)"),
        (classes, "minimize E[softmax(y, <x, W>)] + 0.01·l2sq(W)"),
    ] {
        let plan = plan_with(&format!("{head}{objective}\nsolve with tron\n"), false, None);
        assert_eq!(plan.info.solver, "tron", "{objective}");
        for epochs in [1, 4] {
            let (a, b) = both(&plan, epochs, 1);
            assert_bitwise(&plan, &format!("tron on {objective} ({epochs} epochs)"), &a, &b);
            assert!(a.weights(&plan).iter().any(|v| *v != 0.0), "{objective}: the weights moved");
            if plan.objective.intercept.is_some() {
                assert!(a.intercept(&plan) != 0.0, "{objective}: the intercept moved");
            }
        }
        let tol = plan.tolerance.expect("tron reads the run's tolerance");
        for t in [1e-3, 1e-8] {
            let (a, b) = both_with_settings(&plan, &RunSettings::to_tolerance(t, 6, 1), &examples_dir());
            assert_bitwise(&plan, &format!("tron on {objective} to {t}"), &a, &b);
            assert_eq!(a.scalars[tol.0], t, "{objective}: the driver wrote the tolerance");
        }
    }
}

/// The report takes a stdlib loss the certificate names in closed form: F there is F through
/// the interpreter from the plan's own formula, loss by loss, at weights and an intercept away
/// from 0 (margins on both sides of every kink).
#[test]
fn closed_form_losses_report_the_interpreters_f() {
    let cases = [
        ("labels", "logistic(y, <x, w> + b)", "binary.svm"),
        ("labels", "hinge(y, <x, w> + b)", "binary.svm"),
        ("labels", "squared_hinge(y, <x, w> + b)", "binary.svm"),
        ("real", "squared(y, <x, w> + b)", "regression.svm"),
        ("real", "huber(y, <x, w> + b, 0.7)", "regression.svm"),
        ("real", "quantile(y, <x, w> + b, 0.3)", "regression.svm"),
        ("real", "eps_insensitive(y, <x, w> + b, 0.2)", "regression.svm"),
        ("real", "squared_eps_insensitive(y, <x, w> + b, 0.2)", "regression.svm"),
        ("real", "poisson(y, <x, w> + b)", "count_regression.svm"),
        // A declared loss whose formula is a stdlib one's is recognised as it.
        ("labels", "sqhinge(y, <x, w> + b)", "binary.svm"),
    ];
    for (kind, loss, data) in cases {
        let declared = "loss sqhinge(y: labels, a) = max(0, 1 - y·a)²\n    smooth 2\n";
        let text = format!(
            "{declared}data x: sparse, y: {kind}\nvar w: vec[dim(x)]\nvar b: scalar\nminimize E[{loss}] + 0.01·l2sq(w)\n"
        );
        let plan = plan_of(&text, false);
        assert!(plan.certificate.is_some(), "{loss}: no closed form to test");
        let d = read_libsvm(&fixture(data)).expect("fixture");
        let label_kind = if kind == "labels" { LabelKind::Labels } else { LabelKind::Real };
        let y = LabelMap::fit(label_kind, &d).and_then(|m| m.apply(&d)).expect("labels");
        let mut state = State::new(&plan, &d.facts(), &y);
        let w = plan.weights().expect("weights");
        for (j, x) in state.vectors[w.0].iter_mut().enumerate() {
            *x = (((j * 7) % 5) as f64 - 2.0) * 0.15;
        }
        state.scalars[plan.objective.intercept.expect("b").0] = 0.1;
        let view = d.view(&y, d.features());
        let (closed, interpreted) = (
            optc::exec::evaluate::evaluate(&plan, &state, &view),
            optc::exec::evaluate::evaluate_interpreted(&plan, &state, &view),
        );
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-13 * b.abs().max(1e-300);
        assert!(interpreted.loss > 0.0, "{loss}");
        assert!(close(closed.loss, interpreted.loss), "{loss}: {} against {}", closed.loss, interpreted.loss);
        assert!(close(closed.objective, interpreted.objective), "{loss}");
    }
}

/// tron's dense Newton step ([`Stmt::Newton`]) on the squared hinge with a free b, where the
/// iterations take it, then leave it to CG once most rows are past their margin (few products
/// against the factor), then take it again: both back ends end on the same weights and b, bit for bit, on one thread and two (the
/// step's cost rule reads the threads). A step not taken must leave b's step as CG set it: the
/// compiled kernel once read back the b a dense step of an earlier iteration had written.
#[test]
fn tron_dense_steps_agree_across_back_ends() {
    let dir = tempfile::tempdir().expect("tmp");
    // 1,500 rows of about 6 of 60 features, labels from a linear rule with noise.
    let mut state = 7u64;
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut rows = String::new();
    for _ in 0..1500 {
        let entries: Vec<(usize, f64)> = (0..60)
            .filter_map(|j| {
                let (keep, v) = (next() < 0.1, (next() * 200.0).round() / 100.0 - 1.0);
                keep.then_some((j, v))
            })
            .collect();
        let score: f64 =
            entries.iter().map(|&(j, v)| ((j % 3) as f64 - 1.0) * v).sum::<f64>() + 0.2 + 0.4 * (next() - 0.5);
        rows.push_str(if score > 0.0 { "+1" } else { "-1" });
        for (j, v) in entries {
            rows.push_str(&format!(" {}:{v}", j + 1));
        }
        rows.push('\n');
    }
    let data = common::write(dir.path(), "rows.svm", &rows);
    let model = common::write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 1\nminimize E[squared_hinge(y, <x, w> + b)] + λ·l2sq(w)\n",
    );
    for lambda in ["1e-3", "1e-4", "1e-5"] {
        for threads in ["1", "2"] {
            let saved: Vec<Vec<u8>> = [false, true]
                .into_iter()
                .map(|interpreted| {
                    let out = dir.path().join(format!("w{lambda}{threads}{interpreted}.txt"));
                    let mut args = vec!["run", "-q", model.to_str().unwrap(), data.to_str().unwrap()];
                    let set = format!("λ={lambda}");
                    args.extend(["--solver", "tron", "--threads", threads, "--set", &set, "--save"]);
                    args.push(out.to_str().unwrap());
                    if interpreted {
                        args.push("--no-jit");
                    }
                    let run = common::optc(&args);
                    assert!(run.status.success(), "{}", common::text(&run.stderr));
                    std::fs::read(&out).expect("saved")
                })
                .collect();
            assert_eq!(saved[0], saved[1], "λ = {lambda}, {threads} threads: JIT and interpreter");
        }
    }
}

/// The hinge's augmented Lagrangian epochs ([`Stmt::Alm`]), with a free b and a penalised one,
/// on rows with duplicates (rows at the hinge's kink together) and labels mostly one way: both
/// back ends certify the default tolerance and end on the same weights and b, bit for bit, on
/// one thread and two.
#[test]
fn alm_epochs_agree_across_back_ends() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut state = 11u64;
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut rows = String::new();
    for i in 0..1200 {
        let entries: Vec<(usize, f64)> = if i % 9 == 4 {
            vec![(3, 1.0), (17, 1.0)]
        } else {
            (0..40)
                .filter_map(|j| {
                    let (keep, v) = (next() < 0.12, (next() * 4.0).round() / 2.0);
                    keep.then_some((j, v))
                })
                .collect()
        };
        let score: f64 = entries.iter().map(|&(j, v)| ((j % 5) as f64 - 2.0) * v).sum::<f64>() - 1.5 + next();
        rows.push_str(if score > 0.0 { "+1" } else { "-1" });
        for (j, v) in entries {
            rows.push_str(&format!(" {}:{v}", j + 1));
        }
        rows.push('\n');
    }
    let data = common::write(dir.path(), "rows.svm", &rows);
    let free = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 1e-3\nminimize E[hinge(y, <x, w> + b)] + λ·l2sq(w)\n";
    let penalised = free.replace("λ·l2sq(w)\n", "λ·l2sq(w) + λ·l2sq(b)\n");
    for (name, text) in [("free", free.to_string()), ("penalised", penalised)] {
        let model = common::write(dir.path(), &format!("{name}.opt"), &text);
        for threads in ["1", "2"] {
            let saved: Vec<Vec<u8>> = [false, true]
                .into_iter()
                .map(|interpreted| {
                    let out = dir.path().join(format!("w{name}{threads}{interpreted}.txt"));
                    let mut args = vec!["run", "--json", model.to_str().unwrap(), data.to_str().unwrap()];
                    args.extend(["--solver", "alm", "--threads", threads, "--save", out.to_str().unwrap()]);
                    if interpreted {
                        args.push("--no-jit");
                    }
                    let run = common::optc(&args);
                    assert!(run.status.success(), "{}", common::text(&run.stderr));
                    let report: serde_json::Value = serde_json::from_slice(&run.stdout).expect("json");
                    assert_eq!(report["status"], "converged", "{name}, {threads} threads: {report}");
                    std::fs::read(&out).expect("saved")
                })
                .collect();
            assert_eq!(saved[0], saved[1], "{name}, {threads} threads: JIT and interpreter");
        }
    }
}
