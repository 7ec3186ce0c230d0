//! Stage 5: running a plan on data. The interpreter is the reference back end; the driver owns
//! epochs, the seeded row order, progress, traces and divergence. This module reads only the
//! plan and the data, never the front end.

pub mod calibrate;
pub mod certificate;
pub mod driver;
pub mod evaluate;
pub mod interp;
pub mod jit;

use crate::plan::{Len, Plan, ScalarRole};

/// The data a plan reads: CSR rows with 0-based feature indices, the mapped labels, and, for
/// plans that walk columns, a CSC copy.
#[derive(Clone, Copy, Debug)]
pub struct DataView<'a> {
    pub indptr: &'a [usize],
    pub indices: &'a [u32],
    pub values: &'a [f64],
    pub labels: &'a [f64],
    /// d: the feature count the weights have (test data may have more; those are ignored).
    pub features: usize,
    /// 1 + the largest column index, known for certain: computed by [`DataView::new`] or taken
    /// from a validated matrix ([`crate::data::Dataset::view`]). Compiled kernels rely on it.
    pub(crate) columns: usize,
    /// The same matrix by columns (`col(Xc, j)`), d columns, row indices < m.
    pub csc: Option<&'a crate::data::Columns>,
}

impl<'a> DataView<'a> {
    /// A view of raw CSR arrays; scans the column indices once to learn their bound.
    pub fn new(indptr: &'a [usize], indices: &'a [u32], values: &'a [f64], labels: &'a [f64], features: usize) -> Self {
        let columns = indices.iter().max().map_or(0, |&j| j as usize + 1);
        DataView { indptr, indices, values, labels, features, columns, csc: None }
    }

    /// The same view with its columns (built by [`crate::data::Columns::of`]).
    pub fn with_columns(self, csc: &'a crate::data::Columns) -> Self {
        DataView { csc: Some(csc), ..self }
    }

    pub fn rows(&self) -> usize {
        self.indptr.len() - 1
    }

    pub fn columns(&self) -> usize {
        self.columns
    }
}

/// Everything a plan reads and writes, laid out flat so a compiled kernel can take pointers.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub scalars: Vec<f64>,
    pub vectors: Vec<Vec<f64>>,
}

impl State {
    /// Fresh state: parameters bound (data-dependent ones from `facts`), vectors at their
    /// initial values, the labels loaded.
    pub fn new(plan: &Plan, facts: &crate::plan::dump::DataFacts, labels: &[f64]) -> State {
        let scalars = bound_scalars(plan, facts);
        let vectors = plan
            .vectors
            .iter()
            .map(|v| match (v.role, v.len) {
                (crate::plan::VecRole::Labels, _) => labels.to_vec(),
                (_, Len::Rows) => vec![v.init; facts.rows],
                (_, Len::Features) => vec![v.init; facts.features],
            })
            .collect();
        State { scalars, vectors }
    }

    pub fn weights<'a>(&'a self, plan: &Plan) -> &'a [f64] {
        plan.weights().map_or(&[], |w| &self.vectors[w.0])
    }
}

/// The initial scalars: parameters bound to their values (data-dependent ones from `facts`),
/// state and temporaries at 0. The JIT folds the parameters into the code from this.
pub fn bound_scalars(plan: &Plan, facts: &crate::plan::dump::DataFacts) -> Vec<f64> {
    plan.scalars
        .iter()
        .map(|s| match s.role {
            ScalarRole::Param => s.init.value(Some(facts)).unwrap_or(f64::NAN),
            ScalarRole::State => s.init.value(Some(facts)).unwrap_or(0.0),
            ScalarRole::Local => 0.0,
        })
        .collect()
}

/// The back end a run uses: compiled code when asked for and possible, else the interpreter
/// (with the reason it fell back).
pub struct Selected<'p> {
    pub backend: Box<dyn Backend + 'p>,
    pub fallback: Option<String>,
    pub jit_seconds: f64,
    pub clif: Option<String>,
}

pub fn select_backend<'p>(plan: &'p Plan, facts: &crate::plan::dump::DataFacts, want_jit: bool) -> Selected<'p> {
    if !want_jit {
        return Selected {
            backend: Box::new(interp::Interpreter { plan }),
            fallback: None,
            jit_seconds: 0.0,
            clif: None,
        };
    }
    match jit::compile(plan, &bound_scalars(plan, facts)) {
        Ok(kernel) => {
            let (secs, clif) = (kernel.compile_seconds, kernel.clif.clone());
            Selected {
                backend: Box::new(jit::JitBackend { plan, kernel }),
                fallback: None,
                jit_seconds: secs,
                clif: Some(clif),
            }
        }
        Err(e) => Selected {
            backend: Box::new(interp::Interpreter { plan }),
            fallback: Some(format!("the JIT cannot compile this plan ({e}); running the interpreter")),
            jit_seconds: 0.0,
            clif: None,
        },
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

/// This epoch's permutations of the rows and of the columns (empty when the plan walks none).
#[derive(Clone, Copy, Debug)]
pub struct Orders<'a> {
    pub rows: &'a [u32],
    pub cols: &'a [u32],
}

impl Orders<'_> {
    pub const NONE: Orders<'static> = Orders { rows: &[], cols: &[] };
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
}
