//! `optc run --stream MODEL DATA`: the data is never loaded. A first pass learns its size,
//! labels and max‖xᵢ‖² and keeps a one-block sample for calibrating the step; every epoch is
//! then one more pass in file order (no global shuffle: that would need the file in memory or
//! rewritten), and F and the gap take passes of their own. Memory is the solver's state plus a
//! few blocks of rows, whatever the file's size.
//!
//! Only plans that run a block at a time are the same algorithm streamed (the stochastic
//! family; see `exec::stream::streamable`). A model whose default solver needs all the data at
//! once (SCD walks columns, FISTA keeps per-row margins) runs SMM instead (FOBOS for a
//! non-smooth loss) and says so; a solver the user named that cannot stream is refused, never
//! silently replaced.

use super::args::{RunArgs, RunRequest};
use super::outputs::{commit_output, trace_csv, write_plot, Outputs};
use super::saved::saved_text;
use super::session;
use super::together::together;
use super::wording::{diverged_json, not_converged, stopped, StepShown};
use super::{report_compile_error, Failure};
use crate::data::store::Matrix;
use crate::data::stream::{scan, scan_and_load, StreamSource, Streamed, DEFAULT_BLOCK_ROWS};
use crate::data::Dataset;
use crate::exec::stream::{no_streamed_gap, streamable, Rows, StreamStop};
use crate::pipeline::{self, CompileOptions};
use crate::session::bind::declared_features;
use crate::session::saved::saved_model;
use crate::session::solve::{worse_than_start, Unsolved};
use crate::solvers::SolverKind;
use crate::source::SourceFile;
use crate::stdlib::LabelKind;
use crate::symbolic::fmt_num;
use rand::SeedableRng;
use report::{human, json, Ran};
use std::time::Instant;

mod report;

/// The solvers `--stream` runs when neither AdaGrad's dual averaging (the streamed default for
/// a per-coordinate regularizer) nor the model's default can stream, in order: SMM for a smooth
/// loss (docs/algorithms.md §9: "streaming data → SMM", one pass gives a usable model), else
/// FOBOS (§9's choice for non-smooth losses), which takes every per-coordinate regularizer and
/// constraint lazily, O(nnz) a step.
const FALLBACKS: [SolverKind; 2] = [SolverKind::Smm, SolverKind::Fobos];

/// A streamed run on `ranks`: alone, or under `mpirun` one of several ranks, each streaming its
/// own share of the rows, rank 0 alone speaking and writing files. Under `mpirun` without
/// `--stream`, each rank holds its share in memory instead, and a plan whose sums over the rows
/// the ranks add up ([`crate::plan::distribute`]) is the one-process solve.
pub(super) fn run(
    args: &RunRequest,
    file: &SourceFile,
    compiled: pipeline::Compiled,
    ranks: &dyn crate::exec::collective::Collective,
    compile_start: Instant,
) -> Result<(), Failure> {
    let lead = ranks.rank() == 0;
    let resident = !args.stream;
    refuse_flags(args)?;
    let (data, cut) = shard(&args.data, ranks)?;
    let workers = args.solve.data.threads();
    let source = super::inputs::readable("data file", &data)
        .and_then(|()| {
            StreamSource::new(&data, args.block_rows.unwrap_or(DEFAULT_BLOCK_ROWS), workers).map_err(Failure::Usage)
        })
        .map(|s| s.with_cache(args.solve.data.cache_dir()))
        .and_then(|s| if cut { s.share(ranks.rank(), ranks.size()).map_err(Failure::Usage) } else { Ok(s) });
    let mut source = together(ranks, source)?;
    let compiled = (|| {
        let opts = &args.options;
        let (compiled, plan, switched) =
            if resident { distributed_plan(file, compiled, opts)? } else { streamable_plan(file, compiled, opts)? };
        let (settings, run_settings) = session::run_settings(&compiled, &args.solve.stopping())?;
        Ok((compiled, plan, switched, settings, run_settings))
    })();
    let (compiled, mut plan, switched, settings, mut run_settings) = together(ranks, compiled)?;
    run_settings.cancel = super::interrupt();
    if run_settings.shards > 1 {
        return Err(Failure::Usage(
            "--shards with --stream: a streamed epoch reads its blocks in file order on one thread; give one or the other".into(),
        ));
    }
    let tol = run_settings.tol;
    let front_seconds = compile_start.elapsed().as_secs_f64();
    let outputs = if lead { Outputs::prepare(args) } else { Ok(Outputs { save: None, trace: None, plot: None }) };
    let Outputs { save: save_out, trace: trace_out, plot: plot_out } = together(ranks, outputs)?;

    let say = |s: String| {
        if lead {
            args.say(s)
        }
    };
    let scanning = Instant::now();
    let failed = |e: crate::data::DataError| {
        let ctx = e.context();
        Failure::Input(if ctx.is_empty() { e.to_string() } else { format!("{e}\n{ctx}") })
    };
    // Held in memory, the rows are kept as the first pass reads them.
    let read = match resident {
        true => scan_and_load(&mut source, settings.seed).map(|(s, rows)| (s, Some(rows))),
        false => scan(&mut source, settings.seed).map(|s| (s, None)),
    };
    let (mut scanned, rows) = together(ranks, read.map_err(failed))?;
    agree_on_scan(ranks, &mut scanned)?;
    let scan_seconds = scanning.elapsed().as_secs_f64();
    let kind = compiled.model.label_kind;
    // Ranks holding their rows train one-vs-rest's k problems one after another; a stream
    // follows one problem.
    let one_vs_rest = scanned.one_vs_rest(kind);
    if !resident {
        super::ovr::refuse("--stream", &source.name, one_vs_rest.clone())?;
    }
    if let Some(classes) = &one_vs_rest {
        super::ovr::refuse_flags(args, &source.name, classes.originals.len())?;
    }
    let label_map = match &one_vs_rest {
        Some(classes) => classes.clone(),
        None => scanned.label_map(kind).map_err(|e| Failure::Input(e.to_string()))?,
    };
    let features = declared_features(&compiled.model, scanned.features, &source.name)?;
    let classes = if kind == LabelKind::Classes { label_map.originals.len() } else { 0 };
    let mut facts = scanned.facts(features, classes);
    let shape_only = Dataset {
        weights: None,
        x: Matrix::new((0, scanned.features), vec![0], vec![], vec![]),
        labels: vec![],
        lines: vec![],
        name: source.name.clone(),
        bytes: 0,
        max_index_line: scanned.max_index_line,
    };
    // Free memory is each machine's own.
    together(
        ranks,
        crate::session::bind::ensure_memory(&plan, &facts, &shape_only, &compiled.model.var.name)
            .map_err(Failure::from),
    )?;
    // A composite term's operator B acts on w alone: each rank binds its own (rows held only:
    // a streamed plan never applies it).
    let operator = match (&plan.objective.composite, resident) {
        (Some(c), true) => Some(together(
            ranks,
            crate::data::operator::bind(c, features, &super::model_dir(&args.model))
                .map_err(|e| Failure::Input(e.to_string())),
        )?),
        _ => None,
    };
    facts.op_rows = operator.as_ref().map_or(0, |b| b.rows);
    // Each rank's rows in memory, with what the plan binds from all of them.
    let held = match rows {
        Some(held) => {
            let y = together(ranks, label_map.apply(&held).map_err(|e| Failure::Input(e.to_string())))?;
            if crate::data::needs_gram(&plan) {
                let mut sum = |v: &mut [f64]| ranks.sum(v);
                let gram = held.gram_norm_summed(features, facts.rows, &mut sum);
                facts.gram_norm = Some(gram.map_err(|e| Failure::Input(format!("the ranks could not reduce: {e}")))?);
            }
            Some((held, y))
        }
        None => None,
    };
    if let Some(m) = label_map.describe() {
        say(format!("note: {m}"));
    }
    if let Some(n) = &scanned.cache {
        say(format!("note: {n}"));
    }
    if let Some(why) = &switched {
        say(format!("note: {why}"));
    }

    let jit = !args.solve.no_jit;
    // The rows' weights (one process: a rank's share of the file's lines is not known here),
    // before the step is tuned: its safe default reads the weighted curvature bound.
    let weights =
        super::weights::streamed(&args.weights, &compiled.model, facts.rows, &label_map.originals, &mut facts)?;
    // Each rank's sample is its own: several ranks keep the plan's own step, the same on all.
    let calibration = match ranks.size() {
        1 => calibrate(&mut plan, &scanned, &label_map, (features, classes), &facts, settings.seed, jit)?,
        _ => None,
    };
    run_settings.trace = args.trace.is_some() || args.plot.is_some();
    let streamed = Streamed { source: source.clone(), label_map, features, classes, weights };
    let mut selected = crate::exec::select_backend(&plan, &facts, jit);
    if let Some(why) = &selected.fallback {
        say(format!("note: {why}"));
    }
    let solver = plan.info.solver;
    let step = StepShown::of(&plan, &settings, &facts);
    let rows = match &held {
        Some((x, y)) => {
            Rows::Resident(x.view(y, features).with_classes(classes).with_operator(operator.as_ref()), &x.lines)
        }
        None => Rows::Streamed(&streamed),
    };
    let failed = |stop: StreamStop| match stop {
        StreamStop::Fault { fault, line } => Failure::Diverged(format!(
            "the solver diverged: at step t = {} ({}:{line}), {} is {}\n  hint: {}",
            fmt_num(fault.step),
            source.name,
            fault.what,
            fault.value,
            step.shown.hint(solver)
        )),
        // The rank that stopped the run says why.
        StreamStop::Elsewhere => Failure::Reported,
        other => stopped(other),
    };
    // A run that ended worse than w = 0: with a convex F that was a valid answer, so the step
    // overshot.
    let worse = |done: &crate::exec::stream::StreamOutcome| -> Option<Failure> {
        let ev = &done.outcome.eval;
        let said = Unsolved::Worse {
            epochs: done.outcome.epochs,
            objective: ev.objective,
            start_objective: done.start_objective,
        };
        worse_than_start(ev.objective, done.start_objective)
            .then(|| said.failure(&shape_only, solver, Some(&step.shown.text()), Some(&step.shown.hint(solver))).into())
    };
    let native = matches!(rows, Rows::Resident(..)) && native_solver(&plan).is_some();
    if let (Some(classes), Some((x, y))) = (&one_vs_rest, &held) {
        let backend = if native { "native" } else { selected.backend.name() };
        let mut solve = |view: crate::exec::DataView, class: &dyn Fn(Failure) -> Failure| {
            let rows = Rows::Resident(view, &x.lines);
            let solved = solve_rows(&plan, selected.backend.as_mut(), rows, &facts, &run_settings, ranks);
            let done = together(ranks, solved.map_err(failed).map_err(class))?;
            match worse(&done) {
                None => Ok(done),
                // F is the ranks' sum: every rank sees it, rank 0 says it.
                Some(said) => together(ranks, Err(class(said))),
            }
        };
        let on = super::ovr::ranks::OnRanks {
            args,
            file,
            compiled: &compiled,
            plan: &plan,
            settings: &settings,
            run_settings: &run_settings,
            rows: x,
            classes: y,
            labels: classes,
            operator: operator.as_ref(),
            facts: &facts,
            features,
            data: (&source.name, scanned.rows, scanned.nnz),
            seconds: (scan_seconds, front_seconds + selected.jit_seconds),
            backend,
            solver_note: switched.as_deref(),
            save: save_out,
        };
        return super::ovr::ranks::run(on, &mut solve, ranks);
    }
    let solved = solve_rows(&plan, selected.backend.as_mut(), rows, &facts, &run_settings, ranks);
    let done = together(ranks, solved.map_err(failed))?;
    let outcome = &done.outcome;
    let ev = &outcome.eval;
    if let Some(said) = worse(&done) {
        if args.json && lead {
            let mut r = diverged_json(ev.objective, done.start_objective, solver, outcome.epochs, &step.shown);
            r["stream"] = true.into();
            println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
        }
        // F is the ranks' sum: every rank sees it, rank 0 says it.
        return together(ranks, Err(said));
    }
    if outcome.status != crate::exec::driver::Status::Converged && tol.is_some() && !args.quiet && lead {
        let hint = "a stochastic method with decaying steps rarely certifies a tight gap; give a looser --tol or more --epochs";
        eprintln!("{}", not_converged(&outcome.rule, outcome.gap, ev.objective, tol.unwrap_or(0.0), hint));
    }
    let w = outcome.state.weights(&plan).to_vec();
    let intercept = plan.objective.intercept.map(|_| outcome.state.intercept(&plan));
    commit_output(trace_out, || trace_csv(&outcome.trace, kind))?;
    write_plot(plot_out, &file.name, &source.name, solver.name(), &outcome.trace, kind)?;
    commit_output(save_out, || {
        saved_text(saved_model(&compiled.model, &streamed.label_map, features, &w, intercept), "--save", args.quiet)
    })?;
    let epoch_nnz = scanned.nnz as f64 * outcome.epochs as f64;
    let ran = Ran {
        file,
        source: &source,
        scanned: &scanned,
        plan: &plan,
        settings: &settings,
        step: &step,
        done: &done,
        switched: switched.as_deref(),
        backend: if native { "native" } else { selected.backend.name() },
        compile_seconds: front_seconds + selected.jit_seconds,
        scan_seconds,
        calibration: calibration.as_ref(),
        features,
        intercept,
        tol,
        nnz_per_second: if done.epoch_seconds > 0.0 { epoch_nnz / done.epoch_seconds } else { 0.0 },
        processes: ranks.size(),
        communicated: ranks.bytes(),
        resident,
    };
    if !lead {
        return super::unless_interrupted(outcome.status);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json(&ran, kind)).unwrap_or_default());
    }
    if !args.quiet {
        say(human(&ran, w.len()));
        if let Some(c) = &calibration {
            say(super::wording::calibrated(c));
        }
        say(format!("  backend      {} (model text → kernel in {:.1} ms)", ran.backend, 1e3 * ran.compile_seconds));
    }
    super::unless_interrupted(outcome.status)
}

/// This rank's data, and whether it is a share of a file the ranks cut by bytes: the file
/// (alone, or one file several ranks cut), or with a comma-separated list or a quoted pattern
/// (`'part-*.svm'`, its files in name order) of one shard file a rank, the rank's own.
fn shard(
    data: &std::path::Path,
    ranks: &dyn crate::exec::collective::Collective,
) -> Result<(std::path::PathBuf, bool), Failure> {
    let text = data.to_string_lossy();
    let pattern = text.contains(['*', '?', '[']) && !data.exists();
    if ranks.size() == 1 || !(text.contains(',') || pattern) {
        return Ok((data.to_path_buf(), ranks.size() > 1));
    }
    // A quoted pattern: its files in name order, one a rank.
    let matched: Vec<String> = match pattern {
        true => glob::glob(&text)
            .map_err(|e| Failure::Usage(format!("`{text}`: {e}")))?
            .filter_map(Result::ok)
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        false => vec![],
    };
    let files: Vec<&str> = match pattern {
        true => matched.iter().map(String::as_str).collect(),
        false => text.split(',').filter(|f| !f.is_empty()).collect(),
    };
    if files.len() != ranks.size() {
        return Err(Failure::Usage(format!(
            "{} processes need one data file, or {} shard files, one a rank, as a comma-separated list or a quoted pattern; `{text}` names {}",
            ranks.size(),
            ranks.size(),
            files.len()
        )));
    }
    Ok((files[ranks.rank()].into(), false))
}

/// The whole data's first-pass facts from every rank's: rows, non-zeros and bytes added, the
/// feature count and max‖xᵢ‖² the largest, and the labels every rank saw.
fn agree_on_scan(
    ranks: &dyn crate::exec::collective::Collective,
    scanned: &mut crate::data::stream::Scan,
) -> Result<(), Failure> {
    if ranks.size() == 1 {
        return Ok(());
    }
    let failed = |e| Failure::Input(format!("the ranks could not reduce: {e}"));
    let mut sums = [scanned.rows as f64, scanned.nnz as f64, scanned.bytes as f64];
    ranks.sum(&mut sums).map_err(failed)?;
    let own = scanned.distinct_labels().to_vec();
    let mut most = [scanned.features as f64, scanned.max_row_norm_sq, own.len() as f64];
    ranks.max(&mut most).map_err(failed)?;
    // Each rank's labels in its own slots, the others zero: the sum is every rank's list.
    let k = most[2] as usize;
    let mut slots = vec![0.0; 2 * k * ranks.size()];
    for (i, &y) in own.iter().enumerate() {
        let at = 2 * (ranks.rank() * k + i);
        (slots[at], slots[at + 1]) = (y, 1.0);
    }
    ranks.sum(&mut slots).map_err(failed)?;
    let all: Vec<f64> = slots.chunks(2).filter(|s| s[1] > 0.0).map(|s| s[0]).collect();
    scanned.share_labels(&all);
    (scanned.rows, scanned.nnz, scanned.bytes) = (sums[0] as usize, sums[1] as usize, sums[2] as u64);
    (scanned.features, scanned.max_row_norm_sq) = (most[0] as usize, most[1]);
    Ok(())
}

/// The flags of `optc run` a streamed run cannot honour: each needs rows kept in memory or a
/// start other than w = 0.
fn refuse_flags(args: &RunArgs) -> Result<(), Failure> {
    if args.holdout.is_some() {
        return Err(Failure::Usage(
            "--holdout with --stream: the held-out rows would have to be kept in memory".into(),
        ));
    }
    if args.solve.test.is_some() {
        return Err(Failure::Usage(
            "--test with --stream is not supported: save the model (--save) and score the test file with `optc predict`".into(),
        ));
    }
    if args.init.is_some() {
        return Err(Failure::Usage("--init with --stream is not supported: streamed runs start from w = 0".into()));
    }
    Ok(())
}

/// The model compiled and planned for a streamed run: its own plan when that streams, else the
/// first of [`FALLBACKS`] that does, with the note that says so. A solver the model names that
/// cannot stream is refused, never replaced.
fn streamable_plan(
    file: &SourceFile,
    compiled: pipeline::Compiled,
    opts: &CompileOptions,
) -> Result<(pipeline::Compiled, crate::plan::Plan, Option<String>), Failure> {
    let plan = pipeline::plan(&compiled, opts).map_err(|e| report_compile_error(e, file))?;
    if let Some(req) = &compiled.model.solver {
        return match streamable(&plan) {
            Ok(()) => Ok((compiled, plan, None)),
            Err(why) => Err(Failure::Usage(format!(
                "--stream cannot run `{}`: {why}\n  hint: choose a stochastic solver (fobos, adagrad, smm, truncated), or run without --stream",
                req.name
            ))),
        };
    }
    let default = plan.info.solver;
    // Streamed data with a per-coordinate regularizer (the models adagrad takes): dual
    // averaging, whose iterate has the optimum's zeros where SMM's and FOBOS's keep the noise
    // of their last steps (§9; on debian-files 1,252 non-zeros against SMM's 39,974).
    let rda = CompileOptions {
        solver: Some(SolverKind::Adagrad.name().into()),
        solver_options: vec![("rda".into(), 1.0)],
        ..opts.clone()
    };
    let rda_refused = match build(&compiled, &rda) {
        Ok((c, p)) => match streamable(&p) {
            Ok(()) => {
                let note = format!("streamed data with a per-coordinate regularizer: --stream runs adagrad(rda = 1), AdaGrad's dual averaging, which keeps the optimum's zeros (the default in memory is `{default}`)");
                return Ok((c, p, Some(note)));
            }
            Err(why) => why,
        },
        Err(e) => compile_refusal(e),
    };
    let Err(why) = streamable(&plan) else { return Ok((compiled, plan, None)) };
    let mut refusals = vec![format!("adagrad(rda = 1): {rda_refused}")];
    for fallback in FALLBACKS {
        let tried = CompileOptions { solver: Some(fallback.name().into()), ..opts.clone() };
        // A fallback the model rules out (SMM with a non-smooth loss) is skipped, said only
        // when no fallback runs: the user asked for none of them.
        let (c, p) = match build(&compiled, &tried) {
            Ok(built) => built,
            Err(e) => {
                refusals.push(format!("{fallback}: {}", compile_refusal(e)));
                continue;
            }
        };
        match streamable(&p) {
            Ok(()) => {
                let note =
                    format!("`{default}`, the default for this model, cannot stream ({why}); --stream runs {fallback}");
                return Ok((c, p, Some(note)));
            }
            Err(also) => refusals.push(format!("{fallback}: {also}")),
        }
    }
    Err(Failure::Usage(format!(
        "--stream has no solver for this model: its default `{default}` cannot stream ({why}), nor can {}",
        refusals.join("; ")
    )))
}

/// The solver of its own that ranks holding their rows run for `plan`, if any: SCD's proximal
/// Newton iterations, or dual CD's CoCoA rounds, with the certificate it reports.
fn native_solver(plan: &crate::plan::Plan) -> Option<(crate::plan::Certificate, NativeRun)> {
    use crate::exec::{split_dcd, split_newton};
    split_newton::applies(plan)
        .map(|cert| (cert, split_newton::run as NativeRun))
        .or_else(|| split_dcd::applies(plan).map(|cert| (cert, split_dcd::run as NativeRun)))
}

/// One problem solved on `rows`: on ranks holding their rows, by SCD's proximal Newton
/// iterations or dual CD's CoCoA rounds, distributed (solvers of their own, not plans) when the
/// plan is theirs; else the plan's epochs, streamed or held.
fn solve_rows(
    plan: &crate::plan::Plan,
    backend: &mut dyn crate::exec::Backend,
    rows: Rows,
    facts: &crate::data::DataFacts,
    run_settings: &crate::exec::driver::RunSettings,
    ranks: &dyn crate::exec::collective::Collective,
) -> Result<crate::exec::stream::StreamOutcome, StreamStop> {
    match (rows, native_solver(plan)) {
        (Rows::Resident(view, _), Some((cert, run))) => run(plan, &cert, &view, facts, run_settings, ranks),
        (rows, _) => crate::exec::stream::run(plan, backend, rows, facts, run_settings, ranks),
    }
}

/// A solver of its own for rows split across ranks (`split_newton`, `split_dcd`).
type NativeRun = fn(
    &crate::plan::Plan,
    &crate::plan::Certificate,
    &crate::exec::DataView,
    &crate::data::DataFacts,
    &crate::exec::driver::RunSettings,
    &dyn crate::exec::collective::Collective,
) -> Result<crate::exec::stream::StreamOutcome, StreamStop>;

/// Batch solvers whose sums over the rows the ranks can add up, tried in order for a model whose
/// default cannot run on split rows: TRON for ½‖w‖² (Newton steps, MPI-LIBLINEAR's choice),
/// then FISTA (any smooth loss with a per-coordinate term).
const SPLIT: [SolverKind; 2] = [SolverKind::Tron, SolverKind::Proxgrad];

/// The model compiled and planned for ranks that hold their rows in memory: its own plan with
/// its sums over the rows reduced when that splits, else the first of [`SPLIT`] that does (with
/// the note that says so), else what `--stream` would run, whose states the ranks average after
/// each epoch (dual CD's steps are sequential, and the hinge loss is for neither TRON nor
/// FISTA). A solver the model names is never replaced: one that can neither split nor average
/// is refused with both reasons.
fn distributed_plan(
    file: &SourceFile,
    compiled: pipeline::Compiled,
    opts: &CompileOptions,
) -> Result<(pipeline::Compiled, crate::plan::Plan, Option<String>), Failure> {
    let plan = pipeline::plan(&compiled, opts).map_err(|e| report_compile_error(e, file))?;
    if crate::exec::split_newton::applies(&plan).is_some() {
        let note = "on several ranks `scd` runs its proximal Newton iterations: the gradient and the working set's Hessian summed across the ranks, the model on the working set solved by coordinate descent on every rank alike";
        return Ok((compiled, plan, Some(note.into())));
    }
    // The squared hinge is smooth: TRON's few Newton steps beat dual rounds unless dcd is named.
    let hinge = |c: crate::plan::Certificate| c.conjugate == crate::plan::LossConjugate::Hinge;
    if crate::exec::split_dcd::applies(&plan).is_some_and(|c| hinge(c) || compiled.model.solver.is_some()) {
        let note = "on several ranks `dcd` runs rounds of CoCoA: each rank steps the dual variables of its own rows, the ranks' moves of w are summed after every pass, and the round takes the step along them that raises the dual the most";
        return Ok((compiled, plan, Some(note.into())));
    }
    let why = match crate::plan::distribute(&plan) {
        Ok(split) => return Ok((compiled, split, None)),
        Err(why) => why,
    };
    let default = plan.info.solver;
    if compiled.model.solver.is_some() {
        return match crate::exec::shards::applies(&plan) {
            Ok(()) => Ok((compiled, plan, None)),
            Err(neither) => Err(Failure::Usage(format!(
                "on several ranks optc cannot run `{default}`: its sums over the rows do not split ({why}), and {neither}\n  hint: choose tron (½‖w‖² with a smooth loss) or proxgrad (a smooth loss), whose sums the ranks add up"
            ))),
        };
    }
    for fallback in SPLIT {
        let tried = CompileOptions { solver: Some(fallback.name().into()), ..opts.clone() };
        if let Ok((c, p)) = build(&compiled, &tried) {
            if let Ok(split) = crate::plan::distribute(&p) {
                let note = format!(
                    "`{default}`, the default for this model, cannot run on rows split across ranks ({why}); the ranks run {fallback}, adding up its sums over the rows"
                );
                return Ok((c, split, Some(note)));
            }
        }
    }
    let (c, p, _) = streamable_plan(file, compiled, opts).map_err(|e| match e {
        Failure::Usage(streamed) => Failure::Usage(format!(
            "on several ranks optc has no solver for this model: `{default}`, its default, cannot run on rows split across ranks ({why}), nor can tron or proxgrad; and what the ranks could average is what --stream runs: {streamed}"
        )),
        other => other,
    })?;
    let solver = p.info.solver;
    let note = format!(
        "`{default}`, the default for this model, cannot run on rows split across ranks ({why}), nor can tron or proxgrad; the ranks run {solver} and average their states after each epoch"
    );
    Ok((c, p, Some(note)))
}

/// Why a solver the run tried for the user did not compile, in one line.
fn compile_refusal(e: pipeline::CompileError) -> String {
    match e {
        pipeline::CompileError::Usage(m) => m,
        pipeline::CompileError::Model(problems) => {
            problems.into_iter().map(|p| p.message).collect::<Vec<_>>().join("; ")
        }
    }
}

/// The model analysed again and lowered with `opts`' solver.
fn build(
    compiled: &pipeline::Compiled,
    opts: &CompileOptions,
) -> Result<(pipeline::Compiled, crate::plan::Plan), pipeline::CompileError> {
    pipeline::with_solver(compiled, opts).and_then(|c| pipeline::plan(&c, opts).map(|p| (c, p)))
}

/// The plan's step (or SMM's n₀) tuned as the in-memory run tunes it, on ~5% of the rows (at
/// least 1,000) drawn from the one-block reservoir the scan kept; `plan` comes back with it bound.
fn calibrate(
    plan: &mut crate::plan::Plan,
    scanned: &crate::data::stream::Scan,
    label_map: &crate::data::LabelMap,
    (features, classes): (usize, usize),
    facts: &crate::data::DataFacts,
    seed: u64,
    jit: bool,
) -> Result<Option<crate::exec::calibrate::Calibration>, Failure> {
    let sample_y = label_map.apply(&scanned.sample).map_err(|e| Failure::Input(e.to_string()))?;
    let sample_view = scanned.sample.view(&sample_y, features).with_classes(classes);
    let n = scanned.sample.rows().min(1000.max(scanned.rows / 20));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut rows: Vec<u32> =
        rand::seq::index::sample(&mut rng, scanned.sample.rows(), n).into_iter().map(|i| i as u32).collect();
    rows.sort_unstable();
    Ok(crate::exec::calibrate::calibrate_on(plan, &sample_view, facts, &rows, jit).map(|(calibrated, c)| {
        *plan = calibrated;
        c
    }))
}
