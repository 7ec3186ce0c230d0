//! `optc run MODEL DATA` in memory: lower the compiled model, read the data, solve, report, save.

use super::args::RunRequest;
use super::init;
use super::inputs::load_data;
use super::outputs::{commit_output, trace_csv, write_plot, Outputs};
use super::saved::saved_text;
use super::session::{self, Bound, Unsolved};
use super::wording::{diverged_json, not_converged, summary, unconverged_hint, StepShown};
use super::{model_dir, report_compile_error, Failure};
use crate::data::LabelMap;
use crate::exec::driver;
use crate::exec::evaluate::evaluate;
use crate::pipeline::{self, Compiled};
use crate::session::saved::{saved_model, with_class_bias};
use crate::source::SourceFile;
use crate::stdlib::LabelKind;
use std::time::Instant;

/// The in-memory run of the loss model `compiled` (read from `file` and compiled by the caller
/// since `compile_start`).
pub fn run(
    args: &RunRequest,
    file: &SourceFile,
    mut compiled: Compiled,
    compile_start: Instant,
) -> Result<(), Failure> {
    // Ctrl-C from here on stops the solve, not the process.
    let cancel = super::interrupt();
    let opts = &args.options;
    let mut plan = pipeline::plan(&compiled, opts).map_err(|e| report_compile_error(e, file))?;
    let stop = args.solve.stopping();
    let (mut settings, mut run_settings) = session::run_settings(&compiled, &stop)?;
    let front_seconds = compile_start.elapsed().as_secs_f64();
    let Outputs { save: save_out, trace: trace_out, plot: plot_out } = Outputs::prepare(args)?;
    let (mut train, parse_seconds, cache_note) = load_data(&args.data, "data file", !args.quiet, &args.solve.data)?;
    super::weights::attach(&args.weights, &compiled.model, &mut train)?;
    // A default that depends on the data's shape is settled now (docs/algorithms.md §9).
    if pipeline::shape(&mut compiled, (train.features(), train.rows(), train.nnz()), || train.mean_row_norm_sq()) {
        plan = pipeline::plan(&compiled, opts).map_err(|e| report_compile_error(e, file))?;
        (settings, run_settings) = session::run_settings(&compiled, &stop)?;
    }
    // A two-class loss on more than two labels: k one-vs-rest problems (docs/algorithms.md §11).
    if let Some(classes) = LabelMap::one_vs_rest(compiled.model.label_kind, &train) {
        let outputs = Outputs { save: save_out, trace: trace_out, plot: plot_out };
        let start = super::ovr::Start {
            file,
            compiled: &compiled,
            plan,
            settings,
            run_settings,
            train,
            classes,
            parse_seconds,
            cache_note,
            front_seconds,
            outputs,
        };
        return super::ovr::run(args, start);
    }
    let tol = run_settings.tol;
    // With --holdout the model never sees the held-out rows: F, the gap and the train error are
    // of the rest.
    let (train, held) = match args.holdout {
        Some(f) => {
            let (rest, held) = train.split(f, settings.seed);
            (rest, Some(held))
        }
        None => (train, None),
    };
    let kind = compiled.model.label_kind;
    let bound = Bound::new(&compiled, &plan, &train, &model_dir(&args.model))?;
    let (features, facts) = (bound.features, bound.facts);
    let view = bound.view(&train, args.solve.data.threads());
    let warm = args
        .init
        .as_deref()
        .map(|p| init::initial_weights(p, &bound, kind, plan.objective.intercept.is_some()))
        .transpose()?;

    let human = !args.quiet;
    let say = |s: String| args.say(s);
    if let Some(m) = bound.label_map.describe() {
        say(format!("note: {m}"));
    }
    if let Some(n) = &cache_note {
        say(format!("note: {n}"));
    }

    run_settings.trace = args.trace.is_some() || args.plot.is_some();
    run_settings.progress = human;
    run_settings.cancel = cancel;
    // Read before the run, so that a trace can follow the test error epoch by epoch.
    let test_data = match &args.solve.test {
        Some(p) => {
            let (t, _, _) = load_data(p, "test file", !args.quiet, &args.solve.data)?;
            let ty = bound.labels_of(&t)?;
            Some((t, ty))
        }
        None => None,
    };
    let test_view = test_data.as_ref().map(|(t, ty)| bound.test_view(t, ty));
    let held_labels = held.as_ref().map(|h| bound.labels_of(h)).transpose()?;
    let held_view = held.as_ref().zip(held_labels.as_ref()).map(|(h, hy)| bound.test_view(h, hy));
    let watch = driver::Watch { test: test_view.as_ref(), holdout: held_view.as_ref().map(|v| (v, args.patience)) };
    let solved = match session::solve(
        &mut plan,
        &bound,
        &view,
        watch,
        &run_settings,
        !args.solve.no_jit,
        warm.as_ref().map(|(w, b)| (w.as_slice(), *b)),
    ) {
        Ok(s) => s,
        Err(e @ (Unsolved::Fault(_) | Unsolved::Refused(_))) => {
            return Err(e.failure(&train, plan.info.solver, None, None).into())
        }
        Err(e @ Unsolved::Worse { epochs, objective, start_objective }) => {
            let step = StepShown::of(&plan, &settings, &facts).shown;
            if args.json {
                let r = diverged_json(objective, start_objective, plan.info.solver, epochs, &step);
                println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
            }
            return Err(e
                .failure(&train, plan.info.solver, Some(&step.text()), Some(&step.hint(plan.info.solver)))
                .into());
        }
    };
    if let Some(why) = &solved.fallback {
        say(format!("note: {why}"));
    }
    if let Some(p) = &args.init {
        say(format!("note: started from the weights of {}", p.display()));
    }
    let report = crate::session::Report::of(&compiled, &plan, &train, features, &solved, &run_settings);
    // The figures of the choice to check before the first epoch, when the run made it.
    let first_check = driver::checks_before_epochs(&plan, &view, &run_settings, held_view.is_some())
        .then(|| crate::exec::linalg::newton_costs(view.indptr, view.features));
    let step = StepShown::of(&plan, &settings, &facts);
    let (eta0, n0) = (step.eta0, step.n0);
    let step = step.shown;
    let compile_seconds = front_seconds + solved.jit_seconds;
    // The kernel is compiled when a phase first runs: a run its first check ended made none.
    let compiled_kernel = solved.backend != "jit" || solved.jit_seconds > 0.0;
    let backend_name = solved.backend;
    let calibration = solved.calibration;
    let outcome = solved.outcome;
    let train_eval = outcome.eval.clone();
    let w = outcome.state.weights(&plan).to_vec();
    let intercept = plan.objective.intercept.map(|_| outcome.state.intercept(&plan));
    let class_bias = plan.objective.class_intercept.map(|b| outcome.state.vectors[b.0].clone());
    // Online DC always ends at its cap: its status line says so, and a warning each run would
    // be noise.
    let caps_only = plan.certificate.is_none() && plan.uncertified == crate::plan::Uncertified::Caps;
    // Early stopping is what the user asked for; the status line says it.
    let early = outcome.status == driver::Status::EarlyStopped;
    if outcome.status != driver::Status::Converged && tol.is_some() && !args.quiet && !caps_only && !early {
        let hint = unconverged_hint(plan.info.solver);
        eprintln!("{}", not_converged(&outcome.rule, outcome.gap, train_eval.objective, tol.unwrap_or(0.0), hint));
    }

    let test = test_view.as_ref().map(|tv| evaluate(&plan, &outcome.state, tv));

    commit_output(trace_out, || trace_csv(&outcome.trace, kind))?;
    write_plot(plot_out, &file.name, &train.name, plan.info.solver.name(), &outcome.trace, kind)?;
    commit_output(save_out, || {
        let saved = saved_model(&compiled.model, &bound.label_map, features, &w, intercept);
        saved_text(with_class_bias(saved, class_bias.as_deref()), "--save", args.quiet)
    })?;

    if args.json {
        // The run's Report, without the weights (`--save` writes them), and what the command
        // line adds: its files, the step it took, the compile and the reading, the test error.
        let mut r = serde_json::to_value(&report).unwrap_or_default();
        let obj = r.as_object_mut().expect("a report is a record");
        obj.remove("weights");
        let extra = serde_json::json!({
            "model": file.name,
            "data": train.name,
            "compile_seconds": compile_seconds,
            "init": args.init.as_ref().map(|p| p.display().to_string()),
            "holdout": outcome.holdout.as_ref().map(|h| serde_json::json!({
                "fraction": args.holdout,
                "rows": held.as_ref().map(|d| d.rows()),
                "best_epoch": h.best_epoch,
                "best_loss": h.best_loss,
                "stopped": h.stopped,
            })),
            "eta0": if settings.step_text.is_some() { None } else { eta0 },
            "step": step.json(),
            "eta0_calibration": calibration.as_ref().filter(|c| c.param == "η0").map(|c| serde_json::json!({
                "rows": c.rows,
                "default": c.default,
                "tried": c.tried,
                "seconds": c.seconds,
            })),
            "n0": n0,
            "n0_calibration": calibration.as_ref().filter(|c| c.param == "n0").map(|c| serde_json::json!({
                "rows": c.rows,
                "default": c.default,
                "tried": c.tried,
                "seconds": c.seconds,
            })),
            "parse_seconds": parse_seconds,
            "first_check": first_check.map(|c| serde_json::json!({
                "hessian_flops": c.hessian,
                "factor_flops": c.factor,
                "epoch_flops": c.epoch,
            })),
        });
        if let serde_json::Value::Object(extra) = extra {
            obj.extend(extra);
        }
        if let Some(t) = &test {
            obj.insert("test_loss".into(), t.loss.into());
            match kind {
                LabelKind::Real => _ = obj.insert("test_mse".into(), t.mse.into()),
                _ => _ = obj.insert("test_error".into(), t.error.into()),
            }
        }
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    }
    if human {
        say(summary(
            &plan,
            &train,
            parse_seconds,
            &train_eval,
            test.as_ref(),
            &outcome,
            &step,
            (settings.seed, run_settings.shards),
            features,
        ));
        if let Some(c) = &calibration {
            say(super::wording::calibrated(c));
        }
        if let Some(c) = &compiled.structure.chosen {
            say(format!("  solver       {} — {}", c.solver.name(), c.reason));
        }
        if let Some(costs) = &first_check {
            say(format!("  method       {}", super::wording::first_check(plan.info.solver, features, costs)));
        }
        if compiled_kernel {
            say(format!("  backend      {backend_name} (model text → kernel in {:.1} ms)", 1e3 * compile_seconds));
        } else {
            say(format!(
                "  backend      {backend_name} (model text → plan in {:.1} ms; no epoch ran, so no kernel was compiled)",
                1e3 * compile_seconds
            ));
        }
    }
    super::unless_interrupted(outcome.status)
}
