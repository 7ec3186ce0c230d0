"""Cross-validation along warm-started paths: ``Model.cv`` and the CV estimators, against fits
made fold by fold here and against scikit-learn's ``LassoCV`` on the same folds."""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LassoCV
from sklearn.model_selection import KFold

import optc
from optc.sklearn import EXPECTED_FAILED_CHECKS_CV, OptcClassifierCV, OptcRegressorCV

L1_LOGISTIC = ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.01\n"
               "minimize E[logistic(y, <x, w> + b)] + λ·l1(w)\n")


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(n_samples=300, n_features=20, n_informative=5, random_state=0)
    return X, np.where(y == 1, 1.0, -1.0)


def test_model_cv_scores_each_fold_as_its_own_fit_does(binary):
    X, y = binary
    folds = np.arange(len(y)) % 4
    table = optc.Model(L1_LOGISTIC).cv(X, y, folds=folds, steps=8, tol=1e-9)
    assert len(table) == 8 and table.n_folds == 4 and not table.stratified is None
    assert np.all(table.folds == 4) and np.all(table.unconverged == 0)
    assert table.lambda_1se >= table.lambda_min
    assert table.chosen == table.lambda_1se
    at = 5
    losses = []
    for k in range(4):
        train, test = folds != k, folds == k
        fit = optc.Model(L1_LOGISTIC, lam=table.values[at]).fit(X[train], y[train], tol=1e-11)
        a = X[test] @ fit.coef_ + fit.intercept_
        losses.append(np.mean(np.log1p(np.exp(-y[test] * a))))
    assert table.cv_loss[at] == pytest.approx(np.mean(losses), rel=1e-6)
    assert table.cv_loss_se[at] == pytest.approx(np.std(losses, ddof=1) / 2, rel=1e-4)
    # The refit is the fit on every row at the chosen value.
    full = optc.Model(L1_LOGISTIC, lam=table.chosen).fit(X, y, tol=1e-11)
    assert np.allclose(table.coef_, full.coef_, atol=1e-4)


def test_bad_folds_are_value_errors(binary):
    X, y = binary
    model = optc.Model(L1_LOGISTIC)
    for folds, says in ((1, "folds=1"), (301, "folds=301"), (np.array([0, 2] * 150), "fold 1 holds no row")):
        with pytest.raises(ValueError, match=says):
            model.cv(X, y, folds=folds, steps=3)
    # A label with fewer rows than folds: named as this method's argument, not optc cv's flag.
    rare = np.where(np.arange(300) < 3, 1.0, -1.0)
    with pytest.raises(ValueError, match=r"folds=5: label 1 has 3 rows") as e:
        model.cv(X, rare, steps=3)
    assert "--folds" not in str(e.value)
    with pytest.raises(ValueError, match="choose"):
        model.cv(X, y, choose="best", steps=3)


def test_the_classifier_refits_at_the_least_held_out_loss(binary):
    X, y = binary
    clf = OptcClassifierCV(Cs=10, l1_ratio=1.0).fit(X, y)
    table = clf.cv_
    assert clf.lambda_ == table.values[np.nanargmin(table.cv_loss)]
    assert clf.C_.shape == (1,) and clf.C_[0] == pytest.approx(1 / (clf.lambda_ * len(y)))
    assert clf.coef_.shape == (1, 20) and clf.result_.status == "converged"
    assert clf.score(X, y) > 0.8
    # A list of C: the grid is theirs, as λ = 1/(C·n).
    Cs = [0.01, 0.1, 1.0, 10.0]
    clf = OptcClassifierCV(Cs=Cs, cv=KFold(3), choose="1se").fit(X, y)
    assert np.allclose(np.sort(clf.Cs_), Cs)
    assert clf.lambda_ == clf.cv_.lambda_1se


def test_the_regressor_chooses_lassocvs_alpha_on_the_same_folds():
    X, y = make_regression(n_samples=200, n_features=30, n_informative=6, noise=5.0, random_state=1)
    alphas = np.geomspace(10.0, 0.01, 12)
    ours = OptcRegressorCV(alphas=alphas, cv=KFold(5), tol=1e-8).fit(X, y)
    theirs = LassoCV(alphas=alphas, cv=KFold(5), tol=1e-10, max_iter=100_000).fit(X, y)
    assert ours.alpha_ == pytest.approx(theirs.alpha_)
    # Half the MSE, mean over the folds, value by value (both grids from large to small).
    assert np.allclose(2 * ours.cv_.cv_loss, theirs.mse_path_.mean(axis=1), rtol=1e-5)
    assert np.allclose(ours.coef_, theirs.coef_, atol=1e-4)


def test_the_estimators_refuse_what_they_do_not_take(binary):
    X, y = binary
    with pytest.raises(ValueError, match="scoring"):
        OptcClassifierCV(scoring="no such score").fit(X, y)
    with pytest.raises(ValueError):
        OptcClassifierCV(cv=1).fit(X, y)
    with pytest.raises(ValueError, match="Cs="):
        OptcClassifierCV(Cs=[1.0, -1.0]).fit(X, y)
    X3, y3 = make_classification(n_samples=150, n_features=8, n_informative=4, n_classes=3, random_state=2)
    with pytest.raises(ValueError, match="one-vs-rest"):
        OptcClassifierCV(loss="hinge").fit(X3, y3)
    assert OptcClassifierCV(Cs=5).fit(X3, y3).coef_.shape == (3, 8)


@pytest.mark.parametrize("estimator", [
    OptcClassifierCV(Cs=5), OptcClassifierCV(Cs=5, l1_ratio=1.0),
    OptcRegressorCV(alphas=5), OptcRegressorCV(alphas=5, l1_ratio=0.5)], ids=["l2", "l1", "lasso", "elastic"])
def test_the_cv_estimators_pass_scikit_learns_checks(estimator):
    from sklearn.utils.estimator_checks import check_estimator
    check_estimator(estimator, expected_failed_checks=EXPECTED_FAILED_CHECKS_CV)


def test_sample_weights_reach_every_fold():
    X, y = make_regression(n_samples=200, n_features=30, n_informative=6, noise=5.0, random_state=1)
    # ElasticNet's weights are rescaled to sum to n_samples: equal weights are no weights.
    plain = OptcRegressorCV(alphas=10, cv=KFold(4), tol=1e-8).fit(X, y)
    equal = OptcRegressorCV(alphas=10, cv=KFold(4), tol=1e-8).fit(X, y, sample_weight=np.full(200, 3.0))
    assert equal.alpha_ == pytest.approx(plain.alpha_)
    assert np.allclose(equal.cv_.cv_loss, plain.cv_.cv_loss, rtol=1e-6)
    assert np.allclose(equal.coef_, plain.coef_, atol=1e-5)
    # Rows of weight 0 are out of every fit: the held-out losses move.
    w = np.where(np.arange(200) % 2 == 0, 1.0, 0.0)
    half = OptcRegressorCV(alphas=10, cv=KFold(4), tol=1e-8).fit(X, y, sample_weight=w)
    assert not np.allclose(half.cv_.cv_loss, plain.cv_.cv_loss)
    Xc, yc = make_classification(n_samples=300, n_features=10, weights=[0.8], random_state=3)
    balanced = OptcClassifierCV(Cs=6, class_weight="balanced").fit(Xc, yc)
    assert balanced.result_.status == "converged" and balanced.C_.shape == (1,)


def test_a_scorer_scores_each_folds_weights_on_its_held_out_rows(binary):
    X, y = binary
    clf = OptcClassifierCV(Cs=6, cv=KFold(3), scoring="accuracy", l1_ratio=1.0).fit(X, y)
    assert clf.scores_.shape == (3, 6)
    # Each score is the accuracy of that fold's weights on the rows it held out.
    table, k, v = clf.cv_, 1, 4
    test = table.fold_of == k
    a = X[test] @ table.fold_coef_[k][v] + table.fold_intercept_[k][v]
    assert clf.scores_[k, v] == pytest.approx(np.mean(np.where(a > 0, 1.0, -1.0) == y[test]))
    assert clf.lambda_ == table.values[np.argmax(clf.scores_.mean(axis=0))]
    X2, y2 = make_regression(n_samples=200, n_features=30, n_informative=6, noise=5.0, random_state=1)
    alphas = np.geomspace(10.0, 0.01, 8)
    reg = OptcRegressorCV(alphas=alphas, cv=KFold(4), scoring="neg_mean_squared_error").fit(X2, y2)
    # −MSE chooses what half the MSE (the held-out loss) chooses.
    assert reg.alpha_ == pytest.approx(OptcRegressorCV(alphas=alphas, cv=KFold(4)).fit(X2, y2).alpha_)
