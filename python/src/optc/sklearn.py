"""scikit-learn estimators over optc: ``OptcClassifier`` and ``OptcRegressor``.

Each takes a model in optc's language (``model=``, its parameters in ``params=``), or the
shorthand of a loss, a penalty and its weight ``lam`` (λ, the weight of the mean loss's
regularizer: ``lam = 1/(C·n_samples)`` for LIBLINEAR's C). They fit scipy.sparse matrices
and arrays, work inside ``Pipeline`` and ``GridSearchCV``, and with ``warm_start=True`` start
each fit from the last answer, as scikit-learn's linear models do. ``result_`` holds the last
fit's :class:`optc.Result`: its certified gap, status and rule.

Requires scikit-learn (``pip install './python[sklearn]'``).
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

import optc

try:  # scikit-learn ≥ 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn
    def _validate_data(estimator, X, y="no_validation", reset=True, **kwargs):
        return estimator._validate_data(X, y, reset=reset, **kwargs)

__all__ = ["OptcClassifier", "OptcRegressor", "EXPECTED_FAILED_CHECKS"]

#: The checks of ``sklearn.utils.estimator_checks.check_estimator`` the estimators do not pass,
#: with the reason: pass it as ``check_estimator(est, expected_failed_checks=EXPECTED_FAILED_CHECKS)``.
EXPECTED_FAILED_CHECKS = {}

_LOSSES = {"logistic": "logistic", "hinge": "hinge", "squared_hinge": "squared_hinge",
           "softmax": "softmax", "squared": "squared"}


def _penalty(penalty, variable, elastic_alpha):
    if penalty == "l1":
        return f"λ·l1({variable})"
    if penalty == "l2":
        return f"λ·l2sq({variable})"
    if penalty == "elasticnet":
        return f"λ·elastic({variable}, {float(elastic_alpha)!r})"
    raise ValueError(f"penalty={penalty!r}: one of 'l1', 'l2' (λ·½‖w‖²), 'elasticnet'")


class _OptcLinear(BaseEstimator):
    """What the classifier and the regressor share: the parameters, the model text, the fit
    and warm starts."""

    #: The loss when ``loss`` is None.
    _default_loss = None

    def __init__(self, model=None, loss=None, penalty="l1", lam=1e-4, elastic_alpha=0.5,
                 fit_intercept=True, tol=1e-4, solver=None, max_epochs=None, time_limit=None,
                 warm_start=False, threads=None, params=None):
        self.model = model
        self.loss = loss
        self.penalty = penalty
        self.lam = lam
        self.elastic_alpha = elastic_alpha
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.solver = solver
        self.max_epochs = max_epochs
        self.time_limit = time_limit
        self.warm_start = warm_start
        self.threads = threads
        self.params = params

    def _loss(self):
        return self._default_loss if self.loss is None else self.loss

    def _model_text(self, labels, multinomial):
        if self.model is not None:
            return self.model
        loss = _LOSSES.get(self._loss())
        if loss is None:
            raise ValueError(f"loss={self.loss!r}: one of {sorted(_LOSSES)}")
        if multinomial:
            labels, loss = "classes", "softmax"
            weights, shape, offsets = "W", "mat[dim(x), classes(y)]", "vec[classes(y)]"
        else:
            weights, shape, offsets = "w", "vec[dim(x)]", "scalar"
        b = f"var b: {offsets}\n" if self.fit_intercept else ""
        margin = f"<x, {weights}>" + (" + b" if self.fit_intercept else "")
        return (f"data x: sparse, y: {labels}\nvar {weights}: {shape}\n{b}param λ = 1\n"
                f"minimize E[{loss}(y, {margin})] + {_penalty(self.penalty, weights, self.elastic_alpha)}\n")

    def _params(self):
        if self.model is not None:
            return dict(self.params or {})
        if not np.isfinite(self.lam) or self.lam < 0:
            raise ValueError(f"lam={self.lam!r}: a finite λ ≥ 0")
        return {"λ": float(self.lam), **(self.params or {})}

    def _solve(self, X, y, text):
        params = self._params()
        warm = self.warm_start and getattr(self, "_optc_text", None) == text
        if warm:
            self._optc.set(**params)
        else:
            self._optc = optc.Model(text, **params)
            self._optc_text = text
        result = self._optc.fit(X, y, tol=self.tol, solver=self.solver, epochs=self.max_epochs,
                                time_limit=self.time_limit, threads=self.threads, warm_start=warm)
        self.result_ = result
        self.n_iter_ = result.epochs
        return result

    def __getstate__(self):
        # The compiled model is rebuilt on the next fit; coef_ and the rest pickle as arrays.
        state = dict(self.__dict__)
        state.pop("_optc", None)
        state.pop("_optc_text", None)
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"X_types": ["2darray", "sparse"]}


class OptcClassifier(ClassifierMixin, _OptcLinear):
    """A linear classifier fitted by optc, certified.

    ``loss``: ``logistic`` (the default: two classes, one-vs-rest beyond), ``hinge``, ``squared_hinge``,
    or ``softmax`` (multinomial); ``penalty``: ``l1``, ``l2`` (λ·½‖w‖²) or ``elasticnet``
    (λ·(‖w‖₁ + (α/2)‖w‖²), α = ``elastic_alpha``); ``lam``: λ. Or ``model``: a model's text
    over ``y: labels`` (or ``y: classes`` with a matrix W), with ``params``.
    ``fit_intercept`` adds an unregularized ``var b``. ``tol`` is the certified relative gap.
    """

    _default_loss = "logistic"

    def _multinomial(self):
        if self.model is not None:
            return "y: classes" in self.model
        return self._loss() == "softmax"

    def fit(self, X, y):
        X, y = _validate_data(self, X, y, accept_sparse=["csr", "csc", "coo"], dtype=np.float64)
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        k = len(self.classes_)
        if k < 2:
            raise ValueError(f"Classifier can't train when only one class is present: {self.classes_[0]!r}")
        multinomial = self._multinomial()
        if k == 2 and not multinomial:
            # Sorted, the second class is optc's +1: decision_function > 0 means classes_[1].
            labels = np.where(encoded == 1, 1.0, -1.0)
        else:
            labels = encoded.astype(np.float64)
        result = self._solve(X, labels, self._model_text("labels", multinomial))
        d = X.shape[1]
        if k == 2 and not multinomial:
            self.coef_ = np.asarray(result.coef_, dtype=np.float64).reshape(1, d)
            self.intercept_ = np.array([float(result.intercept_)])
            return self
        # Classes come in the order each first appears (LIBLINEAR's); put them in classes_'s.
        _, first = np.unique(encoded, return_index=True)
        seen = encoded[np.sort(first)]
        if multinomial:
            W = np.asarray(result.coef_).reshape(d, k)
            coef = W.T
            b = result.report.get("intercepts")
            intercept = np.zeros(k) if b is None else np.asarray(b, dtype=np.float64)
        else:
            coef = np.asarray(result.coef_).reshape(k, d)
            intercept = np.broadcast_to(np.asarray(result.intercept_, dtype=np.float64), (k,))
        self.coef_ = np.empty((k, d))
        self.intercept_ = np.empty(k)
        self.coef_[seen] = coef
        self.intercept_[seen] = intercept
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = _validate_data(self, X, accept_sparse=["csr", "csc", "coo"], dtype=np.float64, reset=False)
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        if scores.shape[1] == 2:
            # Softmax on two classes: scikit-learn's binary convention, one score for classes_[1].
            return scores[:, 1] - scores[:, 0]
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def _probabilistic(self):
        return self._multinomial() or (self.model is None and self._loss() == "logistic") or (
            self.model is not None and "logistic(" in self.model)

    @available_if(_probabilistic)
    def predict_proba(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            # Two-class logistic, or softmax on two classes (whose probability is the same
            # sigmoid of the difference of the scores).
            p = 1.0 / (1.0 + np.exp(-scores))
            return np.column_stack([1.0 - p, p])
        if self._multinomial():
            scores = scores - scores.max(axis=1, keepdims=True)
            e = np.exp(scores)
            return e / e.sum(axis=1, keepdims=True)
        # One-vs-rest: each class's probability, normalised (scikit-learn's liblinear does so).
        p = 1.0 / (1.0 + np.exp(-scores))
        return p / p.sum(axis=1, keepdims=True)

    @available_if(_probabilistic)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


class OptcRegressor(RegressorMixin, _OptcLinear):
    """A linear regressor fitted by optc, certified: ``loss="squared"`` with an ``l1`` (the
    lasso), ``l2`` or ``elasticnet`` penalty, or ``model``: a model's text over ``y: real``."""

    _default_loss = "squared"

    def fit(self, X, y):
        X, y = _validate_data(self, X, y, accept_sparse=["csr", "csc", "coo"], dtype=np.float64, y_numeric=True)
        result = self._solve(X, np.asarray(y, dtype=np.float64), self._model_text("real", False))
        self.coef_ = np.asarray(result.coef_, dtype=np.float64)
        self.intercept_ = float(result.intercept_)
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = _validate_data(self, X, accept_sparse=["csr", "csc", "coo"], dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_
