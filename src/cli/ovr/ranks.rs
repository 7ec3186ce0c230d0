//! One-vs-rest on ranks that hold their rows (`mpirun -np N optc run`): the k problems one
//! after another, each the two-class problem every rank solves together, its ±1 labels made
//! from the classes the ranks number alike. Each class thus gets the certificate one process
//! gives it; the saved model and the report are one process's one-vs-rest ones, and the argmax
//! error adds up every rank's wrong rows.

use super::report::{self, Spread};
use super::{labels_text, warn_unconverged};
use crate::analysis::Settings;
use crate::cli::args::RunArgs;
use crate::cli::outputs::commit_output;
use crate::cli::saved::saved_text;
use crate::cli::Failure;
use crate::data::{one_vs_rest_labels, DataFacts, DataView, Dataset, LabelMap};
use crate::exec::collective::Collective;
use crate::exec::driver::RunSettings;
use crate::exec::stream::StreamOutcome;
use crate::output::OutputFile;
use crate::pipeline::Compiled;
use crate::plan::Plan;
use crate::session::ovr::{argmax_wrong, saved_model, Class};
use crate::session::solve::Solved;
use crate::source::SourceFile;
use std::time::Instant;

/// What the ranks' run has once every rank holds its rows.
pub(in crate::cli) struct OnRanks<'a> {
    pub args: &'a RunArgs,
    pub file: &'a SourceFile,
    pub compiled: &'a Compiled,
    /// The two-class plan every problem runs.
    pub plan: &'a Plan,
    pub settings: &'a Settings,
    pub run_settings: &'a RunSettings,
    /// This rank's rows, and each one's class (0..k in `labels`' order).
    pub rows: &'a Dataset,
    pub classes: &'a [f64],
    pub labels: &'a LabelMap,
    pub operator: Option<&'a crate::runtime::picard::Operator>,
    pub facts: &'a DataFacts,
    pub features: usize,
    /// The whole data's name, rows and non-zeros.
    pub data: (&'a str, usize, usize),
    /// (the first pass's seconds, the front end's and kernel's).
    pub seconds: (f64, f64),
    pub backend: &'static str,
    /// Why the ranks run another solver than the model's default, if they do.
    pub solver_note: Option<&'a str>,
    /// Rank 0's `--save`; None on the others.
    pub save: Option<OutputFile>,
}

/// One problem solved on the ranks' rows, its failure put in context by the function given.
pub(in crate::cli) type SolveOne<'a> =
    dyn FnMut(DataView, &dyn Fn(Failure) -> Failure) -> Result<StreamOutcome, Failure> + 'a;

/// Trains the k problems with `solve` (one problem on the ranks' rows, its failures worded by
/// `solve` and put in their class's context by the function it is given), then writes the
/// k-column model and the report from rank 0.
pub(in crate::cli) fn run(on: OnRanks, solve: &mut SolveOne, ranks: &dyn Collective) -> Result<(), Failure> {
    let originals = &on.labels.originals;
    let k = originals.len();
    let lead = ranks.rank() == 0;
    let solving = Instant::now();
    let mut solved: Vec<Class> = Vec::with_capacity(k);
    for (c, &label) in originals.iter().enumerate() {
        let y = one_vs_rest_labels(on.classes, c);
        let view = on.rows.view(&y, on.features).with_operator(on.operator);
        let done = solve(view, &|f| in_class(f, label, c, k))?;
        let outcome = done.outcome;
        let w = outcome.state.weights(on.plan).to_vec();
        let intercept = on.plan.objective.intercept.map(|_| outcome.state.intercept(on.plan));
        let solved_one = Solved { outcome, calibration: None, backend: on.backend, fallback: None, jit_seconds: 0.0 };
        solved.push(Class { label, plan: on.plan.clone(), solved: solved_one, w, intercept });
    }
    let wall = solving.elapsed().as_secs_f64();
    if lead {
        warn_unconverged(on.args, &solved, on.run_settings.tol);
    }
    let saved = saved_model(&on.compiled.model, originals, on.features, &solved);
    // Each rank's wrong rows, added up.
    let mut counts = [argmax_wrong(&saved, on.rows) as f64];
    ranks.sum(&mut counts).map_err(|e| Failure::Input(format!("the ranks could not reduce: {e}")))?;
    let train_error = counts[0] / on.data.1.max(1) as f64;
    commit_output(on.save, || saved_text(saved, "--save", on.args.quiet))?;
    let status = super::worst(&solved);
    if !lead {
        return crate::cli::unless_interrupted(status);
    }
    let summary = report::Summary {
        file: on.file,
        compiled: on.compiled,
        settings: on.settings,
        run_settings: on.run_settings,
        data: on.data,
        parse_seconds: on.seconds.0,
        compile_seconds: on.seconds.1,
        features: on.features,
        facts: *on.facts,
        classes: &solved,
        train_error,
        test_error: None,
        wall,
        spread: Spread::Processes(ranks.size(), ranks.bytes()),
        init: None,
        solver_note: on.solver_note,
    };
    if on.args.json {
        println!("{}", serde_json::to_string_pretty(&report::json(&summary)).unwrap_or_default());
    }
    if !on.args.quiet {
        on.args.say(report::human(&summary));
    }
    crate::cli::unless_interrupted(status)
}

/// A class's failure, saying which class it was.
fn in_class(failure: Failure, label: f64, c: usize, k: usize) -> Failure {
    let context = format!("class {} (one-vs-rest problem {} of {k}): ", labels_text(&[label]), c + 1);
    match failure {
        Failure::Diverged(m) => Failure::Diverged(context + &m),
        Failure::Input(m) => Failure::Input(context + &m),
        other => other,
    }
}
