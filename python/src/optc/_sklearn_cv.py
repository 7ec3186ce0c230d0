"""``OptcClassifierCV`` and ``OptcRegressorCV``: the estimators with their penalty's strength
chosen by K-fold cross-validation along warm-started paths (:meth:`optc.Model.cv`, glmnet's
``cv.glmnet``), as scikit-learn's ``LogisticRegressionCV``, ``LassoCV`` and ``ElasticNetCV``
choose theirs. Imported through :mod:`optc.sklearn`.
"""

import numbers

import numpy as np
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils.multiclass import check_classification_targets

import optc
from sklearn.utils.validation import _check_sample_weight

from optc.sklearn import _SPARSE, OptcClassifier, OptcRegressor, _l1_ratio, _optc_penalty, _validate_data


def _folds(cv, X, y, classifier):
    """Each row's fold, from ``cv`` as scikit-learn's CV estimators read it (``check_cv``: an int
    K is ``StratifiedKFold(K)`` for a classifier, ``KFold(K)`` for a regressor, unshuffled), or a
    splitter whose test sets are folds (each row in exactly one)."""
    splitter = check_cv(cv, y, classifier=classifier)
    fold_of = np.full(X.shape[0], -1, dtype=np.int64)
    for k, (_, test) in enumerate(splitter.split(X, y)):
        if np.any(fold_of[test] >= 0):
            raise ValueError(f"cv={cv!r}: a row is in two test sets; give a splitter whose test sets are folds")
        fold_of[test] = k
    if np.any(fold_of < 0):
        raise ValueError(f"cv={cv!r}: a row is in no test set; give a splitter whose test sets are folds")
    return fold_of


def _grid(values, name, to_lambda):
    """(steps, values) for the path: ``values`` as an int is that many log-spaced values from the
    path's start; as a list, each one (C or alpha) turned into λ."""
    if isinstance(values, numbers.Integral) and not isinstance(values, bool):
        if values < 1:
            raise ValueError(f"{name}={values!r}: an int ≥ 1 or a list of positive numbers")
        return int(values), None
    grid = np.asarray(values, dtype=np.float64).ravel()
    if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError(f"{name}={values!r}: an int ≥ 1 or a list of positive numbers")
    return len(grid), [to_lambda(v) for v in grid]


class _CrossValidated:
    """What the two CV estimators share: the path's cross-validation, then the refit through
    the estimator's own fit at the chosen λ (``_penalty`` reads it)."""

    # The base estimators' arguments these fix (class attributes, so that scikit-learn's
    # get_params lists only the CV estimator's own).
    model = None
    lam = None
    elastic_alpha = 0.5
    time_limit = None
    warm_start = False
    params = None
    penalty = None

    def _penalty(self, n_samples):
        name, _, alpha = _optc_penalty(self.penalty, 1.0, self.l1_ratio)
        return name, self._cv_lambda, alpha

    def _cross_validate(self, X, y, labels, multinomial, grid, sample_weight=None):
        if self.choose not in ("min", "1se"):
            raise ValueError(f"choose={self.choose!r}: 'min' or '1se'")
        scorer = None if self.scoring is None else check_scoring(self, scoring=self.scoring)
        if scorer is not None and multinomial:
            raise ValueError(f"scoring={self.scoring!r} with the multinomial loss: the folds' per-class offsets "
                             "are not kept; use scoring=None (the held-out loss)")
        self._check_run_parameters()
        _l1_ratio(self.l1_ratio)
        name, _, alpha = _optc_penalty(self.penalty, 1.0, self.l1_ratio)
        penalty = (name, 1.0, alpha)
        text = self._model_text(labels, multinomial, penalty, weighted=sample_weight is not None)
        steps, values = grid
        table = optc.Model(text, **self._params(penalty)).cv(
            X, y, param="λ", folds=_folds(self.cv, X, y, labels != "real"), choose=self.choose, steps=steps,
            values=values, tol=self.tol, epochs=self.max_epochs, solver=self.solver, threads=self.threads,
            sample_weight=sample_weight, keep_folds=scorer is not None)
        self.cv_ = table
        self._cv_lambda = float(table.chosen)
        # The refit starts at the full path's answer there (one weight column: a matrix W's
        # per-class offsets are not in the table).
        self._start = None if multinomial else (table.coef_, float(table.intercept_))
        if scorer is not None:
            self._choose_by_score(scorer, X, table)
        return table

    def _choose_by_score(self, scorer, X, table):
        """``scoring``'s choice: each fold's weights at each value scored on the rows it held out
        (``scores_``, folds × values); the best mean, or with ``choose="1se"`` the largest λ
        within one standard error of it."""
        y = self._scored_y
        scores = np.full((table.n_folds, len(table)), np.nan)
        for k, (coef, b) in enumerate(zip(table.fold_coef_, table.fold_intercept_)):
            if coef is None:
                continue
            test = table.fold_of == k
            for v in range(len(table)):
                scores[k, v] = scorer(self._fitted_at(coef[v], b[v], X.shape[1]), X[test], y[test])
        mean = np.nanmean(scores, axis=0)
        se = np.nanstd(scores, axis=0, ddof=1) / np.sqrt(np.sum(np.isfinite(scores), axis=0))
        best = int(np.nanargmax(mean))
        at = best if self.choose == "min" else int(np.flatnonzero(mean >= mean[best] - se[best])[0])
        self.scores_ = scores
        self._cv_lambda = float(table.values[at])
        self._start = None


class OptcClassifierCV(_CrossValidated, OptcClassifier):
    """``OptcClassifier`` with C chosen by K-fold cross-validation, as ``LogisticRegressionCV``.

    The model is fitted along one warm-started path of λ = 1/(C·n_samples) on all of the rows,
    then along the same values on each fold's other rows, scored by the mean held-out loss of
    the model's own loss (``scoring=None``: log-loss for logistic, the hinge for the hinge), or by
    ``scoring`` (a scikit-learn scorer's name or a callable, each fold's weights at each value
    scored on its held-out rows: ``scores_``, folds × values; two classes); ``choose="min"`` (the
    default) refits at the best mean, ``"1se"`` at the largest λ within one standard error of it
    (glmnet's). λ, not C, is what the folds share, as
    glmnet's: a fold's C·(its rows) is the whole data's.

    ``Cs``: an int (default 20), that many values log-spaced from λ_max (where ℓ1 is in the
    penalty; glmnet's start for ½‖w‖²) down to 1e-4 of it, or a list of C. ``cv``: K (default 5,
    ``StratifiedKFold(K)`` as ``LogisticRegressionCV``'s) or a scikit-learn splitter whose test
    sets are folds (``KFold``, ``StratifiedKFold``, ``GroupKFold``).
    ``loss``, ``l1_ratio``, ``fit_intercept``, ``tol``, ``class_weight`` and the run's settings
    are :class:`OptcClassifier`'s, and ``fit(X, y, sample_weight)`` weights the rows' losses in
    every fold's fit as in the refit. Two classes, or more with the multinomial (softmax) loss.

    After ``fit``: ``C_`` (shape (1,)), ``Cs_`` (the grid as C), ``lambda_``, ``cv_`` (the
    :class:`optc.CV` table: each value's mean held-out loss and error, their standard errors,
    λ_min and λ_1se), and :class:`OptcClassifier`'s ``coef_``, ``intercept_``, ``classes_``,
    ``n_iter_`` and ``result_`` of the refit.
    """

    def __init__(self, *, Cs=20, cv=5, choose="min", scoring=None, loss="logistic", l1_ratio=0.0,
                 fit_intercept=True, tol=1e-4, class_weight=None, solver=None, max_epochs=None, threads=None):
        self.Cs = Cs
        self.class_weight = class_weight
        self.cv = cv
        self.choose = choose
        self.scoring = scoring
        self.loss = loss
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.solver = solver
        self.max_epochs = max_epochs
        self.threads = threads

    multi_class = "auto"
    C = 1.0

    def _fitted_at(self, coef, b, features):
        """A fitted binary classifier with these weights, for a scorer."""
        est = OptcClassifier(loss=self.loss)
        est.classes_, est.n_features_in_, est._multinomial_fit = self._classes, features, False
        est.coef_, est.intercept_ = np.asarray(coef).reshape(1, -1), np.array([float(b)])
        return est

    def fit(self, X, y, sample_weight=None):
        X, y = _validate_data(self, X, y, accept_sparse=_SPARSE, dtype=np.float64, ensure_all_finite=False)
        check_classification_targets(y)
        classes, encoded = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(f"Classifier can't train when only one class is present: {classes[0]!r}")
        multinomial = self._multinomial(len(classes))
        if len(classes) > 2 and not multinomial:
            raise ValueError(f"loss={self.loss!r} on {len(classes)} classes trains one-vs-rest, which a path does "
                             "not follow: use loss='logistic' (multinomial) or 'softmax'")
        labels = encoded.astype(np.float64) if multinomial else np.where(encoded == 1, 1.0, -1.0)
        n = X.shape[0]
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        weights = self._row_weights(y, sample_weight)
        if weights is not None and len(np.unique(encoded[np.asarray(weights) > 0])) < 2:
            raise ValueError("only one class has rows of positive weight: cross-validation needs two classes")
        grid = _grid(self.Cs, "Cs", lambda c: 1.0 / (c * n))
        self._scored_y, self._classes = y, classes
        table = self._cross_validate(X, labels, "labels", multinomial, grid, weights)
        self.lambda_ = self._cv_lambda
        self.C_ = np.array([1.0 / (self._cv_lambda * n)])
        self.Cs_ = 1.0 / (table.values * n)
        return OptcClassifier.fit(self, X, y, sample_weight)


class OptcRegressorCV(_CrossValidated, OptcRegressor):
    """``OptcRegressor`` with alpha chosen by K-fold cross-validation, as ``LassoCV`` and
    ``ElasticNetCV``.

    The model is fitted along one warm-started path of alpha on all of the rows, then along the
    same values on each fold's other rows, scored by the mean held-out loss (``scoring=None``: for
    the squared loss half the MSE, the same choice as ``LassoCV``'s) or by ``scoring`` (a scorer's
    name or a callable: ``scores_``, folds × values); ``choose="min"`` (the default) refits at the
    best, ``"1se"`` at the largest alpha within one standard error of it (glmnet's).

    ``alphas``: an int (default 20), that many values log-spaced from alpha_max (where ℓ1 is in
    the penalty) down to 1e-4 of it (1e-2 when features ≥ rows), or a list. ``cv``: K (default
    5, ``KFold(K)`` as ``LassoCV``'s) or a scikit-learn splitter whose test sets are folds. ``loss``, ``l1_ratio``, ``fit_intercept``, ``tol``, the loss's constants and the run's
    settings are :class:`OptcRegressor`'s.

    After ``fit``: ``alpha_``, ``alphas_``, ``lambda_``, ``cv_`` (the :class:`optc.CV` table), and
    :class:`OptcRegressor`'s ``coef_``, ``intercept_``, ``n_iter_`` and ``result_`` of the refit.
    """

    def __init__(self, *, alphas=20, cv=5, choose="min", scoring=None, loss="squared", l1_ratio=1.0,
                 fit_intercept=True, tol=1e-4, solver=None, max_epochs=None, threads=None,
                 delta=1.0, quantile=0.5, epsilon=0.0):
        self.alphas = alphas
        self.cv = cv
        self.choose = choose
        self.scoring = scoring
        self.loss = loss
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.solver = solver
        self.max_epochs = max_epochs
        self.threads = threads
        self.delta = delta
        self.quantile = quantile
        self.epsilon = epsilon

    alpha = 1.0

    def _fitted_at(self, coef, b, features):
        """A fitted regressor with these weights, for a scorer."""
        est = OptcRegressor(loss=self.loss)
        est.n_features_in_, est.coef_, est.intercept_ = features, np.asarray(coef), float(b)
        return est

    def _per_alpha(self):
        """λ per unit of alpha: l1_ratio in the elastic net (λ·(‖w‖₁ + (α/2)‖w‖²)), else 1."""
        name, _, _ = _optc_penalty(self.penalty, 1.0, self.l1_ratio)
        return _l1_ratio(self.l1_ratio) if name == "elasticnet" else 1.0

    def fit(self, X, y, sample_weight=None):
        X, y = _validate_data(self, X, y, accept_sparse=_SPARSE, dtype=np.float64, ensure_all_finite=False,
                              y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        weights = None
        if sample_weight is not None:
            # ElasticNet's weights are rescaled to sum to n_samples: so are the path's, whose λ is
            # then alpha (the refit, given the weights as they are, rescales λ itself).
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
            weights = sample_weight * (X.shape[0] / max(float(np.sum(sample_weight)), np.finfo(float).tiny))
        per = self._per_alpha()
        grid = _grid(self.alphas, "alphas", lambda a: a * per)
        self._scored_y = y
        table = self._cross_validate(X, y, "real", False, grid, weights)
        self.lambda_ = self._cv_lambda
        self.alpha_ = self._cv_lambda / per
        self.alphas_ = table.values / per
        return OptcRegressor.fit(self, X, y, sample_weight)


#: The checks of ``check_estimator`` the CV estimators do not pass, with the reason, as
#: scikit-learn marks them for its own CV estimators.
EXPECTED_FAILED_CHECKS_CV = {
    name: "a row repeated is dealt to the folds as two rows, a weight of 2 as one: the folds differ, and so may "
          "the value cross-validation chooses"
    for name in ("check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data")
}

__all__ = ["OptcClassifierCV", "OptcRegressorCV", "EXPECTED_FAILED_CHECKS_CV"]
