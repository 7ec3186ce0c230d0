//! The native half of the Python package `optc`: a compiled model ([`Model`]) that fits CSR
//! arrays handed over by `optc/__init__.py`. Everything here is a thin translation onto
//! `optc::session`: arrays in, the session's report out as JSON plus the weights as NumPy arrays.
//! What Python users see (scipy matrices, result objects, estimators) is built in Python.

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use optc::data::store::Store;
use optc::exec::cancel::Cancel;
use optc::pipeline::CompileOptions;
use optc::session::cv::{Choose, CrossValidated, CvSpec};
use optc::session::path::{PathPoint, PathSpec};
use optc::session::{Data, Error, Options, Problem, Session};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::Duration;

create_exception!(
    _optc,
    ModelError,
    PyValueError,
    "A model that does not compile: the message is the rendered diagnostic; `line` and `column` say where (1-based)."
);
create_exception!(_optc, SolverError, PyException, "A solve that diverged or could not run with the options given.");

/// An optc error as the Python exception a user expects: a bad model is a `ModelError` (a
/// `ValueError`, as scikit-learn expects of a bad parameter) with its place, bad data a
/// `ValueError` whose message names the row, anything else a `SolverError`.
fn raise(py: Python<'_>, e: Error) -> PyErr {
    match e {
        Error::Model(m) => {
            let err = ModelError::new_err(m.message.clone());
            let value = err.value(py);
            // Attributes on a fresh exception instance cannot fail to set.
            let _ = value.setattr("line", m.line);
            let _ = value.setattr("column", m.column);
            err
        }
        Error::Input(m) => PyValueError::new_err(m),
        Error::Usage(m) => PyValueError::new_err(m),
        Error::Diverged(m) => SolverError::new_err(m),
    }
}

/// A fit's report as JSON, its weights, and a one-vs-rest fit's intercepts.
type Fitted<'py> = (String, Bound<'py, PyArray1<f64>>, Option<Bound<'py, PyArray1<f64>>>);

/// A model compiled once, with the parameters set on it and the last answer, which the next
/// fit starts from.
#[pyclass(module = "optc._optc")]
struct Model {
    problem: Problem,
    warm: Option<(Vec<f64>, f64)>,
}

/// The models compiled from text lately, by their text and parameters. A scikit-learn estimator
/// compiles its model at every fit (each fold's and each grid point's clone is a new one), and
/// the front end took 0.14 ms of housing's 0.8 ms fit; the same text and parameters compile to
/// the same problem, whose compiled part is shared (an `Arc`). A model that loads files is
/// compiled every time, since their contents may have changed.
mod recent {
    use optc::session::{Error, Problem};
    use std::sync::Mutex;

    /// Models kept: a grid search's distinct (text, parameters) pairs are usually fewer.
    const KEPT: usize = 16;

    type Key = (String, Vec<(String, u64)>);

    static RECENT: Mutex<Vec<(Key, Problem)>> = Mutex::new(Vec::new());

    /// `text` compiled with `params` set, from the cache or afresh (then kept, the oldest
    /// entry dropped).
    pub fn compiled(text: &str, params: &[(String, f64)]) -> Result<Problem, Error> {
        let key: Key = (text.to_string(), params.iter().map(|(n, v)| (n.clone(), v.to_bits())).collect());
        let mut recent = RECENT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(at) = recent.iter().position(|(k, _)| *k == key) {
            let entry = recent.remove(at);
            let problem = entry.1.clone();
            recent.push(entry);
            return Ok(problem);
        }
        drop(recent);
        let problem = Problem::from_text_with(text, params)?;
        if !problem.reads_files() {
            let mut recent = RECENT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if recent.len() >= KEPT {
                recent.remove(0);
            }
            recent.push((key, problem.clone()));
        }
        Ok(problem)
    }
}

/// A NumPy array's buffer, read in place: the array is kept alive by the store (so by the
/// matrix) for as long as the fit reads it.
fn in_place<T: numpy::Element + Send + Sync + 'static>(array: &Bound<'_, PyArray1<T>>) -> PyResult<Store<T>> {
    if !array.is_contiguous() {
        return Err(PyValueError::new_err("the array is not contiguous"));
    }
    let len = array.len();
    if len == 0 {
        return Ok(Store::Owned(vec![]));
    }
    let ptr = array.data() as *const T;
    let keep: Arc<dyn Send + Sync> = Arc::new(array.clone().unbind());
    // SAFETY: a contiguous, non-empty NumPy array of T: `ptr` is its aligned data pointer and
    // its `len` values are initialised. `keep` holds a reference to the array, so its buffer
    // neither moves nor is freed while the store lives; the Python wrapper documents that the
    // caller does not write the matrix during a fit (as with any library that releases the GIL).
    #[allow(unsafe_code)]
    Ok(unsafe { Store::foreign(keep, ptr, len) })
}

#[pymethods]
impl Model {
    /// Compiles `text` (a model's text, or with `is_path` the path of a model file) with the
    /// parameters `params` set, once.
    #[new]
    #[pyo3(signature = (text, is_path=false, params=vec![]))]
    fn new(py: Python<'_>, text: &str, is_path: bool, params: Vec<(String, f64)>) -> PyResult<Model> {
        let problem = if is_path {
            Problem::from_file_with(std::path::Path::new(text), &params)
        } else {
            recent::compiled(text, &params)
        };
        Ok(Model { problem: problem.map_err(|e| raise(py, e))?, warm: None })
    }

    /// Sets the parameters `params` (by name or ASCII alias, in order) for the next fits; the
    /// model is compiled once for all of them.
    fn set(&mut self, py: Python<'_>, params: Vec<(String, f64)>) -> PyResult<()> {
        self.problem = self.problem.clone().with_all(&params).map_err(|e| raise(py, e))?;
        Ok(())
    }

    /// The model's text.
    #[getter]
    fn text(&self) -> String {
        self.problem.text().to_string()
    }

    /// What `optc check` prints.
    fn check(&self, py: Python<'_>) -> PyResult<String> {
        self.problem.report().map_err(|e| raise(py, e))
    }

    /// What `optc plan` prints (no data).
    #[pyo3(signature = (solver=None))]
    fn plan(&self, py: Python<'_>, solver: Option<&str>) -> PyResult<String> {
        self.problem.plan(solver).map_err(|e| raise(py, e))
    }

    /// Forgets the last answer: the next fit starts from zero.
    fn reset(&mut self) {
        self.warm = None;
    }

    /// Fits canonical CSR arrays (indices int32, int64 or u32, read in place with the values) with
    /// one label a row. Returns the session's report as JSON, the weights, and the intercepts
    /// of a one-vs-rest fit. The solve runs without the GIL; Ctrl-C ends it `interrupted`.
    #[pyo3(signature = (rows, tol=None, solver=None, epochs=None, time_limit=None, threads=None, seed=None, cold=false, init=None, trace=false, sample_weight=None))]
    #[allow(clippy::too_many_arguments)]
    fn fit<'py>(
        &mut self,
        py: Python<'py>,
        rows: Rows<'py>,
        tol: Option<f64>,
        solver: Option<String>,
        epochs: Option<usize>,
        time_limit: Option<f64>,
        threads: Option<usize>,
        seed: Option<u64>,
        cold: bool,
        init: Option<(PyReadonlyArray1<'py, f64>, f64)>,
        trace: bool,
        sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    ) -> PyResult<Fitted<'py>> {
        let data = rows.data(py)?;
        let data = match sample_weight {
            Some(s) => data.with_weights(s.as_slice()?.to_vec()).map_err(|e| raise(py, e))?,
            None => data,
        };
        let mut session = Session::new(self.problem.clone(), data);
        // init= is the user's and must fit the model; the last answer only continues when it does.
        match (init, self.warm.clone()) {
            (Some((w, b)), _) => session.start_from(w.as_slice()?.to_vec(), b),
            (None, Some((w, b))) if !cold => session.continue_from(w, b),
            _ => {}
        }
        let opts = Options { tol, epochs, time_limit, seed, solver, threads, trace, ..Default::default() };
        let cancel = opts.cancel.clone();
        let mut report = interruptibly(py, &cancel, || session.solve(&opts)).map_err(|e| raise(py, e))?;
        self.warm = Some((report.weights.clone(), report.intercept.unwrap_or(0.0)));
        // The weights go over as an array, not as JSON text: written and parsed back, the
        // 1,085,406 of debian-files cost a fit some 100 ms.
        let weights = std::mem::take(&mut report.weights);
        let json = serde_json::to_string(&report).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let weights = PyArray1::from_vec(py, weights);
        let intercepts = report.intercepts.map(|b| PyArray1::from_vec(py, b));
        Ok((json, weights, intercepts))
    }

    /// The addresses at which a fit on these arrays reads the column indices and the values:
    /// the tests compare them with NumPy's, to show the matrix is read in place.
    fn addresses<'py>(&self, py: Python<'py>, rows: Rows<'py>) -> PyResult<(usize, usize)> {
        let data = rows.data(py)?;
        Ok(data.addresses())
    }

    /// The regularization path of `param` on these arrays, from `start` (None: λ_max) down to
    /// `end` in `steps` log-spaced values, each point warm from the last: its values, F, gaps
    /// (NaN: none), non-zeros, epochs, seconds, statuses, and the weights (a row a point) with
    /// the intercepts.
    #[pyo3(signature = (rows, param, start=None, end=None, steps=20, values=None, tol=None, epochs=None, solver=None, seed=1, cold=false, threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn path<'py>(
        &self,
        py: Python<'py>,
        rows: Rows<'py>,
        param: String,
        start: Option<f64>,
        end: Option<f64>,
        steps: usize,
        values: Option<Vec<f64>>,
        tol: Option<f64>,
        epochs: Option<usize>,
        solver: Option<String>,
        seed: u64,
        cold: bool,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let data = rows.data(py)?;
        let session = Session::new(self.problem.clone(), data);
        let spec =
            PathSpec { cold, ..path_spec(param, (start, end, steps, values), (tol, epochs, seed), solver, threads) };
        let cancel = spec.cancel.clone();
        let solved = interruptibly(py, &cancel, || session.path(spec)).map_err(|e| raise(py, e))?;
        let points = &solved.points;
        let column = |f: &dyn Fn(&PathPoint) -> f64| PyArray1::from_vec(py, points.iter().map(f).collect());
        let out = PyDict::new(py);
        out.set_item("values", column(&|p| p.value))?;
        out.set_item("objective", column(&|p| p.objective))?;
        out.set_item("gap", column(&|p| p.gap.unwrap_or(f64::NAN)))?;
        out.set_item("nnz", column(&|p| p.nnz as f64))?;
        out.set_item("epochs", column(&|p| p.epochs as f64))?;
        out.set_item("seconds", column(&|p| p.seconds))?;
        out.set_item("intercept", column(&|p| p.intercept))?;
        out.set_item("status", points.iter().map(|p| p.status).collect::<Vec<_>>())?;
        let weights: Vec<f64> = points.iter().flat_map(|p| p.weights.iter().copied()).collect();
        out.set_item("weights", PyArray1::from_vec(py, weights))?;
        out.set_item("regression", solved.regression)?;
        Ok(out)
    }

    /// K-fold cross-validation of `param` along warm-started paths on these arrays (the grid as
    /// `path`'s, or `values`), each row's loss weighted by `sample_weight` when given: `folds`
    /// drawn from `seed` (stratified for labels), or `fold_of`, each row's fold; the refit at
    /// `choose` ("min" or "1se"); with `keep_folds`, each fold's weights at every value too. See
    /// [`cv_dict`] for what it returns.
    #[pyo3(signature = (rows, param, folds=5, fold_of=None, choose="1se", start=None, end=None, steps=20, values=None, tol=None, epochs=None, solver=None, seed=1, threads=None, sample_weight=None, keep_folds=false))]
    #[allow(clippy::too_many_arguments)]
    fn cv<'py>(
        &self,
        py: Python<'py>,
        rows: Rows<'py>,
        param: String,
        folds: usize,
        fold_of: Option<Vec<usize>>,
        choose: &str,
        start: Option<f64>,
        end: Option<f64>,
        steps: usize,
        values: Option<Vec<f64>>,
        tol: Option<f64>,
        epochs: Option<usize>,
        solver: Option<String>,
        seed: u64,
        threads: Option<usize>,
        sample_weight: Option<PyReadonlyArray1<'py, f64>>,
        keep_folds: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let choose = match choose {
            "min" => Choose::Min,
            "1se" => Choose::OneSe,
            other => return Err(PyValueError::new_err(format!("choose={other:?}: give \"min\" or \"1se\""))),
        };
        let data = rows.data(py)?;
        let data = match sample_weight {
            Some(s) => data.with_weights(s.as_slice()?.to_vec()).map_err(|e| raise(py, e))?,
            None => data,
        };
        let session = Session::new(self.problem.clone(), data);
        let spec = CvSpec {
            path: path_spec(param, (start, end, steps, values), (tol, epochs, seed), solver, threads),
            folds,
            choose,
            fold_of,
            keep_folds,
        };
        let cancel = spec.path.cancel.clone();
        let done = interruptibly(py, &cancel, || session.cv(spec)).map_err(|e| raise(py, e))?;
        cv_dict(py, &done)
    }
}

/// The warm-started path `Model.path` and `Model.cv` run: `param` over the grid (`start`, `end`,
/// `steps`, or the `values` themselves), each point stopped by (`tol`, `epochs`) with `seed`,
/// on `threads` threads (None: every core), compiled by the JIT with `solver` forced if given.
fn path_spec(
    param: String,
    (from, to, steps, values): (Option<f64>, Option<f64>, usize, Option<Vec<f64>>),
    (tol, epochs, seed): (Option<f64>, Option<usize>, u64),
    solver: Option<String>,
    threads: Option<usize>,
) -> PathSpec {
    PathSpec {
        param,
        from,
        to,
        steps,
        values,
        tol,
        epochs,
        seed,
        cold: false,
        jit: true,
        threads: threads.unwrap_or_else(optc::data::available_threads).max(1),
        compile: CompileOptions { solver, ..Default::default() },
        cancel: Default::default(),
    }
}

/// The cross-validation of `Model.cv` as arrays: per value of the grid the mean held-out loss
/// and error with their standard errors (NaN: none), the folds averaged in and left out, and
/// the full fit there; λ_min, λ_1se, the chosen value and the refit's weights and intercept.
fn cv_dict<'py>(py: Python<'py>, done: &CrossValidated) -> PyResult<Bound<'py, PyDict>> {
    let column = |f: &dyn Fn(usize) -> f64| PyArray1::from_vec(py, (0..done.points.len()).map(f).collect());
    let (p, full) = (&done.points, &done.full.points);
    let out = PyDict::new(py);
    out.set_item("values", column(&|i| p[i].value))?;
    out.set_item("cv_loss", column(&|i| p[i].loss))?;
    out.set_item("cv_loss_se", column(&|i| p[i].loss_se))?;
    out.set_item("cv_error", column(&|i| p[i].error.unwrap_or(f64::NAN)))?;
    out.set_item("cv_error_se", column(&|i| p[i].error_se.unwrap_or(f64::NAN)))?;
    out.set_item("folds", column(&|i| p[i].folds as f64))?;
    out.set_item("unconverged", column(&|i| p[i].unconverged as f64))?;
    out.set_item("nnz", column(&|i| full[i].nnz as f64))?;
    out.set_item("objective", column(&|i| full[i].objective))?;
    out.set_item("gap", column(&|i| full[i].gap.unwrap_or(f64::NAN)))?;
    out.set_item("status", full.iter().map(|q| q.status).collect::<Vec<_>>())?;
    out.set_item("lambda_min", p[done.min].value)?;
    out.set_item("lambda_1se", p[done.one_se].value)?;
    out.set_item("chosen", p[done.chosen].value)?;
    let refit = done.refit();
    out.set_item("coef", PyArray1::from_vec(py, refit.weights.clone()))?;
    out.set_item("intercept", refit.intercept)?;
    out.set_item("refit_status", refit.status)?;
    out.set_item("refit_gap", refit.gap.unwrap_or(f64::NAN))?;
    out.set_item("regression", done.full.regression)?;
    out.set_item("stratified", done.stratified)?;
    out.set_item("n_folds", done.folds)?;
    out.set_item("failures", done.failures.clone())?;
    out.set_item("fold_of", PyArray1::from_vec(py, done.fold_of.iter().map(|&f| f as i64).collect()))?;
    // Each kept fold's weights a value (a row each, flattened) and intercepts; None for a fold
    // that failed.
    let kept = |f: &dyn Fn(&PathPoint) -> Vec<f64>| {
        done.fold_paths
            .iter()
            .map(|p| p.as_ref().map(|p| PyArray1::from_vec(py, p.points.iter().flat_map(f).collect())))
            .collect::<Vec<_>>()
    };
    out.set_item("fold_coef", kept(&|p| p.weights.clone()))?;
    out.set_item("fold_intercept", kept(&|p| vec![p.intercept]))?;
    Ok(out)
}

/// Runs `work` on a worker thread while this one, holding the GIL only between waits, turns a
/// pending Ctrl-C into `cancel`: the run then ends `interrupted` with its last iterate, as
/// `optc run` does on SIGINT. The wait ends the moment the worker does (a channel, not a nap:
/// housing's whole fit is a millisecond, and a 2 ms nap was most of it), and at least every
/// [`SIGNAL_POLL`] to look for a signal.
///
/// The worker is one of rayon's pool, started once a process, not a thread started a fit: a
/// new thread cost housing's 0.7 ms fit about 0.15 ms (its stack and its malloc arena faulted
/// in, the dense products' thread-local buffers made again). A panic in `work` is caught
/// there and becomes an error.
fn interruptibly<T: Send>(
    py: Python<'_>,
    cancel: &Cancel,
    work: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    rayon::in_place_scope(|scope| {
        let (done, finished) = std::sync::mpsc::channel::<Result<T, Error>>();
        scope.spawn(move |_| {
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|_| Err(Error::Diverged("the solver panicked".into())));
            let _ = done.send(out);
        });
        // The receiver is not Sync: it goes into each wait and comes back out.
        let mut finished = finished;
        loop {
            let (back, got) = py.detach(move || {
                let got = finished.recv_timeout(SIGNAL_POLL);
                (finished, got)
            });
            finished = back;
            match got {
                Ok(out) => return out,
                Err(RecvTimeoutError::Disconnected) => return Err(Error::Diverged("the solver panicked".into())),
                Err(RecvTimeoutError::Timeout) => {
                    if py.check_signals().is_err() {
                        cancel.cancel();
                    }
                }
            }
        }
    })
}

/// How often a waiting fit looks for Ctrl-C: quick enough that a user never waits for it.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// The rows a fit or a path reads, as `optc/__init__.py` hands them over: a canonical CSR
/// matrix (indptr, int32, int64 or uint32 indices, float64 values), the labels and the width;
/// or, with no indptr and no indices, a dense row-major array's values.
#[derive(FromPyObject)]
struct Rows<'py>(
    Option<PyReadonlyArray1<'py, i64>>,
    Option<Bound<'py, PyAny>>,
    Bound<'py, PyArray1<f64>>,
    PyReadonlyArray1<'py, f64>,
    usize,
);

impl Rows<'_> {
    /// optc's data: indptr copied (one a row), the indices and values read in place, the
    /// labels copied; a dense array's values read in place, its indices made.
    fn data(&self, py: Python<'_>) -> PyResult<Data> {
        let Rows(indptr, indices, values, labels, features) = self;
        let (Some(indptr), Some(indices)) = (indptr, indices) else {
            let (values, labels) = (in_place(values)?, labels.as_slice()?.to_vec());
            return Data::from_dense_in_place(values, labels, *features).map_err(|e| raise(py, e));
        };
        let ptr: Vec<usize> = indptr
            .as_slice()?
            .iter()
            .map(|&p| usize::try_from(p).map_err(|_| PyValueError::new_err(format!("indptr holds {p}, below 0"))))
            .collect::<PyResult<_>>()?;
        let (values, labels) = (in_place(values)?, labels.as_slice()?.to_vec());
        let data = if let Ok(a) = indices.cast::<PyArray1<i32>>() {
            Data::from_csr_in_place(ptr, in_place(a)?, values, labels, *features)
        } else if let Ok(a) = indices.cast::<PyArray1<i64>>() {
            Data::from_csr_in_place(ptr, in_place(a)?, values, labels, *features)
        } else if let Ok(a) = indices.cast::<PyArray1<u32>>() {
            Data::from_csr_in_place(ptr, in_place(a)?, values, labels, *features)
        } else {
            return Err(PyValueError::new_err("indices must be an int32, int64 or uint32 array"));
        };
        data.map_err(|e| raise(py, e))
    }
}

#[pymodule]
fn _optc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add("ModelError", m.py().get_type::<ModelError>())?;
    m.add("SolverError", m.py().get_type::<SolverError>())?;
    Ok(())
}
