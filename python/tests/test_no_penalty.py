"""No penalty from Python: ``OptcClassifier(C=np.inf)`` and ``lam=0`` fit the unpenalised model
by damped Newton steps stopped on the gradient's norm, reach the fixture's optimum
(scikit-learn's Newton method at tol 1e-12, tests/fixtures/make.py), and warn where the classes
are separable and no minimiser exists."""

import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from conftest import FIXTURES, optima, read_svmlight  # noqa: E402
from optc.sklearn import OptcClassifier  # noqa: E402


def mean_logistic(estimator, X, y):
    margins = np.where(y > 0, 1.0, -1.0) * estimator.decision_function(X)
    return float(np.mean(np.logaddexp(0.0, -margins)))


@pytest.mark.parametrize("estimator", [
    OptcClassifier(C=np.inf, tol=1e-10),
    OptcClassifier(C=np.inf, l1_ratio=1.0, tol=1e-10),
    OptcClassifier(lam=0, tol=1e-10),
], ids=["C-inf", "C-inf-l1-ratio", "lam-0"])
def test_no_penalty_reaches_the_unpenalised_optimum(estimator):
    best = optima()["unpenalised_logistic_intercept"]["objective"]
    X, y = read_svmlight(FIXTURES / "binary.svm")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fitted = estimator.fit(X, y)
    assert fitted.result_.status == "converged"
    assert "gradient" in fitted.result_.rule
    assert fitted.result_.gap is None
    assert mean_logistic(fitted, X, y) == pytest.approx(best, rel=1e-9)


def test_separable_classes_warn_without_a_penalty():
    X = np.array([[1.0, 0.0], [2.0, 0.5], [-1.0, 0.2], [-2.0, -0.1]])
    y = np.array([1, 1, 0, 0])
    with pytest.warns(ConvergenceWarning, match="separable"):
        OptcClassifier(C=np.inf).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        OptcClassifier(C=1.0).fit(X, y)


def test_c_must_be_positive_or_infinite():
    X, y = read_svmlight(FIXTURES / "binary.svm")
    for bad in (0.0, -1.0, np.nan, -np.inf):
        with pytest.raises(ValueError, match="np.inf for no penalty"):
            OptcClassifier(C=bad).fit(X, y)
