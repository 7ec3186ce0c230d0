"""scikit-learn estimators over optc: ``OptcClassifier`` and ``OptcRegressor``, and
``OptcClassifierCV`` and ``OptcRegressorCV``, which choose their penalty by cross-validation.

Their arguments mean what scikit-learn's do, so the same arguments give the same objective:
``OptcClassifier(C=…, penalty=…, l1_ratio=…)`` is ``LogisticRegression``'s (and ``LinearSVC``'s
with ``loss="hinge"`` or ``"squared_hinge"``, but for the intercept: LinearSVC penalises its own,
optc leaves it free), and
``OptcRegressor(alpha=…, penalty=…, l1_ratio=…)`` is ``Lasso``'s or ``ElasticNet``'s. optc
minimises a mean loss plus λ·penalty, so each estimator turns its arguments into λ (see
:func:`_optc_penalty`); ``lam=`` sets λ directly instead. Or they take a model in optc's language
(``model=``, its parameters in ``params=``). They fit scipy.sparse matrices and arrays, work
inside ``Pipeline`` and ``GridSearchCV``, and with ``warm_start=True`` start each fit from the
last answer. ``result_`` holds the last fit's :class:`optc.Result`: its certified gap, status
and rule; a fit that stops short of ``tol`` warns with ``ConvergenceWarning``.

Requires scikit-learn (``pip install './python[sklearn]'``).
"""

import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.metaestimators import available_if
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted
from sklearn.utils.validation import validate_data as _validate_data

import optc

__all__ = ["OptcClassifier", "OptcRegressor", "OptcClassifierCV", "OptcRegressorCV", "EXPECTED_FAILED_CHECKS",
           "EXPECTED_FAILED_CHECKS_CV"]

#: The checks of ``sklearn.utils.estimator_checks.check_estimator`` the estimators do not pass,
#: with the reason: pass it as ``check_estimator(est, expected_failed_checks=EXPECTED_FAILED_CHECKS)``.
EXPECTED_FAILED_CHECKS = {}

_SPARSE = ["csr", "csc", "coo"]

# A fit validates X with ``ensure_all_finite=False``: the native side checks every value once,
# naming its row and column in the ValueError, where scikit-learn's check was a second pass over
# X (6 ms of a 0.11 s fit on a dense 200,000 × 50 array). Predictions keep scikit-learn's check.


#: scikit-learn's names of optc's losses.
_LOSS_ALIASES = {
    "log_loss": "logistic",
    "squared_error": "squared",
    "epsilon_insensitive": "eps_insensitive",
    "squared_epsilon_insensitive": "squared_eps_insensitive",
}


def _is_real(value):
    """Whether ``value`` is a finite real number (not a bool, a string or None)."""
    return not isinstance(value, bool) and isinstance(value, (int, float, np.number)) and math.isfinite(value)


def _strength_of(name, value, unbounded=False):
    """C or alpha, the strength scikit-learn gives the penalty, as a float > 0; with
    ``unbounded`` (the classifier's C), also ``np.inf``: no penalty."""
    strength = float(value)
    if strength == math.inf and unbounded:
        return strength
    if not (math.isfinite(strength) and strength > 0):
        why = "a number > 0, or np.inf for no penalty" if unbounded else "a finite number > 0 (lam=0 is no penalty)"
        raise ValueError(f"{name}={value!r}: {why}")
    return strength


def _l1_ratio(value):
    """``l1_ratio`` as a float in [0, 1], or a ValueError naming it."""
    if not _is_real(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"l1_ratio={value!r}: a number in [0, 1]")
    return float(value)


def _optc_penalty(penalty, strength, l1_ratio):
    """scikit-learn's penalty ``strength``·P(w) as optc's (name, λ, α) of λ·l1, λ·l2sq or
    λ·elastic(w, α) = λ(‖w‖₁ + (α/2)‖w‖²).

    P is l1_ratio·‖w‖₁ + ½(1 − l1_ratio)‖w‖², as in scikit-learn 1.8 and later, where
    ``l1_ratio`` alone chooses the penalty: 0 is ½‖w‖², 1 is ‖w‖₁. A ``penalty`` given takes
    precedence: ``"l1"`` ‖w‖₁, ``"l2"`` ½‖w‖², ``"elasticnet"`` the mix at l1_ratio.
    ``strength`` is 1/(C·n_samples) for the classifier and α for the regressor. In between,
    λ = l1_ratio·strength and α = (1 − l1_ratio)/l1_ratio.
    """
    r = _l1_ratio(l1_ratio)
    if penalty is None:
        penalty = "elasticnet"
    if penalty in ("l1", "l2"):
        return penalty, strength, None
    if penalty != "elasticnet":
        raise ValueError(f"penalty={penalty!r}: None (l1_ratio chooses), 'l1', 'l2' or 'elasticnet'")
    if r == 0.0:
        return "l2", strength, None
    if r == 1.0:
        return "l1", strength, None
    return "elasticnet", r * strength, (1.0 - r) / r


def _penalty_text(name, variable, alpha):
    if name == "l1":
        return f"λ·l1({variable})"
    if name == "l2":
        return f"λ·l2sq({variable})"
    if name == "elasticnet":
        return f"λ·elastic({variable}, {float(alpha)!r})"
    raise ValueError(f"penalty={name!r}: one of 'l1', 'l2' (λ·½‖w‖²), 'elasticnet'")


def _warn_unless_converged(result, tol):
    """A fit that stopped before its certificate reached ``tol`` says so, as scikit-learn's
    solvers do when they hit ``max_iter``: its answer is usable but not certified to ``tol``."""
    if result.status == "converged":
        return
    reached = ("no certified gap" if result.relative_gap is None
               else f"a certified relative gap of {result.relative_gap:.3g}")
    asked = "optc's default 1e-4" if tol is None else f"{tol:g}"
    warnings.warn(f"optc stopped with status {result.status!r} ({result.rule}) at {reached}, short of "
                  f"tol={asked}: raise max_epochs or time_limit, or loosen tol", ConvergenceWarning,
                  stacklevel=4)


class _OptcLinear(BaseEstimator):
    """What the classifier and the regressor share: the model text, λ, the fit and warm starts.
    Each subclass defines ``_strength(n_samples)``, the strength its scikit-learn arguments give
    the penalty (see :func:`_optc_penalty`)."""

    #: The losses the shorthand takes.
    _losses = ()
    _weights_rescaled = False

    def _penalty(self, n_samples):
        """(name, λ, α) of the shorthand's penalty: scikit-learn's arguments converted, or when
        ``lam`` is set, λ = ``lam`` and α = ``elastic_alpha`` for the penalty that ``penalty``
        names (else the one ``l1_ratio`` picks: 0 l2, 1 l1, between elasticnet)."""
        if self.lam is None:
            strength = self._strength(n_samples)
            if strength == 0.0:
                # C=np.inf: no penalty, whatever l1_ratio says (LogisticRegression's meaning),
                # written as 0·½‖w‖²: a Newton method stopped on the gradient's norm.
                _optc_penalty(self.penalty, 1.0, self.l1_ratio)
                return "l2", 0.0, None
            return _optc_penalty(self.penalty, strength, self.l1_ratio)
        lam = self.lam
        if not _is_real(lam) or lam < 0:
            raise ValueError(f"lam={lam!r}: a finite λ ≥ 0")
        if lam == 0:
            _optc_penalty(self.penalty, 1.0, self.l1_ratio)
            return "l2", 0.0, None
        name, _, _ = _optc_penalty(self.penalty, 1.0, self.l1_ratio)
        alpha = self.elastic_alpha
        if name == "elasticnet" and (not _is_real(alpha) or alpha < 0):
            raise ValueError(f"elastic_alpha={alpha!r}: a finite number ≥ 0")
        return name, float(lam), alpha

    def _loss(self):
        """The loss by optc's name; scikit-learn's names (``log_loss``, ``squared_error``) too."""
        loss = _LOSS_ALIASES.get(self.loss, self.loss) if isinstance(self.loss, str) else self.loss
        if loss not in self._losses:
            names = list(self._losses) + [k for k, v in _LOSS_ALIASES.items() if v in self._losses]
            raise ValueError(f"loss={self.loss!r}: one of {names}")
        return loss

    def _model_text(self, labels, multinomial, penalty, weighted=False):
        if self.model is not None:
            return self.model
        name, _, alpha = penalty
        loss = self._loss()
        if multinomial:
            labels, loss = "classes", "softmax"
            weights, shape, offsets = "W", "mat[dim(x), classes(y)]", "vec[classes(y)]"
        else:
            weights, shape, offsets = "w", "vec[dim(x)]", "scalar"
        b = f"var b: {offsets}\n" if self.fit_intercept else ""
        margin = f"<x, {weights}>" + (" + b" if self.fit_intercept else "")
        # A loss's constant after the margin (Huber's δ, the level τ, the tube's ε) is the
        # parameter k, written at its value: the model is checked before the fit sets it.
        value = self._loss_constant()
        constant, k = (", k", f"param k = {value!r}\n") if value is not None else ("", "")
        # The rows' weights, scikit-learn's sample_weight: each row's loss times sᵢ.
        s, times = (", s: weights", "s·") if weighted else ("", "")
        return (f"data x: sparse, y: {labels}{s}\nvar {weights}: {shape}\n{b}param λ = 1\n{k}"
                f"minimize E[{times}{loss}(y, {margin}{constant})] + {_penalty_text(name, weights, alpha)}\n")

    def _loss_constant(self):
        """The constant the loss takes after the margin, None for a loss without one."""
        return None

    def _params(self, penalty):
        if self.model is not None:
            return dict(self.params or {})
        constant = self._loss_constant()
        k = {} if constant is None else {"k": constant}
        return {"λ": penalty[1], **k, **(self.params or {})}

    def _check_run_parameters(self):
        """The run's parameters, checked here so that a bad one is a ValueError naming the
        parameter (not optc's command-line flag, nor an OverflowError from the binding)."""
        for name in ("max_epochs", "threads"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v < 2**63):
                raise ValueError(f"{name}={v!r}: None or an integer ≥ 1")
        for name in ("tol", "time_limit"):
            v = getattr(self, name)
            if v is not None and (not _is_real(v) or v <= 0):
                raise ValueError(f"{name}={v!r}: None or a finite number > 0")

    def _solve(self, X, y, labels, multinomial=False, sample_weight=None):
        """Fits the model on (X, y), each row's loss weighted by ``sample_weight`` if given,
        compiling it unless a warm start can reuse the last one, and records ``result_``; warns
        when the fit did not converge."""
        self._check_run_parameters()
        penalty = None if self.model is not None else self._penalty(X.shape[0])
        self._fitted_penalty = penalty
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
            if penalty is not None and (self._weights_rescaled or self.lam is not None):
                # ElasticNet's weights are rescaled to sum to n_samples, and `lam` is λ beside
                # the weighted mean loss: (1/Σsᵢ)·Σ sᵢℓᵢ, where optc's is (1/m)·Σ sᵢℓᵢ, so λ
                # is scaled by Σsᵢ/m here. Integer weights then fit the repeated rows.
                total = float(np.sum(sample_weight))
                name, lam, alpha = penalty
                penalty = (name, lam * total / X.shape[0], alpha)
        text = self._model_text(labels, multinomial, penalty, weighted=sample_weight is not None)
        params = self._params(penalty)
        warm = self.warm_start and getattr(self, "_optc_text", None) == text
        if warm:
            self._optc.set(**params)
        else:
            self._optc = optc.Model(text, **params)
            self._optc_text = text
        # A CV estimator's refit starts at the answer its path reached there (`_start`).
        start = getattr(self, "_start", None)
        result = self._optc.fit(X, y, tol=self.tol, solver=self.solver, epochs=self.max_epochs,
                                time_limit=self.time_limit, threads=self.threads, warm_start=warm,
                                sample_weight=sample_weight, init=start)
        self.result_ = result
        _warn_unless_converged(result, self.tol)
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
    """A linear classifier fitted by optc, certified, with ``LogisticRegression``'s arguments.

    It minimises scikit-learn's C·Σᵢ loss + P(w) as optc's mean loss + λ·P(w), λ = 1/(C·n_samples),
    the same minimiser: P(w) = l1_ratio·‖w‖₁ + ½(1 − l1_ratio)‖w‖², as scikit-learn ≥ 1.8's
    ``LogisticRegression(C, l1_ratio)``: ``l1_ratio=0`` (the default) is ½‖w‖², 1 is ‖w‖₁.
    ``penalty`` (optc's names, default None) takes precedence when set: ``"l2"`` ½‖w‖², ``"l1"``
    ‖w‖₁, ``"elasticnet"`` the mix at ``l1_ratio``. ``C=np.inf`` (or ``lam=0``) is no penalty,
    LogisticRegression's: damped Newton steps stopped when ‖∇F‖ ≤ tol·‖∇F(0)‖ (no duality gap
    bounds F − F* without a penalty), and a ``ConvergenceWarning`` where the classes are
    separable, since no minimiser exists there.

    ``loss``: ``"logistic"`` (the default; scikit-learn's ``"log_loss"``), ``"hinge"`` or
    ``"squared_hinge"`` (LinearSVC's losses), or ``"softmax"``. On more than two classes ``multi_class="auto"`` fits logistic as a
    multinomial (softmax) model, as LogisticRegression does, and the hinge losses one-vs-rest, as
    LinearSVC does; ``multi_class="ovr"`` fits logistic one-vs-rest too (LIBLINEAR's, and
    ``OneVsRestClassifier(LogisticRegression())``'s). ``fit_intercept=True`` adds an unpenalised
    intercept (LogisticRegression's with its lbfgs or saga solvers; liblinear and LinearSVC
    penalise theirs). ``tol`` is the certified relative gap to stop at.

    ``fit(X, y, sample_weight)`` weights each row's loss (``C·Σᵢ sᵢ·loss``, scikit-learn's
    meaning), and ``class_weight`` (a dict of class → weight, or ``"balanced"``: n_samples /
    (n_classes · the class's count)) multiplies the rows' weights by their class's, as
    LogisticRegression and LinearSVC do.

    ``lam``, when not None, is λ itself and overrides ``C``; the penalty is ``penalty``'s, else
    the one ``l1_ratio`` picks, and ``"elasticnet"`` is then λ·(‖w‖₁ + (α/2)‖w‖²) with α =
    ``elastic_alpha``. ``model``: a model's text over ``y: labels`` (or ``y: classes`` with a matrix W), its parameters in ``params``, overrides
    the loss and the penalty.

    After ``fit``: ``classes_``, ``coef_`` (1, n_features) for two classes and (n_classes,
    n_features) beyond, ``intercept_`` (1,) or (n_classes,), ``n_iter_`` (an array of shape (1,):
    the epochs, the most of any class one-vs-rest) and ``result_``.
    """

    _losses = ("logistic", "hinge", "squared_hinge", "softmax")
    # C·Σᵢ sᵢℓᵢ: LogisticRegression's and LinearSVC's weights are not rescaled.
    _weights_rescaled = False

    def __init__(self, model=None, *, loss="logistic", penalty=None, C=1.0, l1_ratio=0.0,
                 fit_intercept=True, tol=1e-4, multi_class="auto", class_weight=None, lam=None,
                 elastic_alpha=0.5, solver=None, max_epochs=None, time_limit=None, warm_start=False,
                 threads=None, params=None):
        self.model = model
        self.loss = loss
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.multi_class = multi_class
        self.class_weight = class_weight
        self.lam = lam
        self.elastic_alpha = elastic_alpha
        self.solver = solver
        self.max_epochs = max_epochs
        self.time_limit = time_limit
        self.warm_start = warm_start
        self.threads = threads
        self.params = params

    def _strength(self, n_samples):
        return 1.0 / (_strength_of("C", self.C, unbounded=True) * n_samples)

    def _warn_if_separable(self, X, y, penalty):
        """Without a penalty the logistic and softmax losses have no minimiser on classes some w
        separates: the fit then says so, as its weights grow with the run."""
        if penalty is None or penalty[1] != 0.0 or self._loss() not in ("logistic", "softmax"):
            return
        if np.all(self.predict(X) == y):
            warnings.warn("the classes are separable: without a penalty (C=np.inf) the loss has no minimiser, "
                          "and the weights grow as far as the run goes; give C a finite value",
                          ConvergenceWarning, stacklevel=3)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Without an intercept the decision boundary passes through the origin: on data away
        # from it (the checks' blobs) no weighting of the classes makes it score well, as
        # LogisticRegression(fit_intercept=False) does not either.
        tags.classifier_tags.poor_score = self.fit_intercept is False
        return tags

    def _row_weights(self, y, sample_weight):
        """``sample_weight`` times ``class_weight``'s weight of each row's class (None: neither)."""
        if self.class_weight is None:
            return sample_weight
        if not (self.class_weight == "balanced" or isinstance(self.class_weight, dict)):
            raise ValueError(f"class_weight={self.class_weight!r}: None, a dict or 'balanced'")
        weights = compute_sample_weight(self.class_weight, y)
        if sample_weight is not None:
            weights = weights * np.asarray(sample_weight, dtype=np.float64)
        return weights

    def _multinomial(self, classes):
        """Whether the fit is one softmax model (else a binary one, or one-vs-rest)."""
        if self.model is not None:
            return "y: classes" in self.model
        if self.multi_class not in ("auto", "ovr"):
            raise ValueError(f"multi_class={self.multi_class!r}: 'auto' or 'ovr'")
        if self._loss() == "softmax":
            if self.multi_class == "ovr":
                raise ValueError("loss='softmax' is multinomial: multi_class='ovr' needs loss='logistic'")
            return True
        return self._loss() == "logistic" and classes > 2 and self.multi_class == "auto"

    def fit(self, X, y, sample_weight=None):
        X, y = _validate_data(self, X, y, accept_sparse=_SPARSE, dtype=np.float64, ensure_all_finite=False)
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        k = len(self.classes_)
        if k < 2:
            raise ValueError(f"Classifier can't train when only one class is present: {self.classes_[0]!r}")
        multinomial = self._multinomial(k)
        if k == 2 and not multinomial:
            # Sorted, the second class is optc's +1: decision_function > 0 means classes_[1].
            labels = np.where(encoded == 1, 1.0, -1.0)
        else:
            labels = encoded.astype(np.float64)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        sample_weight = self._row_weights(y, sample_weight)
        result = self._solve(X, labels, "labels", multinomial, sample_weight)
        self._multinomial_fit = multinomial
        self.n_iter_ = np.array([result.epochs], dtype=np.int64)
        d = X.shape[1]
        if k == 2 and not multinomial:
            self.coef_ = np.asarray(result.coef_, dtype=np.float64).reshape(1, d)
            self.intercept_ = np.array([float(result.intercept_)])
            self._warn_if_separable(X, y, self._fitted_penalty)
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
        self._warn_if_separable(X, y, self._fitted_penalty)
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = _validate_data(self, X, accept_sparse=_SPARSE, dtype=np.float64, reset=False)
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
        if self.model is not None:
            return "y: classes" in self.model or "logistic(" in self.model
        return _LOSS_ALIASES.get(self.loss, self.loss) in ("logistic", "softmax")

    @available_if(_probabilistic)
    def predict_proba(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            # Two-class logistic, or softmax on two classes (whose probability is the same
            # sigmoid of the difference of the scores).
            p = 1.0 / (1.0 + np.exp(-scores))
            return np.column_stack([1.0 - p, p])
        if self._multinomial_fit:
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
    """A linear regressor fitted by optc, certified, with ``Lasso``'s and ``ElasticNet``'s
    arguments.

    optc's ``squared`` loss (scikit-learn's ``"squared_error"``) is ½(y − z)², so its mean is
    scikit-learn's (1/(2n))‖y − Xw − b‖², and the objective is that plus ElasticNet's
    α·(l1_ratio·‖w‖₁ + ½(1 − l1_ratio)‖w‖²), λ = α: ``l1_ratio=1`` (the default) is ``Lasso``'s
    α‖w‖₁, and ``l1_ratio=0`` is ½α‖w‖², whose minimiser is ``Ridge(alpha=α·n_samples)``'s (Ridge
    does not divide by n: its objective is 2n times this one). ``penalty`` (optc's names,
    default None) takes precedence when set: ``"l1"``, ``"l2"``, or ``"elasticnet"`` at
    ``l1_ratio``. ``alpha`` is positive: unpenalised (λ = 0) is ``lam=0``, which optc fits by
    Newton steps stopped on the gradient's norm. ``fit_intercept=True`` adds an unpenalised intercept, as scikit-learn's.
    ``fit(X, y, sample_weight)`` weights each row's loss with ElasticNet's meaning: the weights
    are rescaled to sum to n_samples, so integer weights fit the rows repeated at the same α.

    ``loss`` is the mean loss's, each certified: ``"squared"`` (the default; ``"squared_error"``),
    and, with the constant scikit-learn's estimator for it names:

    - ``"huber"`` with ``delta`` (default 1.0): ½r² within δ of the label, δ|r| − ½δ² beyond,
      as skglm's ``Huber(delta)`` and ``SGDRegressor(loss="huber", epsilon=δ)``.
      ``HuberRegressor``'s ``epsilon`` scales a jointly fitted σ instead: another problem;
    - ``"quantile"`` with ``quantile`` (default 0.5): the pinball loss, whose objective with
      ``l1_ratio=1`` is ``QuantileRegressor(quantile, alpha)``'s;
    - ``"epsilon_insensitive"`` and ``"squared_epsilon_insensitive"`` with ``epsilon`` (default
      0.0): ``LinearSVR``'s losses, max(0, |r| − ε) and its square. LinearSVR's C·Σ loss +
      ½‖w‖² is this estimator's at ``l1_ratio=0`` and α = 1/(C·n_samples);
    - ``"poisson"``: exp(z) − y·z on counts y ≥ 0 (the log link), whose mean is
      ``PoissonRegressor``'s half deviance less a constant: ``PoissonRegressor(alpha)`` is this
      estimator at ``l1_ratio=0`` and the same α.

    ``lam``, when not None, is λ itself and overrides ``alpha``; the penalty is ``penalty``'s,
    else the one ``l1_ratio`` picks, and ``"elasticnet"`` is then λ·(‖w‖₁ + (α/2)‖w‖²) with α =
    ``elastic_alpha``. ``model``: a model's text over
    ``y: real``, its parameters in ``params``, overrides the loss and the penalty. ``tol`` is the
    certified relative gap to stop at.

    After ``fit``: ``coef_`` (n_features,), ``intercept_`` (a float), ``n_iter_`` (the epochs, an
    int, as Lasso's) and ``result_``.
    """

    _losses = ("squared", "huber", "quantile", "eps_insensitive", "squared_eps_insensitive", "poisson")
    # ElasticNet's sample_weight is rescaled to sum to n_samples.
    _weights_rescaled = True

    def __init__(self, model=None, *, loss="squared", penalty=None, alpha=1.0, l1_ratio=1.0,
                 fit_intercept=True, tol=1e-4, lam=None, elastic_alpha=0.5, solver=None,
                 max_epochs=None, time_limit=None, warm_start=False, threads=None, params=None,
                 delta=1.0, quantile=0.5, epsilon=0.0):
        self.model = model
        self.loss = loss
        self.delta = delta
        self.quantile = quantile
        self.epsilon = epsilon
        self.penalty = penalty
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.lam = lam
        self.elastic_alpha = elastic_alpha
        self.solver = solver
        self.max_epochs = max_epochs
        self.time_limit = time_limit
        self.warm_start = warm_start
        self.threads = threads
        self.params = params

    def _strength(self, n_samples):
        return _strength_of("alpha", self.alpha)

    def _loss_constant(self):
        loss = self._loss()
        if loss == "huber":
            name, ok, must = "delta", lambda v: v > 0, "a finite number > 0"
        elif loss == "quantile":
            name, ok, must = "quantile", lambda v: 0 < v < 1, "a number strictly between 0 and 1"
        elif loss in ("eps_insensitive", "squared_eps_insensitive"):
            name, ok, must = "epsilon", lambda v: v >= 0, "a finite number ≥ 0"
        else:
            return None
        value = getattr(self, name)
        if not _is_real(value) or not ok(value):
            raise ValueError(f"{name}={value!r}: {must}")
        return float(value)

    def fit(self, X, y, sample_weight=None):
        X, y = _validate_data(self, X, y, accept_sparse=_SPARSE, dtype=np.float64, ensure_all_finite=False,
                              y_numeric=True)
        result = self._solve(X, np.asarray(y, dtype=np.float64), "real", sample_weight=sample_weight)
        self.n_iter_ = int(result.epochs)
        self.coef_ = np.asarray(result.coef_, dtype=np.float64)
        self.intercept_ = float(result.intercept_)
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = _validate_data(self, X, accept_sparse=_SPARSE, dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_


# The cross-validated estimators subclass the two above.
from optc._sklearn_cv import EXPECTED_FAILED_CHECKS_CV, OptcClassifierCV, OptcRegressorCV  # noqa: E402
