//! Training data bound to a plan: labels mapped, the feature count the model sees, the columns
//! when the plan walks them, the operator B of a composite term. Data is read once and bound
//! again for each plan, because a new parameter value is a new plan (parameters are folded into
//! the code) but not new data.

use super::Error;
use crate::data::{DataFacts, Dataset, LabelMap, LazyColumns};
use crate::exec::DataView;
use crate::memory::{available_bytes, bytes_text};
use crate::pipeline::Compiled;
use crate::plan::Plan;
use crate::runtime::picard::Operator;
use crate::stdlib::LabelKind;
use std::path::Path;

/// Training data bound to a plan: labels mapped, the feature count the model sees, the
/// columns when the plan walks them, the operator B of a composite term.
pub struct Bound {
    pub label_map: LabelMap,
    pub y: Vec<f64>,
    pub features: usize,
    /// k, for multiclass labels (mapped to 0..k in first-seen order).
    pub classes: usize,
    pub facts: DataFacts,
    columns: Option<LazyColumns>,
    operator: Option<Operator>,
}

impl Bound {
    /// Binds `train` to `plan` (compiled from `compiled`); `dir` is where the model's `load`
    /// files are. Its columns are built on the threads of the view a kernel first reads them
    /// through ([`Bound::view`]).
    pub fn new(compiled: &Compiled, plan: &Plan, train: &Dataset, dir: &Path) -> Result<Bound, Error> {
        let label_map = LabelMap::fit(compiled.model.label_kind, train).map_err(|e| Error::Input(e.to_string()))?;
        Bound::with_labels(compiled, plan, train, dir, label_map)
    }

    /// Binds `train` for one-vs-rest: `y` holds each row's class (0..k, in the order of
    /// `classes`, a map from [`LabelMap::one_vs_rest`]), from which each problem's ±1 labels are
    /// made; the plan and everything else bound are the same for every class.
    pub fn one_vs_rest(
        compiled: &Compiled,
        plan: &Plan,
        train: &Dataset,
        dir: &Path,
        classes: LabelMap,
    ) -> Result<Bound, Error> {
        Bound::with_labels(compiled, plan, train, dir, classes)
    }

    fn with_labels(
        compiled: &Compiled,
        plan: &Plan,
        train: &Dataset,
        dir: &Path,
        label_map: LabelMap,
    ) -> Result<Bound, Error> {
        let kind = compiled.model.label_kind;
        if train.weights.is_some() && plan.row_weights().is_none() {
            return Err(Error::Input(format!(
                "{}: the rows have weights but the model's loss is not weighted (declare `s: weights` and write `E[s·{}(...)]`)",
                train.name, compiled.model.loss.def.name
            )));
        }
        let y = label_map.apply(train).map_err(|e| Error::Input(e.to_string()))?;
        // Poisson's exp(a) − y·a has no minimum in a below a negative count.
        if compiled.model.loss.def.known() == Some(crate::stdlib::KnownLoss::Poisson) {
            if let Some(k) = y.iter().position(|&v| v < 0.0 || v.is_nan()) {
                return Err(Error::Input(format!(
                    "{}: the label {} is negative, and `poisson` models counts y ≥ 0",
                    train.place(k),
                    y[k]
                )));
            }
        }
        let features = declared_features(&compiled.model, train.features(), &train.name)?;
        let classes = if kind == LabelKind::Classes { label_map.originals.len() } else { 0 };
        let facts = DataFacts { features, classes, ..train.counts() };
        ensure_memory(plan, &facts, train, &compiled.model.var.name)?;
        let facts = train.complete_facts(plan, facts);
        // Built when a kernel first reads them: a run whose first check certifies never does.
        let columns = plan.reads_columns().then(LazyColumns::default);
        let operator = match &plan.objective.composite {
            Some(c) => Some(crate::data::operator::bind(c, features, dir).map_err(|e| Error::Input(e.to_string()))?),
            None => None,
        };
        let facts = DataFacts { op_rows: operator.as_ref().map_or(0, |b| b.rows), ..facts };
        Ok(Bound { label_map, y, features, classes, facts, columns, operator })
    }

    /// The training data as the plan reads it, its passes on `threads` threads.
    pub fn view<'a>(&'a self, train: &'a Dataset, threads: usize) -> DataView<'a> {
        let view = match &self.columns {
            Some(c) => train.view(&self.y, self.features).with_columns(c),
            None => train.view(&self.y, self.features),
        };
        view.with_classes(self.classes).with_operator(self.operator.as_ref()).with_threads(threads)
    }

    /// Held-out labels, mapped as the training labels were.
    pub fn labels_of(&self, test: &Dataset) -> Result<Vec<f64>, Error> {
        self.label_map.apply(test).map_err(|e| Error::Input(e.to_string()))
    }

    /// Held-out data as the report reads it (labels from [`Bound::labels_of`]).
    pub fn test_view<'a>(&'a self, test: &'a Dataset, labels: &'a [f64]) -> DataView<'a> {
        test.view(labels, self.features).with_classes(self.classes).with_operator(self.operator.as_ref())
    }
}

/// A state this small is never what exhausts the memory (the data it is sized by is already
/// held), so it is not weighed against /proc/meminfo, which every fit read otherwise.
const SMALL_STATE: u64 = 64 << 20;

/// Refuses, before allocating, a run whose per-feature state does not fit in memory: one valid
/// line with a huge feature index is enough to ask for tens of gigabytes.
pub fn ensure_memory(plan: &crate::plan::Plan, facts: &DataFacts, data: &Dataset, var: &str) -> Result<(), Error> {
    let dims = facts.dims();
    let entries: u64 = plan.vectors.iter().map(|v| dims.size(v) as u64).sum();
    // The state, plus one copy of it that a flush or an evaluation may make.
    let need = 2 * 8 * entries.max(facts.features as u64);
    if need <= SMALL_STATE {
        return Ok(());
    }
    let Some(available) = available_bytes() else { return Ok(()) };
    if need <= available {
        return Ok(());
    }
    let cause = if facts.features > data.features() {
        format!("the model declares `{var}` with {} entries", facts.features)
    } else {
        format!(
            "{}:{}: feature index {} makes `{var}` {} long",
            data.name, data.max_index_line, facts.features, facts.features
        )
    };
    Err(Error::Input(format!(
        "{cause}; the solver's state would need {} of memory but {} is available\n  hint: check the feature indices of the data (are they 1-based and dense?), or renumber them",
        bytes_text(need),
        bytes_text(available)
    )))
}

/// The features the model sees on data with `features` of them (the file `name`): the data's,
/// or the model's `vec[n]` when it declares at least as many; fewer is an input error.
pub fn declared_features(model: &crate::check::Model, features: usize, name: &str) -> Result<usize, Error> {
    match &model.shape {
        crate::check::Shape::Vec(crate::check::Dim::Fixed(n)) if *n < features => Err(Error::Input(format!(
            "{name}: the data has {features} features but the model declares `{}: vec[{n}]`",
            model.var.name
        ))),
        crate::check::Shape::Vec(crate::check::Dim::Fixed(n)) => Ok(*n),
        _ => Ok(features),
    }
}
