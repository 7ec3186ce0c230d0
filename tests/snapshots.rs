//! Snapshot tests (insta): the plan of every example, the structure report of every
//! docs/language.md example and of the group examples, and the diagnostics of broken models. Each
//! snapshot carries its source. The files models `load` are read from the inputs' own
//! directories, named relative to the package root (where cargo runs tests) so that the paths
//! the snapshots show do not depend on the checkout.

use optc::diagnostics::render_plain;
use optc::pipeline::{self, CompileError, CompileOptions};
use optc::source::SourceFile;
use optc::stdlib::Library;
use std::path::Path;

fn source(path: &Path) -> SourceFile {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    SourceFile::new(name, std::fs::read_to_string(path).expect("input reads"))
}

/// Compile options that read the files a model loads from `dir`.
fn reading(dir: &str) -> CompileOptions {
    CompileOptions { files: Some(dir.into()), ..Default::default() }
}

/// The plan `optc plan` prints, for every model in examples/.
#[test]
fn plans_of_the_examples() {
    insta::glob!("../examples", "*.opt", |path| {
        let file = source(path);
        let opts = reading("examples");
        let c = pipeline::front_end(&file, &Library::standard(), &opts).expect("examples check");
        let plan = pipeline::plan(&c, &opts).expect("examples have plans");
        insta::with_settings!({ description => file.text.to_string(), omit_expression => true }, {
            insta::assert_snapshot!(optc::plan::dump::dump(&plan, None));
        });
    });
}

/// `optc check` for every model of docs/language.md, in both spellings.
#[test]
fn structure_of_the_language_examples() {
    insta::glob!("inputs/language", "*.opt", |path| {
        let file = source(path);
        let c = match pipeline::front_end(&file, &Library::standard(), &reading("tests/inputs/language")) {
            Ok(c) => c,
            Err(CompileError::Model(p)) => panic!("{}", render_plain(&p, &file)),
            Err(e) => panic!("{e:?}"),
        };
        insta::with_settings!({ description => file.text.to_string(), omit_expression => true }, {
            insta::assert_snapshot!(optc::analysis::report(&c.model, &c.structure, &file.name));
        });
    });
}

/// Broken models: the rendered diagnostics (no colour, fixed width).
#[test]
fn diagnostics_of_broken_models() {
    insta::glob!("inputs/errors", "*.opt", |path| {
        let file = source(path);
        let problems = match pipeline::front_end(&file, &Library::standard(), &reading("tests/inputs/errors")) {
            Ok(c) => match pipeline::plan(&c, &CompileOptions::default()) {
                Err(CompileError::Model(p)) => p,
                _ => panic!("{} should be rejected", file.name),
            },
            Err(CompileError::Model(p)) => p,
            Err(e) => panic!("{e:?}"),
        };
        insta::with_settings!({ description => file.text.to_string(), omit_expression => true }, {
            insta::assert_snapshot!(render_plain(&problems, &file));
        });
    });
}

/// `optc check` on group_l2 says which prox its groups file allows and why: the closed-form
/// shrink of each group for disjoint groups, the Picard fixed point (with a shared feature as
/// the witness) for overlapping ones.
#[test]
fn structure_of_the_group_examples() {
    for name in ["group_logistic.opt", "overlapping_groups.opt"] {
        let file = source(&Path::new("examples").join(name));
        let c = pipeline::front_end(&file, &Library::standard(), &reading("examples")).expect("checks");
        insta::with_settings!({ description => file.text.to_string(), omit_expression => true, snapshot_suffix => name }, {
            insta::assert_snapshot!(optc::analysis::report(&c.model, &c.structure, &file.name));
        });
    }
}

/// ASCII and Unicode spellings of the same model give the same structure.
#[test]
fn ascii_and_unicode_spellings_agree() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inputs/language");
    let analyse = |name: &str| {
        let file = source(&dir.join(name));
        let c = pipeline::front_end(&file, &Library::standard(), &CompileOptions::default()).expect("checks");
        let plan = pipeline::plan(&c, &CompileOptions::default()).expect("plans");
        optc::plan::dump::dump(&plan, None).replace("lambda", "λ")
    };
    assert_eq!(analyse("ascii_spellings.opt"), analyse("box_fobos.opt"));
}

/// The plans that no example picks by default: each solver forced on the l1-logistic model.
#[test]
fn plans_of_forced_solvers() {
    let model = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[logistic(y, <x, w>)] + λ·l1(w) st w ≥ -1\n";
    for (name, solve) in [
        ("proxgrad", "solve with proxgrad(tol = 1e-6)"),
        ("scd_paper", "solve with scd(newton = 0)"),
        ("fobos_lazy", "solve with fobos"),
        ("adagrad_lazy", "solve with adagrad"),
        ("adagrad_rda", "solve with adagrad(rda = 1)"),
    ] {
        snapshot_plan("plans_of_forced_solvers", name, format!("{model}{solve}\n"), &CompileOptions::default());
    }
    // The rows' weights (`E[s·loss(...)]`): each row's ℓ, ℓ′ and ℓ″ times s[i].
    let weighted = "data x: sparse, y: labels, s: weights\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 1e-4\n";
    for (name, objective) in [
        ("proxgrad_weighted", "minimize E[s·logistic(y, <x, w> + b)] + λ·l1(w)\nsolve with proxgrad\n"),
        ("scd_weighted", "minimize E[s·logistic(y, <x, w> + b)] + λ·l1(w)\n"),
        ("scd_weighted_lasso", "minimize E[s·squared(y, <x, w> + b)] + λ·l1(w)\n"),
        ("tron_weighted", "minimize E[s·logistic(y, <x, w> + b)] + λ·l2sq(w)\n"),
        ("dcd_weighted", "minimize E[s·hinge(y, <x, w> + b)] + λ·l2sq(w)\n"),
        ("dcd_weighted_squared_hinge", "minimize E[s·squared_hinge(y, <x, w> + b)] + λ·l2sq(w)\nsolve with dcd\n"),
        ("dcd_weighted_logistic", "minimize E[s·logistic(y, <x, w> + b)] + λ·l2sq(w)\nsolve with dcd\n"),
        ("fobos_weighted", "minimize E[s·hinge(y, <x, w> + b)] + λ·l2sq(w)\nsolve with fobos\n"),
    ] {
        snapshot_plan("plans_of_forced_solvers", name, format!("{weighted}{objective}"), &CompileOptions::default());
    }
    // The box duals of the regression losses (LIBLINEAR's SVR steps), weighted and not.
    for (name, text) in [
        ("dcd_eps_insensitive", "data x: sparse, y: real\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[eps_insensitive(y, <x, w>, 0.1)] + λ·l2sq(w)\n"),
        ("dcd_quantile_weighted", "data x: sparse, y: real, s: weights\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[s·quantile(y, <x, w>, 0.3)] + λ·l2sq(w)\n"),
        ("dcd_eps_insensitive_intercept", "data x: sparse, y: real\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 1e-4\nminimize E[eps_insensitive(y, <x, w> + b, 0.1)] + λ·l2sq(w)\n"),
        ("dcd_quantile_penalised_intercept", "data x: sparse, y: real\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 1e-4\nminimize E[quantile(y, <x, w> + b, 0.3)] + λ·l2sq(w) + λ·l2sq(b)\n"),
        ("dcd_squared_eps_insensitive", "data x: sparse, y: real\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[squared_eps_insensitive(y, <x, w>, 0.1)] + λ·l2sq(w)\nsolve with dcd\n"),
    ] {
        snapshot_plan("plans_of_forced_solvers", name, text.to_string(), &CompileOptions::default());
    }
    let softmax = "data x: sparse, y: classes, s: weights\nvar W: mat[dim(x), classes(y)]\nvar b: vec[classes(y)]\nparam λ = 1e-3\nminimize E[s·softmax(y, <x, W> + b)] + λ·";
    for (name, rest) in [
        ("tron_softmax_weighted", "l2sq(W)\n"),
        ("proxgrad_softmax_weighted", "l1(W)\n"),
        ("fobos_softmax_weighted", "l1(W)\nsolve with fobos\n"),
    ] {
        // FOBOS on W fits no offsets.
        let text = match name {
            "fobos_softmax_weighted" => {
                format!("{softmax}{rest}").replace("var b: vec[classes(y)]\n", "").replace(" + b", "")
            }
            _ => format!("{softmax}{rest}"),
        };
        snapshot_plan("plans_of_forced_solvers", name, text, &CompileOptions::default());
    }
    // No penalty: tron's Newton steps damped by the gradient's norm, which also ends the run.
    snapshot_plan(
        "plans_of_forced_solvers",
        "tron_unpenalised",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nminimize E[logistic(y, <x, w> + b)]\n".into(),
        &CompileOptions::default(),
    );
    // The SVMs: Picard (the seed's method, kept when forced) and dual CD without shrinking.
    let svm =
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[hinge(y, <x, w>)] + λ·l2sq(w)\n";
    let per_class = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nvar b: vec[classes(y)]\nparam λ = 1e-3\nminimize E[softmax(y, <x, W> + b)] + λ·l2sq(W)\n";
    snapshot_plan(
        "plans_of_forced_solvers",
        "tron_softmax_intercepts",
        per_class.to_string(),
        &CompileOptions::default(),
    );
    let bias = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 1e-4\nminimize E[hinge(y, <x, w> + b)] + λ·l2sq(w) + 2·λ·l2sq(b)\n";
    snapshot_plan("plans_of_forced_solvers", "dcd_bias", format!("{bias}solve with dcd\n"), &CompileOptions::default());
    // A free intercept: the augmented Lagrangian's centre b₀ and its multiplier step each epoch.
    let free = bias.replace(" + 2·λ·l2sq(b)", "");
    snapshot_plan(
        "plans_of_forced_solvers",
        "dcd_free_intercept",
        format!("{free}solve with dcd\n"),
        &CompileOptions::default(),
    );
    let free_logistic = free.replace("hinge", "logistic");
    snapshot_plan(
        "plans_of_forced_solvers",
        "dcd_logistic_free_intercept",
        format!("{free_logistic}solve with dcd\n"),
        &CompileOptions::default(),
    );
    // The hinge's augmented Lagrangian method: one `alm` statement an epoch, with a free b, a
    // penalised one, and the rows' weights.
    snapshot_plan(
        "plans_of_forced_solvers",
        "alm_free_intercept",
        format!("{free}solve with alm\n"),
        &CompileOptions::default(),
    );
    snapshot_plan("plans_of_forced_solvers", "alm_bias", format!("{bias}solve with alm\n"), &CompileOptions::default());
    let weighted = "data x: sparse, y: labels, s: weights\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[s·hinge(y, <x, w>)] + λ·l2sq(w)\nsolve with alm\n";
    snapshot_plan("plans_of_forced_solvers", "alm_weighted", weighted.into(), &CompileOptions::default());
    for (name, solve) in [("picard", "solve with picard"), ("dcd_plain", "solve with dcd(shrinking = 0)")] {
        snapshot_plan("plans_of_forced_solvers", name, format!("{svm}{solve}\n"), &CompileOptions::default());
    }
    // The primal-dual method with the whole vector's prox: ℓ∞ (a runtime call) and disjoint
    // groups (the shrink of each group), and the squared hinge's conjugate prox.
    let hinge = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-3\nminimize E[hinge(y, <x, w>)] + ";
    for (name, rest) in
        [("pdhg_linf", "0.02·linf(w)\n"), ("pdhg_groups", "λ·group_l2(groups(load(\"disjoint_groups.txt\")), w)\n")]
    {
        snapshot_plan("plans_of_forced_solvers", name, format!("{hinge}{rest}"), &reading("tests/fixtures"));
    }
    let squared_hinge = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 1e-3\nminimize E[squared_hinge(y, <x, w> + b)] + λ·l1(w)\nsolve with pdhg(weight = 0.1)\n";
    snapshot_plan("plans_of_forced_solvers", "pdhg_squared_hinge", squared_hinge.into(), &CompileOptions::default());
    // Logistic's dual CD (its 1-D Newton steps and the gap estimate), with a regularized bias.
    let logistic = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 1e-4\nminimize E[logistic(y, <x, w> + b)] + λ·l2sq(w) + λ·l2sq(b)\n";
    snapshot_plan(
        "plans_of_forced_solvers",
        "dcd_logistic_bias",
        format!("{logistic}solve with dcd\n"),
        &CompileOptions::default(),
    );
}

/// The plans of rows split across ranks (`mpirun` without `--stream`): FISTA and TRON with each
/// loop over the rows between a clear of its sums on every rank but the first and their sum.
#[test]
fn plans_on_split_rows() {
    let l1 = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\nsolve with proxgrad\n";
    let l2 = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[logistic(y, <x, w>)] + λ·l2sq(w)\nsolve with tron\n";
    for (name, text) in [("proxgrad", l1), ("tron", l2)] {
        let file = SourceFile::new(format!("{name}.opt"), text.to_string());
        let opts = CompileOptions::default();
        let c = pipeline::front_end(&file, &Library::standard(), &opts).expect("checks");
        let plan = optc::plan::distribute(&pipeline::plan(&c, &opts).expect("plans")).expect("splits");
        optc::plan::verify::verify(&plan).expect("verifies");
        insta::with_settings!({ description => file.text.to_string(), omit_expression => true }, {
            insta::assert_snapshot!(format!("plans_on_split_rows@{name}"), optc::plan::dump::dump(&plan, None));
        });
    }
}

/// FOBOS on a multiclass W, one plan per kind of lazy catch-up: ℓ1 per entry, a row norm with
/// ½‖·‖² (affine stamps and a routine per row), and the eager sparse-group plan.
#[test]
fn plans_of_fobos_on_a_matrix() {
    let head = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = 1e-3\n";
    for (name, objective) in [
        ("fobos_matrix_l1", "minimize E[softmax(y, <x, W>)] + λ·l1(W)"),
        ("fobos_matrix_l1inf_l2sq", "minimize E[softmax(y, <x, W>)] + λ·l1inf(W) + λ·l2sq(W)"),
        ("fobos_matrix_sparse_group", "minimize E[softmax(y, <x, W>)] + λ·l1(W) + λ·l1l2(W)"),
    ] {
        snapshot_plan(
            "plans_of_fobos_on_a_matrix",
            name,
            format!("{head}{objective}\nsolve with fobos\n"),
            &CompileOptions::default(),
        );
    }
}

/// SMM: the lazy ℓ1 plan (history, closed-form catch-up, per-epoch flush) and the eager plan
/// another per-coordinate regularizer gets.
#[test]
fn plans_of_smm() {
    let head = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\n";
    for (name, objective) in [
        ("smm_lazy_l1", "minimize E[logistic(y, <x, w>)] + λ·l1(w)\nsolve with smm"),
        ("smm_eager_box", "minimize E[logistic(y, <x, w>)] + λ·l1(w) st w ≥ -1\nsolve with smm(n0 = 10)"),
        ("smm_averaged", "minimize E[logistic(y, <x, w>)] + λ·l1(w)\nsolve with smm(n0 = 10, average = 1)"),
    ] {
        snapshot_plan("plans_of_smm", name, format!("{head}{objective}\n"), &CompileOptions::default());
    }
}

/// SMIDAS (the eager O(d) mirror step, and with a `step` formula) and truncated gradient (the
/// lazy ℓ1 plan with the gravity every K steps and the threshold θ; its eager reference).
#[test]
fn plans_of_smidas_and_truncated_gradient() {
    let head =
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n";
    for (name, solve, eager) in [
        ("smidas", "solve with smidas", false),
        ("smidas_step", "solve with smidas(step = 0.1)", false),
        ("truncated_lazy", "solve with truncated", false),
        ("truncated_every_theta", "solve with truncated(every = 10, theta = 0.5)", false),
        ("truncated_eager", "solve with truncated(every = 10, theta = 0.5)", true),
    ] {
        snapshot_plan(
            "plans_of_smidas_and_truncated_gradient",
            name,
            format!("{head}{solve}\n"),
            &CompileOptions { eager, ..Default::default() },
        );
    }
}

/// DC on the log penalty: batch DC (Newton iterations on the weighted problem, then a
/// reweighting) and online DC with the convex terms its prox folds in (ℓ1, ½‖·‖², a box);
/// the example's plan is online DC alone.
#[test]
fn plans_of_dc() {
    let head = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\n";
    for (name, objective) in [
        ("dc_batch", "minimize E[logistic(y, <x, w>)] + λ·logeps(w, 0.01)\nsolve with dc(batch = 1)"),
        (
            "dc_online_box",
            "minimize E[logistic(y, <x, w>)] + λ·logeps(w, 0.01) + λ·l1(w) + λ·l2sq(w) st w ∈ Box(-1, 1)\nsolve with dc(n0 = 10)",
        ),
    ] {
        snapshot_plan("plans_of_dc", name, format!("{head}{objective}\n"), &CompileOptions::default());
    }
}

/// An intercept in each kind of plan: SCD's Newton-type steps (the intercept's row of the
/// quadratic model), proxgrad (its gradient step and momentum), FOBOS (lazy: b's step is O(1)),
/// AdaGrad (b's own accumulator) and SMM (b's surrogate average without a prox).
#[test]
fn plans_with_an_intercept() {
    let head = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 1e-4\nminimize E[logistic(y, <x, w> + b)] + λ·l1(w)\n";
    for (name, solve) in [
        ("scd_newton", ""),
        ("proxgrad", "solve with proxgrad"),
        ("fobos", "solve with fobos"),
        ("adagrad", "solve with adagrad"),
        ("smm", "solve with smm(n0 = 10)"),
    ] {
        snapshot_plan("plans_with_an_intercept", name, format!("{head}{solve}\n"), &CompileOptions::default());
    }
    let softmax = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nvar b: vec[classes(y)]\nparam λ = 1e-3\nminimize E[softmax(y, <x, W> + b)] + λ·l1(W)\n";
    snapshot_plan("plans_with_an_intercept", "proxgrad_softmax", softmax.to_string(), &CompileOptions::default());
}

/// tron's Newton-CG plans (docs/algorithms.md §11), forced: ½‖·‖²-regularized logistic regression,
/// the same with an unregularized intercept (one more CG coordinate), and softmax on W.
#[test]
fn plans_of_tron() {
    let binary = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\n";
    let with_b = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 1e-4\n";
    let classes = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = 1e-3\n";
    let real_b = with_b.replace("labels", "real");
    for (name, head, objective) in [
        ("tron_l2_logistic", binary, "minimize E[logistic(y, <x, w>)] + λ·l2sq(w)"),
        ("tron_intercept", with_b, "minimize E[logistic(y, <x, w> + b)] + λ·l2sq(w)"),
        ("tron_softmax", classes, "minimize E[softmax(y, <x, W>)] + λ·l2sq(W)"),
        // A quadratic loss: CG runs to the gap the tolerance needs from the first iteration.
        ("tron_ridge", real_b.as_str(), "minimize E[squared(y, <x, w> + b)] + λ·l2sq(w)"),
    ] {
        snapshot_plan(
            "plans_of_tron",
            name,
            format!("{head}{objective}\nsolve with tron\n"),
            &CompileOptions::default(),
        );
    }
}

/// Dictionary learning's plan (Mairal 2013 §4.3): D and the surrogate B as mat[d, k], and an
/// epoch that is one `dictionary` call; the structured penalty and the ball in its comment.
#[test]
fn plans_of_dictionary_learning() {
    let text = "data x: sparse\nvar D: mat[dim(x), 64]\nparam λ = 0.1, γ = 1e-3\n\
                minimize E[sparse_code(x, D, λ, 0.01)] + γ·group_linf(groups(load(\"squares.txt\")), D) + 0.01·l2sq(D)\n\
                st columns(D) ∈ L2Ball(1)\nsolve with smm(batch = 50)\n";
    let file = SourceFile::new("dictionary.opt", text);
    let lib = optc::stdlib::Library::standard();
    let pipeline::AnyModel::Dictionary(d) = pipeline::compile(&file, &lib, &CompileOptions::default()).expect("checks")
    else {
        panic!("a dictionary model")
    };
    let plan = optc::plan::lower::dictionary::lower(&d.model, &d.choice);
    optc::plan::verify::verify(&plan).expect("verifies");
    insta::with_settings!({ description => text, omit_expression => true }, {
        insta::assert_snapshot!("plans_of_dictionary_learning", optc::plan::dump::dump(&plan, None));
    });
}

/// The dump of the plan `text` compiles to, pinned as `test@name` (the snapshot files keep the
/// calling test's name), the model text as description.
fn snapshot_plan(test: &str, name: &str, text: String, opts: &CompileOptions) {
    let file = SourceFile::new(format!("{name}.opt"), text);
    let c = pipeline::front_end(&file, &Library::standard(), opts).expect("checks");
    let plan = pipeline::plan(&c, opts).expect("plans");
    insta::with_settings!({ description => file.text.to_string(), omit_expression => true }, {
        insta::assert_snapshot!(format!("{test}@{name}"), optc::plan::dump::dump(&plan, None));
    });
}
