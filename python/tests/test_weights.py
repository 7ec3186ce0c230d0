"""The rows' weights from Python: ``Model.fit(..., sample_weight=)``, the estimators'
``sample_weight`` and ``class_weight``. Integer weights are repeated rows; bad weights are
``ValueError``s."""

import numpy as np
import pytest
import scipy.sparse as sp

import optc

pytest.importorskip("sklearn")

from optc.sklearn import OptcClassifier, OptcRegressor  # noqa: E402

WEIGHTED = """data x: sparse, y: labels, s: weights
var w: vec[dim(x)]
var b: scalar
param λ = 0.01
minimize E[s·logistic(y, <x, w> + b)] + λ·l1(w)
"""


def integer_weights(m):
    return np.array([(i * 7 + i // 3) % 4 for i in range(m)], dtype=np.float64)


def repeat(X, y, weights):
    rows = np.repeat(np.arange(X.shape[0]), weights.astype(int))
    return X[rows], y[rows]


def test_model_fit_takes_sample_weight(binary):
    X, y = binary
    m = X.shape[0]
    s = integer_weights(m)
    total = s.sum()
    weighted = optc.Model(WEIGHTED, λ=0.01 * total / m).fit(X, y, sample_weight=s, tol=1e-10)
    Xr, yr = repeat(X, y, s)
    plain = optc.Model(WEIGHTED.replace(", s: weights", "").replace("s·", ""), λ=0.01).fit(Xr, yr, tol=1e-10)
    assert weighted.status == "converged"
    assert weighted.objective == pytest.approx(total / m * plain.objective, rel=1e-9)
    np.testing.assert_allclose(weighted.coef_, plain.coef_, atol=1e-6)
    assert weighted.intercept_ == pytest.approx(plain.intercept_, abs=1e-6)


def test_bad_sample_weights_are_value_errors(binary):
    X, y = binary
    model = optc.Model(WEIGHTED)
    with pytest.raises(ValueError, match="sample_weight"):
        model.fit(X, y, sample_weight=np.ones(X.shape[0] + 1))
    with pytest.raises(ValueError, match="sample_weight"):
        model.fit(X, y, sample_weight=-np.ones(X.shape[0]))
    with pytest.raises(ValueError, match="sample_weight"):
        model.fit(X, y, sample_weight=np.full(X.shape[0], np.nan))
    plain = optc.Model(WEIGHTED.replace(", s: weights", "").replace("s·", ""))
    with pytest.raises(ValueError, match="not weighted"):
        plain.fit(X, y, sample_weight=np.ones(X.shape[0]))


@pytest.mark.parametrize("estimator", [
    OptcClassifier(tol=1e-10),
    OptcClassifier(l1_ratio=1.0, tol=1e-10),
    OptcClassifier(loss="squared_hinge", tol=1e-10),
    OptcClassifier(loss="hinge", tol=1e-10),
], ids=["l2-logistic", "l1-logistic", "squared-hinge", "hinge"])
def test_the_classifiers_sample_weight_is_repeated_rows(binary, estimator):
    X, y = binary
    s = integer_weights(X.shape[0])
    Xr, yr = repeat(X, y, s)
    weighted = estimator.fit(X, y, sample_weight=s)
    coef, intercept = weighted.coef_.copy(), weighted.intercept_.copy()
    repeated = estimator.fit(Xr, yr)
    np.testing.assert_allclose(coef, repeated.coef_, atol=1e-5)
    np.testing.assert_allclose(intercept, repeated.intercept_, atol=1e-5)


def test_softmax_takes_sample_weight():
    rng = np.random.RandomState(0)
    X = sp.csr_matrix(rng.rand(60, 8))
    y = rng.randint(0, 3, size=60)
    s = rng.randint(0, 4, size=60).astype(np.float64)
    estimator = OptcClassifier(tol=1e-10)
    weighted = estimator.fit(X, y, sample_weight=s)
    probs = weighted.predict_proba(X)
    Xr, yr = repeat(X, y, s)
    np.testing.assert_allclose(probs, estimator.fit(Xr, yr).predict_proba(X), atol=1e-6)


def test_class_weight_balanced_is_its_sample_weight(binary):
    from sklearn.utils.class_weight import compute_sample_weight

    X, y = binary
    balanced = OptcClassifier(class_weight="balanced", tol=1e-10).fit(X, y)
    by_hand = OptcClassifier(tol=1e-10).fit(X, y, sample_weight=compute_sample_weight("balanced", y))
    np.testing.assert_allclose(balanced.coef_, by_hand.coef_, atol=1e-8)
    twice = OptcClassifier(class_weight={1.0: 2.0}, tol=1e-10).fit(X, y)
    by_hand = OptcClassifier(tol=1e-10).fit(X, y, sample_weight=np.where(y == 1.0, 2.0, 1.0))
    np.testing.assert_allclose(twice.coef_, by_hand.coef_, atol=1e-8)
    with pytest.raises(ValueError, match="class_weight"):
        OptcClassifier(class_weight="often").fit(X, y)


def test_the_regressors_sample_weight_is_repeated_rows():
    rng = np.random.RandomState(1)
    X = sp.csr_matrix(rng.rand(50, 6))
    y = X @ rng.randn(6) + 0.1 * rng.randn(50)
    s = rng.randint(0, 4, size=50).astype(np.float64)
    Xr, yr = repeat(X, y, s)
    # ElasticNet rescales the weights to sum to n_samples: the same α fits the repeated rows.
    alpha = 0.01
    weighted = OptcRegressor(alpha=alpha, tol=1e-12).fit(X, y, sample_weight=s)
    repeated = OptcRegressor(alpha=alpha, tol=1e-12).fit(Xr, yr)
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-6)
    assert weighted.intercept_ == pytest.approx(repeated.intercept_, abs=1e-6)
