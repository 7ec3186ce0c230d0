//! The stopping rule both drivers share (the in-memory one and the streamed one): what a run is
//! asked ([`RunSettings`]), what a check records (the trace, the last check's F and gap), when it
//! stops the run (the certified gap, F's progress for an uncertified model, a settled
//! reweighting, the time limit), the [`Status`] it ends with and the words that say why, so a
//! run says the same whichever reads its data. The drivers import these from here (and
//! `driver` re-exports them); nothing here imports a driver.

use super::evaluate::Evaluation;
use super::State;
use crate::plan::{Plan, Uncertified};
use std::time::{Duration, Instant};

/// What a run's checks have found so far, and what it stopped on.
pub(super) struct Checks<'a> {
    plan: &'a Plan,
    settings: &'a RunSettings,
    status: Status,
    rule: String,
    trace: Vec<TracePoint>,
    /// The epoch of the last check, its F and its gap: when the run ends right after it
    /// (converged), they are the ones reported, extrapolated dual included.
    last: Option<(usize, Evaluation, Option<f64>)>,
    /// F at the check before.
    previous: Option<f64>,
}

impl<'a> Checks<'a> {
    pub(super) fn new(plan: &'a Plan, settings: &'a RunSettings) -> Self {
        let rule = cap_rule(plan, settings.max_epochs);
        Checks { plan, settings, status: Status::MaxEpochs, rule, trace: vec![], last: None, previous: None }
    }

    /// Records the check after `epoch` (`seconds` into the run; `test`: the same weights on
    /// held-out rows) and whether the run has converged there: then the status says by which
    /// rule.
    pub(super) fn record(
        &mut self,
        epoch: usize,
        eval: &Evaluation,
        gap: Option<f64>,
        flushed: &State,
        seconds: f64,
        test: Option<Evaluation>,
    ) -> bool {
        if self.settings.trace {
            // One point an epoch: a second check before the first epoch replaces the first's.
            if self.trace.last().is_some_and(|p| p.epoch == epoch) {
                self.trace.pop();
            }
            self.trace.push(TracePoint { epoch, seconds, eval: eval.clone(), gap, test });
        }
        self.last = Some((epoch, eval.clone(), gap));
        let f = eval.objective;
        if let Some(done) = self.settings.tol.and_then(|tol| converged(self.plan, tol, f, gap, self.previous, flushed))
        {
            (self.status, self.rule) = (Status::Converged, done);
            return true;
        }
        self.previous = Some(f);
        false
    }

    /// Whether the time limit has passed after `epochs` epochs, `elapsed` seconds into the run
    /// (then the status says so). A run at its epoch cap stops on the cap instead.
    pub(super) fn out_of_time(&mut self, elapsed: f64, epochs: usize) -> bool {
        match self.settings.time_limit {
            Some(limit) if elapsed >= limit && epochs < self.settings.max_epochs => {
                (self.status, self.rule) = (Status::TimeLimit, format!("the time limit ({limit} s)"));
                true
            }
            _ => false,
        }
    }

    /// Whether the run was asked to stop ([`RunSettings::cancel`]) after `epochs` epochs (then
    /// the status says so).
    pub(super) fn interrupted(&mut self, epochs: usize) -> bool {
        if !self.settings.cancel.is_cancelled() {
            return false;
        }
        self.interrupt(epochs);
        true
    }

    /// Ends the run as interrupted after `epochs` epochs: this process's Ctrl-C, or another
    /// rank's.
    pub(super) fn interrupt(&mut self, epochs: usize) {
        (self.status, self.rule) = (Status::Interrupted, format!("an interrupt after epoch {epochs}"));
    }

    /// After `epochs` epochs, `elapsed` seconds in, on `ranks`: whether they all stop now, each
    /// with the same status. Convergence is decided from reduced values, the same bits on every
    /// rank, and reduced too so that no rank could go on alone; the clock and Ctrl-C are each
    /// rank's own, and one rank's stops them all (the clock first).
    pub(super) fn stop_together(
        &mut self,
        ranks: &dyn super::collective::Collective,
        converged: bool,
        elapsed: f64,
        epochs: usize,
    ) -> Result<bool, super::collective::CollectiveError> {
        let out_of_time = !converged && self.out_of_time(elapsed, epochs);
        let interrupted = !converged && !out_of_time && self.interrupted(epochs);
        let mut stop = [converged, out_of_time, interrupted].map(|b| f64::from(u8::from(b)));
        ranks.max(&mut stop)?;
        if stop[0] > 0.0 {
            return Ok(true);
        }
        if stop[1] > 0.0 {
            self.out_of_time(f64::INFINITY, epochs);
            return Ok(true);
        }
        if stop[2] > 0.0 {
            self.interrupt(epochs);
            return Ok(true);
        }
        Ok(false)
    }

    /// Ends the run on the held-out loss, for the reason given.
    pub(super) fn stop_early(&mut self, rule: String) {
        (self.status, self.rule) = (Status::EarlyStopped, rule);
    }

    pub(super) fn stopped_early(&self) -> bool {
        self.status == Status::EarlyStopped
    }

    /// The weights returned after `epochs` epochs are those of an earlier check (the held-out
    /// loss's best, flushed then): its F and gap are what the run reports.
    pub(super) fn report_instead(&mut self, epochs: usize, eval: Evaluation, gap: Option<f64>) {
        self.last = Some((epochs, eval, gap));
    }

    /// The status, the rule in words, the trace, and the last check's F and gap if it was
    /// made after exactly `epochs` epochs (else the caller checks the returned weights).
    pub(super) fn end(self, epochs: usize) -> Ended {
        let at_end = match self.last {
            Some((at, eval, gap)) if at == epochs => Some((eval, gap)),
            _ => None,
        };
        Ended { status: self.status, rule: self.rule, trace: self.trace, at_end }
    }
}

/// What [`Checks::end`] hands back.
pub(super) struct Ended {
    pub status: Status,
    pub rule: String,
    pub trace: Vec<TracePoint>,
    pub at_end: Option<(Evaluation, Option<f64>)>,
}

/// What a run that ends at its epoch cap says it stopped on.
fn cap_rule(plan: &Plan, max_epochs: usize) -> String {
    match (plan.certificate, plan.uncertified) {
        (None, Uncertified::Caps) => {
            format!("the epoch cap ({max_epochs}); no test applies to a stochastic method on a non-convex F")
        }
        _ => format!("the epoch cap ({max_epochs})"),
    }
}

/// The stopping rule at a check, given F, the certified gap (if any), F at the previous check
/// and the flushed state: why the run has converged, or None to go on.
fn converged(
    plan: &Plan,
    tol: f64,
    f: f64,
    gap: Option<f64>,
    previous: Option<f64>,
    flushed: &State,
) -> Option<String> {
    let bound = tol * f.abs();
    match gap {
        Some(g) if g <= bound => Some(format!("duality gap {} ≤ tol·|F| = {}", sci(g), sci(bound))),
        None if plan.uncertified == Uncertified::Progress && previous.is_some_and(|p| (p - f).abs() <= bound) => {
            Some(format!(
                "relative change of F {} ≤ tol = {} (no certificate for this model)",
                sci((previous.unwrap_or(f) - f).abs() / f.abs().max(f64::MIN_POSITIVE)),
                sci(tol)
            ))
        }
        None => match plan.uncertified {
            Uncertified::Gradient { norm } if flushed.scalars[norm.0] <= tol => Some(format!(
                "the gradient's norm ‖∇F‖ = {} of ‖∇F(0)‖ ≤ tol = {} at the last Newton step's start (no penalty: no duality gap, a Newton method's rule)",
                sci(flushed.scalars[norm.0]),
                sci(tol)
            )),
            Uncertified::Reweighting { change, rounds } if flushed.scalars[change.0] <= tol => Some(format!(
                "the reweighting settled: round {} moved no weight by more than {} ≤ tol = {} (relative) and kept the support (a fixed point of batch DC, not a certificate)",
                flushed.scalars[rounds.0],
                sci(flushed.scalars[change.0]),
                sci(tol)
            )),
            _ => None,
        },
        _ => None,
    }
}

#[derive(Clone, Debug)]
pub struct RunSettings {
    /// The epoch cap (batch solvers: iterations).
    pub max_epochs: usize,
    /// Stop once the certified gap is at most tol·|F| (checked after every epoch). None runs
    /// exactly `max_epochs` epochs (`--epochs N` without `--tol`).
    pub tol: Option<f64>,
    /// Stop after the epoch during which this many seconds passed.
    pub time_limit: Option<f64>,
    /// Check the certificate every this many epochs (and after the last).
    pub check_every: usize,
    pub seed: u64,
    /// Evaluate F after every epoch (costs a flush and a pass over the data).
    pub trace: bool,
    /// Show a progress bar on stderr (hidden when stderr is not a terminal).
    pub progress: bool,
    /// Stochastic epochs cut into this many shards on as many threads, their states averaged
    /// ([`super::shards`]); 1: none.
    pub shards: usize,
    /// Read after every epoch, and between the steps of a check's refinement: once set, the run
    /// ends `interrupted` with its last iterate.
    pub cancel: super::cancel::Cancel,
}

impl RunSettings {
    /// Exactly `epochs` epochs, no certificate checks between them, nothing shown.
    pub fn fixed(epochs: usize, seed: u64) -> RunSettings {
        RunSettings {
            max_epochs: epochs,
            tol: None,
            time_limit: None,
            check_every: 1,
            seed,
            trace: false,
            progress: false,
            shards: 1,
            cancel: Default::default(),
        }
    }

    /// Whether a check's refinement is to end now: the run was cancelled, or its time limit
    /// passed (counted from `start`, `excluded` seconds of tests and trace-only checks left out,
    /// as the rules count it; an infinite `excluded`, no limit). The refinement then keeps the
    /// dual value it has, a bound all the same, and the rules end the run after the check.
    pub(super) fn halt(&self, start: Instant, excluded: f64) -> impl Fn() -> bool + '_ {
        let limit = self
            .time_limit
            .and_then(|l| Duration::try_from_secs_f64(l + excluded).ok())
            .and_then(|d| start.checked_add(d));
        move || self.cancel.is_cancelled() || limit.is_some_and(|t| Instant::now() >= t)
    }

    /// The gap a check must reach to stop the run at F (0 without a tolerance: as tight as the
    /// certificate can make it).
    pub(super) fn target(&self) -> impl Fn(f64) -> f64 {
        let tol = self.tol;
        move |f: f64| tol.map_or(0.0, |t| t * f.abs())
    }

    /// Until the certified relative gap is ≤ tol, at most `max_epochs` epochs.
    pub fn to_tolerance(tol: f64, max_epochs: usize, seed: u64) -> RunSettings {
        RunSettings { tol: Some(tol), ..RunSettings::fixed(max_epochs, seed) }
    }
}

/// How a run ended (divergence is a [`super::Fault`] instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Converged,
    MaxEpochs,
    TimeLimit,
    /// The held-out loss stopped improving (`--holdout`).
    EarlyStopped,
    /// Stopped from outside ([`super::cancel::Cancel`]: Ctrl-C, a library caller).
    Interrupted,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Converged => "converged",
            Status::MaxEpochs => "max_epochs",
            Status::TimeLimit => "time_limit",
            Status::EarlyStopped => "early_stopped",
            Status::Interrupted => "interrupted",
        }
    }
}

#[derive(Clone, Debug)]
pub struct TracePoint {
    pub epoch: usize,
    pub seconds: f64,
    pub eval: Evaluation,
    pub gap: Option<f64>,
    /// The same weights on the held-out rows, when the run was given them: a trace then shows
    /// when more epochs stop paying off on unseen data, not only on F.
    pub test: Option<Evaluation>,
}

/// Two significant digits in scientific form, as gaps are read.
pub fn sci(v: f64) -> String {
    format!("{v:.1e}")
}
