//! Batch solvers on rows split across ranks (`mpirun -np N optc run` without `--stream`; here
//! the ranks are threads): each rank holds a share of the rows, the plan's sums over the rows
//! are added up across the ranks inside each epoch (`plan::distribute`), and the run certifies
//! the whole data's problem. Checked against CVXPY's optima on the committed fixtures, against
//! one process, and between the interpreter and the JIT; plans whose steps over the rows are
//! sequential are refused with the reason.

mod common;

use common::{compile, fixture_named};
use optc::data::{read_libsvm, Dataset, LabelMap};
use optc::exec::collective::{Collective, Threads};
use optc::exec::driver::RunSettings;
use optc::exec::select_backend;
use optc::exec::stream::{Rows, StreamOutcome};
use optc::pipeline::CompileOptions;
use optc::plan::{distribute, Plan};
use optc::stdlib::LabelKind;

/// `d`'s rows cut into `n` contiguous shares, in order.
fn shares(d: &Dataset, n: usize) -> Vec<Dataset> {
    let m = d.rows();
    (0..n).map(|k| d.rows_between(k * m / n..(k + 1) * m / n)).collect()
}

/// `solve` on `n` ranks (threads), each with its share of `d` (its rows, their labels mapped, and
/// the whole data's facts): every rank's outcome, in rank order.
fn threads<T: Send, F>(d: &Dataset, n: usize, solve: F) -> Vec<T>
where
    F: Fn(&Threads, &Dataset, &optc::exec::DataView, optc::data::DataFacts) -> T + Sync,
{
    let kind = match &d.name {
        name if name.contains("regression") => LabelKind::Real,
        name if name.contains("multiclass") => LabelKind::Classes,
        _ => LabelKind::Labels,
    };
    let map = LabelMap::fit(kind, d).expect("labels");
    let classes = if kind == LabelKind::Classes { map.originals.len() } else { 0 };
    let features = d.features();
    let parts = shares(d, n);
    let ranks = Threads::group(n, std::time::Duration::from_secs(60));
    let solve = &solve;
    std::thread::scope(|s| {
        let handles: Vec<_> = ranks
            .iter()
            .zip(&parts)
            .map(|(rank, part)| {
                let map = map.clone();
                s.spawn(move || {
                    let y = map.apply(part).expect("labels map");
                    let facts = optc::data::DataFacts { features, classes, ..d.facts() };
                    solve(rank, part, &part.view(&y, features).with_classes(classes), facts)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("no panic")).collect()
    })
}

/// `plan` on `n` ranks, λ_max(XᵀX) found by the ranks' summed power iteration.
/// A composite term's operator B, which each rank binds for itself, as `optc run` does.
fn on_ranks(plan: &Plan, d: &Dataset, n: usize, settings: &RunSettings, jit: bool) -> Vec<StreamOutcome> {
    let operator = plan
        .objective
        .composite
        .as_ref()
        .map(|c| optc::data::operator::bind(c, d.features(), &common::fixture("")).expect("the operator binds"));
    threads(d, n, |rank, part, view, mut facts| {
        if optc::data::needs_gram(plan) {
            let mut sum = |v: &mut [f64]| rank.sum(v);
            facts.gram_norm = Some(part.gram_norm_summed(facts.features, d.rows(), &mut sum).expect("reduces"));
        }
        facts.op_rows = operator.as_ref().map_or(0, |b| b.rows);
        let mut selected = select_backend(plan, &facts, jit);
        let rows = Rows::Resident(view.with_operator(operator.as_ref()), &part.lines);
        optc::exec::stream::run(plan, selected.backend.as_mut(), rows, &facts, settings, rank).expect("no stop")
    })
}

fn split(model: &str) -> Plan {
    distribute(&compile(model, &CompileOptions::default())).expect("its sums over the rows split")
}

/// FISTA (ℓ1, elastic net, a box, the lasso, vector terms) and TRON (½‖w‖²) on 2 and 3 ranks certify the
/// fixture's problem: every rank ends with the same weights and gap, the gap bounds F − F*
/// against CVXPY's F*, and meets the tolerance.
#[test]
fn split_rows_certify_the_whole_problem_against_cvxpy() {
    let cases = [
        ("l1_logistic", "proxgrad"),
        ("elastic_logistic", "proxgrad"),
        ("box_logistic", "proxgrad"),
        ("lasso", "proxgrad"),
        ("nonneg_lasso", "proxgrad"),
        ("l2_logistic", "tron"),
        ("sqhinge_l2sq", "tron"),
        ("l2_logistic_small_lambda", "tron"),
        // Vector terms: the prox of the whole w runs on every rank alike after the reduced
        // gradient, and the certificate's R* is the term's.
        ("l2norm_logistic", "proxgrad"),
        ("linf_logistic", "proxgrad"),
        ("sparse_group_logistic", "proxgrad"),
        ("ridge_linf_logistic", "proxgrad"),
        ("l2ball_logistic", "proxgrad"),
        ("l1ball_least_squares", "proxgrad"),
        ("simplex_least_squares", "proxgrad"),
        ("ridge_l2ball_least_squares", "proxgrad"),
        // A regularized intercept: b is one more coordinate, its sum Σᵢ uᵢ reduced too.
        ("l2_logistic_bias", "tron"),
        ("sqhinge_bias", "tron"),
        // A free intercept: the dual point balanced to Σᵢ uᵢ = 0 by a move Xᵀ passes through.
        ("l1_logistic_intercept", "proxgrad"),
        ("lasso_intercept", "proxgrad"),
        // Softmax: Xᵀu is d × k, every class's offsets balanced with one more maximum.
        ("softmax_l1", "proxgrad"),
        ("softmax_l1l2", "proxgrad"),
        ("softmax_l1inf", "proxgrad"),
        ("softmax_nuclear", "proxgrad"),
        ("softmax_centered_trace", "proxgrad"),
        ("softmax_l2sq", "tron"),
        ("softmax_l2sq_intercept", "tron"),
        // Disjoint groups: the operator B acts on w alone, each rank binding its own.
        ("disjoint_group_logistic", "proxgrad"),
        ("disjoint_group_ridge", "proxgrad"),
    ];
    for (name, solver) in cases {
        let fx = fixture_named(name);
        let plan = split(&format!("{}solve with {solver}\n", fx.model));
        let d = read_libsvm(&fx.data).expect("reads");
        let tol = 1e-6;
        for n in [2, 3] {
            let runs = on_ranks(&plan, &d, n, &RunSettings::to_tolerance(tol, 20_000, 1), true);
            let first = &runs[0].outcome;
            for other in &runs[1..] {
                let o = &other.outcome;
                assert_eq!(o.state.weights(&plan), first.state.weights(&plan), "{name} on {n}: the ranks' weights");
                assert_eq!((o.eval.objective, o.gap), (first.eval.objective, first.gap), "{name} on {n}");
            }
            let (f, gap) = (first.eval.objective, first.gap.expect("a gap"));
            assert_eq!(first.status, optc::exec::driver::Status::Converged, "{name} on {n}: {}", first.rule);
            assert!(gap <= tol * f.abs(), "{name} on {n}: gap {gap}");
            assert!(
                f - fx.best <= gap + 1e-7 * fx.best.abs(),
                "{name} on {n}: F − F* = {} above the gap {gap}",
                f - fx.best
            );
            assert!(fx.best - f <= 1e-7 * fx.best.abs(), "{name} on {n}: F {f} below CVXPY's F* {}", fx.best);
        }
    }
}

/// With a free intercept the dual point must sum to 0, which ℓ′ does only where b is optimal:
/// early iterates, far from it, still get a gap that bounds F − F* (the balanced point), and
/// the gap a check gives is the same on every rank.
#[test]
fn early_gaps_on_split_rows_bound_the_distance_to_the_optimum() {
    for (name, solver) in
        [("l1_logistic_intercept", "proxgrad"), ("lasso_intercept", "proxgrad"), ("softmax_l2sq_intercept", "tron")]
    {
        let fx = fixture_named(name);
        let plan = split(&format!("{}solve with {solver}\n", fx.model));
        let d = read_libsvm(&fx.data).expect("reads");
        for epochs in [1, 2, 3, 5] {
            let runs = on_ranks(&plan, &d, 2, &RunSettings::fixed(epochs, 1), true);
            let first = &runs[0].outcome;
            assert_eq!(runs[1].outcome.gap, first.gap, "{name} after {epochs}");
            let (f, gap) = (first.eval.objective, first.gap.expect("a gap"));
            assert!(gap.is_finite(), "{name} after {epochs}: gap {gap}");
            assert!(
                f - gap <= fx.best * (1.0 + 1e-12),
                "{name} after {epochs}: F {f} − gap {gap} above F* {}",
                fx.best
            );
        }
    }
}

/// Composite terms without a closed-form dual (a fused lasso, a graph's total variation,
/// overlapping groups) split too, each rank applying its own B: the run stops on the relative
/// change of F, as alone, at CVXPY's F*.
#[test]
fn operators_on_split_rows_reach_the_optimum() {
    for name in ["fused_lasso", "graph_tv_logistic", "overlapping_group_lasso", "overlapping_group_linf"] {
        let fx = fixture_named(name);
        let plan = split(&format!("{}solve with proxgrad\n", fx.model));
        let d = read_libsvm(&fx.data).expect("reads");
        let runs = on_ranks(&plan, &d, 2, &RunSettings::to_tolerance(1e-9, 20_000, 1), true);
        let first = &runs[0].outcome;
        assert_eq!(runs[1].outcome.state.weights(&plan), first.state.weights(&plan), "{name}: the ranks' weights");
        assert_eq!(first.status, optc::exec::driver::Status::Converged, "{name}: {}", first.rule);
        assert!(first.gap.is_none(), "{name}: no closed-form dual, as in one process");
        let f = first.eval.objective;
        assert!((f - fx.best).abs() <= 1e-6 * fx.best.abs(), "{name}: F {f} against CVXPY's F* {}", fx.best);
    }
}

/// The interpreter and the JIT take the same steps on split rows, bit for bit; one rank is the
/// plan run alone; two ranks' F is one process's to the tolerance.
#[test]
fn split_rows_agree_across_back_ends_and_with_one_process() {
    for (name, solver) in [("l1_logistic", "proxgrad"), ("l2_logistic", "tron")] {
        let fx = fixture_named(name);
        let plan = split(&format!("{}solve with {solver}\n", fx.model));
        let d = read_libsvm(&fx.data).expect("reads");
        let fixed = RunSettings::fixed(5, 1);
        let jit = on_ranks(&plan, &d, 2, &fixed, true);
        let interp = on_ranks(&plan, &d, 2, &fixed, false);
        // Every buffer (locals are the interpreter's alone to keep).
        assert_eq!(jit[0].outcome.state.vectors, interp[0].outcome.state.vectors, "{name}: JIT and interpreter");
        assert_eq!(jit[0].outcome.eval.objective, interp[0].outcome.eval.objective, "{name}");
        // One rank: the reductions do nothing, and the run is the plain plan's; but tron's plain
        // plan takes a dense Newton step where it pays, which split rows leave to CG (a rank's
        // Hessian would be its rows' alone): the same iterate to CG's forcing after five.
        let plain = compile(&format!("{}solve with {solver}\n", fx.model), &CompileOptions::default());
        let alone = on_ranks(&plan, &d, 1, &fixed, true);
        let reference = on_ranks(&plain, &d, 1, &fixed, true);
        let (split_w, plain_w) = (alone[0].outcome.state.weights(&plan), reference[0].outcome.state.weights(&plain));
        if solver == "tron" {
            let far = split_w.iter().zip(plain_w).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(far <= 1e-6, "{name}: split and plain weights {far} apart");
        } else {
            assert_eq!(split_w, plain_w, "{name}");
        }
        // Two ranks add the same terms in another order: the same F to rounding.
        let (f1, f2) = (alone[0].outcome.eval.objective, jit[0].outcome.eval.objective);
        assert!((f1 - f2).abs() <= 1e-12 * f1.abs(), "{name}: F alone {f1} vs on two ranks {f2}");
    }
}

/// SCD's models on split rows run proximal Newton iterations (the gradient and the working
/// set's Hessian summed across the ranks): on 1, 2 and 3 ranks they certify the fixture's
/// problem against CVXPY's F*, every rank with the same weights, in tens of iterations.
#[test]
fn proximal_newton_on_split_rows_certifies_scd_models_against_cvxpy() {
    for name in [
        "l1_logistic",
        "elastic_logistic",
        "box_logistic",
        "lasso",
        "nonneg_lasso",
        "sparse_l1_logistic",
        "dense_l1_logistic",
        "one_hot_l1_logistic",
    ] {
        let fx = fixture_named(name);
        let plan = compile(&format!("{}solve with scd\n", fx.model), &CompileOptions::default());
        let cert = optc::exec::split_newton::applies(&plan).expect("an SCD model");
        let d = read_libsvm(&fx.data).expect("reads");
        let tol = 1e-6;
        for n in [1, 2, 3] {
            let runs = newton_on_ranks(&plan, &cert, &d, n, &RunSettings::to_tolerance(tol, 200, 1));
            let first = &runs[0].outcome;
            for other in &runs[1..] {
                assert_eq!(other.outcome.state.weights(&plan), first.state.weights(&plan), "{name} on {n}");
                assert_eq!(other.outcome.gap, first.gap, "{name} on {n}");
            }
            let (f, gap) = (first.eval.objective, first.gap.expect("a gap"));
            assert_eq!(first.status, optc::exec::driver::Status::Converged, "{name} on {n}: {}", first.rule);
            assert!(first.epochs <= 60, "{name} on {n}: {} Newton iterations", first.epochs);
            assert!(gap <= tol * f.abs(), "{name} on {n}: gap {gap}");
            assert!(
                f - fx.best <= gap + 1e-9 * fx.best.abs(),
                "{name} on {n}: F − F* = {} above the gap {gap}",
                f - fx.best
            );
            assert!(fx.best - f <= 1e-7 * fx.best.abs(), "{name} on {n}: F {f} below CVXPY's F* {}", fx.best);
        }
    }
}

/// A working set wider than the dense Hessian takes (weak ℓ1 regularization on text data)
/// steps by Hessian-vector products on its face: with the dense cap at 4 coordinates, the same
/// fixtures reach CVXPY's optimum, certified, every rank with the same weights.
#[test]
fn proximal_newton_by_products_certifies_scd_models_against_cvxpy() {
    for name in ["l1_logistic", "elastic_logistic", "box_logistic", "lasso", "sparse_l1_logistic", "dense_l1_logistic"]
    {
        let fx = fixture_named(name);
        let plan = compile(&format!("{}solve with scd\n", fx.model), &CompileOptions::default());
        let cert = optc::exec::split_newton::applies(&plan).expect("an SCD model");
        let d = read_libsvm(&fx.data).expect("reads");
        let tol = 1e-6;
        let settings = RunSettings::to_tolerance(tol, 500, 1);
        let runs = threads(&d, 2, |rank, _, view, facts| {
            optc::exec::split_newton::run_dense_at_most(&plan, &cert, view, &facts, &settings, rank, 4)
                .expect("no stop")
        });
        let first = &runs[0].outcome;
        assert_eq!(runs[1].outcome.state.weights(&plan), first.state.weights(&plan), "{name}");
        assert!(first.working_set.is_some_and(|v| v > 4), "{name}: the set never passed the cap");
        let (f, gap) = (first.eval.objective, first.gap.expect("a gap"));
        assert_eq!(first.status, optc::exec::driver::Status::Converged, "{name}: {}", first.rule);
        assert!(gap <= tol * f.abs(), "{name}: gap {gap}");
        assert!(f - fx.best <= gap + 1e-9 * fx.best.abs(), "{name}: F − F* = {} above the gap {gap}", f - fx.best);
        assert!(first.epochs <= 30, "{name}: {} Newton iterations", first.epochs);
    }
}

/// The proximal Newton solver on `n` ranks (threads), each with its share of `d`.
fn newton_on_ranks(
    plan: &Plan,
    cert: &optc::plan::Certificate,
    d: &Dataset,
    n: usize,
    settings: &RunSettings,
) -> Vec<StreamOutcome> {
    threads(d, n, |rank, _, view, facts| {
        optc::exec::split_newton::run(plan, cert, view, &facts, settings, rank).expect("no stop")
    })
}

/// A back end whose epoch faults on one rank at its third epoch, before the epoch's first
/// reduction: that rank never reaches the reduction the other ranks wait in.
struct FaultsOnce<'a> {
    inner: Box<dyn optc::exec::Backend + 'a>,
    faults: bool,
    epochs: usize,
}

impl optc::exec::Backend for FaultsOnce<'_> {
    fn name(&self) -> &'static str {
        "faults once"
    }
    fn init(&mut self, state: &mut optc::exec::State, data: &optc::exec::DataView) -> Result<(), optc::exec::Fault> {
        self.inner.init(state, data)
    }
    fn epoch(
        &mut self,
        state: &mut optc::exec::State,
        data: &optc::exec::DataView,
        orders: &optc::exec::Orders,
    ) -> Result<(), optc::exec::Fault> {
        self.epochs += 1;
        if self.faults && self.epochs == 3 {
            return Err(optc::exec::Fault { what: "w".into(), value: f64::NAN, step: 3.0, row: 0 });
        }
        self.inner.epoch(state, data, orders)
    }
    fn finish(&mut self, state: &mut optc::exec::State, data: &optc::exec::DataView) -> Result<(), optc::exec::Fault> {
        self.inner.finish(state, data)
    }
}

/// A fault on one rank inside an epoch whose sums are reduced ends every rank at once: the
/// faulting rank abandons the job, so the others' reduction fails instead of waiting for its
/// timeout (60 s here).
#[test]
fn a_fault_on_one_rank_inside_a_reducing_epoch_ends_every_rank_at_once() {
    let fx = fixture_named("l2_logistic");
    let plan = split(&format!("{}solve with tron\n", fx.model));
    let d = read_libsvm(&fx.data).expect("reads");
    let started = std::time::Instant::now();
    let ends = threads(&d, 2, |rank, part, view, facts| {
        let selected = select_backend(&plan, &facts, true);
        let mut backend = FaultsOnce { inner: selected.backend, faults: rank.rank() == 1, epochs: 0 };
        let rows = Rows::Resident(*view, &part.lines);
        let settings = RunSettings::to_tolerance(1e-12, 100, 1);
        match optc::exec::stream::run(&plan, &mut backend, rows, &facts, &settings, rank) {
            Ok(_) => "finished".to_string(),
            Err(e) => format!("{e:?}"),
        }
    });
    assert!(started.elapsed().as_secs_f64() < 30.0, "the ranks waited for the timeout: {ends:?}");
    assert!(ends[1].starts_with("Fault"), "{ends:?}");
    // In the epoch's reduction or at the next: either way from rank 1's message.
    let from_rank_1 = ends[0].contains("rank 1 stopped") || ends[0].contains("Abandoned(1,");
    assert!(from_rank_1 && ends[0].contains("at step t = 3 (line 101 of this rank's rows)"), "{ends:?}");
}

/// Dual CD's models on split rows run rounds of CoCoA (each rank's dual steps on its own rows,
/// the summed move taken as far as it raises the dual): on 1, 2 and 3 ranks they certify the
/// fixture's problem against CVXPY's F* by the dual's own gap, every rank with the same
/// weights, and that gap bounds F − F* from the first round on.
#[test]
fn dual_rounds_on_split_rows_certify_svm_models_against_cvxpy() {
    for name in ["svm", "svm_small_lambda", "svm_bias", "sqhinge_l2sq", "sqhinge_bias"] {
        let fx = fixture_named(name);
        let plan = compile(&format!("{}solve with dcd\n", fx.model), &CompileOptions::default());
        let cert = optc::exec::split_dcd::applies(&plan).expect("a model dual CD takes");
        let d = read_libsvm(&fx.data).expect("reads");
        let tol = 1e-6;
        for n in [1, 2, 3] {
            let runs = threads(&d, n, |rank, _, view, facts| {
                let settings = RunSettings::to_tolerance(tol, 20_000, 1);
                optc::exec::split_dcd::run(&plan, &cert, view, &facts, &settings, rank).expect("no stop")
            });
            let first = &runs[0].outcome;
            for other in &runs[1..] {
                assert_eq!(other.outcome.state.weights(&plan), first.state.weights(&plan), "{name} on {n}");
                assert_eq!(other.outcome.state.intercept(&plan), first.state.intercept(&plan), "{name} on {n}");
                assert_eq!(other.outcome.gap, first.gap, "{name} on {n}");
            }
            let (f, gap) = (first.eval.objective, first.gap.expect("a gap"));
            assert_eq!(first.status, optc::exec::driver::Status::Converged, "{name} on {n}: {}", first.rule);
            assert!(gap <= tol * f.abs(), "{name} on {n}: gap {gap}");
            assert!(f - fx.best <= gap + 1e-12, "{name} on {n}: F − F* = {} above the gap {gap}", f - fx.best);
            assert!(fx.best - f <= 1e-9 * fx.best.abs(), "{name} on {n}: F {f} below CVXPY's F* {}", fx.best);
            // F is the report's F of the weights the ranks return.
            let whole = optc::exec::evaluate::evaluate(&plan, &first.state, &d.view(&labels_of(&d), d.features()));
            assert!((whole.objective - f).abs() <= 1e-12 * f.abs(), "{name}: F {f} vs {}", whole.objective);
            for epochs in [1, 3] {
                let early = threads(&d, n, |rank, _, view, facts| {
                    optc::exec::split_dcd::run(&plan, &cert, view, &facts, &RunSettings::fixed(epochs, 1), rank)
                        .expect("no stop")
                });
                let (f, gap) = (early[0].outcome.eval.objective, early[0].outcome.gap.expect("a gap"));
                assert!(f - gap <= fx.best * (1.0 + 1e-12), "{name} after {epochs} on {n}: F − gap above F*");
            }
        }
    }
}

/// An intercept penalised apart from w (μ ≠ λ) is the extra coordinate scaled by √(λ/μ): the
/// ranks' F at the weights they return is the one-process certified optimum's.
#[test]
fn dual_rounds_scale_a_separately_penalised_intercept() {
    let fx = fixture_named("svm_bias");
    let model = fx.model.replace("λ·l2sq(b)", "4·λ·l2sq(b)");
    assert_ne!(model, fx.model);
    let plan = compile(&format!("{model}solve with dcd\n"), &CompileOptions::default());
    let cert = optc::exec::split_dcd::applies(&plan).expect("a model dual CD takes");
    let d = read_libsvm(&fx.data).expect("reads");
    let alone = common::run_plan(plan.clone(), &d, &RunSettings::to_tolerance(1e-9, 100_000, 1), None);
    let runs = threads(&d, 2, |rank, _, view, facts| {
        optc::exec::split_dcd::run(&plan, &cert, view, &facts, &RunSettings::to_tolerance(1e-7, 20_000, 1), rank)
            .expect("no stop")
    });
    let first = &runs[0].outcome;
    let whole = optc::exec::evaluate::evaluate(&plan, &first.state, &d.view(&labels_of(&d), d.features()));
    assert!((whole.objective - first.eval.objective).abs() <= 1e-12 * whole.objective, "F of the weights returned");
    let f_star = alone.eval.objective;
    assert!((whole.objective - f_star).abs() <= 1e-6 * f_star, "F {} against one process's {f_star}", whole.objective);
}

/// Rows with no features (w8a has them) leave w alone, so the dual's best αᵢ for them is the
/// bound: without that step the gap stalls while F is already optimal.
#[test]
fn dual_rounds_take_empty_rows_to_their_bound() {
    let fx = fixture_named("svm");
    let dir = tempfile::tempdir().expect("tmp");
    let mut text = std::fs::read_to_string(&fx.data).expect("reads");
    text.push_str("+1\n-1\n+1\n");
    let data = common::write(dir.path(), "empty_rows.svm", &text);
    let d = read_libsvm(&data).expect("reads");
    let plan = compile(&format!("{}solve with dcd\n", fx.model), &CompileOptions::default());
    let cert = optc::exec::split_dcd::applies(&plan).expect("a model dual CD takes");
    let alone = common::run_plan(plan.clone(), &d, &RunSettings::to_tolerance(1e-9, 100_000, 1), None);
    let runs = threads(&d, 2, |rank, _, view, facts| {
        optc::exec::split_dcd::run(&plan, &cert, view, &facts, &RunSettings::to_tolerance(1e-7, 20_000, 1), rank)
            .expect("no stop")
    });
    let first = &runs[0].outcome;
    assert_eq!(first.status, optc::exec::driver::Status::Converged, "{}", first.rule);
    let (f, f_star) = (first.eval.objective, alone.eval.objective);
    assert!((f - f_star).abs() <= 1e-6 * f_star, "F {f} against one process's {f_star}");
}

/// ±1 labels of a two-class fixture, as the label map gives them.
fn labels_of(d: &Dataset) -> Vec<f64> {
    LabelMap::fit(LabelKind::Labels, d).expect("labels").apply(d).expect("maps")
}

/// A plan whose steps over the rows read what earlier rows wrote is sequential: refused, with
/// the buffer named; so is one that walks columns.
#[test]
fn sequential_steps_are_refused_with_the_reason() {
    let l1 =
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n";
    for solver in ["fobos", "adagrad", "smm"] {
        let plan = compile(&format!("{l1}solve with {solver}\n"), &CompileOptions::default());
        let why = distribute(&plan).expect_err("sequential");
        assert!(why.contains("sequential") && why.contains('`'), "{solver}: {why}");
    }
    let scd = compile(&format!("{l1}solve with scd\n"), &CompileOptions::default());
    assert!(distribute(&scd).expect_err("columns").contains("columns"));
    let svm = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[hinge(y, <x, w>)] + λ·l2sq(w)\nsolve with dcd\n";
    let dcd = compile(svm, &CompileOptions::default());
    assert!(distribute(&dcd).is_err(), "dual coordinate steps read w as the rows before them left it");
}
