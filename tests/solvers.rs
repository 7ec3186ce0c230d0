//! The solvers reach the optima that CVXPY + Clarabel computed independently
//! (tests/fixtures/make.py → tests/fixtures/optima.json), and the gap they report is a true
//! bound: F(w) − gap ≤ F* ≤ F_cvxpy.

mod common;

use common::{compile, fixture, fixture_named, gaps, model_text, run, run_plan};
use optc::data::read_libsvm;
use optc::exec::driver::{RunSettings, Status};
use optc::pipeline::CompileOptions;
use optc::stdlib::LabelKind;

/// Runs `name` with `solver` (None: optc's choice) to relative gap `tol`; checks the answer
/// against CVXPY and the certificate against the optimum; returns (solver, epochs).
fn solve_to(name: &str, solver: Option<&str>, tol: f64, cap: usize) -> (String, usize) {
    let fx = fixture_named(name);
    let opts = CompileOptions { solver: solver.map(String::from), ..Default::default() };
    let plan = compile(&fx.model, &opts);
    let d = read_libsvm(&fx.data).expect("fixture data");
    let r = run_plan(plan, &d, &RunSettings::to_tolerance(tol, cap, 1), None);
    let f = r.eval.objective;
    let gap = r.outcome.gap.expect("a certificate for this model");
    let solver = r.plan.info.solver.to_string();
    assert_eq!(
        r.outcome.status,
        Status::Converged,
        "{name} ({solver}): {} after {} epochs",
        r.outcome.rule,
        r.outcome.epochs
    );
    assert!(gap <= tol * f, "{name}: converged with gap {gap} > tol·F");
    // The certificate is honest: F − gap never exceeds the optimum (CVXPY's F is ≥ F*).
    assert!(f - gap <= fx.best * (1.0 + 1e-12), "{name} ({solver}): F − gap = {} above F* = {}", f - gap, fx.best);
    // And the answer is as good as it claims, against the independent optimum (which is itself
    // within ~1e-8 of F*).
    let rel = (f - fx.best) / fx.best;
    assert!(rel <= tol + 2e-8, "{name} ({solver}): F = {f} vs F* = {} (relative {rel:.2e}, tol {tol:.0e})", fx.best);
    assert!(rel >= -1e-7, "{name}: F = {f} below F* = {}: the objective is evaluated wrongly", fx.best);
    (solver, r.outcome.epochs)
}

/// With no solver options, every model with a smooth loss and a per-coordinate regularizer is
/// solved by SCD to a certified relative gap of 1e-4, but ½‖·‖² alone, which goes to tron.
#[test]
fn defaults_reach_a_certified_1e_4() {
    for name in [
        "l1_logistic",
        "sparse_l1_logistic",
        "lasso",
        "elastic_logistic",
        "l2_logistic",
        "box_logistic",
        "nonneg_lasso",
        "one_hot_l1_logistic",
    ] {
        let (solver, _) = solve_to(name, None, 1e-4, 1000);
        assert_eq!(solver, if name == "l2_logistic" { "tron" } else { "scd" }, "{name}");
    }
}

/// A loss with ℓ″ on few features is solved by the checks SCD makes before its first epoch (the
/// refinement's proximal Newton steps from w = 0; for the squared loss one exact step): the
/// lasso, logistic and the squared hinge with ℓ1, the elastic net or a box, with or without b,
/// under both back ends, to 1e-4 and 1e-6; and the columns SCD walks are never built.
#[test]
fn a_loss_with_curvature_on_few_features_is_solved_before_any_epoch() {
    for name in [
        "lasso",
        "lasso_intercept",
        "nonneg_lasso",
        "l1_logistic",
        "box_logistic",
        "elastic_logistic_intercept",
        "one_hot_l1_logistic",
        "one_hot_sqhinge_l1_intercept",
    ] {
        for tol in [1e-4, 1e-6] {
            let (solver, epochs) = solve_to(name, None, tol, 1000);
            assert_eq!((solver.as_str(), epochs), ("scd", 0), "{name} at {tol:e}");
        }
        let fx = fixture_named(name);
        let plan = compile(&fx.model, &CompileOptions::default());
        let d = read_libsvm(&fx.data).expect("fixture data");
        let kind = if plan.info.classification { LabelKind::Labels } else { LabelKind::Real };
        let y = optc::data::LabelMap::fit(kind, &d).expect("labels").apply(&d).expect("map");
        let facts = d.complete_facts(&plan, d.facts());
        let settings = RunSettings::to_tolerance(1e-6, 1000, 1);
        let mut fs = vec![];
        for jit in [false, true] {
            let columns = optc::data::LazyColumns::default();
            let view = d.view(&y, d.features()).with_columns(&columns);
            let outcome = if jit {
                let mut selected = optc::exec::select_backend(&plan, &facts, true);
                optc::exec::driver::run(&plan, selected.backend.as_mut(), &view, &facts, &settings, None)
            } else {
                let mut interpreter = optc::exec::interp::Interpreter { plan: &plan };
                optc::exec::driver::run(&plan, &mut interpreter, &view, &facts, &settings, None)
            }
            .expect("no divergence");
            assert_eq!((outcome.epochs, outcome.status), (0, Status::Converged), "{name}, jit {jit}");
            assert!(columns.get().is_none(), "{name}, jit {jit}: the columns were built");
            fs.push(outcome.eval.objective);
        }
        assert_eq!(fs[0], fs[1], "{name}: the back ends agree");
    }
}

/// With no solver options, the hinge beside a nonsmooth penalty (ℓ1 with and without b, with b
/// where 90% of the labels are one class, with a box; the elastic net, ℓ∞, disjoint groups) is
/// solved by the primal-dual method to a certified relative gap of 1e-4, and to 1e-6 when asked.
#[test]
fn nonsmooth_pairs_are_certified_by_the_primal_dual_method() {
    for name in [
        "hinge_l1",
        "hinge_l1_intercept",
        "hinge_l1_skewed_intercept",
        "hinge_elastic",
        "hinge_l1_box",
        "hinge_linf",
        "hinge_disjoint_group",
    ] {
        let (solver, _) = solve_to(name, None, 1e-4, 100_000);
        assert_eq!(solver, "pdhg", "{name}");
        solve_to(name, None, 1e-6, 200_000);
    }
    // Forced, through the squared hinge's and the squared loss's conjugate proxes: a prox off
    // its optimality condition would move the fixed point away from CVXPY's optimum.
    for name in ["one_hot_sqhinge_l1_intercept", "lasso", "lasso_intercept"] {
        let (solver, _) = solve_to(name, Some("pdhg"), 1e-6, 200_000);
        assert_eq!(solver, "pdhg", "{name}");
    }
}

/// With no solver options, a vector term (ℓ2 or ℓ∞ norm, ℓ1/ℓ2 ball, simplex, alone or with
/// the per-coordinate terms whose prox composes with it) is solved by proxgrad, its prox one
/// runtime call, to a certified relative gap of 1e-4; the same runs reach 1e-6 when asked.
#[test]
fn vector_proxes_reach_a_certified_1e_4_by_default_and_1e_6_when_asked() {
    for name in [
        "l2norm_logistic",
        "linf_logistic",
        "sparse_group_logistic",
        "ridge_linf_logistic",
        "l2ball_logistic",
        "l1ball_least_squares",
        "simplex_least_squares",
        "ridge_l2ball_least_squares",
    ] {
        let (solver, _) = solve_to(name, None, 1e-4, 20_000);
        assert_eq!(solver, "proxgrad", "{name}");
        solve_to(name, None, 1e-6, 20_000);
    }
}

/// Multiclass softmax regression on W with ℓ1, ½‖·‖², row-wise ℓ1/ℓ2 and ℓ1/ℓ∞, and the nuclear
/// norm: proxgrad on the matrix, its rows (or all of it, by SVT) proxed by runtime calls, certified by softmax's conjugate, to 1e-4 by
/// default and 1e-6 when asked; ½‖W‖² alone by tron's Newton steps.
#[test]
fn multiclass_softmax_reaches_a_certified_1e_4_by_default_and_1e_6_when_asked() {
    for name in
        ["softmax_l1", "softmax_l2sq", "softmax_l1l2", "softmax_l1inf", "softmax_nuclear", "softmax_centered_trace"]
    {
        let (solver, _) = solve_to(name, None, 1e-4, 20_000);
        assert_eq!(solver, if name == "softmax_l2sq" { "tron" } else { "proxgrad" }, "{name}");
        solve_to(name, None, 1e-6, 20_000);
    }
}

/// Composite ω∘B — fused lasso (B = diff), graph total variation (B = incidence of a graph
/// file), the overlapping group lasso and its ℓ∞ form `group_linf` (stacked group selections) — by proxgrad with the
/// Picard prox. No closed-form dual here: the run stops on the relative change of F, says so,
/// and with default options lands within 1e-4 of CVXPY's optimum (1e-6 at `tol = 1e-8`).
#[test]
fn composite_regularizers_reach_1e_4_by_default() {
    for name in ["fused_lasso", "graph_tv_logistic", "overlapping_group_lasso", "overlapping_group_linf"] {
        let fx = fixture_named(name);
        let d = read_libsvm(&fx.data).expect("fixture data");
        for (tol, within) in [(1e-4, 1e-4), (1e-8, 1e-6)] {
            let plan = compile(&fx.model, &CompileOptions::default());
            assert_eq!(plan.info.solver, "proxgrad", "{name}");
            let r = run_plan(plan, &d, &RunSettings::to_tolerance(tol, 20_000, 1), None);
            assert_eq!(r.outcome.status, Status::Converged, "{name}: {}", r.outcome.rule);
            assert!(r.outcome.gap.is_none() && r.outcome.rule.contains("no certificate"), "{}", r.outcome.rule);
            let rel = (r.eval.objective - fx.best) / fx.best;
            assert!(rel <= within, "{name} (tol {tol:.0e}): F = {} vs F* = {} ({rel:.2e})", r.eval.objective, fx.best);
            assert!(rel >= -1e-7, "{name}: F below the optimum: the objective is evaluated wrongly");
        }
    }
}

/// group_l2 over disjoint groups (every feature in one; alone, beside ½‖·‖², and with a free
/// intercept, the dual point balanced to Σᵢ uᵢ = 0): the
/// closed-form shrink of each group instead of the Picard fixed point, and a closed-form R*, so
/// the runs are certified: 1e-4 by default, 1e-6 when asked, within the tolerance of CVXPY's F*.
#[test]
fn disjoint_groups_reach_a_certified_1e_4_by_default_and_1e_6_when_asked() {
    for name in ["disjoint_group_logistic", "disjoint_group_ridge", "disjoint_group_logistic_intercept"] {
        let plan = compile(&fixture_named(name).model, &CompileOptions::default());
        assert!(plan.info.summary.contains("then group_shrink"), "{name}: {}", plan.info.summary);
        assert!(plan.certificate.is_some_and(|c| c.groups.is_some()), "{name}: certified by the group conjugate");
        let (solver, _) = solve_to(name, None, 1e-4, 20_000);
        assert_eq!(solver, "proxgrad", "{name}");
        solve_to(name, None, 1e-6, 20_000);
    }
}

/// With a feature in no group and nothing else penalising it, no scaling of the dual point
/// reaches the domain of R* (the indicator of 0 there): the run says it has no certificate
/// and stops on the relative change of F, still landing near the optimum.
#[test]
fn a_feature_in_no_group_leaves_the_run_without_a_certificate() {
    let fx = fixture_named("disjoint_group_logistic");
    let dir = tempfile::tempdir().expect("temp dir");
    // The fixture's groups less the last one: features 3, 10, 17, 24 and 26 are unpenalised.
    let groups = std::fs::read_to_string(fixture("disjoint_groups.txt")).expect("groups");
    let kept: Vec<&str> = groups.lines().filter(|l| !l.starts_with("3 ")).collect();
    assert_eq!(kept.len(), groups.lines().count() - 1);
    common::write(dir.path(), "disjoint_groups.txt", &kept.join("\n"));
    let opts = CompileOptions { files: Some(dir.path().to_path_buf()), ..Default::default() };
    let plan = compile(&fx.model, &opts);
    assert!(plan.info.summary.contains("then group_shrink"), "{}", plan.info.summary);
    let d = read_libsvm(&fx.data).expect("fixture data");
    let r = common::run_plan_in(plan, &d, &RunSettings::to_tolerance(1e-8, 20_000, 1), None, dir.path());
    assert_eq!(r.outcome.status, Status::Converged, "{}", r.outcome.rule);
    assert!(r.outcome.gap.is_none() && r.outcome.rule.contains("no certificate"), "{}", r.outcome.rule);
    // Fewer penalised features: a lower optimum than the fixture's.
    assert!(r.eval.objective < fx.best, "F = {} vs the fully grouped F* = {}", r.eval.objective, fx.best);
}

/// The linear SVM (hinge + λ·½‖w‖²) as the prox of hinge∘B at 0, by the Picard iteration on
/// the dual, when forced: certified 1e-4 (its dual is the certificate's dual point), 1e-6 when
/// asked, where FOBOS's subgradient steps stall near 1e-3.
#[test]
fn the_svm_by_picard_reaches_a_certified_1e_4_and_1e_6_when_asked() {
    solve_to("svm", Some("picard"), 1e-4, 50_000);
    solve_to("svm", Some("picard"), 1e-6, 50_000);
}

/// The ℓ2-regularized SVMs, hinge and squared hinge, at λ = 0.05 and at the weak λ = 1e-3
/// (LIBLINEAR's C ≈ 5), are solved by dual coordinate descent by default: certified 1e-4, and
/// within 1e-8 of CVXPY's optimum when asked for it, with LIBLINEAR's shrinking and without.
#[test]
fn dual_cd_solves_the_svms_by_default_and_to_1e_8_when_asked() {
    for name in ["svm", "svm_small_lambda", "sqhinge_l2sq", "sqhinge_l2sq_small_lambda"] {
        let (solver, _) = solve_to(name, None, 1e-4, 100_000);
        assert_eq!(solver, "dcd", "{name}");
        solve_to(name, None, 1e-8, 100_000);
        let fx = fixture_named(name);
        let model = format!("{}solve with dcd(shrinking = 0)\n", fx.model);
        let d = read_libsvm(&fx.data).expect("fixture data");
        let r = run_plan(
            compile(&model, &CompileOptions::default()),
            &d,
            &RunSettings::to_tolerance(1e-8, 100_000, 1),
            None,
        );
        assert_eq!(r.outcome.status, Status::Converged, "{name} without shrinking: {}", r.outcome.rule);
        let rel = (r.eval.objective - fx.best) / fx.best;
        assert!(rel.abs() <= 3e-8, "{name} without shrinking: relative {rel:.2e}");
    }
}

/// LIBLINEAR's `-B 1` in optc's words, `λ·l2sq(w) + λ·l2sq(b)`: dual CD (b a feature of value
/// √(λ/μ)) and tron (b a coordinate with its own ridge μ) reach the CVXPY optimum and its b,
/// certified, for hinge, squared hinge and logistic.
#[test]
fn a_regularized_bias_reaches_the_optimum_with_its_certificate() {
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("optima.json")).expect("optima")).expect("json");
    for (name, solvers) in
        [("svm_bias", &["dcd"][..]), ("sqhinge_bias", &["dcd", "tron"][..]), ("l2_logistic_bias", &["tron"][..])]
    {
        let b_star = all["fixtures"][name]["b"].as_f64().expect("b");
        for solver in solvers {
            solve_to(name, Some(solver), 1e-9, 100_000);
            let fx = fixture_named(name);
            let opts = CompileOptions { solver: Some(solver.to_string()), ..Default::default() };
            let d = read_libsvm(&fx.data).expect("fixture data");
            let r = run_plan(compile(&fx.model, &opts), &d, &RunSettings::to_tolerance(1e-10, 100_000, 1), None);
            let b = r.outcome.state.intercept(&r.plan);
            assert!((b - b_star).abs() <= 1e-4 * (1.0 + b_star.abs()), "{name} ({solver}): b = {b}, CVXPY's {b_star}");
        }
    }
}

/// Ridge with a free intercept (scikit-learn's `Ridge()`): the loss is quadratic, so tron's
/// Newton model is exact and its first iteration runs CG on to the gap the tolerance needs.
/// Each tolerance is certified after one epoch, the certificate bounds CVXPY's F*, and at a
/// tight one b is CVXPY's.
#[test]
fn ridge_with_an_intercept_certifies_after_one_newton_iteration() {
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("optima.json")).expect("optima")).expect("json");
    let b_star = all["fixtures"]["ridge_intercept"]["b"].as_f64().expect("b");
    for tol in [1e-3, 1e-6, 1e-9] {
        let (solver, epochs) = solve_to("ridge_intercept", Some("tron"), tol, 100);
        assert_eq!((solver.as_str(), epochs), ("tron", 1), "tol {tol:e}");
    }
    let fx = fixture_named("ridge_intercept");
    let opts = CompileOptions { solver: Some("tron".into()), ..Default::default() };
    let d = read_libsvm(&fx.data).expect("fixture data");
    let r = run_plan(compile(&fx.model, &opts), &d, &RunSettings::to_tolerance(1e-10, 100, 1), None);
    let b = r.outcome.state.intercept(&r.plan);
    assert!((b - b_star).abs() <= 1e-6 * (1.0 + b_star.abs()), "b = {b}, CVXPY's {b_star}");
}

/// Softmax with one unregularized offset per class, `var b: vec[classes(y)]`: tron reaches the
/// CVXPY optimum, certified (the dual point balanced to Σᵢ uᵢ = 0 in ℝᵏ), and the gap is a true
/// bound from the first iteration on.
#[test]
fn per_class_intercepts_reach_the_optimum_with_their_certificate() {
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("optima.json")).expect("optima")).expect("json");
    let fx = &all["fixtures"]["softmax_l2sq_intercept"];
    let best = fx["objective"].as_f64().expect("objective");
    let model = format!(
        "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nvar b: vec[classes(y)]\nparam λ = {}\n{}\n",
        fx["lambda"].as_f64().expect("lambda"),
        fx["model"].as_str().expect("model")
    );
    let d = read_libsvm(&fixture("multiclass.svm")).expect("fixture data");
    let r = run_plan(compile(&model, &CompileOptions::default()), &d, &RunSettings::to_tolerance(1e-9, 1000, 1), None);
    assert_eq!(r.plan.info.solver, "tron");
    assert_eq!(r.outcome.status, Status::Converged, "{}", r.outcome.rule);
    let f = r.eval.objective;
    let gap = r.outcome.gap.expect("certified");
    assert!(f - gap <= best * (1.0 + 1e-12) && (f - best) / best <= 1e-8, "F = {f}, gap {gap}, F* = {best}");
    for epochs in [1, 2, 3] {
        let r = run_plan(compile(&model, &CompileOptions::default()), &d, &RunSettings::fixed(epochs, 1), None);
        let gap = r.outcome.gap.expect("certified");
        assert!(r.eval.objective - gap <= best * (1.0 + 1e-12), "{epochs} iterations: F − gap above F*");
    }
}

/// Dual CD for ℓ2-logistic (Yu, Huang & Lin 2011, LIBLINEAR's -s 7): a Newton step per αᵢ,
/// certified by its dual iterate, reaches CVXPY's optimum at λ = 0.01 and at the weak 1e-3.
#[test]
fn dual_cd_solves_l2_logistic() {
    for name in ["l2_logistic", "l2_logistic_small_lambda"] {
        solve_to(name, Some("dcd"), 1e-4, 100_000);
        solve_to(name, Some("dcd"), 1e-8, 100_000);
    }
}

/// Logistic dual CD's gap estimate (what tells the driver a check is worth its pass): after
/// every epoch with a rate to go on it never reads under a tenth of the relative gap a check
/// finds at the same iterate (so it asks for no check far from the tolerance), mostly reads
/// within 10× of it, with and without a regularized bias (whose β² is in ‖w‖²), starts afresh
/// on a warm start, and lets a loose tolerance stop before LIBLINEAR's own test (`ready`) would
/// have the driver look.
#[test]
fn logistic_dual_cd_estimates_the_gap_a_check_finds() {
    let head = "data x: sparse, y: labels\nvar w: vec[dim(x)]\n";
    let data = fixture("sparse_binary.svm");
    for model in [
        format!("{head}minimize E[logistic(y, <x, w>)] + 0.001·l2sq(w)\n"),
        format!("{head}var b: scalar\nminimize E[logistic(y, <x, w> + b)] + 0.001·l2sq(w) + 0.003·l2sq(b)\n"),
    ] {
        let (mut close, mut ready) = (0, None);
        for epochs in 1..=8 {
            let run = common::run_with("dcd", &model, &data, epochs, 3, false);
            let scalar = |name: &str| {
                let slot = run.plan.scalars.iter().position(|s| s.name == name);
                run.outcome.state.scalars[slot.unwrap_or_else(|| panic!("the plan has `{name}`"))]
            };
            let estimate = scalar("gap≈");
            if scalar("ready") > 0.5 {
                ready = ready.or(Some(epochs));
            }
            let gap = run.outcome.gap.expect("certified") / run.eval.objective.abs();
            assert!(epochs > 2 || estimate.is_infinite(), "{model}: no rate before two epochs, got {estimate:e}");
            if estimate.is_finite() {
                assert!(estimate >= 0.1 * gap, "{model}, epoch {epochs}: estimate {estimate:e} under gap {gap:e}");
                close += usize::from(estimate <= 10.0 * gap);
            }
        }
        assert!(close >= 3, "{model}: the estimate read within 10× of the gap at {close} epochs");
        // A warm start (a path's next λ) starts the rate afresh: no estimate after its first epoch.
        let d = read_libsvm(&data).expect("fixture");
        let done = common::run_with("dcd", &model, &data, 5, 3, false);
        let again = run_plan(done.plan.clone(), &d, &RunSettings::fixed(1, 3), Some(done.outcome.state.clone()));
        let slot = again.plan.scalars.iter().position(|s| s.name == "gap≈").expect("an estimate");
        assert!(again.outcome.state.scalars[slot].is_infinite(), "{model}: a warm start kept the old rate");
        let ready = ready.expect("LIBLINEAR's test passes within 8 epochs");
        let opts = CompileOptions { solver: Some("dcd".into()), ..Default::default() };
        let run = run_plan(compile(&model, &opts), &d, &RunSettings::to_tolerance(1e-2, 100, 3), None);
        assert_eq!(run.outcome.status, Status::Converged, "{model}");
        assert!(
            run.outcome.epochs < ready,
            "{model}: stopped at {} epochs, LIBLINEAR's test at {ready}",
            run.outcome.epochs
        );
    }
}

/// A squared hinge the model declares itself, under another name and other variable names, is
/// known by its formula: dual coordinate descent solves it, certified, to the built-in's optimum.
#[test]
fn a_declared_squared_hinge_is_solved_as_the_built_in_one() {
    let fx = fixture_named("sqhinge_l2sq");
    let model = format!("loss l2loss(t: labels, z) = max(0, 1 - t·z)^2\n    smooth 2\n{}", fx.model)
        .replace("squared_hinge(", "l2loss(");
    let d = read_libsvm(&fx.data).expect("fixture data");
    let r =
        run_plan(compile(&model, &CompileOptions::default()), &d, &RunSettings::to_tolerance(1e-8, 100_000, 1), None);
    assert_eq!(r.plan.info.solver, "dcd");
    assert_eq!(r.outcome.status, Status::Converged, "{}", r.outcome.rule);
    let rel = (r.eval.objective - fx.best) / fx.best;
    assert!(rel.abs() <= 3e-8, "relative {rel:.2e}");
}

/// Dual coordinate descent warm-started from weights alone (`--init`: no dual) starts its α at
/// the dual point the weights' margins give, and from the optimum's weights of the squared
/// hinge (whose optimal α that point is) certifies at its first check.
#[test]
fn dual_cd_warm_started_from_weights_alone_derives_its_dual() {
    let fx = fixture_named("sqhinge_l2sq");
    let d = read_libsvm(&fx.data).expect("fixture data");
    let first = run_plan(
        compile(&fx.model, &CompileOptions::default()),
        &d,
        &RunSettings::to_tolerance(1e-10, 100_000, 1),
        None,
    );
    let plan = compile(&fx.model, &CompileOptions::default());
    let mut start = first.outcome.state.clone();
    for (v, decl) in start.vectors.iter_mut().zip(&plan.vectors) {
        if decl.name == "α" {
            v.iter_mut().for_each(|a| *a = 0.0);
        }
    }
    let again =
        run_plan(plan, &d, &RunSettings { check_every: 1, ..RunSettings::to_tolerance(1e-6, 100, 2) }, Some(start));
    assert_eq!(again.outcome.status, Status::Converged, "{}", again.outcome.rule);
    assert_eq!(again.outcome.epochs, 1, "{}", again.outcome.rule);
}

/// The paper's SCD (curvature-bound steps, `scd(newton = 0)`) solves the logistic fixtures too,
/// in more epochs than the Newton-type default.
#[test]
fn the_papers_scd_reaches_1e_4() {
    for name in ["l1_logistic", "box_logistic", "elastic_logistic", "sparse_l1_logistic"] {
        let fx = fixture_named(name);
        let model = format!("{}solve with scd(newton = 0)\n", fx.model);
        let d = read_libsvm(&fx.data).expect("fixture data");
        let plain =
            run_plan(compile(&model, &CompileOptions::default()), &d, &RunSettings::to_tolerance(1e-4, 5000, 1), None);
        assert!(!plain.plan.info.summary.contains("Newton"), "{}", plain.plan.info.summary);
        assert_eq!(plain.outcome.status, Status::Converged, "{name}: {}", plain.outcome.rule);
        let rel = (plain.eval.objective - fx.best) / fx.best;
        assert!(rel <= 1e-4, "{name}: relative {rel:.2e}");
        let (_, newton_epochs) = solve_to(name, None, 1e-4, 1000);
        assert!(newton_epochs <= plain.outcome.epochs, "{name}: Newton {newton_epochs} vs {}", plain.outcome.epochs);
    }
}

#[test]
fn scd_reaches_1e_8_when_asked_for_1e_9() {
    for name in ["l1_logistic", "lasso", "box_logistic", "nonneg_lasso", "elastic_logistic"] {
        solve_to(name, Some("scd"), 1e-9, 20_000);
    }
}

#[test]
fn proxgrad_with_fista_reaches_1e_6() {
    for name in ["l1_logistic", "lasso", "l2_logistic", "box_logistic", "nonneg_lasso", "sparse_l1_logistic"] {
        solve_to(name, Some("proxgrad"), 1e-6, 20_000);
    }
}

/// The gap is an upper bound on F − F* at every epoch, not only at the end.
#[test]
fn the_gap_bounds_the_suboptimality_all_along_the_run() {
    for (name, solver) in [
        ("l1_logistic", "scd"),
        ("lasso", "proxgrad"),
        ("box_logistic", "fobos"),
        ("svm", "fobos"),
        ("linf_logistic", "proxgrad"),
        ("sparse_group_logistic", "proxgrad"),
        ("l1ball_least_squares", "proxgrad"),
        ("simplex_least_squares", "proxgrad"),
        ("softmax_l1l2", "proxgrad"),
        ("softmax_l1inf", "proxgrad"),
        ("softmax_nuclear", "proxgrad"),
        ("softmax_l1inf", "fobos"),
        ("softmax_l1l2", "fobos"),
        ("svm", "picard"),
        ("svm", "dcd"),
        ("svm_small_lambda", "dcd"),
        ("sqhinge_l2sq", "dcd"),
        ("sqhinge_l2sq_small_lambda", "dcd"),
        ("svm_bias", "dcd"),
        ("l2_logistic", "dcd"),
        ("l2_logistic_small_lambda", "dcd"),
        ("sqhinge_bias", "tron"),
        ("l2_logistic_bias", "tron"),
        ("disjoint_group_logistic", "proxgrad"),
        ("disjoint_group_ridge", "proxgrad"),
        ("l1_logistic", "adagrad"),
        ("box_logistic", "adagrad"),
        ("lasso", "adagrad"),
        ("dense_l1_logistic", "smidas"),
        ("l1_logistic", "truncated"),
        ("l2_logistic", "tron"),
        ("softmax_l2sq", "tron"),
    ] {
        let fx = fixture_named(name);
        let opts = CompileOptions { solver: Some(solver.into()), ..Default::default() };
        let d = read_libsvm(&fx.data).expect("fixture data");
        for epochs in [1, 2, 5, 20] {
            let r = run_plan(compile(&fx.model, &opts), &d, &RunSettings::fixed(epochs, 3), None);
            let gap = r.outcome.gap.expect("certificate");
            let f = r.eval.objective;
            assert!(
                f - gap <= fx.best * (1.0 + 1e-12),
                "{name} ({solver}, {epochs} epochs): F − gap = {} > F*",
                f - gap
            );
            assert!(f >= fx.best * (1.0 - 1e-7), "{name}: below the optimum");
        }
    }
}

/// The Newton-refined dual point (certificate.rs) is a true bound however far the weights are
/// from the optimum, for every loss and per-coordinate regularizer it applies to, by columns and
/// by rows, never looser than the plain point, and tight: from the first epoch of SCD on it
/// certifies the true suboptimality, where the plain point is up to 50× looser. The one-hot
/// fixture's Hessian is singular (F is flat along the differences of its groups).
#[test]
fn the_refined_dual_point_is_a_true_and_tight_bound() {
    for name in [
        "l1_logistic",
        "sparse_l1_logistic",
        "lasso",
        "nonneg_lasso",
        "elastic_logistic",
        "l2_logistic",
        "box_logistic",
        "one_hot_l1_logistic",
    ] {
        let fx = fixture_named(name);
        let opts = CompileOptions { solver: Some("scd".into()), ..Default::default() };
        let d = read_libsvm(&fx.data).expect("fixture data");
        for epochs in [0, 1, 2, 5, 20] {
            let r = run_plan(compile(&fx.model, &opts), &d, &RunSettings::fixed(epochs, 3), None);
            for by_rows in [false, true] {
                let (f, plain, refined) = gaps(&r.plan, &d, &r.outcome.state, by_rows);
                assert!(
                    f - refined <= fx.best * (1.0 + 1e-12),
                    "{name} ({epochs} epochs): F − gap = {} > F*",
                    f - refined
                );
                assert!(refined <= plain, "{name} ({epochs} epochs): refined gap {refined:.3e} > plain {plain:.3e}");
                // From the first epoch on, the gap is the true suboptimality (F* from CVXPY is
                // within ~1e-8 of it): the plain point is up to 50× looser there.
                let truth = (f - fx.best).max(0.0);
                assert!(
                    epochs == 0 || refined <= 1.5 * truth + 1e-7 * f,
                    "{name} ({epochs} epochs): refined gap {refined:.3e} against F − F* = {truth:.3e} (plain {plain:.3e})"
                );
            }
        }
    }
}

/// A warm start from the optimum is already done after one epoch, and SCD on few features at
/// the check it makes before its first.
#[test]
fn a_warm_start_from_the_optimum_converges_in_one_epoch() {
    for (name, solver) in [("l1_logistic", "scd"), ("lasso", "scd"), ("l1_logistic", "proxgrad")] {
        let fx = fixture_named(name);
        let opts = CompileOptions { solver: Some(solver.into()), ..Default::default() };
        let d = read_libsvm(&fx.data).expect("fixture data");
        let first = run_plan(compile(&fx.model, &opts), &d, &RunSettings::to_tolerance(1e-9, 20_000, 1), None);
        assert_eq!(first.outcome.status, Status::Converged);
        let again = run_plan(
            compile(&fx.model, &opts),
            &d,
            &RunSettings { check_every: 1, ..RunSettings::to_tolerance(1e-6, 20_000, 2) },
            Some(first.outcome.state.clone()),
        );
        assert_eq!(again.outcome.status, Status::Converged, "{name} ({solver})");
        let epochs = if solver == "scd" { 0 } else { 1 };
        assert_eq!(again.outcome.epochs, epochs, "{name} ({solver}): {}", again.outcome.rule);
    }
}

/// FOBOS (forced) still reaches 1e-3 of every optimum in 1000 epochs, the SVM included, and
/// multiclass W with ℓ1, ½‖·‖² and the row norms (lazy per row).
#[test]
fn fobos_reaches_1e_3_in_1000_epochs() {
    for name in [
        "l1_logistic",
        "svm",
        "l2_logistic",
        "elastic_logistic",
        "box_logistic",
        "lasso",
        "nonneg_lasso",
        "softmax_l1",
        "softmax_l2sq",
        "softmax_l1l2",
        "softmax_l1inf",
    ] {
        let fx = fixture_named(name);
        let r = run(&fx.model, &fx.data, 1000, 1, false);
        let rel = (r.eval.objective - fx.best) / fx.best;
        assert!(rel <= 1e-3, "{name}: F = {} vs F* = {} (relative {rel:.2e})", r.eval.objective, fx.best);
        assert!(rel >= -1e-6, "{name}: F = {} below F* = {}", r.eval.objective, fx.best);
    }
}

/// SMM (forced), docs/algorithms.md §7, against the CVXPY optima, at the n₀ `optc run` tunes on
/// each (1 on the small dense ones, 1000 on the large sparse one): within 1e-3 after 200
/// epochs on the dense l1-logistic fixtures, and on the sparse 2000 × 5000 one (1% dense,
/// 1,273 non-zeros at the optimum) within 2e-2 after 50 epochs. The issue asks for 1e-2 there; SMM with the paper's L = β·max‖xᵢ‖² reaches 1.7e-2,
/// and this pins what it does.
#[test]
fn smm_reaches_the_optimum() {
    for (name, options, epochs, within) in [
        ("l1_logistic", "n0 = 1", 200, 1e-3),
        ("dense_l1_logistic", "n0 = 1", 200, 1e-3),
        ("dense_l1_logistic", "n0 = 1, average = 1", 200, 1e-3),
        ("sparse_l1_logistic_large", "n0 = 1000", 50, 2e-2),
    ] {
        let fx = fixture_named(name);
        let model = format!("{}solve with smm({options})\n", fx.model);
        let r = common::run_with("smm", &model, &fx.data, epochs, 1, false);
        let rel = (r.eval.objective - fx.best) / fx.best;
        assert!(rel <= within, "{name}: F = {} vs F* = {} (relative {rel:.2e})", r.eval.objective, fx.best);
        assert!(rel >= -1e-7, "{name}: F below the optimum");
        let gap = r.outcome.gap.expect("a certificate");
        assert!(r.eval.objective - gap <= fx.best * (1.0 + 1e-12), "{name}: the gap is not a bound");
    }
}

/// SMM's averaged outputs (`average = 1`) are Mairal's recursion θ̄ₙ = (1 − ωₙ₊₁)·θ̄ₙ₋₁ + ωₙ₊₁·θₙ
/// over the iterates θₙ of §7, checked against both recursions written out here. The three
/// rows are the same example, so the row order (a seeded permutation) does not matter.
#[test]
fn smm_averaged_outputs_follow_the_recursion() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = common::write(dir.path(), "same.svm", "+1 1:0.6 3:-0.8\n+1 1:0.6 3:-0.8\n+1 1:0.6 3:-0.8\n");
    let (lambda, n0, steps) = (0.02, 4.0, 3 * 7);
    let model = format!(
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + {lambda}·l1(w)\nsolve with smm(average = 1, n0 = {n0})\n"
    );
    let r = common::run_with("smm", &model, &data, 7, 1, false);
    // L = β·max‖xᵢ‖² = 0.25; the surrogate step and prox of §7, then the average.
    let (x, lip) = ([0.6, 0.0, -0.8], 0.25);
    let (mut zbar, mut theta, mut mean) = ([0.0; 3], [0.0; 3], [0.0; 3]);
    let weight = |n: f64| ((n0 + 1.0) / (n + n0)).sqrt();
    for n in 1..=steps {
        let omega = weight(n as f64);
        let a: f64 = (0..3).map(|j| x[j] * theta[j]).sum();
        let g = -1.0 / (1.0 + a.exp());
        for j in 0..3 {
            zbar[j] = (1.0 - omega) * zbar[j] + omega * (theta[j] - g * x[j] / lip);
        }
        for j in 0..3 {
            let v: f64 = zbar[j];
            theta[j] = v.signum() * (v.abs() - lambda / lip).max(0.0);
        }
        let next = weight(n as f64 + 1.0);
        for j in 0..3 {
            mean[j] = (1.0 - next) * mean[j] + next * theta[j];
        }
    }
    let w = r.outcome.state.vectors[r.plan.weights().expect("w").0].clone();
    assert_eq!(w.len(), 3);
    for j in 0..3 {
        assert!((w[j] - mean[j]).abs() <= 1e-12 * (1.0 + mean[j].abs()), "θ̄[{j}] = {} vs {}", w[j], mean[j]);
    }
    assert!(mean.iter().zip(&theta).any(|(m, t)| (m - t).abs() > 1e-3), "the average differs from the last iterate");
}

/// The optimum's non-zeros (CVXPY leaves ~1e-10 where the optimum has 0).
fn optimum_nnz(name: &str) -> usize {
    let text = std::fs::read_to_string(fixture("optima.json")).expect("optima.json");
    let all: serde_json::Value = serde_json::from_str(&text).expect("optima.json parses");
    let w = all["fixtures"][name]["w"].as_array().expect("a weight vector");
    w.iter().filter(|v| v.as_f64().is_some_and(|v| v.abs() > 1e-6)).count()
}

/// AdaGrad (forced), against the CVXPY optima, with its certificate a true bound.
///
/// The composite (FOBOS) step at its default η = 1/(8·max‖xᵢ‖) reaches 1e-3 after 200 epochs
/// on the dense l1-logistic fixtures (5.0e-4 and 7.6e-4). Its last iterate keeps the noise of
/// the last steps on the coordinates the optimum has at 0 (28 of 30 non-zero where the optimum
/// has 8), and on the sparse 2000 × 5000 fixture that noise costs most: 9.4e-2 after 50 epochs
/// at the default η, 1.75e-2 at the best (0.75), with 4.4× the optimum's non-zeros.
///
/// Dual averaging (`rda = 1`, default η = 2/max‖xᵢ‖) has the optimum's zeros: within 1e-4 after
/// 200 epochs on the dense fixtures with their support, and on the sparse one within 1e-2 after
/// 50 epochs with at most 2× the optimum's non-zeros.
#[test]
fn adagrad_reaches_the_optimum() {
    for (name, solve, epochs, within, support) in [
        ("l1_logistic", "adagrad", 200, 1e-3, None),
        ("dense_l1_logistic", "adagrad", 200, 1e-3, None),
        ("sparse_l1_logistic_large", "adagrad(eta0 = 0.75)", 50, 2e-2, None),
        ("l1_logistic", "adagrad(rda = 1)", 200, 1e-4, Some(1.0)),
        ("dense_l1_logistic", "adagrad(rda = 1)", 200, 1e-4, Some(1.0)),
        ("sparse_l1_logistic_large", "adagrad(rda = 1)", 50, 1e-2, Some(2.0)),
    ] {
        let fx = fixture_named(name);
        let model = format!("{}solve with {solve}\n", fx.model);
        let r = common::run_with("adagrad", &model, &fx.data, epochs, 1, false);
        let f = r.eval.objective;
        let rel = (f - fx.best) / fx.best;
        assert!(rel <= within, "{name} ({solve}): F = {f} vs F* = {} (relative {rel:.2e})", fx.best);
        assert!(rel >= -1e-7, "{name} ({solve}): F below the optimum");
        let gap = r.outcome.gap.expect("a certificate");
        assert!(f - gap <= fx.best * (1.0 + 1e-12), "{name} ({solve}): F − gap = {} above F*", f - gap);
        if let Some(times) = support {
            let nnz = optimum_nnz(name);
            assert!(
                r.eval.nnz as f64 <= times * nnz as f64,
                "{name} ({solve}): {} non-zeros, the optimum {nnz}",
                r.eval.nnz
            );
        }
    }
}

/// F − F* relative to F* after `epochs` epochs of `model` + `solve` (through the JIT: SMIDAS's
/// steps are O(d)), checking on the way that the run's gap is a true bound.
fn relative_error_after(name: &str, solve: &str, epochs: usize) -> f64 {
    let fx = fixture_named(name);
    let model = format!("{}{solve}\n", fx.model);
    let d = read_libsvm(&fx.data).expect("fixture data");
    let plan = compile(&model, &CompileOptions::default());
    let r = common::run_plan_on(plan, &d, &RunSettings::fixed(epochs, 1), None, &fixture(""), true);
    let f = r.eval.objective;
    let gap = r.outcome.gap.expect("a certificate");
    assert!(f - gap <= fx.best * (1.0 + 1e-12), "{name} ({solve}): F − gap = {} above F* = {}", f - gap, fx.best);
    let rel = (f - fx.best) / fx.best;
    assert!(rel >= -1e-7, "{name} ({solve}): F = {f} below F* = {}", fx.best);
    rel
}

/// SMIDAS (forced, docs/algorithms.md §6) against the CVXPY optima. On the dense 200 × 50
/// l1-logistic fixture, at the η₀ = 3.16 `optc run` tunes there, it is within 6.0e-6 after
/// 200 epochs (FOBOS at its calibrated η₀: 9.1e-4; SMM: 3.6e-5). On the sparse 2000 × 5000 one (‖w*‖₁ ≈ 2300,
/// so θ must grow to thousands) it is within 3.4e-3 after 50 epochs at η₀ = 1000, the best of
/// the tuning grid after the whole run (the paper's criterion); the one-pass tuning on a
/// sample picks 316 there, which reaches 2.8e-2.
#[test]
fn smidas_reaches_the_optimum() {
    for (name, eta0, epochs, within) in
        [("dense_l1_logistic", 3.16, 200, 1e-5), ("sparse_l1_logistic_large", 1000.0, 50, 5e-3)]
    {
        let rel = relative_error_after(name, &format!("solve with smidas(eta0 = {eta0})"), epochs);
        assert!(rel <= within, "{name}: relative error {rel:.2e} after {epochs} epochs");
    }
}

/// Truncated gradient (forced) against the CVXPY optima, at the η₀ `optc run` calibrates on
/// each (1 on the dense fixture, 64 on the sparse one). It is FOBOS's ℓ1 iteration when K = 1
/// (the same bits), and reaches what FOBOS does: 9.1e-4 after 200 epochs on the dense
/// fixture, and on the sparse one only 3.8e-2 after 50 epochs — not the 1e-2 asked of it, and
/// truncating every 10 steps does not change that (3.8e-2); this pins what it reaches.
#[test]
fn truncated_gradient_reaches_what_fobos_reaches() {
    for (name, solve, epochs, within) in [
        ("dense_l1_logistic", "solve with truncated(eta0 = 1)", 200, 1e-3),
        ("sparse_l1_logistic_large", "solve with truncated(eta0 = 64)", 50, 4e-2),
        ("sparse_l1_logistic_large", "solve with truncated(every = 10, eta0 = 64)", 50, 4e-2),
    ] {
        let rel = relative_error_after(name, solve, epochs);
        assert!(rel <= within, "{name} ({solve}): relative error {rel:.2e} after {epochs} epochs");
    }
    let fobos = relative_error_after("dense_l1_logistic", "solve with fobos(eta0 = 1)", 200);
    let truncated = relative_error_after("dense_l1_logistic", "solve with truncated(eta0 = 1)", 200);
    assert_eq!(fobos.to_bits(), truncated.to_bits(), "K = 1, θ = ∞ is FOBOS's ℓ1 step");
}

/// DC on the non-convex F = mean logistic loss + λ·Σⱼ log(|wⱼ| + ε) (docs/algorithms.md §8), on the
/// 200 × 30 fixture at λ = 1e-4, ε = 0.01: the report is F itself (checked at w = 0 against
/// log 2 + λ·d·log ε); both solvers go down from there; neither claims a certificate — online
/// DC ends at its epoch cap and says why, batch DC on its reweighting settling; and online DC
/// ends below batch DC, as Mairal (2013, §4.2) reports. Reweighting from w = 0, where every
/// weight is 1/ε, settles on 8 features at F = 0.4410 (an epoch is a Newton iteration or a
/// reweighting: 17 epochs, 5 reweightings); online DC reaches F = 0.3936 in 100 epochs with 26.
#[test]
fn online_dc_ends_below_batch_dc() {
    let (lambda, eps) = (1e-4, 0.01f64);
    let model = model_text("labels", lambda, &format!("minimize E[logistic(y, <x, w>)] + λ·logeps(w, {eps})"));
    let d = read_libsvm(&fixture("binary.svm")).expect("fixture data");
    let solve = |how: &str, epochs: usize| {
        let plan = compile(&format!("{model}solve with {how}\n"), &CompileOptions::default());
        run_plan(plan, &d, &RunSettings::to_tolerance(1e-4, epochs, 1), None)
    };
    let start = solve("dc(batch = 1)", 0).eval.objective;
    let at_zero = 2f64.ln() + lambda * 30.0 * eps.ln();
    assert!((start - at_zero).abs() <= 1e-12, "F(0) = {start}, not the non-convex F {at_zero}");

    let online = solve("dc(n0 = 10)", 100);
    let batch = solve("dc(batch = 1)", 100);
    for (name, r) in [("online", &online), ("batch", &batch)] {
        assert!(r.outcome.gap.is_none() && r.plan.certificate.is_none(), "{name} DC claims a certificate");
        assert!(r.eval.objective < start - 0.1, "{name} DC: F = {} from F(0) = {start}", r.eval.objective);
    }
    assert_eq!(online.outcome.status, Status::MaxEpochs, "{}", online.outcome.rule);
    assert!(online.outcome.rule.contains("non-convex F"), "{}", online.outcome.rule);
    assert_eq!(batch.outcome.status, Status::Converged, "{}", batch.outcome.rule);
    assert!(batch.outcome.rule.contains("reweighting settled"), "{}", batch.outcome.rule);
    assert!(batch.outcome.epochs < 100, "batch DC settles before the cap: {}", batch.outcome.epochs);
    assert!(
        online.eval.objective <= batch.eval.objective,
        "online DC F = {} (nnz {}) vs batch DC F = {} (nnz {})",
        online.eval.objective,
        online.eval.nnz,
        batch.eval.objective,
        batch.eval.nnz
    );
}

/// Early stopping (`--holdout`): with no penalty, FOBOS overfits the 140 training rows, the
/// held-out loss turns up, and the run stops `patience` epochs after its best epoch. The
/// weights it returns are that epoch's: a run of exactly that many epochs (same seed, same
/// rows) ends with the same bits.
#[test]
fn holdout_returns_the_best_epoch_and_stops_after_patience() {
    use optc::exec::driver::{run_watched, Watch};
    use optc::exec::interp::Interpreter;
    let model =
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)]\nsolve with fobos(eta0 = 16)\n";
    let plan = compile(model, &CompileOptions::default());
    let d = read_libsvm(&fixture("binary.svm")).expect("fixture");
    let (rest, held) = d.split(0.3, 1);
    let map = optc::data::LabelMap::fit(optc::stdlib::LabelKind::Labels, &rest).expect("labels");
    let (y, hy) = (map.apply(&rest).expect("labels"), map.apply(&held).expect("labels"));
    let view = rest.view(&y, rest.features());
    let held_view = held.view(&hy, rest.features());
    let facts = rest.complete_facts(&plan, rest.facts());
    let patience = 3;
    let watch = Watch { test: None, holdout: Some((&held_view, patience)) };
    let settings = RunSettings::fixed(300, 1);
    let stopped = run_watched(&plan, &mut Interpreter { plan: &plan }, &view, &facts, &settings, None, watch)
        .expect("no divergence");
    assert_eq!(stopped.status, Status::EarlyStopped, "{}", stopped.rule);
    let h = stopped.holdout.clone().expect("a holdout record");
    assert!(h.stopped && h.best_epoch >= 1);
    assert_eq!(stopped.epochs, h.best_epoch + patience);
    let fixed = RunSettings::fixed(h.best_epoch, 1);
    let again = run_watched(&plan, &mut Interpreter { plan: &plan }, &view, &facts, &fixed, None, Watch::default())
        .expect("no divergence");
    assert_eq!(stopped.state.weights(&plan), again.state.weights(&plan), "the best epoch's weights");
    let loss = optc::exec::evaluate::evaluate(&plan, &stopped.state, &held_view).loss;
    assert_eq!(loss.to_bits(), h.best_loss.to_bits());
}

/// The optimal (w, b) of a fixture with an intercept.
fn optimum_with_intercept(name: &str) -> (Vec<f64>, f64) {
    let text = std::fs::read_to_string(fixture("optima.json")).expect("optima.json");
    let all: serde_json::Value = serde_json::from_str(&text).expect("optima.json parses");
    let f = &all["fixtures"][name];
    let w = f["w"].as_array().expect("w").iter().map(|v| v.as_f64().expect("a number")).collect();
    (w, f["b"].as_f64().expect("an intercept"))
}

/// An unregularized intercept (`var b: scalar`, margins ⟨x, w⟩ + b) on data whose mean is far
/// from 0: SCD, the default, certifies 1e-4 and, asked for 1e-9, lands on CVXPY's (w, b);
/// proxgrad certifies 1e-6. The gap stays a true bound though the dual needs Σᵢ uᵢ = 0.
#[test]
fn the_intercept_reaches_the_optimum_with_its_certificate() {
    for name in ["lasso_intercept", "l1_logistic_intercept", "elastic_logistic_intercept"] {
        let (solver, _) = solve_to(name, None, 1e-4, 1000);
        assert_eq!(solver, "scd", "{name}");
        solve_to(name, Some("proxgrad"), 1e-6, 20000);
        let fx = fixture_named(name);
        let plan = compile(&fx.model, &CompileOptions::default());
        let d = read_libsvm(&fx.data).expect("fixture data");
        let r = run_plan(plan, &d, &RunSettings::to_tolerance(1e-9, 1000, 1), None);
        let (w_star, b_star) = optimum_with_intercept(name);
        let b = r.outcome.state.intercept(&r.plan);
        assert!((b - b_star).abs() <= 1e-4 * (1.0 + b_star.abs()), "{name}: b = {b} vs b* = {b_star}");
        let w = r.outcome.state.weights(&r.plan);
        let far = w.iter().zip(&w_star).map(|(a, c)| (a - c).abs()).fold(0.0, f64::max);
        assert!(far <= 1e-3, "{name}: max |w − w*| = {far:.1e}");
    }
}

/// A free intercept on one-hot groups (a9a's shape: b's column is the sum of each group's) is
/// one more coordinate of the certificate's Newton refinement, so SCD certifies
/// 1e-8 for ℓ1 and ½‖·‖² in a few epochs, on CVXPY's F* (and under ½‖·‖², whose optimum is
/// unique, on its b: ℓ1 can leave b free along a stretch where a group's weights straddle 0);
/// without b in the Newton steps the coordinate steps crawl along the flat direction.
#[test]
fn a_free_intercept_on_one_hot_groups_is_certified_in_a_few_epochs() {
    for name in ["one_hot_l1_logistic_intercept", "one_hot_l2_logistic_intercept", "one_hot_sqhinge_l1_intercept"] {
        // ½‖·‖² goes to SCD where the data's shape is known (d ≤ FEW_FEATURES), to tron here.
        let (solver, epochs) = solve_to(name, Some("scd"), 1e-8, 1000);
        assert_eq!(solver, "scd", "{name}");
        assert!(epochs <= 5, "{name}: {epochs} epochs to a certified 1e-8");
        if name.contains("l1") {
            continue;
        }
        assert_lands_on_b(name, "scd", 1e-10, 1000);
    }
}

/// newGLMNET's own epochs, with no certificate to refine them (a fixed epoch count), centre the
/// columns for a free b (glmnet's implicit centering): on one-hot groups, whose sum is b's
/// column, and on plain data, a few epochs reach CVXPY's F*. With b a separate coordinate of the
/// quadratic model, each step on wⱼ was taken at the uncentred curvature and undone by b's.
#[test]
fn newglmnet_centres_the_columns_for_a_free_intercept() {
    // Before, the one-hot sets were 5.3e-5 and 6.6e-6 above F* at these counts.
    for (name, epochs) in
        [("one_hot_l1_logistic_intercept", 12), ("l1_logistic_intercept", 12), ("one_hot_l2_logistic_intercept", 20)]
    {
        let fx = fixture_named(name);
        let d = read_libsvm(&fx.data).expect("fixture data");
        let opts = CompileOptions { solver: Some("scd".into()), ..Default::default() };
        let r = run_plan(compile(&fx.model, &opts), &d, &RunSettings::fixed(epochs, 1), None);
        let rel = (r.eval.objective - fx.best) / fx.best;
        assert!(rel <= 1e-6, "{name}: F after {epochs} epochs is {rel:.1e} above F*");
    }
}

/// Softmax with ℓ1 on W and per-class offsets (glmnet's multinomial lasso): proxgrad fits the
/// offsets beside W and certifies CVXPY's F*, the dual point balanced per class.
#[test]
fn softmax_with_l1_fits_per_class_intercepts() {
    let (solver, _) = solve_to("softmax_l1_intercept", None, 1e-6, 20000);
    assert_eq!(solver, "proxgrad");
}

/// The certificate's Newton steps on every entry of W (few features), from which proxgrad
/// continues: softmax with ℓ1, with and without per-class offsets, certifies 1e-6 on CVXPY's F*
/// within 50 epochs, where proximal gradient alone took hundreds.
#[test]
fn softmax_with_l1_is_certified_in_a_few_epochs() {
    for name in ["softmax_l1", "softmax_l1_intercept"] {
        let plan = compile(&fixture_named(name).model, &CompileOptions::default());
        assert!(plan.refines_certificate(), "{name}");
        let (solver, epochs) = solve_to(name, None, 1e-6, 50);
        assert_eq!(solver, "proxgrad", "{name}");
        assert!(epochs <= 50, "{name}: {epochs} epochs");
    }
}

/// `solver` run on fixture `name` to `tol` (at most `cap` epochs) ends with b within 1e-3 of
/// CVXPY's b* (relative to 1 + |b*|).
fn assert_lands_on_b(name: &str, solver: &str, tol: f64, cap: usize) {
    let fx = fixture_named(name);
    let d = read_libsvm(&fx.data).expect("fixture data");
    let opts = CompileOptions { solver: Some(solver.into()), ..Default::default() };
    let r = run_plan(compile(&fx.model, &opts), &d, &RunSettings::to_tolerance(tol, cap, 1), None);
    let (_, b_star) = optimum_with_intercept(name);
    let b = r.outcome.state.intercept(&r.plan);
    assert!((b - b_star).abs() <= 1e-3 * (1.0 + b_star.abs()), "{name} ({solver}): b = {b} vs b* = {b_star}");
}

/// The SVMs and logistic with a free intercept (b unpenalised): dual CD keeps the dual's
/// Σ αᵢyᵢ = 0 by an augmented Lagrangian, so the hinge, the default's choice, and the squared
/// hinge and logistic forced to dcd certify 1e-6 on CVXPY's F* (solve_to checks F − gap ≤ F* at
/// the end, and here at every early stop too) and land on its b; the hinge with b is no longer
/// FOBOS's, which stopped at its epoch cap.
#[test]
fn dual_cd_fits_a_free_intercept_with_its_certificate() {
    for (name, solver) in
        [("svm_intercept", None), ("sqhinge_intercept", Some("dcd")), ("one_hot_l2_logistic_intercept", Some("dcd"))]
    {
        let (chosen, _) = solve_to(name, solver, 1e-6, 100_000);
        assert_eq!(chosen, "dcd", "{name}");
        let fx = fixture_named(name);
        let d = read_libsvm(&fx.data).expect("fixture data");
        let opts = CompileOptions { solver: Some("dcd".into()), ..Default::default() };
        for n in [1, 2, 5, 20] {
            let r = run_plan(compile(&fx.model, &opts), &d, &RunSettings::fixed(n, 1), None);
            let gap = r.outcome.gap.expect("certificate");
            assert!(gap.is_finite(), "{name}: no finite gap after {n} epochs");
            let f = r.eval.objective;
            assert!(f - gap <= fx.best * (1.0 + 1e-12), "{name}, {n} epochs: F − gap = {} > F* = {}", f - gap, fx.best);
        }
        assert_lands_on_b(name, "dcd", 1e-9, 100_000);
    }
}

/// The hinge's augmented Lagrangian method (`alm`, the default on few features under a weak
/// ridge): without b, with a free b (a large one too) and with a penalised one, it certifies 1e-8
/// on CVXPY's F* and lands on its b; F − gap bounds F* after every epoch along the way.
#[test]
fn alm_certifies_the_hinge_on_the_cvxpy_optima() {
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("optima.json")).expect("optima")).expect("json");
    for name in ["svm", "svm_small_lambda", "svm_intercept", "svm_skewed_intercept", "svm_bias"] {
        let (solver, _) = solve_to(name, Some("alm"), 1e-8, 200);
        assert_eq!(solver, "alm", "{name}");
        let fx = fixture_named(name);
        let d = read_libsvm(&fx.data).expect("fixture data");
        let opts = CompileOptions { solver: Some("alm".into()), ..Default::default() };
        for n in [1, 2, 3, 5, 8] {
            let r = run_plan(compile(&fx.model, &opts), &d, &RunSettings::fixed(n, 1), None);
            let gap = r.outcome.gap.expect("certificate");
            let f = r.eval.objective;
            assert!(f - gap <= fx.best * (1.0 + 1e-12), "{name}, {n} epochs: F − gap = {} > F* = {}", f - gap, fx.best);
        }
        if let Some(b_star) = all["fixtures"][name]["b"].as_f64() {
            let r = run_plan(compile(&fx.model, &opts), &d, &RunSettings::to_tolerance(1e-10, 200, 1), None);
            let b = r.outcome.state.intercept(&r.plan);
            assert!((b - b_star).abs() <= 1e-4 * (1.0 + b_star.abs()), "{name}: b = {b}, CVXPY's {b_star}");
        }
    }
}

/// A large intercept (classes 90% one way: b* from 0.75 to 1.95) under every ℓ2 solver that
/// fits a free b, the default's choice first: each certifies 1e-6 on CVXPY's F* and lands on
/// its b.
#[test]
fn a_large_free_intercept_is_certified_by_every_l2_solver() {
    for (name, solvers) in [
        ("svm_skewed_intercept", &[None, Some("dcd")][..]),
        ("sqhinge_skewed_intercept", &[None, Some("dcd"), Some("tron")][..]),
        ("l2_logistic_skewed_intercept", &[None, Some("dcd"), Some("tron"), Some("scd")][..]),
    ] {
        let (_, b_star) = optimum_with_intercept(name);
        assert!(b_star.abs() > 0.7, "{name}: b* = {b_star}");
        for &solver in solvers {
            let (chosen, _) = solve_to(name, solver, 1e-6, 100_000);
            assert_lands_on_b(name, &chosen, 1e-9, 100_000);
        }
    }
}

/// Every solver that fits an intercept keeps F − gap ≤ F* along the run, and the stochastic
/// ones get close to the optimum: their steps move b as an unpenalized coordinate.
#[test]
fn the_intercept_is_fitted_by_every_solver_that_takes_it() {
    for (name, solver, epochs, within) in [
        ("lasso_intercept", "scd", 20, 1e-6),
        ("l1_logistic_intercept", "scd", 20, 1e-6),
        ("lasso_intercept", "proxgrad", 2000, 1e-4),
        ("l1_logistic_intercept", "proxgrad", 2000, 1e-4),
        ("lasso_intercept", "fobos", 300, 5e-3),
        ("l1_logistic_intercept", "fobos", 300, 5e-3),
        ("lasso_intercept", "smm", 200, 5e-3),
        ("l1_logistic_intercept", "smm", 200, 1e-2),
        ("l1_logistic_intercept", "adagrad", 200, 5e-2),
        ("l1_logistic_intercept", "smidas", 100, 5e-2),
        ("l1_logistic_intercept", "truncated", 300, 5e-3),
    ] {
        let fx = fixture_named(name);
        let opts = CompileOptions { solver: Some(solver.into()), ..Default::default() };
        let d = read_libsvm(&fx.data).expect("fixture data");
        for n in [1, 3, epochs] {
            let r = run_plan(compile(&fx.model, &opts), &d, &RunSettings::fixed(n, 3), None);
            let gap = r.outcome.gap.expect("certificate");
            let f = r.eval.objective;
            assert!(f - gap <= fx.best * (1.0 + 1e-12), "{name} ({solver}, {n} epochs): F − gap = {} > F*", f - gap);
            assert!(f >= fx.best * (1.0 - 1e-7), "{name} ({solver}): below the optimum");
            if n == epochs {
                let rel = (f - fx.best) / fx.best;
                eprintln!(
                    "{name} ({solver}, {n} epochs): relative {rel:.2e}, b = {}",
                    r.outcome.state.intercept(&r.plan)
                );
                assert!(rel <= within, "{name} ({solver}): F = {f} vs F* = {} (relative {rel:.2e})", fx.best);
            }
        }
    }
}

/// tron (Newton-CG, docs/algorithms.md §11) on ½‖·‖² alone, a scalar loss and softmax on W: asked for
/// a certified 1e-8 it lands on CVXPY's optimum within 1e-8 (plus CVXPY's own error) in a few
/// Newton iterations, where the forcing term of its CG makes the local rate quadratic.
#[test]
fn tron_reaches_the_optimum_in_a_few_newton_iterations() {
    for name in ["l2_logistic", "softmax_l2sq"] {
        let (solver, epochs) = solve_to(name, Some("tron"), 1e-8, 100);
        assert_eq!(solver, "tron");
        assert!(epochs <= 12, "{name}: {epochs} Newton iterations to 1e-8");
    }
}

/// An unregularized intercept is one more Newton coordinate: tron lands on the (F, b) that SCD
/// certifies at 1e-10 (SCD's intercept is checked against CVXPY above), for the logistic loss
/// and for the squared loss, whose ℓ″ is the constant 1; F − gap stays below that F along the
/// run.
#[test]
fn tron_fits_the_intercept_that_scd_certifies() {
    for (data, objective) in [
        ("offset_binary.svm", "minimize E[logistic(y, <x, w> + b)] + λ·l2sq(w)"),
        ("offset_regression.svm", "minimize E[squared(y, <x, w> + b)] + λ·l2sq(w)"),
    ] {
        let kind = if data.contains("regression") { "real" } else { "labels" };
        let model =
            model_text(kind, 0.01, objective).replace("var w: vec[dim(x)]\n", "var w: vec[dim(x)]\nvar b: scalar\n");
        let d = read_libsvm(&fixture(data)).expect("fixture data");
        let solve = |solver: &str, settings: &RunSettings| {
            let opts = CompileOptions { solver: Some(solver.into()), ..Default::default() };
            run_plan(compile(&model, &opts), &d, settings, None)
        };
        let reference = solve("scd", &RunSettings::to_tolerance(1e-10, 1000, 1));
        let best = reference.eval.objective;
        let r = solve("tron", &RunSettings::to_tolerance(1e-10, 100, 1));
        assert_eq!(r.outcome.status, Status::Converged, "{objective}: {}", r.outcome.rule);
        let f = r.eval.objective;
        assert!((f - best).abs() <= 1e-9 * best, "{objective}: tron F = {f} vs scd F = {best}");
        let (b, b_ref) = (r.outcome.state.intercept(&r.plan), reference.outcome.state.intercept(&reference.plan));
        assert!((b - b_ref).abs() <= 1e-5 * (1.0 + b_ref.abs()), "{objective}: b = {b} vs {b_ref}");
        for epochs in [1, 2, 5] {
            let r = solve("tron", &RunSettings::fixed(epochs, 1));
            let gap = r.outcome.gap.expect("certificate");
            assert!(r.eval.objective - gap <= best * (1.0 + 1e-12), "{objective} ({epochs} epochs): F − gap above F*");
        }
    }
}

/// Copies of columns change neither F* nor the weights of the columns they copy, under ℓ1
/// alone: the SCD run on sparse_large with 40 of its columns copied (the 30 largest weights of
/// the optimum and 10 zeros, each copy after its column) reaches CVXPY's F* on the original
/// data with a true gap, keeps every copy at zero and gives each copied column the optimum's
/// weight. A warm start that splits those weights between the columns and their copies is
/// folded back onto the columns.
#[test]
fn copied_columns_keep_their_weight_on_the_first_of_their_kind() {
    let fx = fixture_named("sparse_l1_logistic_large");
    let text = std::fs::read_to_string(fixture("optima.json")).expect("optima.json");
    let all: serde_json::Value = serde_json::from_str(&text).expect("optima.json parses");
    let best: Vec<f64> = all["fixtures"]["sparse_l1_logistic_large"]["w"]
        .as_array()
        .expect("w")
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect();
    let d = read_libsvm(&fx.data).expect("fixture data");
    let features = d.features();
    let mut order: Vec<usize> = (0..features).collect();
    order.sort_by(|&a, &b| best[b].abs().total_cmp(&best[a].abs()));
    let zeros = (0..features).filter(|&j| best[j] == 0.0 || best[j].abs() < 1e-8).step_by(97).take(10);
    let copied: Vec<usize> = order.into_iter().take(30).chain(zeros).collect();
    // The copy of copied[k] is column features + k (1-based in the file: one more).
    let (indptr, indices, values) = d.csr();
    let mut lines = String::new();
    for i in 0..d.rows() {
        lines.push_str(&format!("{}", d.labels[i]));
        let mut extra = vec![];
        for p in indptr[i]..indptr[i + 1] {
            let j = indices[p] as usize;
            lines.push_str(&format!(" {}:{:e}", j + 1, values[p]));
            if let Some(k) = copied.iter().position(|&c| c == j) {
                extra.push((features + k, values[p]));
            }
        }
        extra.sort_by_key(|e| e.0);
        for (j, v) in extra {
            lines.push_str(&format!(" {}:{:e}", j + 1, v));
        }
        lines.push('\n');
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let data = common::write(dir.path(), "copied.svm", &lines);
    let wide = read_libsvm(&data).expect("the copied data reads");
    assert_eq!(wide.features(), features + copied.len());
    let opts = CompileOptions { solver: Some("scd".into()), ..Default::default() };
    let check = |r: &common::Run, what: &str| {
        let w = &r.outcome.state.vectors[r.plan.weights().expect("w").0];
        let gap = r.outcome.gap.expect("a gap");
        assert_eq!(r.outcome.status, Status::Converged, "{what}");
        assert!(r.eval.objective - gap <= fx.best * (1.0 + 1e-12), "{what}: F − gap above F*");
        assert!(
            (r.eval.objective - fx.best).abs() <= 1e-6 * fx.best,
            "{what}: F {} against F* {}",
            r.eval.objective,
            fx.best
        );
        for (k, &j) in copied.iter().enumerate() {
            assert_eq!(w[features + k], 0.0, "{what}: the copy of column {j} carries weight");
            assert!(
                (w[j] - best[j]).abs() <= 1e-3 * (1.0 + best[j].abs()),
                "{what}: w[{j}] = {} against {}",
                w[j],
                best[j]
            );
        }
    };
    let cold = run_plan(compile(&fx.model, &opts), &wide, &RunSettings::to_tolerance(1e-8, 10_000, 1), None);
    check(&cold, "cold");
    let mut start = cold.outcome.state.clone();
    let slot = cold.plan.weights().expect("w").0;
    for (k, &j) in copied.iter().enumerate() {
        let half = start.vectors[slot][j] / 2.0;
        start.vectors[slot][j] = half;
        start.vectors[slot][features + k] = half;
    }
    let warm = run_plan(compile(&fx.model, &opts), &wide, &RunSettings::to_tolerance(1e-8, 10_000, 1), Some(start));
    check(&warm, "warm");
}

/// The regression losses with a constant after the margin, with ℓ1 and with ½‖w‖², with and
/// without b, on data where a good share of the residuals is on each side of the constant:
/// Huber's (the default solver: tron for ½‖w‖², SCD's curvature-bound steps beside ℓ1), the
/// squared ε-insensitive loss (tron, SCD's Newton steps on its generalized Hessian), the
/// pinball and ε-insensitive losses (the primal-dual method, its dual prox clamped to the
/// conjugate's box, and beside ½‖w‖² alone dual CD on their box duals, LIBLINEAR's SVR steps,
/// with a free b under the augmented Lagrangian of Σᵢ βᵢ = 0),
/// and Poisson's, whose ℓ″ = exp(a) has no bound (tron, SCD's Newton steps),
/// reach the CVXPY optima, and each gap is a true bound.
#[test]
fn regression_losses_reach_the_optimum_with_their_certificate() {
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("optima.json")).expect("optima")).expect("json");
    let (pdhg, smooth) = (Some("pdhg"), &[None, Some("proxgrad"), Some("pdhg")][..]);
    for (name, solvers) in [
        ("huber_l2sq", &[None, Some("scd"), Some("proxgrad"), pdhg][..]),
        ("huber_l1_intercept", smooth),
        ("huber_elastic", &[None, Some("proxgrad")][..]),
        ("squared_eps_insensitive_l2sq", &[None, Some("scd"), Some("proxgrad"), Some("dcd"), pdhg][..]),
        ("squared_eps_insensitive_l1_intercept", smooth),
        ("quantile_l1_intercept", &[None][..]),
        ("quantile_l2sq", &[None, pdhg][..]),
        ("eps_insensitive_l1", &[None][..]),
        ("eps_insensitive_l2sq", &[None, pdhg][..]),
        ("eps_insensitive_l2sq_intercept", &[None, pdhg][..]),
        ("quantile_l2sq_intercept", &[None, pdhg][..]),
        ("squared_eps_insensitive_l2sq_intercept", &[None, Some("dcd")][..]),
        ("poisson_l1_intercept", &[None][..]),
        ("poisson_l2sq", &[None, Some("scd")][..]),
        ("poisson_elastic_intercept", &[None][..]),
    ] {
        let nonsmooth = name.starts_with("quantile") || name.starts_with("eps");
        for &solver in solvers {
            let tol = if solver == pdhg || nonsmooth { 1e-4 } else { 1e-7 };
            let (used, _) = solve_to(name, solver, tol, 100_000);
            // A box dual beside ½‖w‖² takes dual CD by default, with a free b too.
            if solver.is_none() && name.ends_with("_l2sq_intercept") && nonsmooth {
                assert_eq!(used, "dcd", "{name}");
            }
        }
        // The intercept of a smooth loss's optimum is unique; a piecewise linear one's need not be.
        if let (false, Some(b_star)) = (nonsmooth, all["fixtures"][name]["b"].as_f64()) {
            let fx = fixture_named(name);
            let d = read_libsvm(&fx.data).expect("fixture data");
            let r = run_plan(
                compile(&fx.model, &CompileOptions::default()),
                &d,
                &RunSettings::to_tolerance(1e-10, 100_000, 1),
                None,
            );
            let b = r.outcome.state.intercept(&r.plan);
            assert!((b - b_star).abs() <= 1e-4 * (1.0 + b_star.abs()), "{name}: b = {b}, CVXPY's {b_star}");
        }
    }
}

/// A penalised b (`λ·l2sq(b)`, LIBLINEAR's `-B 1`) under dual CD on the box duals is the weight
/// of a feature of value 1 on every row: the model with b reaches the optimum of the model
/// without b on the data with that column appended, and its gap is a true bound for it.
#[test]
fn a_penalised_intercept_under_svr_dual_cd_is_a_constant_feature() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rows = std::fs::read_to_string(fixture("offset_regression.svm")).expect("fixture");
    let widened: String = rows.lines().map(|l| format!("{l} 31:1\n")).collect();
    let wide = common::write(dir.path(), "wide.svm", &widened);
    let (narrow, wide) =
        (read_libsvm(&fixture("offset_regression.svm")).expect("fixture"), read_libsvm(&wide).expect("widened"));
    let head = "data x: sparse, y: real\nvar w: vec[dim(x)]\n";
    for loss in
        ["eps_insensitive(y, <x, w>, 0.1)", "quantile(y, <x, w>, 0.7)", "squared_eps_insensitive(y, <x, w>, 0.1)"]
    {
        let plain = format!("{head}minimize E[{loss}] + 0.01·l2sq(w)\nsolve with dcd\n");
        let with_b = format!(
            "{head}var b: scalar\nminimize E[{}] + 0.01·l2sq(w) + 0.01·l2sq(b)\nsolve with dcd\n",
            loss.replace("<x, w>", "<x, w> + b")
        );
        let settings = RunSettings::to_tolerance(1e-9, 200_000, 1);
        let best = run_plan(compile(&plain, &CompileOptions::default()), &wide, &settings, None);
        let r = run_plan(compile(&with_b, &CompileOptions::default()), &narrow, &settings, None);
        for run in [&best, &r] {
            assert_eq!(run.outcome.status, Status::Converged, "{loss}: {}", run.outcome.rule);
        }
        let (f, f_star) = (r.eval.objective, best.eval.objective);
        assert!((f - f_star).abs() <= 1e-7 * f_star, "{loss}: F = {f} with b, {f_star} with the column");
        let gap = r.outcome.gap.expect("a certificate");
        assert!(f - gap <= f_star * (1.0 + 1e-9), "{loss}: F − gap = {} above F* = {f_star}", f - gap);
        let b = r.outcome.state.intercept(&r.plan);
        let column = best.outcome.state.weights(&best.plan)[30];
        assert!((b - column).abs() <= 1e-3 * (1.0 + column.abs()), "{loss}: b = {b}, the column's weight {column}");
    }
}
