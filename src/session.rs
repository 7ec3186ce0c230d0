//! optc as a library: a model compiled once ([`Problem`]), data bound once ([`Data`]), and
//! solves with typed options that return a typed, serializable [`Report`], warm-started from
//! the last answer ([`Session`]). The command line's `run`, `path` and REPL solve through the
//! same layer ([`bind`] and [`solve`]); what the CLI adds is files, wording and exit codes.
//!
//! ```
//! use optc::session::{Data, Options, Problem, Session};
//!
//! let model = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.1\n\
//!              minimize E[logistic(y, <x, w>)] + λ·l1(w)\n";
//! let problem = Problem::from_text(model).expect("the model compiles");
//! // Two rows, two features, CSR with 0-based column indices.
//! let data = Data::from_csr(&[0u32, 2, 3], &[0u32, 1, 0], &[1.0, 0.5, -1.0], &[1.0, -1.0], None)
//!     .expect("valid arrays");
//! let mut session = Session::new(problem, data);
//! let report = session.solve(&Options::default()).expect("solved");
//! assert_eq!(report.status, "converged");
//! assert!(report.gap.is_some_and(|g| g <= 1e-4 * report.objective.abs()));
//! ```

pub mod bind;
pub mod solve;

use crate::data::{Dataset, LabelMap};
use crate::exec::driver::Watch;
use crate::pipeline::{self, CompileError, CompileOptions, Compiled};
use crate::solvers::SolverKind;
use crate::source::SourceFile;
use crate::stdlib::Library;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Why a compile, a bind or a solve gave no answer. Each renders as the command line words it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The model does not compile: its located diagnostics, rendered as plain text.
    #[error("{0}")]
    Model(String),
    /// The data (or a file the model loads) cannot be used: the message names where.
    #[error("{0}")]
    Input(String),
    /// An option or a parameter that does not fit the model.
    #[error("{0}")]
    Usage(String),
    /// The solver went NaN or ended worse than w = 0.
    #[error("{0}")]
    Diverged(String),
}

/// A model, compiled once: its text, the directory its `load` files are relative to, and the
/// parameter values set on it.
#[derive(Clone, Debug)]
pub struct Problem {
    file: SourceFile,
    dir: PathBuf,
    overrides: Vec<(String, f64)>,
}

impl Problem {
    /// A model from its text (`load` files relative to the current directory); a model that
    /// does not compile is an [`Error::Model`].
    pub fn from_text(text: &str) -> Result<Problem, Error> {
        let problem = Problem { file: SourceFile::new("model.opt", text), dir: PathBuf::from("."), overrides: vec![] };
        problem.compile(None)?;
        Ok(problem)
    }

    /// A model file, its `load` files relative to its directory.
    pub fn from_file(path: &Path) -> Result<Problem, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Input(format!("cannot read model {}: {e}", path.display())))?;
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let problem = Problem { file: SourceFile::new(path.display().to_string(), text), dir, overrides: vec![] };
        problem.compile(None)?;
        Ok(problem)
    }

    /// The same model with parameter `name` (or its ASCII alias) set to `value`.
    pub fn with(mut self, name: &str, value: f64) -> Result<Problem, Error> {
        self.overrides.retain(|(n, _)| n != name);
        self.overrides.push((name.to_string(), value));
        self.compile(None)?;
        Ok(self)
    }

    /// The model's text.
    pub fn text(&self) -> &str {
        &self.file.text
    }

    fn options(&self, solver: Option<&str>) -> CompileOptions {
        CompileOptions {
            overrides: self.overrides.clone(),
            solver: solver.map(str::to_string),
            eager: false,
            epochs: None,
            files: Some(self.dir.clone()),
        }
    }

    fn compile(&self, solver: Option<&str>) -> Result<(Compiled, CompileOptions), Error> {
        let opts = self.options(solver);
        if pipeline::dictionary(&self.file, &opts).map_err(|e| self.error(e))?.is_some() {
            return Err(Error::Usage(
                "dictionary-learning models are not in the library yet: run them with `optc run`".into(),
            ));
        }
        let compiled = pipeline::front_end(&self.file, &Library::standard(), &opts).map_err(|e| self.error(e))?;
        Ok((compiled, opts))
    }

    fn error(&self, e: CompileError) -> Error {
        match e {
            CompileError::Usage(m) => Error::Usage(m),
            CompileError::Model(problems) => Error::Model(crate::diagnostics::render_plain(&problems, &self.file)),
        }
    }
}

/// Training data, held in memory: a file read once, or arrays.
pub struct Data {
    set: Dataset,
}

/// An index type CSR arrays may come in (u32, i32, i64, usize): each value is checked.
pub trait CsrIndex: Copy + std::fmt::Display {
    fn index(self) -> Option<usize>;
}

macro_rules! csr_index {
    ($($t:ty),*) => {$(
        impl CsrIndex for $t {
            fn index(self) -> Option<usize> {
                usize::try_from(self).ok()
            }
        }
    )*};
}
csr_index!(u32, i32, i64, u64, usize);

impl Data {
    /// A LIBSVM/svmlight file (plain or compressed), read on `threads` threads.
    pub fn from_file(path: &Path, threads: usize) -> Result<Data, Error> {
        let read = crate::data::ReadOptions { threads: threads.max(1), progress: false };
        let set = crate::data::read_libsvm_with(path, &read).map_err(|e| {
            let ctx = e.context();
            Error::Input(if ctx.is_empty() { e.to_string() } else { format!("{e}\n{ctx}") })
        })?;
        Ok(Data { set })
    }

    /// Rows in CSR form with 0-based column indices, one label per row; `features` widens the
    /// data past its largest index. Every pointer and index is checked (the message names the
    /// row and the position); each row's entries are sorted and repeated columns summed.
    pub fn from_csr<I: CsrIndex>(
        indptr: &[I],
        indices: &[I],
        values: &[f64],
        labels: &[f64],
        features: Option<usize>,
    ) -> Result<Data, Error> {
        let bad = |m: String| Err(Error::Input(m));
        if indptr.is_empty() {
            return bad("indptr is empty: it has one entry more than there are rows".into());
        }
        let rows = indptr.len() - 1;
        if labels.len() != rows {
            return bad(format!("{} labels for {rows} rows", labels.len()));
        }
        if indices.len() != values.len() {
            return bad(format!("{} indices but {} values", indices.len(), values.len()));
        }
        let mut ptr = Vec::with_capacity(rows + 1);
        for (r, p) in indptr.iter().enumerate() {
            match p.index() {
                Some(p) if p <= indices.len() && ptr.last().is_none_or(|&q| q <= p) => ptr.push(p),
                _ => {
                    return bad(format!(
                        "indptr[{r}] = {p} is not a position in 0..={} after the one before it",
                        indices.len()
                    ))
                }
            }
        }
        if ptr[0] != 0 || ptr[rows] != indices.len() {
            return bad(format!(
                "indptr runs from {} to {}; it must run from 0 to {}",
                ptr[0],
                ptr[rows],
                indices.len()
            ));
        }
        let (mut idx, mut val, mut out_ptr) = (Vec::with_capacity(indices.len()), vec![], vec![0usize]);
        let mut width = features.unwrap_or(0);
        for r in 0..rows {
            let mut row: Vec<(u32, f64)> = Vec::with_capacity(ptr[r + 1] - ptr[r]);
            for k in ptr[r]..ptr[r + 1] {
                let j = match indices[k].index().and_then(|j| u32::try_from(j).ok()) {
                    Some(j) => j,
                    None => return bad(format!("row {r}, position {k}: column index {} is not in 0..2³²", indices[k])),
                };
                if !values[k].is_finite() {
                    return bad(format!("row {r}, position {k}: the value {} is not finite", values[k]));
                }
                row.push((j, values[k]));
            }
            row.sort_by_key(|e| e.0);
            for (j, v) in row {
                if idx.len() > *out_ptr.last().unwrap_or(&0) && idx.last() == Some(&j) {
                    *val.last_mut().expect("a value beside the index") += v;
                } else {
                    idx.push(j);
                    val.push(v);
                }
                width = width.max(j as usize + 1);
            }
            out_ptr.push(idx.len());
        }
        if labels.iter().any(|y| !y.is_finite()) {
            return bad("a label is not finite".into());
        }
        let x = crate::data::store::csr((rows, width), out_ptr, idx, val)
            .map_err(|e| Error::Input(format!("the arrays do not make a matrix: {e}")))?;
        let set = Dataset {
            x,
            labels: labels.to_vec(),
            lines: (1..=rows as u32).collect(),
            name: "arrays".into(),
            bytes: 0,
            max_index_line: 0,
        };
        Ok(Data { set })
    }

    pub fn rows(&self) -> usize {
        self.set.rows()
    }

    pub fn features(&self) -> usize {
        self.set.features()
    }
}

/// How one solve goes. `Default` is what `optc run` does with no flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// Stop when the certified relative duality gap is at most this (default 1e-4).
    pub tol: Option<f64>,
    /// Exactly this many epochs unless `tol` is also given; then a cap.
    pub epochs: Option<usize>,
    pub time_limit: Option<f64>,
    /// The row order's seed (default 1).
    pub seed: Option<u64>,
    /// Force a solver, as `solve with NAME`.
    pub solver: Option<String>,
    /// Threads for the passes over all rows (default: the cores available).
    pub threads: Option<usize>,
    /// The reference interpreter instead of the JIT.
    pub no_jit: bool,
    /// Start from w = 0 even when the session has an answer.
    pub cold: bool,
    /// Set it (from any thread) to stop the solve after its current epoch, with status
    /// `interrupted` and the last iterate.
    pub cancel: crate::exec::cancel::Cancel,
}

/// One point of a solve's trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TracePoint {
    pub epoch: usize,
    pub seconds: f64,
    pub objective: f64,
    pub gap: Option<f64>,
}

/// What a solve found: the answer, its certificate and how it stopped. Serialized, it is
/// the record `optc run --json` prints (which leaves the weights to `--save`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// w (or W row-major, d × k).
    pub weights: Vec<f64>,
    /// b, for a model with `var b: scalar`.
    pub intercept: Option<f64>,
    /// One offset per class, for a softmax model with `var b: vec[classes(y)]`.
    pub intercepts: Option<Vec<f64>>,
    /// F at the answer, in docs/algorithms.md's normalisation.
    pub objective: f64,
    /// The mean loss at the answer, (1/m)·Σᵢ ℓ(yᵢ, ⟨xᵢ, w⟩), unweighted.
    pub loss: f64,
    /// The certified duality gap: F − F* ≤ gap (None where no certificate applies).
    pub gap: Option<f64>,
    /// gap / |F|, what `tol` bounds.
    pub relative_gap: Option<f64>,
    /// The relative gap the run was asked to reach (None: a fixed number of epochs).
    pub tol: Option<f64>,
    /// `converged`, `max_epochs`, `time_limit`, `interrupted`, …
    pub status: String,
    /// The rule that stopped the run, in words.
    #[serde(rename = "stopped_by")]
    pub rule: String,
    pub epochs: usize,
    /// The solve's seconds (the compile and the reading not counted).
    pub seconds: f64,
    /// Of those, the seconds spent on certificate checks.
    pub check_seconds: f64,
    pub solver: SolverKind,
    /// Why the compiler chose it (None when the model forced it).
    pub solver_reason: Option<String>,
    /// The lazy plan ran (coordinates caught up just before they are read).
    pub lazy: bool,
    /// `jit` or `interpreter`.
    pub backend: String,
    /// Non-zero weights.
    pub nnz: usize,
    /// Multiclass: the features some class gives a non-zero weight.
    pub nnz_rows: Option<usize>,
    /// The training data's rows, features (as the model sees them) and non-zeros.
    pub rows: usize,
    pub features: usize,
    pub data_nnz: usize,
    /// Coordinates in the working set at the end, for solvers that keep one.
    pub working_set: Option<usize>,
    /// Features Gap Safe screening proved zero.
    pub screened: Option<usize>,
    /// The row (or column) order's seed.
    pub seed: u64,
    /// The shards each epoch was cut into (1: none).
    pub shards: usize,
    /// The fraction of training rows misclassified (classification).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_error: Option<f64>,
    /// The mean squared error on the training rows (regression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_mse: Option<f64>,
    /// F and the gap after each check, when the solve was asked to trace.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<TracePoint>,
}

impl Report {
    /// The report of `solved`, a solve of `plan` (compiled as `compiled`) on `train`, seen as
    /// `features` features, run with `settings` from the model's `seed`.
    pub(crate) fn of(
        compiled: &Compiled,
        plan: &crate::plan::Plan,
        train: &Dataset,
        features: usize,
        solved: &solve::Solved,
        settings: &crate::exec::driver::RunSettings,
    ) -> Report {
        let outcome = &solved.outcome;
        let ev = &outcome.eval;
        let weights = outcome.state.weights(plan).to_vec();
        let regression = compiled.model.label_kind == crate::stdlib::LabelKind::Real;
        Report {
            weights,
            intercept: plan.objective.intercept.map(|_| outcome.state.intercept(plan)),
            intercepts: plan.objective.class_intercept.map(|b| outcome.state.vectors[b.0].clone()),
            objective: ev.objective,
            loss: ev.loss,
            gap: outcome.gap,
            relative_gap: outcome.gap.map(|g| g / ev.objective.abs().max(f64::MIN_POSITIVE)),
            tol: settings.tol,
            status: outcome.status.name().to_string(),
            rule: outcome.rule.clone(),
            epochs: outcome.epochs,
            seconds: outcome.seconds,
            check_seconds: outcome.check_seconds,
            solver: plan.info.solver,
            solver_reason: compiled.structure.chosen.as_ref().map(|c| c.reason.clone()),
            lazy: plan.info.lazy,
            backend: solved.backend.to_string(),
            nnz: ev.nnz,
            nnz_rows: ev.nnz_rows,
            rows: train.rows(),
            features,
            data_nnz: train.nnz(),
            working_set: outcome.working_set,
            screened: outcome.screened,
            seed: settings.seed,
            shards: settings.shards,
            train_error: if regression { None } else { ev.error },
            train_mse: if regression { ev.mse } else { None },
            trace: outcome
                .trace
                .iter()
                .map(|p| TracePoint { epoch: p.epoch, seconds: p.seconds, objective: p.eval.objective, gap: p.gap })
                .collect(),
        }
    }
}

/// A problem on its data, solved as often as asked: each solve warm-starts from the last
/// answer unless [`Options::cold`].
pub struct Session {
    problem: Problem,
    data: Data,
    warm: Option<(Vec<f64>, f64)>,
}

impl Session {
    pub fn new(problem: Problem, data: Data) -> Session {
        Session { problem, data, warm: None }
    }

    /// Sets a parameter for the next solve, which still starts from the last answer.
    pub fn set(&mut self, name: &str, value: f64) -> Result<(), Error> {
        self.problem = self.problem.clone().with(name, value)?;
        Ok(())
    }

    /// Solves, as `optc run` does: the same F, epochs and status for the same model, data and
    /// options.
    pub fn solve(&mut self, opts: &Options) -> Result<Report, Error> {
        let (mut compiled, compile_opts) = self.problem.compile(opts.solver.as_deref())?;
        let train = &self.data.set;
        let stop = solve::Stopping {
            epochs: opts.epochs,
            tol: opts.tol,
            time_limit: opts.time_limit,
            seed: opts.seed,
            shards: None,
        };
        let threads = opts.threads.unwrap_or_else(crate::data::available_threads).max(1);
        pipeline::shape(&mut compiled, train.features(), train.rows(), train.mean_row_norm_sq());
        let mut plan = pipeline::plan(&compiled, &compile_opts).map_err(|e| self.problem.error(e))?;
        let (_, mut settings) = solve::run_settings(&compiled, &stop)?;
        settings.cancel = opts.cancel.clone();
        if LabelMap::one_vs_rest(compiled.model.label_kind, train).is_some() {
            return Err(Error::Usage(
                "a two-class loss on more than two labels trains one-vs-rest, which is not in the library yet: run it with `optc run`".into(),
            ));
        }
        let bound = bind::Bound::new(&compiled, &plan, train, &self.problem.dir, threads)?;
        let view = bound.view(train, threads);
        let warm = if opts.cold { None } else { self.warm.as_ref() };
        let warm = warm
            .filter(|(w, _)| plan.weights().is_some_and(|id| bound.facts.dims().size(&plan.vectors[id.0]) == w.len()));
        let solved = solve::solve(
            &mut plan,
            &bound,
            &view,
            Watch::default(),
            &settings,
            !opts.no_jit,
            warm.map(|(w, b)| (w.as_slice(), *b)),
        )
        .map_err(|e| e.failure(train, plan.info.solver, None, None))?;
        let report = Report::of(&compiled, &plan, train, bound.features, &solved, &settings);
        self.warm = Some((report.weights.clone(), report.intercept.unwrap_or(0.0)));
        Ok(report)
    }
}
