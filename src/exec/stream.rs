//! Running a plan over data streamed a block of rows at a time (`optc run --stream`): an epoch
//! is one pass over the file in file order, the plan's epoch body run on each block with the
//! solver state carried from block to block, so memory is the state (O(d)) plus the blocks in
//! flight. F and the duality gap are sums over rows and a gradient Xᵀu, accumulated block by
//! block in passes of their own.
//!
//! Running the epoch body per block is the same algorithm as one epoch over the file in file
//! order when the body is one loop over the rows: the step counters live in the state and
//! continue, the lazy stamps are flushed by `finish` only where the in-memory driver flushes
//! (a copy at each check, the state at the end). SMM's per-epoch history (prefix sums over the
//! epoch's steps, vec\[m]) restarts at each block instead, after an exact closed-form catch-up
//! of every coordinate: the same iterates up to rounding, with history of one block's size.
//!
//! On several ranks ([`Collective`]), each streams its own rows. After every epoch the ranks'
//! flushed states are averaged (iterative parameter mixing, as `--shards` mixes threads in one
//! process: [`super::shards`]), and F and the gap are the same sums as alone, each rank's rows'
//! share added up by the reduction, so the certificate is the one-process certificate of the
//! mixed weights. Every decision that ends the run (a fault, a check, the clock, Ctrl-C) is taken
//! from reduced values, so all ranks take it together and none waits on one that left.

pub mod dictionary;

use super::certificate::reduced::{self, Balance, DualSums};
use super::certificate::{into_loss_domain, reg_part, row_conjugate, softmax_dual_point};
use super::collective::{Collective, CollectiveError};
use super::driver::{check_params, Outcome, RunSettings};
use super::evaluate::{evaluate, evaluate_with_margins, margin, Evaluation};
use super::interp::{eval_at, Env};
use super::stopping::{Checks, Ended};
use super::{Backend, DataView, Fault, Orders, State};
use crate::data::stream::{PassError, Streamed};
use crate::data::DataFacts;
use crate::plan::{Certificate, Len, Plan, Range, Stmt, VecRole};
use crate::solvers::SolverKind;
use std::time::Instant;

/// Whether `plan` can run a block at a time; Err says why not, in words for the user.
pub fn streamable(plan: &Plan) -> Result<(), String> {
    let solver = plan.info.solver;
    if plan.reads_columns() {
        return Err(format!("`{solver}` walks the columns of X, which needs the whole matrix in memory"));
    }
    if plan.uses_operator() {
        return Err(format!("`{solver}` applies the operator B to all of w each step"));
    }
    let loops: Vec<usize> = plan
        .epoch
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Stmt::For(Range::Perm(Len::Rows), _)))
        .map(|(k, _)| k)
        .collect();
    let [at] = loops.as_slice() else {
        return Err(format!("an epoch of `{solver}` is not one pass over the rows"));
    };
    let (before, after) = (&plan.epoch[..*at], &plan.epoch[at + 1..]);
    // SMM (and online DC, built on it) restart their per-epoch history after a closed-form
    // catch-up: done per block it is the same algorithm (see the module's doc).
    let restarts_history = solver.can().restarts_each_pass;
    let per_pass_work = !before.is_empty() || !after.is_empty();
    if per_pass_work && !restarts_history {
        return Err(format!(
            "an epoch of `{solver}` does work once per pass besides its steps ({}); run a block at a time it would be done once per block",
            if solver == SolverKind::Smidas { "its step η₀/√e counts epochs" } else { "before or after the loop over the rows" }
        ));
    }
    if let Some(v) = plan.vectors.iter().find(|v| v.len == Len::Rows && !v.role.is_input() && !restarts_history) {
        return Err(format!(
            "`{solver}` keeps per-row state (`{}`) across epochs, which needs every row in memory",
            v.name
        ));
    }
    Ok(())
}

/// A streamed run that stopped without an answer.
#[derive(Debug)]
pub enum StreamStop {
    /// A guarded value went NaN or infinite, at this file line.
    Fault { fault: Fault, line: u32 },
    /// The file could not be read again as the first pass read it.
    Data(String),
    /// Another rank stopped (it says why); this one stops with it.
    Elsewhere,
    /// A reduction across the ranks failed: a rank did not arrive, or the transport broke.
    Collective(CollectiveError),
    /// The plan cannot run on several ranks.
    Refused(String),
}

impl From<CollectiveError> for StreamStop {
    fn from(e: CollectiveError) -> Self {
        StreamStop::Collective(e)
    }
}

/// What every rank learns after a pass: whether any rank failed (then each stops, the failed
/// one with its own error), and `sums` added up across the ranks. Alone, the pass's own result.
fn agree<T>(ranks: &dyn Collective, passed: Result<T, StreamStop>, sums: &mut [f64]) -> Result<T, StreamStop> {
    agree_on(ranks, passed, sums, Reduce::Sum)
}

/// How [`agree_on`] combines the ranks' values.
#[derive(Clone, Copy)]
enum Reduce {
    Sum,
    Max,
}

/// [`agree`], the values combined by `how` (a failure flag survives a maximum as a sum).
fn agree_on<T>(
    ranks: &dyn Collective,
    passed: Result<T, StreamStop>,
    values: &mut [f64],
    how: Reduce,
) -> Result<T, StreamStop> {
    if ranks.size() == 1 {
        return passed;
    }
    let mut all = values.to_vec();
    all.push(f64::from(u8::from(passed.is_err())));
    match how {
        Reduce::Sum => ranks.sum(&mut all)?,
        Reduce::Max => ranks.max(&mut all)?,
    }
    let failed = all.pop().is_some_and(|f| f > 0.0);
    values.copy_from_slice(&all);
    match passed {
        Err(e) => Err(e),
        Ok(_) if failed => Err(StreamStop::Elsewhere),
        Ok(t) => Ok(t),
    }
}

/// The ranks' flushed states averaged, in place, as [`super::shards::mix`] averages shards: the
/// state scalars and every vector but the labels.
fn mix(ranks: &dyn Collective, plan: &Plan, state: &mut State) -> Result<(), StreamStop> {
    if ranks.size() == 1 {
        return Ok(());
    }
    let scalars: Vec<usize> =
        (0..plan.scalars.len()).filter(|&id| plan.scalars[id].role == crate::plan::ScalarRole::State).collect();
    let vectors: Vec<usize> = (0..plan.vectors.len()).filter(|&id| !plan.vectors[id].role.is_input()).collect();
    let mut flat: Vec<f64> = scalars.iter().map(|&id| state.scalars[id]).collect();
    vectors.iter().for_each(|&id| flat.extend_from_slice(&state.vectors[id]));
    ranks.mean(&mut flat)?;
    let mut at = scalars.len();
    scalars.iter().zip(&flat).for_each(|(&id, &v)| state.scalars[id] = v);
    for &id in &vectors {
        let n = state.vectors[id].len();
        state.vectors[id].copy_from_slice(&flat[at..at + n]);
        at += n;
    }
    Ok(())
}

impl From<PassError<StreamStop>> for StreamStop {
    fn from(e: PassError<StreamStop>) -> Self {
        match e {
            PassError::Data(m) => StreamStop::Data(m),
            PassError::Stopped(s) => s,
        }
    }
}

/// The rows a run passes over: a streamed file's blocks, or this rank's rows held in memory
/// (`mpirun` without `--stream`): one block that stays, so per-row state (margins, curvatures)
/// lives from epoch to epoch, with the file line of each row.
#[derive(Clone, Copy)]
pub enum Rows<'a> {
    Streamed(&'a Streamed),
    Resident(DataView<'a>, &'a [u32]),
}

impl Rows<'_> {
    fn pass<E>(&self, mut f: impl FnMut(&DataView, &[u32]) -> Result<(), E>) -> Result<(), PassError<E>> {
        match self {
            Rows::Streamed(s) => s.pass(f),
            Rows::Resident(view, lines) => f(view, lines).map_err(PassError::Stopped),
        }
    }

    fn features(&self) -> usize {
        match self {
            Rows::Streamed(s) => s.features,
            Rows::Resident(view, _) => view.features,
        }
    }

    fn classes(&self) -> usize {
        match self {
            Rows::Streamed(s) => s.classes,
            Rows::Resident(view, _) => view.classes,
        }
    }

    /// A view of no rows, for what only w decides (the penalties, the operator's term).
    fn none(&self) -> DataView<'_> {
        let nothing = DataView::new(&[0], &[], &[], &[], self.features()).with_classes(self.classes());
        match self {
            Rows::Streamed(_) => nothing,
            Rows::Resident(view, _) => nothing.with_operator(view.operator),
        }
    }
}

/// A finished streamed run.
pub struct StreamOutcome {
    pub outcome: Outcome,
    /// F at w = 0 (the cold start), summed during the first epoch's pass.
    pub start_objective: f64,
    /// Passes over the file: epochs, and two per certificate check (one without a gap).
    pub passes: usize,
    /// Seconds in the epochs' passes (reading the file included), for the speed per non-zero.
    pub epoch_seconds: f64,
}

/// Why a streamed check gives no gap for `plan`, if it gives none.
pub fn no_streamed_gap(plan: &Plan) -> Option<&'static str> {
    let obj = &plan.objective;
    match plan.certificate {
        None => Some(plan.uncertified.reason()),
        Some(_) if obj.dual.is_some() => Some("the streamed certificate does not take a dual method's own point"),
        Some(_) => None,
    }
}

/// Runs `plan` (which passed [`streamable`]) over `data` from a cold start: init, epochs of one
/// pass each until the stopping rule, finish. As [`super::driver::run`], without working sets,
/// warm starts or a holdout.
///
/// On several ranks, a plan whose loops over the rows sum ([`crate::plan::distribute`]) adds up
/// the ranks' sums inside each epoch, and is then the one-process algorithm; any other plan's
/// states are averaged after each epoch.
pub fn run(
    plan: &Plan,
    backend: &mut dyn Backend,
    data: Rows,
    facts: &DataFacts,
    settings: &RunSettings,
    ranks: &dyn Collective,
) -> Result<StreamOutcome, StreamStop> {
    let reduces = !plan.reductions().is_empty();
    if ranks.size() > 1 && !reduces {
        super::shards::applies(plan).map_err(|why| StreamStop::Refused(format!("on several ranks: {why}")))?;
    }
    let mixes = ranks.size() > 1 && !reduces;
    let nothing = data.none();
    // The view init, finish and the flushes read: the rows themselves when they stay, else none
    // (per-row buffers are then of one block, never the file's length).
    let rest = match data {
        Rows::Resident(view, _) => view,
        Rows::Streamed(_) => nothing,
    };
    let mut state = State::new(plan, &DataFacts { rows: rest.rows(), ..*facts }, rest.labels);
    state.scalars = super::bound_scalars(plan, facts);
    check_params(plan, &state).map_err(|fault| StreamStop::Fault { fault, line: 0 })?;
    let start = Instant::now();
    let at_start = |fault| StreamStop::Fault { fault, line: 0 };
    // Every rank learns of a fault on one: none then waits for it in a reduction.
    let inited = backend.init(&mut state, &rest).map_err(at_start);
    agree(ranks, inited, &mut [])?;
    let start_penalty = evaluate(plan, &state, &nothing).objective;
    let mut start_loss = 0.0;
    let (mut passes, mut epoch_seconds, mut check_seconds) = (0, 0.0, 0.0);
    let mut best_dual = f64::NEG_INFINITY;
    let mut checks = Checks::new(plan, settings);
    let check_every = settings.check_every.max(1);
    let mut order: Vec<u32> = vec![];
    // Rows that stay are walked in a fresh order each epoch, as in memory (streamed blocks in
    // file order); each rank its own.
    let mut shuffled = match data {
        Rows::Resident(view, _) => Some(super::driver::RowOrder::new(view.rows(), settings.seed + ranks.rank() as u64)),
        Rows::Streamed(_) => None,
    };
    let mut epochs = 0;
    while epochs < settings.max_epochs {
        let pass_start = Instant::now();
        let first = epochs == 0;
        let passed = data.pass(|view, lines| {
            let rows = view.rows();
            if first {
                start_loss += loss_at_zero(plan, &state, view);
            }
            let order = match shuffled.as_mut() {
                Some(o) => o.next_epoch(),
                None => {
                    if order.len() < rows {
                        order = (0..rows as u32).collect();
                    }
                    fit_rows(plan, &mut state, view);
                    &order[..rows]
                }
            };
            let orders = Orders { rows: order, cols: &[], ranks: reduces.then_some(ranks) };
            backend.epoch(&mut state, view, &orders).map_err(|fault| {
                let line = lines.get(fault.row).copied().unwrap_or(0);
                StreamStop::Fault { fault, line }
            })
        });
        let mut passed = passed.map_err(StreamStop::from);
        if let (true, Err(StreamStop::Fault { fault, line })) = (reduces && ranks.size() > 1, &passed) {
            // The other ranks may be inside one of this epoch's reductions, which this rank
            // will never reach: the job ends now, not at their timeout.
            ranks.abandon(&format!(
                "the solver diverged: at step t = {} (line {line} of this rank's rows), {} is {}",
                crate::symbolic::fmt_num(fault.step),
                fault.what,
                fault.value
            ));
            return Err(StreamStop::Fault { fault: fault.clone(), line: *line });
        }
        if mixes {
            // Flushed (as a shard is) before the states are averaged.
            passed = passed.and_then(|()| {
                fit_rows_at_rest(plan, &mut state, data, &rest);
                backend.finish(&mut state, &rest).map_err(at_start)
            });
        }
        let mut sums = [if first { start_loss } else { 0.0 }];
        agree(ranks, passed, &mut sums)?;
        if first {
            start_loss = sums[0];
        }
        if mixes {
            mix(ranks, plan, &mut state)?;
        }
        passes += 1;
        epoch_seconds += pass_start.elapsed().as_secs_f64();
        epochs += 1;
        let due = epochs % check_every == 0;
        let mut converged = false;
        if (settings.tol.is_some() && due) || settings.trace {
            let checking = Instant::now();
            let mut flushed = state.clone();
            fit_rows_at_rest(plan, &mut flushed, data, &rest);
            let flushing = backend.finish(&mut flushed, &rest).map_err(at_start);
            agree(ranks, flushing, &mut [])?;
            let (eval, gap, n) = check(plan, &flushed, data, &mut best_dual, ranks)?;
            passes += n;
            check_seconds += checking.elapsed().as_secs_f64();
            converged = checks.record(epochs, &eval, gap, &flushed, start.elapsed().as_secs_f64(), None);
        }
        if checks.stop_together(ranks, converged, start.elapsed().as_secs_f64(), epochs)? {
            break;
        }
    }
    fit_rows_at_rest(plan, &mut state, data, &rest);
    let flushing = backend.finish(&mut state, &rest).map_err(at_start);
    agree(ranks, flushing, &mut [])?;
    let Ended { status, rule, trace, at_end } = checks.end(epochs);
    let checking = Instant::now();
    let (eval, gap) = match at_end {
        Some(checked) => checked,
        None => {
            let (eval, gap, n) = check(plan, &state, data, &mut best_dual, ranks)?;
            passes += n;
            (eval, gap)
        }
    };
    check_seconds += checking.elapsed().as_secs_f64();
    let start_objective = plan.objective.loss_weight * start_loss / facts.rows.max(1) as f64 + start_penalty;
    let outcome = Outcome {
        state,
        epochs,
        seconds: start.elapsed().as_secs_f64(),
        trace,
        status,
        rule,
        eval,
        gap,
        check_seconds,
        working_set: None,
        screened: None,
        holdout: None,
    };
    Ok(StreamOutcome { outcome, start_objective, passes, epoch_seconds })
}

/// Sizes the state's per-row buffers to this block: the labels are the block's, per-epoch
/// history (SMM's prefix sums) is the block's length.
fn fit_rows(plan: &Plan, state: &mut State, view: &DataView) {
    let dims = view.dims();
    for (v, decl) in state.vectors.iter_mut().zip(&plan.vectors) {
        if decl.len != Len::Rows {
            continue;
        }
        if decl.role == VecRole::Labels {
            v.clear();
            v.extend_from_slice(view.labels);
        } else if decl.role == VecRole::RowWeights {
            v.clear();
            v.extend((0..view.rows()).map(|i| view.weight(i)));
        } else {
            v.resize(dims.size(decl), 0.0);
        }
    }
}

/// Per-row buffers sized for a flush: to no rows after streamed blocks, left alone when the
/// rows stay.
fn fit_rows_at_rest(plan: &Plan, state: &mut State, data: Rows, rest: &DataView) {
    if let Rows::Streamed(_) = data {
        fit_rows(plan, state, rest);
    }
}

/// Σᵢ ωᵢ·ℓ(yᵢ, 0) over the block's rows: F at the cold start, without a pass of its own.
fn loss_at_zero(plan: &Plan, state: &State, view: &DataView) -> f64 {
    let zero = State { scalars: vec![0.0; state.scalars.len()], vectors: vec![vec![]; state.vectors.len()] };
    if plan.objective.softmax {
        // Every score is 0: ℓ = log Σ_c e⁰ − 0 = ln k.
        return (view.classes.max(1) as f64).ln() * (0..view.rows()).map(|i| view.weight(i)).sum::<f64>();
    }
    let env = Env::new(plan, view.dims());
    let scratch = with_labels(plan, zero, view);
    (0..view.rows()).map(|i| view.weight(i) * eval_at(&env, &plan.objective.loss, &scratch, i, 0)).sum()
}

fn with_labels(plan: &Plan, mut state: State, view: &DataView) -> State {
    if let Some(y) = plan.labels() {
        state.vectors[y.0] = view.labels.to_vec();
    }
    state
}

/// F of flushed weights and, where [`no_streamed_gap`] allows, the duality gap of
/// docs/algorithms.md §10 at the dual point uᵢ = ℓ′(yᵢ, aᵢ) (softmax: pᵢ − e_{yᵢ}), made
/// feasible for a free intercept and scaled into the domain (the best dual value of the run's
/// checks kept in `best_dual`), and the passes it took: one for F and the sums of
/// [`DualSums`], one for θ where softmax's offsets need it, one for Σᵢ ℓ*(yᵢ, s·u′ᵢ) once the
/// scale s is known.
fn check(
    plan: &Plan,
    state: &State,
    data: Rows,
    best_dual: &mut f64,
    ranks: &dyn Collective,
) -> Result<(Evaluation, Option<f64>, usize), StreamStop> {
    let obj = &plan.objective;
    let nothing = data.none();
    let at_zero_rows = evaluate(plan, state, &nothing);
    let penalty = at_zero_rows.objective;
    let w = state.weights(plan);
    let b = state.intercept(plan);
    let width = if obj.softmax { data.classes().max(1) } else { 1 };
    let features = data.features();
    let cert =
        plan.certificate.filter(|c| no_streamed_gap(plan).is_none() && reduced::covers(c, nothing.operator, w.len()));
    let mut sums = cert.map(|c| DualSums::new(&c, features, width));
    // Σᵢ ωᵢ, the rows' total weight (m without weights): the balance's mean is weighted.
    let (mut m, mut loss, mut wrong, mut sq, mut total) = (0usize, 0.0, 0.0, 0.0, 0.0);
    let passed = data.pass(|view, _| {
        let rows = view.rows();
        m += rows;
        total += (0..rows).map(|i| view.weight(i)).sum::<f64>();
        if obj.softmax {
            let (e, scores) = evaluate_with_margins(plan, state, view);
            loss += e.loss * rows as f64;
            wrong += e.error.unwrap_or(0.0) * rows as f64;
            if let (Some(sums), Some(cert)) = (sums.as_mut(), cert.as_ref()) {
                let u = softmax_dual_point(view.labels, &scores, width);
                for (i, ui) in u.chunks(width).enumerate() {
                    sums.add(cert, view, i, ui);
                }
            }
            return Ok(());
        }
        let env = Env::new(plan, view.dims());
        let mut scratch = scratch_for(plan, state, view);
        for i in 0..rows {
            let a = margin(view, w, i) + b;
            scratch.scalars[obj.margin.0] = a;
            loss += view.weight(i) * eval_at(&env, &obj.loss, &scratch, i, 0);
            let y = view.labels[i];
            wrong += f64::from(u8::from((if a > 0.0 { 1.0 } else { -1.0 }) != y));
            sq += (a - y) * (a - y);
            if let (Some(sums), Some(cert)) = (sums.as_mut(), cert.as_ref()) {
                let u = into_loss_domain(cert.conjugate, y, eval_at(&env, &obj.dloss, &scratch, i, 0));
                sums.add(cert, view, i, &[u]);
            }
        }
        Ok::<(), StreamStop>(())
    });
    // Every rank's share of the sums, added up: the one-process sums.
    let mut all = vec![m as f64, loss, wrong, sq, total];
    all.extend_from_slice(sums.as_ref().map_or(&[][..], |s| &s.buf));
    agree(ranks, passed.map_err(StreamStop::from), &mut all)?;
    (m, loss, wrong, sq, total) = (all[0] as usize, all[1], all[2], all[3], all[4]);
    if let Some(sums) = sums.as_mut() {
        sums.buf.copy_from_slice(&all[5..]);
    }
    let mean = |v: f64| if m > 0 { v / m as f64 } else { 0.0 };
    let classification = plan.info.classification;
    let eval = Evaluation {
        objective: obj.loss_weight * mean(loss) + penalty,
        loss: mean(loss),
        nnz: at_zero_rows.nnz,
        nnz_rows: at_zero_rows.nnz_rows,
        error: classification.then(|| mean(wrong)),
        mse: (!classification).then(|| mean(sq)),
    };
    let (Some(cert), Some(sums)) = (cert, sums) else { return Ok((eval, None, 1)) };
    let mut passes = 1;
    let mut balance = sums.balance(&cert, total);
    if balance.needs_theta() {
        let mut theta = 0.0_f64;
        let passed = data.pass(|view, _| {
            let u = duals(plan, &cert, state, view, width);
            // A row of weight 0 is out of the dual: its entries need not stay in the domain.
            for (i, (ui, &y)) in u.chunks(width).zip(view.labels).enumerate() {
                if view.weight(i) > 0.0 {
                    theta = theta.max(balance.theta_of_row(y, ui));
                }
            }
            Ok::<(), StreamStop>(())
        });
        let mut most = [theta];
        agree_on(ranks, passed.map_err(StreamStop::from), &mut most, Reduce::Max)?;
        balance.set_theta(most[0]);
        passes += 1;
    }
    let c = obj.loss_weight;
    let z = sums.z(&cert, &balance, -c / m.max(1) as f64);
    let (s, reg) = reg_part(&cert, &z, width, nothing.operator);
    // `μ·l2sq(b)`: b is one more coordinate whose column is all ones, so R* adds the conjugate
    // of μ·½b² at z_b = −(c/m)·Σᵢ uᵢ, scaled as every z (as the in-memory dual does).
    let reg = match (cert.intercept, cert.intercept_l2 > 0.0, obj.softmax) {
        (true, true, false) => {
            let zb = -c / m.max(1) as f64 * sums.sum_u()[0] * s;
            reg + zb * zb / (2.0 * cert.intercept_l2)
        }
        _ => reg,
    };
    let mut conj = 0.0;
    if reg.is_finite() && balance != Balance::Impossible {
        let passed = data.pass(|view, _| {
            let mut u = duals(plan, &cert, state, view, width);
            for (i, (ui, &y)) in u.chunks_mut(width).zip(view.labels).enumerate() {
                let wi = view.weight(i);
                if wi > 0.0 {
                    balance.apply(cert.conjugate, y, ui);
                    conj += wi * row_conjugate(cert.conjugate, y, ui, s);
                }
            }
            Ok::<(), StreamStop>(())
        });
        let mut total = [conj];
        agree(ranks, passed.map_err(StreamStop::from), &mut total)?;
        conj = total[0];
        passes += 1;
    }
    let dual = match balance {
        Balance::Impossible => f64::NEG_INFINITY,
        _ => -c * mean(conj) - reg,
    };
    if dual.is_finite() {
        *best_dual = best_dual.max(dual);
    }
    let gap = eval.objective - *best_dual;
    let gap = if gap.is_nan() { f64::INFINITY } else { gap.max(0.0) };
    Ok((eval, Some(gap), passes))
}

/// A state whose only vector is the block's labels, for the loss expressions of one row.
fn scratch_for(plan: &Plan, state: &State, view: &DataView) -> State {
    with_labels(plan, State { scalars: state.scalars.clone(), vectors: vec![vec![]; state.vectors.len()] }, view)
}

/// The block's plain dual point, `width` entries a row: ℓ′(yᵢ, aᵢ) in the domain of ℓ*, or
/// softmax's pᵢ − e_{yᵢ}.
fn duals(plan: &Plan, cert: &Certificate, state: &State, view: &DataView, width: usize) -> Vec<f64> {
    if plan.objective.softmax {
        let (_, scores) = evaluate_with_margins(plan, state, view);
        return softmax_dual_point(view.labels, &scores, width);
    }
    let obj = &plan.objective;
    let (w, b) = (state.weights(plan), state.intercept(plan));
    let env = Env::new(plan, view.dims());
    let mut scratch = scratch_for(plan, state, view);
    (0..view.rows())
        .map(|i| {
            scratch.scalars[obj.margin.0] = margin(view, w, i) + b;
            into_loss_domain(cert.conjugate, view.labels[i], eval_at(&env, &obj.dloss, &scratch, i, 0))
        })
        .collect()
}
