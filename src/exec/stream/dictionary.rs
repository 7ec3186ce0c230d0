//! A dictionary learned from a file larger than memory (`optc run --stream` on a dictionary
//! model): every epoch is one pass over the file in file order, a block at a time, each block's
//! rows the order of that block's `dictionary` statement. D, SMM's A and B and the step count
//! n live in the state, so they carry from block to block as from batch to batch; only a block
//! of rows is in memory. The mean cost takes a pass of its own (at the end, and per epoch with
//! `--trace`), each block coded and weighted by its rows.

use super::StreamStop;
use crate::data::stream::Streamed;
use crate::exec::driver::{Outcome, RunSettings};
use crate::exec::evaluate::{evaluate, Evaluation};
use crate::exec::stopping::{Checks, Ended};
use crate::exec::{Backend, DataView, Orders, State};
use crate::plan::Plan;
use std::time::Instant;

/// Runs the dictionary `plan` over `data` for `settings.max_epochs` passes (or until
/// `settings.time_limit`), from `state`; the passes' blocks and the costs use `threads`
/// threads. `test` is evaluated at every trace point.
pub fn run(
    plan: &Plan,
    backend: &mut dyn Backend,
    data: &Streamed,
    settings: &RunSettings,
    mut state: State,
    threads: usize,
    test: Option<&DataView>,
) -> Result<Outcome, StreamStop> {
    let start = Instant::now();
    let mut order: Vec<u32> = vec![];
    let (mut epochs, mut check_seconds) = (0, 0.0);
    // The stopping rules and words the in-memory run uses: the passes, the time limit, an
    // interrupt (no tolerance: no gap bounds a non-convex cost).
    let mut checks = Checks::new(plan, settings);
    let fault = |fault: crate::exec::Fault, lines: &[u32]| {
        let line = lines.get(fault.row).or(lines.first()).copied().unwrap_or(0);
        StreamStop::Fault { fault, line }
    };
    while epochs < settings.max_epochs {
        data.pass(|view, lines| {
            let rows = view.rows();
            if order.len() < rows {
                order = (0..rows as u32).collect();
            }
            let view = view.with_threads(threads);
            backend.epoch(&mut state, &view, &Orders::rows(&order[..rows])).map_err(|f| fault(f, lines))
        })?;
        epochs += 1;
        if settings.trace {
            let checking = Instant::now();
            let eval = mean_cost(plan, &state, data, threads)?;
            let test = test.map(|t| evaluate(plan, &state, t));
            check_seconds += checking.elapsed().as_secs_f64();
            checks.record(epochs, &eval, None, &state, start.elapsed().as_secs_f64(), test);
        }
        if checks.out_of_time(start.elapsed().as_secs_f64(), epochs) || checks.interrupted(epochs) {
            break;
        }
    }
    let Ended { status, rule, trace, at_end } = checks.end(epochs);
    let checking = Instant::now();
    let eval = match at_end {
        Some((eval, _)) => eval,
        None => mean_cost(plan, &state, data, threads)?,
    };
    check_seconds += checking.elapsed().as_secs_f64();
    Ok(Outcome {
        state,
        epochs,
        seconds: start.elapsed().as_secs_f64(),
        trace,
        status,
        rule,
        eval,
        gap: None,
        check_seconds,
        working_set: None,
        screened: None,
        holdout: None,
    })
}

/// F(D) over the whole file in one pass: the blocks' mean costs weighted by their rows.
fn mean_cost(plan: &Plan, state: &State, data: &Streamed, threads: usize) -> Result<Evaluation, StreamStop> {
    let (mut total, mut rows) = (0.0, 0usize);
    let mut last = None;
    data.pass(|view, _| {
        let e = evaluate(plan, state, &view.with_threads(threads));
        total += e.loss * view.rows() as f64;
        rows += view.rows();
        last = Some(e);
        Ok::<(), StreamStop>(())
    })?;
    let mut eval = last.unwrap_or_else(|| {
        let nothing = DataView::new(&[0], &[], &[], &[], data.features).with_classes(data.classes);
        evaluate(plan, state, &nothing)
    });
    let penalty = eval.objective - plan.objective.loss_weight * eval.loss;
    eval.loss = if rows == 0 { 0.0 } else { total / rows as f64 };
    eval.objective = plan.objective.loss_weight * eval.loss + penalty;
    Ok(eval)
}
