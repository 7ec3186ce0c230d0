//! The outer loop: epochs over a seeded permutation of the rows, progress, per-epoch traces,
//! and the flush at the end. A back end only ever runs one epoch or the finish.

use super::certificate::{self, violation, Assessment, DualHistory};
use super::evaluate::{evaluate, evaluate_with_margins, Evaluation};
use super::screening::Screening;
pub use super::stopping::{sci, RunSettings, Status, TracePoint};
use super::stopping::{Checks, Ended};
use super::{Backend, DataView, Fault, State};
use crate::data::Copies;
use crate::data::DataFacts;
use crate::plan::Plan;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;

/// Why a run gave no outcome: a guarded value went NaN or infinite, or the driver refused to
/// start it (a request the back end cannot honour). A refusal is a usage error, not a fault:
/// it has no value, step or row.
#[derive(Clone, Debug, PartialEq)]
pub enum Stopped {
    Fault(Fault),
    Refused(String),
}

impl From<Fault> for Stopped {
    fn from(f: Fault) -> Stopped {
        Stopped::Fault(f)
    }
}

#[derive(Clone, Debug)]
pub struct Outcome {
    /// Flushed: the weights are exact. Hand it back to [`run`] to warm-start.
    pub state: State,
    pub epochs: usize,
    pub seconds: f64,
    pub trace: Vec<TracePoint>,
    pub status: Status,
    /// What stopped the run, in words (`gap 3.1e-6 ≤ 1e-4·|F|`).
    pub rule: String,
    /// F at the returned weights, and the certified bound on F − F* (None: no closed form).
    pub eval: Evaluation,
    pub gap: Option<f64>,
    /// Seconds spent checking the certificate (included in `seconds`).
    pub check_seconds: f64,
    /// The columns the last epochs walked, when the run used working sets.
    pub working_set: Option<usize>,
    /// Features Gap Safe screening proved zero at every optimum, when the run screened.
    pub screened: Option<usize>,
    /// The held-out loss's best epoch, when the run was watched with a holdout.
    pub holdout: Option<Holdout>,
}

/// Working sets for column solvers (skglm's and celer's strategy): epochs walk only the
/// features that are non-zero or violate their optimality condition the most, and each
/// certificate check — over all the data — picks the set again. On text data, where a few
/// hundred of 10⁵–10⁶ features end up non-zero, an epoch then costs a small fraction of a pass.
const WS_MIN: usize = 100;
/// Working sets are used on more features than this: four times the smallest set.
const WS_FEATURES: usize = 4 * WS_MIN;
/// Epochs on the working set between two full checks: a Newton-type epoch on the working set
/// costs a fraction of a check (three passes over all the data), and a few make the most of it.
const WS_INNER: usize = 2;

/// How many features a working set holds.
#[derive(Clone, Copy)]
pub(super) enum SetSize {
    /// Every non-zero weight and every violator. The first set is this one, as newGLMNET's
    /// first outer iteration sees every feature. At weak regularization a set grown from
    /// WS_MIN columns lets its first columns fit most rows confidently; columns that enter
    /// later then see rows with no curvature left, and F crawled (debian-desc at C = 10: 10%
    /// above F* after 20 epochs on Newton epochs alone). Whole runs to a certified 1e-4,
    /// against a first set of WS_MIN columns: debian-desc at C = 100 0.67×, at C = 10 0.84×,
    /// debian-files at C = 10 0.92×, at C = 1 0.87×, debian-desc at C = 1 1.13× (0.1 s).
    /// Walking every feature instead, violators or not, cost debian-files at C = 1 1.6×.
    Violators,
    /// The non-zero weights, then the largest violators, up to max(WS_MIN, 2·nnz) features.
    Doubling,
    /// As `Doubling`, and at most this many (the ranks' proximal Newton, whose Hessian on the
    /// set is summed dense).
    DoublingAtMost(usize),
}

/// The next working set: every non-zero weight, then the largest violators, as many as `size`
/// says (all of them when fewer violate).
pub(super) fn working_set(
    cert: &crate::plan::Certificate,
    w: &[f64],
    gradient: &[f64],
    screening: Option<&Screening>,
    copies: Option<&Copies>,
    size: SetSize,
) -> Vec<u32> {
    let doubling = || WS_MIN.max(2 * w.iter().filter(|v| **v != 0.0).count());
    let size = match size {
        SetSize::Violators => usize::MAX,
        SetSize::Doubling => doubling(),
        SetSize::DoublingAtMost(most) => doubling().min(most),
    };
    let mut scored: Vec<(f64, u32)> = w
        .iter()
        .zip(gradient)
        .enumerate()
        .filter_map(|(j, (&wj, &gj))| {
            let out = screening.is_some_and(|s| s.is_out(j)) || copies.is_some_and(|c| c.is_copy(j));
            let score = match (wj != 0.0, out) {
                (true, _) => f64::INFINITY,
                (false, true) => 0.0,
                (false, false) => violation(cert, wj, gj),
            };
            (score > 0.0).then_some((score, j as u32))
        })
        .collect();
    if scored.len() > size {
        scored.select_nth_unstable_by(size - 1, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(size);
    }
    let mut cols: Vec<u32> = scored.into_iter().map(|(_, j)| j).collect();
    cols.sort_unstable();
    cols
}

/// The row and column orders of every epoch: one ChaCha stream per run, so a seed fixes the
/// whole run on every platform.
pub struct RowOrder {
    rng: rand_chacha::ChaCha8Rng,
    rows: Vec<u32>,
    cols: Vec<u32>,
}

impl RowOrder {
    pub fn new(rows: usize, seed: u64) -> Self {
        Self::with_columns(rows, 0, seed)
    }

    pub fn with_columns(rows: usize, cols: usize, seed: u64) -> Self {
        RowOrder {
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
            rows: (0..rows as u32).collect(),
            cols: (0..cols as u32).collect(),
        }
    }

    /// From now on, epochs walk these columns only (a working set), in a fresh order each.
    pub fn set_columns(&mut self, cols: Vec<u32>) {
        self.cols = cols;
    }

    /// The next epoch walks the rows of the last order whose entry of `active` is positive, or
    /// every row when they all came back ([`Plan::active_rows`]); in a fresh order.
    pub fn keep_rows(&mut self, active: &[f64], returned: bool) {
        if returned {
            self.rows.clear();
            self.rows.extend(0..active.len() as u32);
        } else {
            self.rows.retain(|&i| active[i as usize] > 0.5);
        }
    }

    pub fn next_epoch(&mut self) -> &[u32] {
        self.rows.shuffle(&mut self.rng);
        &self.rows
    }

    /// This epoch's orders: rows, then columns, each shuffled when non-empty.
    pub fn next_orders(&mut self) -> super::Orders<'_> {
        self.rows.shuffle(&mut self.rng);
        self.cols.shuffle(&mut self.rng);
        super::Orders { rows: &self.rows, cols: &self.cols, ranks: None }
    }
}

/// Runs a plan: init, epochs until the stopping rule, finish. `start` warm-starts from a state
/// a previous run handed back (or one built from saved weights); init then rebuilds what is
/// derived from the weights.
pub fn run(
    plan: &Plan,
    backend: &mut dyn Backend,
    data: &DataView,
    facts: &DataFacts,
    settings: &RunSettings,
    start: Option<State>,
) -> Result<Outcome, Stopped> {
    run_watched(plan, backend, data, facts, settings, start, Watch::default())
}

/// Whether a run of `plan` checks it before its first epoch, where the check's refinement solves
/// it from any point (`refinement::first_check_solves`): a column solver asked for a tolerance,
/// on too few features for working sets, in one process, with no held-out rows to watch.
pub fn checks_before_epochs(plan: &Plan, data: &DataView, settings: &RunSettings, holdout: bool) -> bool {
    let cols = if plan.permutes(crate::plan::Len::Features) { data.features } else { 0 };
    settings.tol.is_some()
        && plan.certificate.is_some()
        && cols > 0
        && cols <= WS_FEATURES
        && settings.shards <= 1
        && !holdout
        && certificate::refinement::first_check_solves(plan, data.features)
}

/// Held-out rows a run looks at besides its training data.
#[derive(Clone, Copy, Default)]
pub struct Watch<'a> {
    /// Evaluated at every trace point (`--test` with `--trace`/`--plot`); no rule reads it.
    pub test: Option<&'a DataView<'a>>,
    /// Early stopping (`--holdout`): evaluated after every epoch, the run stops when its loss
    /// has not improved for `patience` epochs and returns the weights of its best epoch.
    pub holdout: Option<(&'a DataView<'a>, usize)>,
}

/// The held-out loss of a run watched with [`Watch::holdout`].
#[derive(Clone, Debug)]
pub struct Holdout {
    pub best_epoch: usize,
    pub best_loss: f64,
    /// The run stopped on it, and the weights are those of `best_epoch`.
    pub stopped: bool,
}

/// As [`run`], looking at held-out rows as `watch` says. The test set's evaluation is left out
/// of every `seconds` (and of the time limit): no rule needs it, so a trace against time reads
/// the same with or without `--test`. So is a check made only for the trace (`--trace` without
/// `--tol`, or between the checks a tolerance asks for): a trace against time shows the run's
/// own time, not that of the certificates it asked to see (on debian-desc a FOBOS epoch takes
/// 0.26 s and its traced check, Newton refinement included, 1.6 s). The holdout's is counted:
/// early stopping is a rule.
pub fn run_watched(
    plan: &Plan,
    backend: &mut dyn Backend,
    data: &DataView,
    facts: &DataFacts,
    settings: &RunSettings,
    start: Option<State>,
    watch: Watch,
) -> Result<Outcome, Stopped> {
    // A warm start is checked after its first epoch whatever `check_every` says: it is often
    // done by then, and a batch solver would otherwise run `check_every` iterations to say so.
    let warm = start.is_some();
    let mut state = match start {
        Some(s) => s,
        None => State::new(plan, facts, data.labels),
    };
    // The rows' weights as the data has them: the certificate evaluates the plan's dual point
    // on this state, whichever back end runs the plan.
    super::interp::load_row_weights(plan, &mut state, data);
    check_params(plan, &state)?;
    if let Some(t) = plan.tolerance {
        state.scalars[t.0] = settings.tol.unwrap_or(f64::INFINITY);
    }
    let rows = if plan.permutes(crate::plan::Len::Rows) { data.rows() } else { 0 };
    let cols = if plan.permutes(crate::plan::Len::Features) { data.features } else { 0 };
    let mut order = RowOrder::with_columns(rows, cols, settings.seed);
    let bar = progress_bar(settings);
    let start = Instant::now();
    let mut check_seconds = 0.0;
    let mut test_seconds = 0.0;
    // Checks made only for the trace, left out of `seconds` as the test set's are.
    let mut traced_seconds = 0.0;
    // Working sets pay when they leave out most of the columns: on w8a (300 features, 249
    // non-zero at λ 7.08e-6) the first set of WS_MIN columns picked at zero held a third of
    // them, and a default run took 0.43–0.57 s where full epochs take 0.29–0.36 s.
    let ws_cert = plan.certificate.filter(|_| settings.tol.is_some() && cols > WS_FEATURES);
    // A column solver asked for a certificate continues from the refinement's point (see
    // [`polish`]), with or without working sets; so does softmax's batch method, whose
    // refinement takes every entry of W (`certificate/softmax.rs`).
    let polishing = plan.certificate.is_some() && settings.tol.is_some() && (cols > 0 || plan.objective.softmax);
    let mut working: Option<usize> = None;
    let mut screening = ws_cert.as_ref().and_then(|c| Screening::new(c, data, cols));
    // A model whose check solves it from any point (`refinement::first_check_solves`) is checked
    // before its first epoch, and its state built only if that check does not end the run: the
    // state of a column solver walks the columns, which are then never built.
    let mut before_epochs = checks_before_epochs(plan, data, settings, watch.holdout.is_some());
    // Otherwise the columns are built now, as the state will read them, so that every check
    // finds them at hand whichever back end runs the plan.
    if !before_epochs {
        let _ = data.csc();
    }
    // Copies of earlier columns never enter a working set, so their weights stay at zero; a
    // warm start's are folded onto the first column of their kind before the first epoch.
    let copies = ws_cert.as_ref().and_then(|c| super::copies::foldable(c, data));
    if let (Some(copies), Some(slot), true) = (copies, plan.weights(), warm) {
        copies.fold(&mut state.vectors[slot.0]);
    }
    // A check before the first epoch that moved the point is followed by one more.
    let mut recheck = before_epochs;
    // Whether the state holds what init derives from the weights.
    let mut built = !before_epochs;
    if built {
        backend.init(&mut state, data)?;
    }
    if let Some(cert) = &ws_cert {
        let checking = Instant::now();
        if let (_, Some(a)) =
            check_point(plan, &state, data, (None, false), |_| f64::INFINITY, &settings.halt(start, 0.0))
        {
            let w = state.weights(plan);
            working = Some(repick(&mut order, cert, w, &a.gradient, None, copies, SetSize::Violators));
        }
        check_seconds += checking.elapsed().as_secs_f64();
    }
    let check_every = if working.is_some() { WS_INNER } else { settings.check_every.max(1) };
    let mut history = DualHistory::default();
    // Whether the checks refine eagerly (see `certificate::check`): a run that polishes its
    // iterate with the refinement does at the checks that pick its working set.
    let mut eager = false;
    if settings.shards > 1 {
        super::shards::applies(plan).map_err(Stopped::Refused)?;
    }
    let mut checks = Checks::new(plan, settings);
    let mut epochs = 0;
    // A plan with a cadence ([`Plan::cadence`]) is checked when it says it is ready, once it
    // has visited enough rows since the last check, or when its estimate ([`Plan::estimate`])
    // is near the tolerance.
    let visits = |state: &State| plan.cadence.map_or(0.0, |c| state.scalars[c.visits.0]);
    let mut visited_at_check = visits(&state);
    let mut best: Option<Best> = None;
    while epochs < settings.max_epochs {
        // The check before the first epoch, where the model takes one: no epoch this time round.
        let first = std::mem::take(&mut before_epochs);
        if !first {
            if !built {
                let _ = data.csc();
                backend.init(&mut state, data)?;
                built = true;
            }
            let orders = order.next_orders();
            if settings.shards > 1 {
                state = sharded_epoch(plan, backend, &state, data, orders.rows, settings.shards)?;
            } else {
                backend.epoch(&mut state, data, &orders)?;
            }
            epochs += 1;
            if let (Some(a), true) = (plan.active_rows, rows > 0) {
                order.keep_rows(&state.vectors[a.flags.0], state.scalars[a.returned.0] > 0.5);
            }
        }
        // The epoch's own estimate of the gap, where it has one, says when a check would stop.
        let near = match (plan.estimate, settings.tol) {
            (Some(e), Some(tol)) => Some(state.scalars[e.0] <= crate::plan::ESTIMATE_SLACK * tol),
            _ => None,
        };
        let due = match plan.cadence {
            Some(c) => {
                state.scalars[c.ready.0] > 0.5
                    || visits(&state) - visited_at_check >= (crate::plan::Cadence::PASSES * data.rows()) as f64
                    || near == Some(true)
            }
            None => match near {
                Some(near) => near || epochs % crate::plan::ESTIMATE_EVERY == 0,
                None => epochs % check_every == 0,
            },
        } || (warm && epochs == 1)
            || first;
        if due {
            visited_at_check = visits(&state);
        }
        let for_rules = (settings.tol.is_some() && due) || watch.holdout.is_some();
        if for_rules || settings.trace {
            let checking = Instant::now();
            let mut flushed = state.clone();
            // A state never built has nothing pending.
            if built {
                backend.finish(&mut flushed, data)?;
            }
            eager = polishing && due;
            // A check the trace alone asks for reads the run's dual history but leaves it as it
            // was: its dual points and F would move the extrapolation and the stall test of the
            // checks the rules make, and with them the run (debian-files at C = 10 took 55 epochs
            // with --trace against 18 without).
            let mut scratch;
            let kept = if for_rules {
                &mut history
            } else {
                scratch = history.clone();
                &mut scratch
            };
            // A check only the trace asks for is left out of the run's time, and so out of the
            // time limit's: only Ctrl-C ends its refinement early.
            let excluded = if for_rules { test_seconds + traced_seconds } else { f64::INFINITY };
            let halt = settings.halt(start, excluded);
            // Between the checks a tolerance makes, a check only the trace asks for takes no
            // Newton refinement: its gap reads the best dual bound the run's checks have found
            // (from the history), which bounds F* at every epoch. Refined there too, it doubled
            // a traced run's wall time (debian-files at C = 100: the settling's 14-s check made
            // twice, at epochs 25 and 26). Without a tolerance the trace's checks are the only
            // ones, and they refine as the rules' would.
            let refines = for_rules || settings.tol.is_none();
            let rules_target = settings.target();
            let target = move |f: f64| if refines { rules_target(f) } else { f64::INFINITY };
            kept.at_epoch(epochs);
            let (mut eval, mut assessment) = check_point(plan, &flushed, data, (Some(kept), eager), target, &halt);
            if let (Some(cert), Some(s), Some(a), true) = (&ws_cert, screening.as_mut(), &assessment, due) {
                let (c, rows) = (plan.objective.loss_weight, data.rows());
                s.update(cert, c, rows, flushed.weights(plan), &a.gradient, eval.objective, a.plain_dual);
            }
            if polishing && due {
                if let Some(better) =
                    polish(plan, built.then_some(&mut *backend), data, &flushed, &eval, assessment.as_mut())?
                {
                    (state, flushed, eval) = (better.0.clone(), better.0, better.1);
                    // The first check's refinement aimed at tol·F at the point it started from,
                    // far above F*; one more check at the point it reached aims at tol·F there.
                    before_epochs = first && std::mem::take(&mut recheck);
                }
            }
            let gap = assessment.as_ref().map(|a| a.gap);
            if let (Some(cert), Some(a), true) = (&ws_cert, &assessment, due) {
                let w = flushed.weights(plan);
                working = Some(repick(&mut order, cert, w, &a.gradient, screening.as_ref(), copies, SetSize::Doubling));
            }
            let spent = checking.elapsed().as_secs_f64();
            let testing = Instant::now();
            let held_out = watch.test.filter(|_| settings.trace).map(|t| evaluate(plan, &flushed, t));
            test_seconds += testing.elapsed().as_secs_f64();
            bar.set_message(match gap {
                Some(g) => format!("F = {:.6}  gap {:.1e}  nnz {}", eval.objective, g, eval.nnz),
                None => format!("F = {:.6}  nnz {}", eval.objective, eval.nnz),
            });
            // The trace point's time leaves its own check out unless a rule asked for it.
            let own = if for_rules { 0.0 } else { spent };
            let seconds = start.elapsed().as_secs_f64() - test_seconds - traced_seconds - own;
            let stops = checks.record(epochs, &eval, gap, &flushed, seconds, held_out);
            // A check the trace asked for that stops the run (its gap met --tol) is the run's.
            if for_rules || stops {
                check_seconds += spent;
            } else {
                traced_seconds += spent;
            }
            if stops {
                break;
            }
            if let Some((held, patience)) = watch.holdout {
                let loss = evaluate(plan, &flushed, held).loss;
                match &best {
                    Some(b) if loss >= b.loss => {
                        if epochs - b.epoch >= patience {
                            checks.stop_early(format!(
                                "the held-out loss has not improved for {patience} epochs (best {loss:.6} at epoch {}, whose weights are returned)",
                                b.epoch,
                                loss = b.loss
                            ));
                            break;
                        }
                    }
                    _ => best = Some(Best { loss, epoch: epochs, state: flushed, eval, gap }),
                }
            }
        }
        if !first {
            bar.inc(1);
        }
        if checks.out_of_time(start.elapsed().as_secs_f64() - test_seconds - traced_seconds, epochs)
            || checks.interrupted(epochs)
        {
            break;
        }
    }
    bar.finish_and_clear();
    let holdout =
        best.as_ref().map(|b| Holdout { best_epoch: b.epoch, best_loss: b.loss, stopped: checks.stopped_early() });
    match best.filter(|_| checks.stopped_early()) {
        // Flushed when it was checked.
        Some(b) => {
            state = b.state;
            checks.report_instead(epochs, b.eval, b.gap);
        }
        None if built => backend.finish(&mut state, data)?,
        // The check before the first epoch ended the run: nothing was pending.
        None => {}
    }
    let Ended { status, rule, trace, at_end } = checks.end(epochs);
    let checking = Instant::now();
    let (eval, gap) = match at_end {
        // The state was flushed for that check exactly as `finish` has just flushed it.
        Some(checked) => checked,
        None => {
            let halt = settings.halt(start, test_seconds + traced_seconds);
            history.at_epoch(epochs);
            let (eval, assessment) =
                check_point(plan, &state, data, (Some(&mut history), eager), settings.target(), &halt);
            (eval, assessment.map(|a| a.gap))
        }
    };
    check_seconds += checking.elapsed().as_secs_f64();
    Ok(Outcome {
        state,
        epochs,
        seconds: start.elapsed().as_secs_f64() - test_seconds - traced_seconds,
        trace,
        status,
        rule,
        eval,
        gap,
        check_seconds,
        working_set: working,
        screened: screening.as_ref().map(Screening::count),
        holdout,
    })
}

/// A parameter bound from the data that is not finite (a step from a zero norm, say) stops the
/// run before its first epoch, named.
pub(super) fn check_params(plan: &Plan, state: &State) -> Result<(), Fault> {
    let bad = plan
        .scalars
        .iter()
        .zip(&state.scalars)
        .find(|(s, v)| s.role == crate::plan::ScalarRole::Param && !v.is_finite());
    match bad {
        Some((s, v)) => Err(Fault { what: format!("parameter `{}`", s.name), value: *v, step: 0.0, row: 0 }),
        None => Ok(()),
    }
}

/// The epoch with the lowest held-out loss so far, flushed, with what its check found.
struct Best {
    loss: f64,
    epoch: usize,
    state: State,
    eval: Evaluation,
    gap: Option<f64>,
}

/// F of flushed weights and, from the same margins, the certificate (one pass fewer than
/// evaluating and assessing apart). Its refinement ends early once `halt` says so.
fn check_point(
    plan: &Plan,
    state: &State,
    data: &DataView,
    (history, eager): (Option<&mut DualHistory>, bool),
    target: impl Fn(f64) -> f64,
    halt: &dyn Fn() -> bool,
) -> (Evaluation, Option<Assessment>) {
    let (eval, margins) = evaluate_with_margins(plan, state, data);
    let target = target(eval.objective);
    let assessment = certificate::check(plan, state, data, eval.objective, &margins, history, eager, target, halt);
    (eval, assessment)
}

/// A column solver continues from the point the certificate's Newton refinement reached when F
/// is lower there: on text data with near-duplicate columns, coordinate steps crawl along
/// directions the refinement solves in a few Newton steps, so the run gains what the check
/// already paid for. The state is rebuilt from the weights as for a warm start; the gap is F
/// at the new point minus the same dual bound (any dual point bounds F*). The polished state,
/// its evaluation, and the assessment updated in place. Without a back end (a check before the
/// first epoch, whose state is built only if the run goes on), the state is not rebuilt.
fn polish(
    plan: &Plan,
    backend: Option<&mut dyn Backend>,
    data: &DataView,
    flushed: &State,
    eval: &Evaluation,
    assessment: Option<&mut Assessment>,
) -> Result<Option<(State, Evaluation)>, Fault> {
    let Some(a) = assessment else { return Ok(None) };
    let (Some(polished), Some(slot)) = (a.polished.take(), plan.weights()) else { return Ok(None) };
    let mut candidate = flushed.clone();
    candidate.vectors[slot.0] = polished.weights;
    if let Some(b) = plan.objective.intercept {
        candidate.scalars[b.0] += polished.intercept_shift;
    }
    if let Some(b) = plan.objective.class_intercept.filter(|_| !polished.class_shift.is_empty()) {
        candidate.vectors[b.0].iter_mut().zip(&polished.class_shift).for_each(|(b, s)| *b += s);
    }
    let gradient = polished.gradient;
    if let Some(backend) = backend {
        backend.init(&mut candidate, data)?;
    }
    let better = evaluate(plan, &candidate, data);
    if better.objective.partial_cmp(&eval.objective) != Some(std::cmp::Ordering::Less) {
        return Ok(None);
    }
    let dual = eval.objective - a.gap;
    a.gap = (better.objective - dual).max(0.0);
    // The working set is picked from the gradient at the new point.
    a.gradient = gradient;
    Ok(Some((candidate, better)))
}

/// One epoch in `k` shards ([`super::shards`]), for a plan that takes them: the averaged state.
/// (Whether the plan takes shards is checked once, before the first epoch.)
fn sharded_epoch(
    plan: &Plan,
    backend: &dyn Backend,
    state: &State,
    data: &DataView,
    rows: &[u32],
    k: usize,
) -> Result<State, Stopped> {
    let code = backend
        .shared()
        .ok_or_else(|| Stopped::Refused(format!("the {} back end cannot run shards", backend.name())))?;
    Ok(super::shards::epoch(plan, code.as_ref(), state, data, rows, k)?)
}

/// Points the epochs at a new working set; its size.
fn repick(
    order: &mut RowOrder,
    cert: &crate::plan::Certificate,
    w: &[f64],
    gradient: &[f64],
    screening: Option<&Screening>,
    copies: Option<&Copies>,
    size: SetSize,
) -> usize {
    let ws = working_set(cert, w, gradient, screening, copies, size);
    let n = ws.len();
    order.set_columns(ws);
    n
}

fn progress_bar(settings: &RunSettings) -> indicatif::ProgressBar {
    if !settings.progress {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(settings.max_epochs as u64);
    b.set_style(
        indicatif::ProgressStyle::with_template("{spinner} epoch {pos}/{len} [{bar:30}] {elapsed_precise} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::certificate::tests::cert;
    use crate::plan::Certificate;

    fn l1(l1: f64) -> Certificate {
        cert(l1, 0.0, f64::NEG_INFINITY, f64::INFINITY)
    }

    /// 1,000 features: 3 non-zero, 600 violating (|∇ⱼf| > l1 = 1) at zero, the rest not.
    fn case() -> (Vec<f64>, Vec<f64>) {
        let w: Vec<f64> = (0..1000).map(|j| if j < 3 { 1.0 } else { 0.0 }).collect();
        let g: Vec<f64> = (0..1000).map(|j| if j < 603 { 1.0 + j as f64 } else { 0.5 }).collect();
        (w, g)
    }

    #[test]
    fn the_first_working_set_holds_every_violator() {
        let (w, g) = case();
        let set = working_set(&l1(1.0), &w, &g, None, None, SetSize::Violators);
        assert_eq!(set, (0..603).collect::<Vec<u32>>());
    }

    #[test]
    fn a_later_working_set_holds_the_support_and_the_worst_violators() {
        let (w, g) = case();
        let set = working_set(&l1(1.0), &w, &g, None, None, SetSize::Doubling);
        assert_eq!(set.len(), WS_MIN);
        // The support, then the largest |∇ⱼf| (they grow with j here).
        let worst: Vec<u32> = (0..3).chain(603 - (WS_MIN as u32 - 3)..603).collect();
        assert_eq!(set, worst);
    }
}
