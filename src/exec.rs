//! Stage 5: running a plan on data. The interpreter is the reference back end; the driver owns
//! epochs, the seeded row order, progress, traces and divergence. This module reads only the
//! plan and the data, never the front end.

pub(crate) mod alm;
pub mod calibrate;
pub mod cancel;
pub mod certificate;
pub mod collective;
mod copies;
pub mod driver;
pub mod evaluate;
pub mod interp;
pub mod jit;
pub(crate) mod linalg;
pub mod passes;
pub mod screening;
pub mod shards;
pub mod split_dcd;
pub mod split_newton;
mod stopping;
pub mod stream;

pub use crate::data::{bound_scalars, DataView};
use crate::plan::Plan;

/// Everything a plan reads and writes, laid out flat so a compiled kernel can take pointers.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub scalars: Vec<f64>,
    pub vectors: Vec<Vec<f64>>,
}

impl State {
    /// Fresh state: parameters bound (data-dependent ones from `facts`), vectors at their
    /// initial values, the labels loaded.
    pub fn new(plan: &Plan, facts: &crate::data::DataFacts, labels: &[f64]) -> State {
        let scalars = bound_scalars(plan, facts);
        let dims = facts.dims();
        let vectors = plan
            .vectors
            .iter()
            .map(|v| match v.role {
                crate::plan::VecRole::Labels => labels.to_vec(),
                // Every weight 1 until a back end reads the view's ([`DataView::weight`]).
                crate::plan::VecRole::RowWeights => vec![1.0; dims.size(v)],
                _ => vec![v.init; dims.size(v)],
            })
            .collect();
        State { scalars, vectors }
    }

    pub fn weights<'a>(&'a self, plan: &Plan) -> &'a [f64] {
        plan.weights().map_or(&[], |w| &self.vectors[w.0])
    }

    /// The intercept b (0 for a model without one).
    pub fn intercept(&self, plan: &Plan) -> f64 {
        plan.objective.intercept.map_or(0.0, |b| self.scalars[b.0])
    }
}

/// The back end a run uses: compiled code when asked for and possible, else the interpreter
/// (with the reason it fell back).
pub struct Selected<'p> {
    pub backend: Box<dyn Backend + 'p>,
    pub fallback: Option<String>,
    pub jit_seconds: f64,
}

pub fn select_backend<'p>(plan: &'p Plan, facts: &crate::data::DataFacts, want_jit: bool) -> Selected<'p> {
    choose(plan, &bound_scalars(plan, facts), want_jit)
}

/// Compiled code when asked for and possible (the parameters bound to `scalars`), else the
/// interpreter with the reason.
fn choose<'p>(plan: &'p Plan, scalars: &[f64], want_jit: bool) -> Selected<'p> {
    if !want_jit {
        return Selected { backend: Box::new(interp::Interpreter { plan }), fallback: None, jit_seconds: 0.0 };
    }
    match jit::compile(plan, scalars) {
        Ok(kernel) => {
            let secs = kernel.compile_seconds;
            Selected { backend: Box::new(jit::JitBackend { plan, kernel }), fallback: None, jit_seconds: secs }
        }
        Err(e) => Selected {
            backend: Box::new(interp::Interpreter { plan }),
            fallback: Some(format!("the JIT cannot compile this plan ({e}); running the interpreter")),
            jit_seconds: 0.0,
        },
    }
}

/// The back end of [`select_backend`], chosen (and the plan compiled) the first time a phase
/// runs: a run whose check before the first epoch ends it (few features, the driver) compiles
/// nothing, 1–3 ms of a small fit. A plan the JIT cannot compile runs on the interpreter, with
/// the reason, as when it is chosen at once.
pub struct LazyBackend<'p> {
    plan: &'p Plan,
    scalars: Vec<f64>,
    want_jit: bool,
    chosen: Option<Box<dyn Backend + 'p>>,
    /// Why the JIT was not used, once a phase has run.
    pub fallback: Option<String>,
    /// Seconds the JIT took (0 until a phase has run).
    pub jit_seconds: f64,
}

impl<'p> LazyBackend<'p> {
    pub fn new(plan: &'p Plan, facts: &crate::data::DataFacts, want_jit: bool) -> Self {
        let scalars = bound_scalars(plan, facts);
        LazyBackend { plan, scalars, want_jit, chosen: None, fallback: None, jit_seconds: 0.0 }
    }

    /// Compiles the plan now (or chooses the interpreter), before the run's clock starts.
    pub fn choose(&mut self) {
        self.backend();
    }

    fn backend(&mut self) -> &mut (dyn Backend + 'p) {
        if self.chosen.is_none() {
            let selected = choose(self.plan, &self.scalars, self.want_jit);
            (self.fallback, self.jit_seconds) = (selected.fallback, selected.jit_seconds);
            self.chosen = Some(selected.backend);
        }
        self.chosen.as_deref_mut().expect("chosen above")
    }
}

impl Backend for LazyBackend<'_> {
    /// The back end that ran, or the one asked for when no phase ran.
    fn name(&self) -> &'static str {
        match &self.chosen {
            Some(b) => b.name(),
            None if self.want_jit => "jit",
            None => "interpreter",
        }
    }
    fn init(&mut self, state: &mut State, data: &DataView) -> Result<(), Fault> {
        self.backend().init(state, data)
    }
    fn epoch(&mut self, state: &mut State, data: &DataView, orders: &Orders) -> Result<(), Fault> {
        self.backend().epoch(state, data, orders)
    }
    fn finish(&mut self, state: &mut State, data: &DataView) -> Result<(), Fault> {
        self.backend().finish(state, data)
    }
    /// None until a phase has run: the driver builds the state (init) before any epoch.
    fn shared(&self) -> Option<Box<dyn SharedEpoch + '_>> {
        self.chosen.as_ref().and_then(|b| b.shared())
    }
}

/// A run stopped because a guarded value was NaN or infinite.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub what: String,
    pub value: f64,
    /// The step counter when it happened.
    pub step: f64,
    /// The row (0-based, in file order) being processed.
    pub row: usize,
}

impl Fault {
    /// A reduction across the ranks that did not complete, as the step that stopped the run.
    pub fn across_ranks(e: &collective::CollectiveError) -> Fault {
        Fault { what: format!("a sum across the ranks ({e})"), value: f64::NAN, step: 0.0, row: 0 }
    }
}

/// What an epoch walks: this epoch's permutations of the rows and of the columns (empty when
/// the plan walks none), and the ranks its rows are split across, when they are (the plan's
/// reductions then add up the ranks' sums; [`crate::plan::distribute`]).
#[derive(Clone, Copy)]
pub struct Orders<'a> {
    pub rows: &'a [u32],
    pub cols: &'a [u32],
    pub ranks: Option<&'a dyn collective::Collective>,
}

impl<'a> Orders<'a> {
    pub const NONE: Orders<'static> = Orders { rows: &[], cols: &[], ranks: None };

    /// The rows in this order, no columns, one process.
    pub fn rows(rows: &'a [u32]) -> Self {
        Orders { rows, cols: &[], ranks: None }
    }
}

impl std::fmt::Debug for Orders<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orders")
            .field("rows", &self.rows.len())
            .field("cols", &self.cols.len())
            .field("ranks", &self.ranks.map_or(1, |r| r.size()))
            .finish()
    }
}

/// A way to run plans: the interpreter, or compiled code.
pub trait Backend {
    fn name(&self) -> &'static str;
    /// The plan's init phase: derived state from the weights.
    fn init(&mut self, state: &mut State, data: &DataView) -> Result<(), Fault>;
    /// One pass (or batch iteration), `perm(m)` and `perm(d)` taken from `orders`.
    fn epoch(&mut self, state: &mut State, data: &DataView, orders: &Orders) -> Result<(), Fault>;
    /// Flushes pending lazy work.
    fn finish(&mut self, state: &mut State, data: &DataView) -> Result<(), Fault>;
    /// The epoch and the flush as code that several threads may run at once, each on a state
    /// of its own ([`shards`]); None for a back end that cannot share its code.
    fn shared(&self) -> Option<Box<dyn SharedEpoch + '_>> {
        None
    }
}

/// A back end's epoch and flush without its mutable parts, for [`shards`].
pub trait SharedEpoch: Sync {
    fn epoch(&self, state: &mut State, data: &DataView, orders: &Orders) -> Result<(), Fault>;
    fn finish(&self, state: &mut State, data: &DataView) -> Result<(), Fault>;
}
