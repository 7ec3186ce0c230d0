"""optc from Python: a model in optc's language, compiled once, fitted on scipy.sparse matrices
or NumPy arrays, each answer with the certified bound on its suboptimality.

    >>> import optc
    >>> model = optc.Model('''
    ... data x: sparse, y: labels
    ... var w: vec[dim(x)]
    ... param λ = 1e-3
    ... minimize E[logistic(y, <x, w>)] + λ·l1(w)
    ... ''')
    >>> result = model.fit(X, y)                # doctest: +SKIP
    >>> result.coef_, result.gap, result.status  # doctest: +SKIP

The solve itself is optc's, in Rust (`optc._optc`): a canonical CSR matrix of float64 values
with int32 or int64 indices is read where it is, without a copy, and the GIL is released while
it runs.
"""

import json
import os

import numpy as np
import scipy.sparse as sp

from ._optc import Model as _Native
from ._optc import ModelError, SolverError

__all__ = ["Model", "Result", "Path", "CV", "ModelError", "SolverError"]


class Result:
    """One fit's answer and its record, as `optc run --json` gives it.

    Attributes: ``coef_`` (the weights; for a one-vs-rest fit a classes × features array),
    ``intercept_`` (0.0 when the model has none), ``objective`` (F), ``gap`` (the certified
    bound on F − F*, None when the model has no certificate), ``relative_gap``, ``status``
    (``converged``, ``max_epochs``, ``time_limit``, ``interrupted``, …), ``rule`` (what stopped
    the run, in words), ``epochs``, ``seconds``, ``solver``, ``nnz`` and ``trace`` (a dict of
    arrays: ``epoch``, ``seconds``, ``objective``, ``gap``, one entry a check). ``report`` holds
    every field of the record.
    """

    def __init__(self, report, weights, intercepts, classes):
        self.report = report
        self.objective = report["objective"]
        self.gap = report.get("gap")
        self.relative_gap = report.get("relative_gap")
        self.status = report["status"]
        self.rule = report.get("stopped_by", "")
        self.epochs = report["epochs"]
        self.seconds = report["seconds"]
        self.solver = report["solver"]
        self.nnz = report["nnz"]
        trace = report.get("trace") or []
        self.trace = {
            "epoch": np.array([p["epoch"] for p in trace], dtype=np.int64),
            "seconds": np.array([p["seconds"] for p in trace], dtype=np.float64),
            "objective": np.array([p["objective"] for p in trace], dtype=np.float64),
            "gap": np.array([np.nan if p.get("gap") is None else p["gap"] for p in trace], dtype=np.float64),
        }
        if classes > 1:
            # LIBLINEAR's layout, features × classes, row-major: scikit-learn's is its transpose.
            self.coef_ = np.ascontiguousarray(weights.reshape(-1, classes).T)
            self.intercept_ = np.zeros(classes) if intercepts is None else intercepts
        else:
            self.coef_ = weights
            self.intercept_ = report.get("intercept") or 0.0

    def __repr__(self):
        gap = "none" if self.gap is None else f"{self.gap:.2e}"
        return (f"Result(status={self.status!r}, objective={self.objective:.6g}, gap={gap}, "
                f"nnz={self.nnz}, epochs={self.epochs}, seconds={self.seconds:.3f}, solver={self.solver!r})")


# Python keywords and the usual short names, for the language's ASCII aliases.
_KEYWORDS = {"lam": "lambda", "lambda_": "lambda"}


def _named(params):
    """Keyword arguments as the (name, value) pairs the native model sets, aliases resolved."""
    return [(_KEYWORDS.get(name, name), float(value)) for name, value in params.items()]


class Path:
    """A regularization path, a point per value, as arrays (``optc path``'s CSV columns):
    ``values`` (the parameter, largest first), ``objective``, ``gap`` (NaN where the model has
    no certificate), ``nnz``, ``epochs``, ``seconds``, ``status`` (a list), ``coef_`` (a row a
    point) and ``intercept_``. A point at or above λ_max is w = 0, known optimal: no solver ran
    for it (0 epochs).
    """

    def __init__(self, param, found, features):
        self.param = param
        self.values = found["values"]
        self.objective = found["objective"]
        self.gap = found["gap"]
        self.nnz = found["nnz"].astype(np.int64)
        self.epochs = found["epochs"].astype(np.int64)
        self.seconds = found["seconds"]
        self.status = list(found["status"])
        self.coef_ = found["weights"].reshape(len(self.values), -1) if len(self.values) else np.zeros((0, features))
        self.intercept_ = found["intercept"]

    def __len__(self):
        return len(self.values)

    def __repr__(self):
        return (f"Path({self.param}: {len(self)} points from {self.values[0]:.3g} to {self.values[-1]:.3g}, "
                f"nnz {self.nnz[0]}..{self.nnz[-1]}, {int(self.epochs.sum())} epochs)") if len(self) else "Path()"


class CV:
    """A K-fold cross-validation along a warm-started path (``optc cv``'s table), a value per
    grid point, largest first: ``values``, ``cv_loss`` and ``cv_loss_se`` (the mean held-out
    loss and its standard error), ``cv_error`` and ``cv_error_se`` (the error rate, or the MSE
    for real labels), ``folds`` (averaged in) and ``unconverged`` (left out, and the value out
    of the choice), and the fit on all of the data there: ``nnz``, ``objective``, ``gap``,
    ``status``. ``lambda_min`` has the least mean loss, ``lambda_1se`` is the largest value within
    one standard error of it, ``chosen`` the one ``choose`` picked, refitted on all of the data:
    ``coef_``, ``intercept_``, ``refit_status`` and ``refit_gap``. ``fold_of`` is each row's
    fold; with ``keep_folds``, ``fold_coef_`` and ``fold_intercept_`` hold each fold's weights
    (a row a value) and intercepts (None for a fold whose path failed).
    """

    def __init__(self, param, found):
        self.param = param
        for name in ("values", "cv_loss", "cv_loss_se", "cv_error", "cv_error_se", "objective", "gap"):
            setattr(self, name, found[name])
        for name in ("folds", "unconverged", "nnz"):
            setattr(self, name, found[name].astype(np.int64))
        self.status = list(found["status"])
        self.lambda_min, self.lambda_1se, self.chosen = found["lambda_min"], found["lambda_1se"], found["chosen"]
        self.coef_, self.intercept_ = found["coef"], found["intercept"]
        self.refit_status, self.refit_gap = found["refit_status"], found["refit_gap"]
        self.regression, self.stratified, self.n_folds = found["regression"], found["stratified"], found["n_folds"]
        self.fold_of = found["fold_of"]
        # (fold, why) for each fold whose path failed (a point diverged): out of every mean.
        self.failures = list(found["failures"])
        # With keep_folds: each fold's weights at every value (a row each) and intercepts.
        rows = len(self.values)
        self.fold_coef_ = [None if c is None else c.reshape(rows, -1) for c in found["fold_coef"]] or None
        self.fold_intercept_ = list(found["fold_intercept"]) or None

    def __len__(self):
        return len(self.values)

    def __repr__(self):
        return (f"CV({self.param}: {len(self)} values, {self.n_folds} folds, λ_min {self.lambda_min:.3g}, "
                f"λ_1se {self.lambda_1se:.3g}, refit at {self.chosen:.3g}: {self.refit_status})")


# A dense array with at least this share of non-zeros is handed over whole, its zeros stored:
# a stored zero costs a pass what a non-zero does, while scipy's conversion, which drops them,
# took 0.1–0.2 s on a 15,000 × 200 array (3M entries) that optc solves in 0.07 s.
_DENSE_SHARE = 0.5

# The share is estimated on at most this many rows, evenly spaced: counting every entry cost a
# 200,000 × 50 array 15 ms, a twelfth of its ridge fit. A wrong guess only costs speed: a dense
# row stores its zeros, and a sparse matrix its non-zeros, for the same answer.
_DENSITY_SAMPLE = 1024


def _mostly_nonzero(X):
    """Whether the 2-d array X looks at least ``_DENSE_SHARE`` non-zero, judged on evenly spaced
    rows."""
    sample = X[:: max(1, X.shape[0] // _DENSITY_SAMPLE)]
    return sample.size > 0 and np.count_nonzero(sample) >= _DENSE_SHARE * sample.size


def _dense_rows(X):
    """A dense 2-d float64 array with every entry stored: no indptr and no indices (the native
    side makes them: a row's columns are 0..d), and X's own values, read in place when X is
    C-ordered."""
    return None, None, np.ascontiguousarray(X).reshape(-1), X.shape[1]


def _csr(X):
    """X as the arrays the native fit reads: (indptr int64, indices int32/int64/uint32, values
    float64, features). A canonical CSR matrix of float64 with int32 or int64 indices gives its
    own index and value arrays, so the fit reads them in place; a dense array mostly of
    non-zeros gives its values in place and no indptr or indices (see ``_dense_rows``); anything
    else is converted once here."""
    if sp.issparse(X):
        if X.format != "csr":
            X = X.tocsr()
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-d array or a scipy.sparse matrix, not {X.ndim}-d")
        if _mostly_nonzero(X):
            return _dense_rows(X)
        X = sp.csr_matrix(X)
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    indices = X.indices
    if indices.dtype not in (np.int32, np.int64, np.uint32):
        if indices.size and (indices.min() < 0 or indices.max() >= 2**32):
            raise ValueError("a column index is outside 0..2³²")
        indices = indices.astype(np.int64)
    indptr = X.indptr.astype(np.int64, copy=False)
    return indptr, np.ascontiguousarray(indices), np.ascontiguousarray(X.data), X.shape[1]


def _rows(indptr, values, features):
    """The row count of ``_csr``'s arrays: a dense array's has no indptr (and d ≥ 1 columns)."""
    return indptr.shape[0] - 1 if indptr is not None else values.shape[0] // features


def _sample_weight(sample_weight, labels):
    """One finite weight ≥ 0 a row, as a contiguous float64 array, or None."""
    if sample_weight is None:
        return None
    sample_weight = np.ascontiguousarray(np.asarray(sample_weight, dtype=np.float64))
    if sample_weight.shape != labels.shape:
        raise ValueError(f"sample_weight has shape {sample_weight.shape}; expected ({labels.shape[0]},), "
                         "one weight a row")
    if not (np.all(np.isfinite(sample_weight)) and np.all(sample_weight >= 0)):
        raise ValueError("sample_weight must be finite and ≥ 0")
    return sample_weight


def _labels(y, rows):
    y = np.ascontiguousarray(np.asarray(y, dtype=np.float64).ravel())
    if y.shape[0] != rows:
        raise ValueError(f"{y.shape[0]} labels for {rows} rows")
    return y


class Model:
    """A model compiled once: ``Model(text_or_path, **params)``.

    ``text_or_path`` is a model's text, or the path of a ``.opt`` file (whose ``load`` files are
    then relative to it). Keyword arguments set parameters, by name or ASCII alias
    (``lam=1e-3`` or ``lambda_=1e-3`` for ``λ``: ``lambda`` is a Python keyword). A model that
    does not compile raises :class:`ModelError`, whose message is the rendered diagnostic and
    whose ``line`` and ``column`` say where.
    """

    def __init__(self, text_or_path, **params):
        is_path = "\n" not in text_or_path and os.path.isfile(text_or_path)
        if not is_path and "\n" not in text_or_path and text_or_path.strip().endswith(".opt"):
            raise FileNotFoundError(f"no model file {text_or_path!r}")
        self._native = _Native(text_or_path, is_path, _named(params))

    @property
    def text(self):
        """The model's text."""
        return self._native.text

    def set(self, **params):
        """Sets parameters for the next fits, which still start from the last answer."""
        if params:
            self._native.set(_named(params))
        return self

    def check(self):
        """What ``optc check`` prints: the terms, their properties and the solver picked."""
        return self._native.check()

    def plan(self, solver=None):
        """What ``optc plan`` prints: the lowered plan (without data)."""
        return self._native.plan(solver)

    def fit(self, X, y, tol=None, solver=None, epochs=None, time_limit=None, init=None, threads=None,
            seed=None, warm_start=True, trace=False, sample_weight=None):
        """Solves the model on rows ``X`` (scipy.sparse or ndarray) with labels ``y``.

        ``tol`` is the certified relative gap to stop at (default 1e-4); ``solver`` names one;
        ``epochs`` and ``time_limit`` (seconds) cap the run; ``threads`` defaults to the cores.
        The fit starts from the last answer (``warm_start=False``: from zero), or from ``init``:
        the weights, or a pair (weights, intercept). ``trace=True`` records F and the gap after
        every epoch in ``Result.trace`` (a check each epoch, left out of ``seconds``). Ctrl-C
        ends the fit with status ``interrupted`` and the last iterate. ``sample_weight``, one
        number ≥ 0 a row, weights each row's loss in a model that declares them
        (``data x: sparse, y: labels, s: weights`` and ``E[s·loss(...)]``); None: every weight
        1. Returns a :class:`Result`.

        X is read in place when it is a canonical CSR matrix of float64 (scipy's int32 or int64
        indices); it must not be written while the fit runs.
        """
        indptr, indices, values, features = _csr(X)
        labels = _labels(y, _rows(indptr, values, features))
        sample_weight = _sample_weight(sample_weight, labels)
        if init is not None:
            w, b = init if isinstance(init, tuple) else (init, 0.0)
            init = (np.ascontiguousarray(np.asarray(w, dtype=np.float64).ravel()), float(b))
        report, weights, intercepts = self._native.fit(
            (indptr, indices, values, labels, features), tol=tol, solver=solver, epochs=epochs,
            time_limit=time_limit, threads=threads, seed=seed, cold=not warm_start, init=init,
            trace=trace, sample_weight=sample_weight)
        report = json.loads(report)
        report["weights"] = weights  # handed over as an array, not in the JSON text
        classes = len(report.get("classes") or []) or 1
        return Result(report, weights, intercepts, classes)

    def path(self, X, y, param="λ", start=None, end=None, steps=20, tol=None, epochs=None, solver=None,
             seed=1, warm_start=True, threads=None, values=None):
        """The model solved along ``steps`` log-spaced values of ``param`` from ``start`` (default
        λ_max, the smallest value where w = 0 is optimal, when the parameter scales a
        sparsifying norm) down to ``end`` (default start·1e-4 when rows > features, else
        start·1e-2), each point warm-started from the last (``warm_start=False``: from zero),
        each stopping at the certified relative gap ``tol``; or at ``values``, sorted from large
        to small. Returns a :class:`Path`. The other
        parameters are the model's as set; the model's last answer is left as it was.
        """
        grid = None if values is None else [float(v) for v in np.ravel(values)]
        indptr, indices, values, features = _csr(X)
        labels = _labels(y, _rows(indptr, values, features))
        found = self._native.path((indptr, indices, values, labels, features), _KEYWORDS.get(param, param),
                                  start=start, end=end, steps=steps, tol=tol, epochs=epochs, solver=solver,
                                  values=grid,
                                  seed=seed, cold=not warm_start, threads=threads)
        return Path(param, found, features)

    def cv(self, X, y, param="λ", folds=5, choose="1se", start=None, end=None, steps=20, values=None, tol=None,
           epochs=None, solver=None, seed=1, threads=None, sample_weight=None, keep_folds=False):
        """K-fold cross-validation of ``param`` along warm-started paths (glmnet's
        ``cv.glmnet``): the path on all of the rows first (``start``, ``end``, ``steps`` as
        :meth:`path`, or ``values`` itself), then each fold's on the other rows, scored on its own. ``folds`` is K (the
        rows dealt from ``seed``, within each label's rows for labels) or each row's fold, an
        integer array of 0..K−1 (a scikit-learn splitter's test sets). ``choose`` (``"1se"``, the
        default, or ``"min"``) picks the value refitted on all of the rows. ``sample_weight``
        weights each row's loss, as :meth:`fit`'s; ``keep_folds=True`` keeps each fold's weights
        at every value (``CV.fold_coef_``, ``CV.fold_intercept_``; ``CV.fold_of`` says which rows
        each held out), to score them another way. Returns a :class:`CV`.
        """
        grid = None if values is None else [float(v) for v in np.ravel(values)]
        indptr, indices, values, features = _csr(X)
        labels = _labels(y, _rows(indptr, values, features))
        sample_weight = _sample_weight(sample_weight, labels)
        if isinstance(folds, (int, np.integer)) and not isinstance(folds, bool):
            k, fold_of = int(folds), None
            if k < 2:
                raise ValueError(f"folds={k}: give at least 2")
            if k > labels.shape[0]:
                raise ValueError(f"folds={k}: the data has {labels.shape[0]} rows")
        else:
            fold_of = np.asarray(folds).ravel()
            if fold_of.dtype.kind not in "iu" or (fold_of.size and fold_of.min() < 0):
                raise ValueError("folds: give K, or each row's fold as integers 0..K-1")
            k = int(fold_of.max()) + 1 if fold_of.size else 0
            fold_of = [int(f) for f in fold_of]
        try:
            found = self._native.cv(
                (indptr, indices, values, labels, features), _KEYWORDS.get(param, param), folds=k, fold_of=fold_of,
                choose=choose, start=start, end=end, steps=steps, values=grid, tol=tol, epochs=epochs, solver=solver,
                seed=seed, threads=threads, sample_weight=sample_weight, keep_folds=keep_folds)
        except ValueError as e:
            # The library words its checks as optc cv's flags; here they are this method's arguments.
            raise ValueError(str(e).replace("--folds ", "folds=")) from None
        return CV(param, found)

    def reset(self):
        """Forgets the last answer: the next fit starts from zero."""
        self._native.reset()
