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
pub mod cv;
mod data;
pub(crate) mod ovr;
pub mod path;
pub(crate) mod saved;
pub mod solve;

use crate::data::{Dataset, LabelMap};
use crate::exec::driver::Watch;
use crate::pipeline::{self, CompileError, CompileOptions, Compiled};
use crate::solvers::SolverKind;
use crate::source::SourceFile;
use crate::stdlib::Library;
use serde::Serialize;

pub use data::{CsrIndex, Data, InPlaceIndex};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a compile, a bind or a solve gave no answer. Each renders as the command line words it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The model does not compile: its located diagnostics, rendered as plain text.
    #[error("{0}")]
    Model(ModelError),
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

/// A model that does not compile: the diagnostics as `optc check` renders them (without
/// colour), and where the first one points, 1-based, so an editor or a notebook can jump there.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A model, compiled once: its text, the directory its `load` files are relative to, the
/// parameter values set on it, and the front end's output for them.
#[derive(Clone, Debug)]
pub struct Problem {
    file: SourceFile,
    dir: PathBuf,
    overrides: Vec<(String, f64)>,
    /// The model parsed, checked and analysed with no solver forced, which every solve that
    /// forces none starts from: parsing and checking it again was 1.2 ms of each 3 ms fit on
    /// housing (506 × 13). `load` files are read once, here, with the model.
    front: Option<Arc<Compiled>>,
}

impl Problem {
    /// A model from its text (`load` files relative to the current directory); a model that
    /// does not compile is an [`Error::Model`].
    pub fn from_text(text: &str) -> Result<Problem, Error> {
        Problem::from_text_with::<&str>(text, &[])
    }

    /// As [`Problem::from_text`], with parameters set (as [`Problem::with_all`]): compiled once.
    pub fn from_text_with<S: AsRef<str>>(text: &str, params: &[(S, f64)]) -> Result<Problem, Error> {
        Problem { file: SourceFile::new("model.opt", text), dir: PathBuf::from("."), overrides: vec![], front: None }
            .with_all(params)
    }

    /// A model file, its `load` files relative to its directory.
    pub fn from_file(path: &Path) -> Result<Problem, Error> {
        Problem::from_file_with::<&str>(path, &[])
    }

    /// As [`Problem::from_file`], with parameters set: compiled once.
    pub fn from_file_with<S: AsRef<str>>(path: &Path, params: &[(S, f64)]) -> Result<Problem, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Input(format!("cannot read model {}: {e}", path.display())))?;
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        Problem { file: SourceFile::new(path.display().to_string(), text), dir, overrides: vec![], front: None }
            .with_all(params)
    }

    /// The same model with parameter `name` (or its ASCII alias) set to `value`.
    pub fn with(self, name: &str, value: f64) -> Result<Problem, Error> {
        self.with_all(&[(name, value)])
    }

    /// The same model with each parameter of `params` set, in order, and compiled once: the
    /// front end took 0.13 ms a run on a model of a few lines, a third of a fit on housing
    /// (506 × 13) when a scikit-learn estimator set its two parameters one at a time.
    pub fn with_all<S: AsRef<str>>(mut self, params: &[(S, f64)]) -> Result<Problem, Error> {
        for (name, value) in params {
            let (name, value) = (name.as_ref(), *value);
            // `lambda` and `λ` are one parameter: the last value set for it counts.
            let canonical = crate::check::canonical(name);
            self.overrides.retain(|(n, _)| crate::check::canonical(n) != canonical);
            self.overrides.push((name.to_string(), value));
        }
        self.compiled()
    }

    /// This problem with its front end run afresh (an error when the model does not compile).
    fn compiled(mut self) -> Result<Problem, Error> {
        self.front = None;
        self.front = Some(Arc::new(self.compile(None)?.0));
        Ok(self)
    }

    /// Whether the model loads files (`load("...")`), whose contents it then depends on
    /// beside its text: a cache of compiled models must not keep it.
    pub fn reads_files(&self) -> bool {
        self.front.as_ref().is_some_and(|c| pipeline::reads_files(&c.model.regs))
    }

    /// The model's text.
    pub fn text(&self) -> &str {
        &self.file.text
    }

    /// What `optc check` prints for the model: its terms, their properties and the solver
    /// its structure picks.
    pub fn report(&self) -> Result<String, Error> {
        let (c, _) = self.compile(None)?;
        Ok(crate::analysis::report(&c.model, &c.structure, &self.file.name))
    }

    /// What `optc plan` prints for the model without data: the lowered plan and its
    /// certificate's refinement.
    pub fn plan(&self, solver: Option<&str>) -> Result<String, Error> {
        let (c, opts) = self.compile(solver)?;
        let plan = pipeline::plan(&c, &opts).map_err(|e| self.error(e))?;
        Ok(crate::plan::dump::dump(&plan, None) + &crate::plan::dump::refinement(&plan).unwrap_or_default())
    }

    fn options(&self, solver: Option<&str>) -> CompileOptions {
        CompileOptions {
            overrides: self.overrides.clone(),
            solver: solver.map(str::to_string),
            eager: false,
            epochs: None,
            files: Some(self.dir.clone()),
            ..CompileOptions::default()
        }
    }

    fn compile(&self, solver: Option<&str>) -> Result<(Compiled, CompileOptions), Error> {
        let opts = self.options(solver);
        if let (None, Some(front)) = (solver, &self.front) {
            return Ok((Compiled::clone(front), opts));
        }
        match pipeline::compile(&self.file, &Library::standard(), &opts).map_err(|e| self.error(e))? {
            pipeline::AnyModel::Loss(compiled) => Ok((*compiled, opts)),
            pipeline::AnyModel::Dictionary(_) => Err(Error::Usage(
                "dictionary-learning models are not in the library yet: run them with `optc run`".into(),
            )),
        }
    }

    fn error(&self, e: CompileError) -> Error {
        match e {
            CompileError::Usage(m) => Error::Usage(m),
            CompileError::Model(problems) => {
                let at = problems.first().and_then(|p| p.labels.first()).map_or(0, |(span, _)| span.start);
                let (line, column) = self.file.line_col(at);
                let message = crate::diagnostics::render_plain(&problems, &self.file);
                Error::Model(ModelError { message, line, column })
            }
        }
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
    /// Record F and the gap after every epoch in [`Report::trace`] (a check each epoch, as
    /// `optc run --trace` makes; left out of the run's seconds).
    pub trace: bool,
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
    /// μ of `μ·l2sq(b)` when the model penalises its intercept (LIBLINEAR's `-B 1`): F adds
    /// μ·½b². Left out of the record for an unregularized b.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intercept_penalty: Option<f64>,
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
    /// One-vs-rest: each class's problem, in the order of `labels`. The report above is then
    /// of the whole: `weights` is LIBLINEAR's d × k matrix (row-major, w[j·k + c]),
    /// `intercepts` the classes' b, F the mean of theirs, the gap the largest, the status the
    /// worst, the epochs the most, and `train_error` the argmax predictor's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassReport>,
}

/// One class's problem of a one-vs-rest solve: class c against the rest.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassReport {
    /// The class's label as the data has it.
    pub label: f64,
    pub objective: f64,
    pub loss: f64,
    pub gap: Option<f64>,
    pub relative_gap: Option<f64>,
    pub status: String,
    #[serde(rename = "stopped_by")]
    pub rule: String,
    pub epochs: usize,
    pub seconds: f64,
    pub nnz: usize,
    pub intercept: Option<f64>,
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
            intercept_penalty: compiled.model.intercept_l2.as_ref().map(|r| r.coef),
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
            classes: vec![],
        }
    }

    /// The report of a one-vs-rest solve: the whole as [`Report::classes`] says, its
    /// solver, backend, order and settings those of the first class (all classes share them).
    pub(crate) fn of_classes(
        compiled: &Compiled,
        train: &Dataset,
        features: usize,
        classes: &[ovr::Class],
        settings: &crate::exec::driver::RunSettings,
        seconds: f64,
    ) -> Report {
        let labels: Vec<f64> = classes.iter().map(|c| c.label).collect();
        let saved = ovr::saved_model(&compiled.model, &labels, features, classes);
        let k = classes.len();
        // The saved model's rows of weights, without its bias row.
        let weights = saved.w[..features * k].to_vec();
        let gaps: Option<Vec<f64>> = classes.iter().map(|c| c.solved.outcome.gap).collect();
        let relative: Option<Vec<f64>> = classes.iter().map(ovr::Class::relative_gap).collect();
        let status = ovr::worst(classes);
        let first = classes.iter().find(|c| c.solved.outcome.status == status).or(classes.first());
        let reports = classes
            .iter()
            .map(|c| {
                let o = &c.solved.outcome;
                ClassReport {
                    label: c.label,
                    objective: o.eval.objective,
                    loss: o.eval.loss,
                    gap: o.gap,
                    relative_gap: c.relative_gap(),
                    status: o.status.name().to_string(),
                    rule: o.rule.clone(),
                    epochs: o.epochs,
                    seconds: o.seconds,
                    nnz: o.eval.nnz,
                    intercept: c.intercept,
                }
            })
            .collect::<Vec<_>>();
        Report {
            nnz: weights.iter().filter(|v| **v != 0.0).count(),
            weights,
            intercept: None,
            intercept_penalty: compiled.model.intercept_l2.as_ref().map(|r| r.coef),
            intercepts: classes.iter().map(|c| c.intercept).collect(),
            objective: ovr::mean(classes, |e| e.objective),
            loss: ovr::mean(classes, |e| e.loss),
            gap: gaps.and_then(|g| g.into_iter().reduce(f64::max)),
            relative_gap: relative.and_then(|g| g.into_iter().reduce(f64::max)),
            tol: settings.tol,
            status: status.name().to_string(),
            rule: first.map_or_else(String::new, |c| c.solved.outcome.rule.clone()),
            epochs: classes.iter().map(|c| c.solved.outcome.epochs).max().unwrap_or(0),
            seconds,
            check_seconds: classes.iter().map(|c| c.solved.outcome.check_seconds).sum(),
            solver: classes.first().map_or(crate::solvers::SolverKind::Fobos, |c| c.plan.info.solver),
            solver_reason: compiled.structure.chosen.as_ref().map(|c| c.reason.clone()),
            lazy: classes.first().is_some_and(|c| c.plan.info.lazy),
            backend: classes.first().map_or("", |c| c.solved.backend).to_string(),
            nnz_rows: None,
            rows: train.rows(),
            features,
            data_nnz: train.nnz(),
            working_set: None,
            screened: None,
            seed: settings.seed,
            shards: settings.shards,
            train_error: Some(ovr::argmax_error(&saved, train)),
            train_mse: None,
            trace: vec![],
            classes: reports,
        }
    }
}

/// Given starting weights ([`Session::start_from`]) of the wrong size are a usage error; a last
/// answer of another size only means a cold start.
fn check_start(warm: Option<&(Vec<f64>, f64)>, given: bool, expected: usize) -> Result<(), Error> {
    match warm {
        Some((w, _)) if given && w.len() != expected => Err(Error::Usage(format!(
            "the starting weights have {} entries; this model on this data has {expected}",
            w.len()
        ))),
        _ => Ok(()),
    }
}

/// A problem on its data, solved as often as asked: each solve warm-starts from the last
/// answer unless [`Options::cold`].
pub struct Session {
    problem: Problem,
    data: Data,
    warm: Option<(Vec<f64>, f64)>,
    /// The warm start was given ([`Session::start_from`]), not left by a solve: weights of
    /// another size are then an error, not a reason to start cold.
    given: bool,
}

impl Session {
    pub fn new(problem: Problem, data: Data) -> Session {
        Session { problem, data, warm: None, given: false }
    }

    /// The next solve starts from these weights and intercept (a saved answer) instead of the
    /// last answer; weights of another size than the model's are an error.
    pub fn start_from(&mut self, weights: Vec<f64>, intercept: f64) {
        self.warm = Some((weights, intercept));
        self.given = true;
    }

    /// The next solve continues from another session's last answer (the same model on other
    /// rows), as from its own: of another size (wider data), it starts cold.
    pub fn continue_from(&mut self, weights: Vec<f64>, intercept: f64) {
        self.warm = Some((weights, intercept));
        self.given = false;
    }

    /// Sets a parameter for the next solve, which still starts from the last answer.
    pub fn set(&mut self, name: &str, value: f64) -> Result<(), Error> {
        self.problem = self.problem.clone().with(name, value)?;
        Ok(())
    }

    /// Solves, as `optc run` does: the same F, epochs and status for the same model, data and
    /// options.
    pub fn solve(&mut self, opts: &Options) -> Result<Report, Error> {
        let given = std::mem::take(&mut self.given);
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
        pipeline::shape(&mut compiled, (train.features(), train.rows(), train.nnz()), || train.mean_row_norm_sq());
        let mut plan = pipeline::plan(&compiled, &compile_opts).map_err(|e| self.problem.error(e))?;
        let (_, mut settings) = solve::run_settings(&compiled, &stop)?;
        settings.cancel = opts.cancel.clone();
        settings.trace = opts.trace;
        if let Some(classes) = LabelMap::one_vs_rest(compiled.model.label_kind, train) {
            return self.solve_one_vs_rest(
                &compiled,
                &plan,
                &settings,
                classes,
                (threads, !opts.no_jit, opts.cold, given),
            );
        }
        let bound = bind::Bound::new(&compiled, &plan, train, &self.problem.dir)?;
        let view = bound.view(train, threads);
        let size = plan.weights().map(|id| bound.facts.dims().size(&plan.vectors[id.0]));
        if let Some(size) = size {
            check_start(self.warm.as_ref(), given, size)?;
        }
        let warm = if opts.cold { None } else { self.warm.as_ref() };
        let warm = warm.filter(|(w, _)| size == Some(w.len()));
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

    /// The model's regularization path on this data ([`path::solve_path`]): the grid and each
    /// point's stopping rule from `spec`, the other parameters as set on the problem (its
    /// `compile` overrides and files are the problem's; its solver and eagerness the spec's).
    pub fn path(&self, mut spec: path::PathSpec) -> Result<path::SolvedPath, Error> {
        let param = crate::check::canonical(&spec.param).to_string();
        spec.compile.overrides =
            self.problem.overrides.iter().filter(|(n, _)| crate::check::canonical(n) != param).cloned().collect();
        spec.compile.files = Some(self.problem.dir.clone());
        path::solve_path(&self.problem.file, &self.data.set, None, &spec, |_| {}).map_err(|e| self.path_error(e))
    }

    /// K-fold cross-validation of `spec.path.param` along warm-started paths ([`cv`]), with the
    /// problem's other parameters as set.
    pub fn cv(&self, mut spec: cv::CvSpec) -> Result<cv::CrossValidated, Error> {
        let param = crate::check::canonical(&spec.path.param).to_string();
        spec.path.compile.overrides =
            self.problem.overrides.iter().filter(|(n, _)| crate::check::canonical(n) != param).cloned().collect();
        spec.path.compile.files = Some(self.problem.dir.clone());
        cv::cross_validate(&self.problem.file, &self.data.set, &spec, |_| {}).map_err(|e| self.path_error(e))
    }

    /// A path's failure as the library's error.
    fn path_error(&self, e: path::PathError) -> Error {
        match e {
            path::PathError::Compile(e) => self.problem.error(e),
            path::PathError::OneVsRest(classes) => Error::Usage(format!(
                "a path follows one problem, and these {} labels make {} one-vs-rest problems: declare `y: classes` and use `softmax`, or fit each λ",
                classes.originals.len(),
                classes.originals.len()
            )),
            path::PathError::Failed(e) => e,
        }
    }

    /// A two-class loss on k > 2 labels: k one-vs-rest problems, each warm from its class's
    /// column of the last answer (unless cold), as `optc run` trains them.
    fn solve_one_vs_rest(
        &mut self,
        compiled: &Compiled,
        plan: &crate::plan::Plan,
        settings: &crate::exec::driver::RunSettings,
        classes: LabelMap,
        (threads, jit, cold, given): (usize, bool, bool, bool),
    ) -> Result<Report, Error> {
        let train = &self.data.set;
        let labels = classes.originals.clone();
        let k = labels.len();
        let bound = bind::Bound::one_vs_rest(compiled, plan, train, &self.problem.dir, classes)?;
        check_start(self.warm.as_ref(), given, bound.features * k)?;
        let warm: Option<Vec<Vec<f64>>> = self
            .warm
            .as_ref()
            .filter(|(w, _)| !cold && w.len() == bound.features * k)
            .map(|(w, _)| (0..k).map(|c| w.iter().skip(c).step_by(k).copied().collect()).collect());
        let start = std::time::Instant::now();
        let solved = ovr::solve(plan, &bound, train, &labels, settings, (threads, jit), warm.as_deref())
            .map_err(|f| f.why.failure(train, f.plan.info.solver, None, None))?;
        let report =
            Report::of_classes(compiled, train, bound.features, &solved, settings, start.elapsed().as_secs_f64());
        self.warm = Some((report.weights.clone(), 0.0));
        Ok(report)
    }
}
