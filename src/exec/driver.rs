//! The outer loop: epochs over a seeded permutation of the rows, progress, per-epoch traces,
//! and the flush at the end. A back end only ever runs one epoch or the finish.

use super::evaluate::{evaluate, Evaluation};
use super::{Backend, DataView, Fault, State};
use crate::plan::dump::DataFacts;
use crate::plan::Plan;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct RunSettings {
    pub epochs: usize,
    pub seed: u64,
    /// Evaluate F after every epoch (costs a flush and a pass over the data).
    pub trace: bool,
    /// Show a progress bar on stderr (hidden when stderr is not a terminal).
    pub progress: bool,
}

#[derive(Clone, Debug)]
pub struct TracePoint {
    pub epoch: usize,
    pub seconds: f64,
    pub eval: Evaluation,
}

#[derive(Clone, Debug)]
pub struct Outcome {
    /// Flushed: the weights are exact.
    pub state: State,
    pub epochs: usize,
    pub seconds: f64,
    pub trace: Vec<TracePoint>,
}

/// The row order of every epoch: one ChaCha stream per run, so a seed fixes the whole run on
/// every platform.
pub struct RowOrder {
    rng: rand_chacha::ChaCha8Rng,
    order: Vec<u32>,
}

impl RowOrder {
    pub fn new(rows: usize, seed: u64) -> Self {
        RowOrder { rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed), order: (0..rows as u32).collect() }
    }
    pub fn next_epoch(&mut self) -> &[u32] {
        self.order.shuffle(&mut self.rng);
        &self.order
    }
}

pub fn run(
    plan: &Plan,
    backend: &mut dyn Backend,
    data: &DataView,
    facts: &DataFacts,
    settings: &RunSettings,
) -> Result<Outcome, Fault> {
    let mut state = State::new(plan, facts, data.labels);
    let bad_param = plan
        .scalars
        .iter()
        .zip(&state.scalars)
        .find(|(s, v)| s.role == crate::plan::ScalarRole::Param && !v.is_finite());
    if let Some((s, v)) = bad_param {
        return Err(Fault { what: format!("parameter `{}`", s.name), value: *v, step: 0.0, row: 0 });
    }
    let mut order = RowOrder::new(data.rows(), settings.seed);
    let bar = if settings.progress {
        let b = indicatif::ProgressBar::new(settings.epochs as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} epoch {pos}/{len} [{bar:30}] {elapsed_precise} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let start = Instant::now();
    let mut trace = vec![];
    for epoch in 1..=settings.epochs {
        backend.epoch(&mut state, data, order.next_epoch())?;
        if settings.trace {
            let mut flushed = state.clone();
            backend.finish(&mut flushed, data)?;
            let eval = evaluate(plan, &flushed, data);
            bar.set_message(format!("F = {:.6}", eval.objective));
            trace.push(TracePoint { epoch, seconds: start.elapsed().as_secs_f64(), eval });
        }
        bar.inc(1);
    }
    backend.finish(&mut state, data)?;
    bar.finish_and_clear();
    Ok(Outcome { state, epochs: settings.epochs, seconds: start.elapsed().as_secs_f64(), trace })
}
