"""The scikit-learn estimators: scikit-learn's own estimator checks, the answers of its solvers
on the same objective, one-vs-rest and softmax class order, and a text pipeline with a grid
search and warm starts, on a corpus the test writes itself."""

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402
from sklearn.linear_model import Lasso, LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.multiclass import OneVsRestClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

from conftest import FIXTURES, read_svmlight  # noqa: E402
from optc.sklearn import EXPECTED_FAILED_CHECKS, OptcClassifier, OptcRegressor  # noqa: E402


@pytest.mark.parametrize("estimator", [
    OptcClassifier(),
    OptcClassifier(loss="softmax", penalty="l2"),
    OptcClassifier(loss="hinge", penalty="l2", fit_intercept=False),
    OptcRegressor(),
], ids=["logistic-l1", "softmax-l2", "hinge-l2", "lasso"])
def test_the_estimators_pass_scikit_learns_checks(estimator):
    assert len(EXPECTED_FAILED_CHECKS) <= 5
    check_estimator(estimator, expected_failed_checks=EXPECTED_FAILED_CHECKS)


def logistic_l1(X, y, w, b, lam):
    return np.mean(np.logaddexp(0, -y * (X @ w + b))) + lam * np.abs(w).sum()


def test_l1_logistic_is_liblinears_answer():
    X, y = read_svmlight(FIXTURES / "binary.svm")
    lam = 0.01
    ours = OptcClassifier(lam=lam, fit_intercept=False, tol=1e-9).fit(X, y)
    theirs = LogisticRegression(penalty="l1", solver="liblinear", C=1 / (lam * X.shape[0]), fit_intercept=False,
                                tol=1e-12, max_iter=100_000).fit(X, y)
    f_ours = logistic_l1(X, y, ours.coef_.ravel(), 0.0, lam)
    f_theirs = logistic_l1(X, y, theirs.coef_.ravel(), 0.0, lam)
    assert f_ours <= f_theirs * (1 + 1e-8)
    assert np.allclose(ours.coef_, theirs.coef_, atol=1e-4)
    assert ours.result_.gap <= 1e-9 * ours.result_.objective
    assert np.array_equal(ours.predict(X), theirs.predict(X))


def test_one_vs_rest_and_softmax_keep_scikit_learns_class_order():
    X, y = read_svmlight(FIXTURES / "multiclass.svm")
    y = np.array(["class " + str(int(v)) for v in y])  # string labels, sorted unlike first-seen
    n, lam = X.shape[0], 0.01
    ours = OptcClassifier(lam=lam, fit_intercept=False, tol=1e-9).fit(X, y)
    theirs = OneVsRestClassifier(LogisticRegression(penalty="l1", solver="liblinear", C=1 / (lam * n),
                                                    fit_intercept=False, tol=1e-12, max_iter=100_000)).fit(X, y)
    assert list(ours.classes_) == list(theirs.classes_)
    theirs_coef = np.vstack([e.coef_ for e in theirs.estimators_])
    assert np.allclose(ours.coef_, theirs_coef, atol=1e-4)
    soft = OptcClassifier(loss="softmax", penalty="l2", lam=lam, fit_intercept=False, tol=1e-10).fit(X, y)
    lbfgs = LogisticRegression(C=1 / (lam * n), fit_intercept=False, tol=1e-12, max_iter=100_000).fit(X, y)
    assert np.allclose(soft.coef_, lbfgs.coef_, atol=1e-5)
    assert np.allclose(soft.predict_proba(X), lbfgs.predict_proba(X), atol=1e-6)


def test_the_lasso_with_an_intercept_is_scikit_learns():
    X, y = read_svmlight(FIXTURES / "regression.svm")
    alpha = 0.05
    ours = OptcRegressor(lam=alpha, tol=1e-10).fit(X, y)
    theirs = Lasso(alpha=alpha, tol=1e-14, max_iter=1_000_000).fit(X.toarray(), y)
    assert np.allclose(ours.coef_, theirs.coef_, atol=1e-5)
    assert abs(ours.intercept_ - theirs.intercept_) <= 1e-5


def corpus(seed=0, n=300):
    """Short documents of two topics sharing a common vocabulary, labelled by topic."""
    rng = np.random.default_rng(seed)
    common = "the a of and to in is it that for on with as was at by".split()
    topics = {"space": "orbit rocket planet launch moon star galaxy telescope astronaut".split(),
              "cooking": "recipe oven flour butter sugar bake dough spice kitchen".split()}
    docs, labels = [], []
    for i in range(n):
        topic = "space" if i % 2 else "cooking"
        words = list(rng.choice(common, 8)) + list(rng.choice(topics[topic], 3))
        words += list(rng.choice(topics["cooking" if topic == "space" else "space"], 1 if rng.random() < 0.3 else 0))
        rng.shuffle(words)
        docs.append(" ".join(words))
        labels.append(topic)
    return docs, np.array(labels)


def test_a_text_pipeline_and_a_grid_search_over_lambda():
    docs, y = corpus()
    pipe = make_pipeline(TfidfVectorizer(), OptcClassifier(penalty="l1"))
    grid = GridSearchCV(pipe, {"optcclassifier__lam": [1e-1, 1e-2, 1e-3]}, cv=3).fit(docs, y)
    assert grid.best_params_["optcclassifier__lam"] < 1e-1
    assert grid.best_score_ >= 0.9
    test_docs, test_y = corpus(seed=1, n=100)
    assert grid.score(test_docs, test_y) >= 0.9
    assert grid.best_estimator_[-1].result_.status == "converged"


def test_warm_starts_along_a_grid_take_fewer_epochs():
    X, y = read_svmlight(FIXTURES / "sparse_binary.svm")
    grid = np.geomspace(1e-1, 1e-4, 8)

    def epochs(warm):
        clf = OptcClassifier(warm_start=warm, tol=1e-8)
        total = 0
        for lam in grid:
            total += clf.set_params(lam=lam).fit(X, y).n_iter_
        return total, clf.coef_

    (warm, w_warm), (cold, w_cold) = epochs(True), epochs(False)
    assert warm < cold, (warm, cold)
    assert np.allclose(w_warm, w_cold, atol=1e-4)
