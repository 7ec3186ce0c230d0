//! One-vs-rest (docs/algorithms.md §11; docs/language.md): a two-class loss on data with
//! k > 2 labels is k binary problems, problem c labelled +1 on the rows of class c and −1 on the
//! rest, as LIBLINEAR trains every solver but its Crammer–Singer one. Each problem is the same
//! plan on the same bound data (only y changes), solved to the same certificate; `--save`
//! writes LIBLINEAR's k-column model, and the combined predictor is its argmax, computed by the
//! same code as `optc predict`, so the reported errors are the ones predict gives.
//!
//! `optc run` comes here once it has read the data and found a third label; ranks holding their
//! rows go to [`ranks`]. The commands that follow one problem (`--stream`, `optc path`, the
//! REPL) refuse such data with [`refuse`].

pub(super) mod ranks;
mod report;

pub(super) use crate::session::ovr::worst;

use super::args::RunArgs;
use super::init;
use super::inputs::load_data;
use super::outputs::{commit_output, Outputs};
use super::saved::saved_text;
use super::session::{Bound, Unsolved};
use super::wording::StepShown;
use super::{model_dir, Failure};
use crate::analysis::Settings;
use crate::data::cache::CacheNote;
use crate::data::{Dataset, LabelMap};
use crate::exec::driver::{RunSettings, Status};
use crate::pipeline::Compiled;
use crate::plan::Plan;
use crate::session::ovr::{self, argmax_error, saved_model, split_threads, Class};
use crate::source::SourceFile;
use crate::stdlib::LabelKind;
use std::time::Instant;

/// What `optc run` has when it finds more than two labels: the model compiled and planned for
/// the data's shape, the training data read, the output files opened.
pub(super) struct Start<'a> {
    pub file: &'a SourceFile,
    pub compiled: &'a Compiled,
    pub plan: Plan,
    pub settings: Settings,
    pub run_settings: RunSettings,
    pub train: Dataset,
    /// The classes in first-seen order (from [`LabelMap::one_vs_rest`]).
    pub classes: LabelMap,
    pub parse_seconds: f64,
    pub cache_note: Option<CacheNote>,
    pub front_seconds: f64,
    pub outputs: Outputs,
}

/// Refuses data with more than two labels for a two-class loss (`classes`, from
/// [`LabelMap::one_vs_rest`] on the data named `data`) in `what`, a command or flag that follows
/// a single problem: Usage, with what to do instead.
pub(super) fn refuse(what: &str, data: &str, classes: Option<LabelMap>) -> Result<(), Failure> {
    match classes {
        None => Ok(()),
        Some(classes) => Err(Failure::Usage(format!(
            "{what}: {data} has {} labels ({}); a two-class loss on them is {} one-vs-rest problems, which `optc run` trains, and {what} follows one problem\n  hint: train it with `optc run` (without --stream), or declare `y: classes` and use `softmax`",
            classes.originals.len(),
            labels_text(&classes.originals),
            classes.originals.len(),
        ))),
    }
}

/// The flags of `optc run` that follow one problem's epochs; one-vs-rest runs k.
pub(super) fn refuse_flags(args: &RunArgs, data: &str, k: usize) -> Result<(), Failure> {
    let flag = [
        (args.holdout.is_some(), "--holdout", "early stopping watches one problem's held-out loss"),
        (args.trace.is_some(), "--trace", "a trace follows one problem's epochs"),
        (args.plot.is_some(), "--plot", "a plot follows one problem's epochs"),
    ]
    .into_iter()
    .find(|(given, _, _)| *given);
    match flag {
        Some((_, flag, why)) => Err(Failure::Usage(format!(
            "{flag}: {data} has {k} labels, so this run trains {k} one-vs-rest problems, and {why}\n  hint: leave out {flag}, or declare `y: classes` and use `softmax` (one problem)",
        ))),
        None => Ok(()),
    }
}

pub(super) fn run(args: &RunArgs, start: Start) -> Result<(), Failure> {
    let Start {
        file,
        compiled,
        plan,
        settings,
        mut run_settings,
        train,
        classes,
        parse_seconds,
        cache_note,
        front_seconds,
        outputs,
    } = start;
    let k = classes.originals.len();
    refuse_flags(args, &train.name, k)?;
    let threads = args.solve.data.threads();
    let labels = classes.originals.clone();
    let bound = Bound::one_vs_rest(compiled, &plan, &train, &model_dir(&args.model), classes)?;
    // A k-column model file (optc's or LIBLINEAR's) warm-starts class c from its column for c's
    // label, whatever order its `label` line has.
    let warm: Option<Vec<Vec<f64>>> = match &args.init {
        Some(p) => {
            let (w, _) = init::initial_weights(p, &bound, LabelKind::Classes, plan.objective.intercept.is_some())?;
            Some((0..k).map(|c| w.iter().skip(c).step_by(k).copied().collect()).collect())
        }
        None => None,
    };
    let say = |s: String| args.say(s);
    if let Some(n) = &cache_note {
        say(format!("note: {n}"));
    }
    if let Some(p) = &args.init {
        say(format!("note: started every class from its column of {}", p.display()));
    }
    let test = match &args.solve.test {
        Some(p) => {
            let (t, _, _) = load_data(p, "test file", !args.quiet, &args.solve.data)?;
            // A label training never saw is an error, as in a two-class run.
            bound.labels_of(&t)?;
            Some(t)
        }
        None => None,
    };

    // Progress bars of problems running side by side would overwrite each other.
    run_settings.progress = false;
    let (at_once, per_problem) = split_threads(threads, k);
    let solving = Instant::now();
    let solved =
        ovr::solve(&plan, &bound, &train, &labels, &run_settings, (threads, !args.solve.no_jit), warm.as_deref())
            .map_err(|f| {
                unsolved(f.why, &f.plan, &settings, &bound, &train, (f.class, k, labels[f.class]), args.json)
            })?;
    let wall = solving.elapsed().as_secs_f64();
    if let Some(why) = solved.iter().find_map(|c| c.solved.fallback.as_ref()) {
        say(format!("note: {why}"));
    }
    warn_unconverged(args, &solved, run_settings.tol);

    let saved = saved_model(&compiled.model, &labels, bound.features, &solved);
    let train_error = argmax_error(&saved, &train);
    let test_error = test.as_ref().map(|t| argmax_error(&saved, t));
    let Outputs { save, .. } = outputs;
    commit_output(save, || saved_text(saved, "--save", args.quiet))?;

    let summary = report::Summary {
        file,
        compiled,
        settings: &settings,
        run_settings: &run_settings,
        data: (&train.name, train.rows(), train.nnz()),
        parse_seconds,
        compile_seconds: front_seconds + solved.iter().map(|c| c.solved.jit_seconds).sum::<f64>(),
        features: bound.features,
        facts: bound.facts,
        classes: &solved,
        train_error,
        test_error,
        wall,
        spread: report::Spread::Threads(at_once, per_problem),
        solver_note: None,
        init: args.init.as_deref(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report::json(&summary)).unwrap_or_default());
    }
    if !args.quiet {
        say(report::human(&summary));
    }
    Ok(())
}

/// One warning for every class that stopped short of the tolerance (a run without one, exactly
/// `--epochs N`, asked for no gap).
fn warn_unconverged(args: &RunArgs, classes: &[Class], tol: Option<f64>) {
    let Some(tol) = tol else { return };
    let short: Vec<&Class> = classes.iter().filter(|c| c.solved.outcome.status != Status::Converged).collect();
    let Some(first) = short.first() else { return };
    if args.quiet || first.plan.certificate.is_none() && first.plan.uncertified == crate::plan::Uncertified::Caps {
        return;
    }
    let which: Vec<String> = short
        .iter()
        .map(|c| match c.relative_gap() {
            Some(g) => format!("class {} (relative gap {g:.1e})", labels_text(&[c.label])),
            None => format!("class {} (no certificate)", labels_text(&[c.label])),
        })
        .collect();
    eprintln!(
        "warning: not converged: {} of {} classes stopped above tol {tol:.0e}: {}; their answers may be far from the optimum\n  hint: {} (a cap holds for each class)",
        short.len(),
        classes.len(),
        which.join(", "),
        super::wording::unconverged_hint(first.plan.info.solver)
    );
}

/// The failure of class c's problem, saying which class it was; with `--json`, the report of a
/// run that ended worse than w = 0 as a two-class run prints it.
fn unsolved(
    e: Unsolved,
    plan: &Plan,
    settings: &Settings,
    bound: &Bound,
    train: &Dataset,
    (c, k, label): (usize, usize, f64),
    json: bool,
) -> Failure {
    let solver = plan.info.solver;
    let step = StepShown::of(plan, settings, &bound.facts).shown;
    if let (true, Unsolved::Worse { epochs, objective, start_objective }) = (json, &e) {
        let mut r = super::wording::diverged_json(*objective, *start_objective, solver, *epochs, &step);
        r["class"] = label.into();
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    }
    let failure = match e {
        e @ (Unsolved::Fault(_) | Unsolved::Refused(_)) => e.failure(train, solver, None, None),
        e @ Unsolved::Worse { .. } => e.failure(train, solver, Some(&step.text()), Some(&step.hint(solver))),
    };
    let context = format!("class {} (one-vs-rest problem {} of {k}): ", labels_text(&[label]), c + 1);
    match Failure::from(failure) {
        Failure::Diverged(m) => Failure::Diverged(context + &m),
        Failure::Input(m) => Failure::Input(context + &m),
        other => other,
    }
}

/// Labels as the report and messages show them: `3, 2, 1`.
pub(super) fn labels_text(labels: &[f64]) -> String {
    labels.iter().map(|v| crate::symbolic::fmt_num(*v)).collect::<Vec<_>>().join(", ")
}
