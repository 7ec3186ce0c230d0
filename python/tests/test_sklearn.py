"""The scikit-learn estimators: scikit-learn's own estimator checks, its defaults and its
arguments' meaning (the same arguments as LogisticRegression, Lasso and ElasticNet give the same
objective, F computed here by one formula from each answer), the shapes of the fitted
attributes, the warning of a fit that stops short of tol, one-vs-rest and softmax class order,
and a text pipeline with a grid search and warm starts, on a corpus the test writes itself."""

import inspect
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402
from sklearn.linear_model import ElasticNet, Lasso, LogisticRegression, Ridge  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.multiclass import OneVsRestClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

from conftest import FIXTURES, read_svmlight  # noqa: E402
from optc.sklearn import EXPECTED_FAILED_CHECKS, OptcClassifier, OptcRegressor  # noqa: E402


# The sample-weight equivalence checks compare the predictions of a weighted fit and of the
# rows repeated to rtol 1e-7, tighter than a certified relative gap of 1e-4 places either:
# scikit-learn runs its own LinearSVC through them at tol=1e-12, and so does this test.
TIGHT = 1e-12


@pytest.mark.parametrize("estimator", [
    OptcClassifier(tol=TIGHT),
    OptcClassifier(penalty="l1", multi_class="ovr", tol=TIGHT),
    OptcClassifier(penalty="elasticnet", l1_ratio=0.5, fit_intercept=False, tol=TIGHT),
    OptcClassifier(loss="hinge", fit_intercept=False, tol=TIGHT),
    OptcClassifier(loss="softmax", C=10.0, tol=TIGHT),
    OptcClassifier(penalty="l1", lam=1e-3, multi_class="ovr", tol=TIGHT),
    OptcRegressor(tol=TIGHT),
    OptcRegressor(l1_ratio=0.5, alpha=0.1, tol=TIGHT),
    OptcRegressor(penalty="l2", alpha=0.1, tol=TIGHT),
    OptcRegressor(loss="huber", alpha=0.1, tol=TIGHT),
], ids=["default", "l1-ovr", "elasticnet", "hinge", "softmax", "lam-l1", "regressor-default", "elasticnet-regressor",
        "ridge", "huber"])
def test_the_estimators_pass_scikit_learns_checks(estimator):
    assert EXPECTED_FAILED_CHECKS == {}
    check_estimator(estimator, expected_failed_checks=EXPECTED_FAILED_CHECKS)


def test_a_value_that_is_not_finite_is_named_by_its_row_and_column():
    """The fits leave X's finiteness to the native check (one pass, not two), whose ValueError
    names the entry; predictions keep scikit-learn's own check."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=40)
    bad = X.copy()
    bad[13, 1] = np.nan
    for est, target in ((OptcRegressor(), y), (OptcClassifier(), (y > 0).astype(int))):
        with pytest.raises(ValueError, match="row 13, column 1: the value NaN is not finite"):
            est.fit(bad, target)
        with pytest.raises(ValueError, match="NaN"):
            est.fit(X, target).predict(bad)


def defaults(cls):
    return {name: p.default for name, p in inspect.signature(cls).parameters.items()}


def test_the_defaults_are_scikit_learns():
    clf = defaults(OptcClassifier)
    assert {k: clf[k] for k in ("loss", "penalty", "C", "l1_ratio", "fit_intercept", "tol", "lam")} == {
        "loss": "logistic", "penalty": None, "C": 1.0, "l1_ratio": 0.0, "fit_intercept": True, "tol": 1e-4,
        "lam": None}
    assert {k: defaults(LogisticRegression)[k] for k in ("C", "fit_intercept", "tol")} == {
        "C": 1.0, "fit_intercept": True, "tol": 1e-4}
    reg = defaults(OptcRegressor)
    assert {k: reg[k] for k in ("penalty", "alpha", "l1_ratio", "fit_intercept", "lam")} == {
        "penalty": None, "alpha": 1.0, "l1_ratio": 1.0, "fit_intercept": True, "lam": None}
    assert defaults(Lasso)["alpha"] == defaults(ElasticNet)["alpha"] == 1.0


def test_l1_ratio_alone_chooses_the_penalty_and_penalty_takes_precedence():
    """scikit-learn ≥ 1.8's convention: l1_ratio 0 is ½‖w‖², 1 is ‖w‖₁, between the elastic net;
    optc's ``penalty`` names one and wins. The same objective gives the same answer."""
    X, y = read_svmlight(FIXTURES / "binary.svm")
    for ratio, penalty in [(0.0, "l2"), (1.0, "l1"), (0.3, "elasticnet")]:
        by_ratio = OptcClassifier(l1_ratio=ratio, tol=1e-10).fit(X, y)
        named = OptcClassifier(penalty=penalty, l1_ratio=ratio, tol=1e-10).fit(X, y)
        assert np.allclose(by_ratio.coef_, named.coef_, atol=1e-6), ratio
    lasso = OptcClassifier(l1_ratio=1.0, tol=1e-10).fit(X, y)
    assert (lasso.coef_ == 0).any() and not (OptcClassifier(tol=1e-10).fit(X, y).coef_ == 0).any()
    # penalty="l2" wins over l1_ratio=1.
    assert np.allclose(OptcClassifier(penalty="l2", l1_ratio=1.0, tol=1e-10).fit(X, y).coef_,
                       OptcClassifier(tol=1e-10).fit(X, y).coef_, atol=1e-6)


def test_scikit_learns_loss_names_are_taken():
    X, y = read_svmlight(FIXTURES / "binary.svm")
    assert np.allclose(OptcClassifier(loss="log_loss").fit(X, y).coef_, OptcClassifier().fit(X, y).coef_)
    Xr, yr = read_svmlight(FIXTURES / "offset_regression.svm")
    assert np.allclose(OptcRegressor(loss="squared_error", alpha=0.1).fit(Xr, yr).coef_,
                       OptcRegressor(alpha=0.1).fit(Xr, yr).coef_)
    assert np.allclose(OptcRegressor(loss="epsilon_insensitive", epsilon=0.1, alpha=0.1).fit(Xr, yr).coef_,
                       OptcRegressor(loss="eps_insensitive", epsilon=0.1, alpha=0.1).fit(Xr, yr).coef_)
    with pytest.raises(ValueError, match="squared_error"):
        OptcRegressor(loss="absolute_error").fit(Xr, yr)


def logistic_objective(X, y, coef, intercept, C, penalty, l1_ratio=0.0):
    """scikit-learn's C·Σᵢ log(1 + exp(−yᵢ(xᵢᵀw + b))) + P(w), y in {−1, +1}."""
    w = np.ravel(coef)
    P = {"l2": 0.5 * w @ w, "l1": np.abs(w).sum(),
         "elasticnet": l1_ratio * np.abs(w).sum() + 0.5 * (1 - l1_ratio) * w @ w}[penalty]
    return C * np.logaddexp(0, -y * (X @ w + np.ravel(intercept)[0])).sum() + P


def elastic_net_objective(X, y, coef, intercept, alpha, l1_ratio):
    """scikit-learn's (1/(2n))‖y − Xw − b‖² + α·l1_ratio‖w‖₁ + ½α(1 − l1_ratio)‖w‖²."""
    r = y - X @ coef - intercept
    return r @ r / (2 * len(y)) + alpha * l1_ratio * np.abs(coef).sum() + 0.5 * alpha * (1 - l1_ratio) * coef @ coef


def assert_same_answer(ours, theirs, f_ours, f_theirs, X, atol=1e-4):
    assert f_ours <= f_theirs * (1 + 1e-7), (f_ours, f_theirs)
    assert np.allclose(ours.coef_, theirs.coef_, atol=atol)
    assert np.allclose(ours.intercept_, theirs.intercept_, atol=atol)
    assert ours.result_.status == "converged"


# liblinear penalises its intercept; lbfgs and saga leave it free, as optc does.
@pytest.mark.parametrize("ours, theirs, penalty, l1_ratio", [
    (dict(), dict(), "l2", 0.0),
    (dict(penalty="l1"), dict(penalty="l1", solver="saga"), "l1", 1.0),
    (dict(penalty="elasticnet", l1_ratio=0.3), dict(penalty="elasticnet", l1_ratio=0.3, solver="saga"),
     "elasticnet", 0.3),
], ids=["l2", "l1", "elasticnet"])
@pytest.mark.parametrize("C", [1.0, 10.0])
def test_the_classifier_is_logistic_regression_with_the_same_arguments(ours, theirs, penalty, l1_ratio, C):
    X, y = read_svmlight(FIXTURES / "offset_binary.svm")
    mine = OptcClassifier(C=C, tol=1e-12, **ours).fit(X, y)
    peer = LogisticRegression(C=C, tol=1e-12, max_iter=1_000_000, **theirs).fit(X, y)
    f_ours = logistic_objective(X, y, mine.coef_, mine.intercept_, C, penalty, l1_ratio)
    f_theirs = logistic_objective(X, y, peer.coef_, peer.intercept_, C, penalty, l1_ratio)
    assert_same_answer(mine, peer, f_ours, f_theirs, X)
    assert np.array_equal(mine.predict(X), peer.predict(X))
    assert np.allclose(mine.predict_proba(X), peer.predict_proba(X), atol=1e-6)


def test_l1_logistic_without_an_intercept_is_liblinears():
    X, y = read_svmlight(FIXTURES / "binary.svm")
    C = 0.5
    ours = OptcClassifier(penalty="l1", C=C, fit_intercept=False, tol=1e-9).fit(X, y)
    theirs = LogisticRegression(penalty="l1", solver="liblinear", C=C, fit_intercept=False, tol=1e-12,
                                max_iter=100_000).fit(X, y)
    f_ours = logistic_objective(X, y, ours.coef_, 0.0, C, "l1")
    f_theirs = logistic_objective(X, y, theirs.coef_, 0.0, C, "l1")
    assert f_ours <= f_theirs * (1 + 1e-8)
    assert np.allclose(ours.coef_, theirs.coef_, atol=1e-4)
    assert ours.result_.gap <= 1e-9 * ours.result_.objective
    assert np.array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.parametrize("penalty, l1_ratio, peer", [
    ("l1", 1.0, lambda alpha: Lasso(alpha=alpha, tol=1e-12, max_iter=1_000_000)),
    ("elasticnet", 0.4, lambda alpha: ElasticNet(alpha=alpha, l1_ratio=0.4, tol=1e-12, max_iter=1_000_000)),
    ("l2", 0.0, lambda alpha: Ridge(alpha=alpha * 200, tol=1e-12)),  # 200 rows: Ridge's α is n·ours
], ids=["lasso", "elasticnet", "ridge"])
@pytest.mark.parametrize("alpha", [0.01, 0.1])
def test_the_regressor_is_lasso_and_elastic_net_with_the_same_arguments(penalty, l1_ratio, peer, alpha):
    X, y = read_svmlight(FIXTURES / "offset_regression.svm")
    assert X.shape[0] == 200
    ours = OptcRegressor(penalty=penalty, alpha=alpha, l1_ratio=l1_ratio, tol=1e-12).fit(X, y)
    theirs = peer(alpha).fit(X.toarray(), y)
    f_ours = elastic_net_objective(X, y, ours.coef_, ours.intercept_, alpha, l1_ratio)
    f_theirs = elastic_net_objective(X.toarray(), y, theirs.coef_, theirs.intercept_, alpha, l1_ratio)
    assert_same_answer(ours, theirs, f_ours, f_theirs, X)
    assert np.allclose(ours.predict(X), theirs.predict(X.toarray()), atol=1e-8)


def test_lam_overrides_c_and_alpha_and_keeps_optcs_meaning():
    X, y = read_svmlight(FIXTURES / "binary.svm")
    n, lam, a = X.shape[0], 0.01, 0.5
    by_lam = OptcClassifier(penalty="l1", lam=lam, C=123.0, tol=1e-10).fit(X, y)
    by_C = OptcClassifier(penalty="l1", C=1 / (lam * n), tol=1e-10).fit(X, y)
    assert np.allclose(by_lam.coef_, by_C.coef_, atol=1e-7)
    # λ(‖w‖₁ + (a/2)‖w‖²) is scikit-learn's elastic net with l1_ratio = 1/(1 + a), C = l1_ratio/(λn).
    r = 1 / (1 + a)
    by_lam = OptcClassifier(penalty="elasticnet", lam=lam, elastic_alpha=a, l1_ratio=0.9, tol=1e-10).fit(X, y)
    by_C = OptcClassifier(penalty="elasticnet", C=r / (lam * n), l1_ratio=r, tol=1e-10).fit(X, y)
    assert np.allclose(by_lam.coef_, by_C.coef_, atol=1e-7)
    assert by_lam.result_.objective == pytest.approx(by_C.result_.objective, rel=1e-9)
    X, y = read_svmlight(FIXTURES / "regression.svm")
    assert np.allclose(OptcRegressor(lam=0.05, alpha=7.0, tol=1e-10).fit(X, y).coef_,
                       OptcRegressor(alpha=0.05, tol=1e-10).fit(X, y).coef_, atol=1e-8)


def test_the_fitted_attributes_have_scikit_learns_shapes():
    X, y = read_svmlight(FIXTURES / "binary.svm")
    d = X.shape[1]
    clf = OptcClassifier().fit(X, y)
    assert clf.coef_.shape == (1, d) and clf.intercept_.shape == (1,)
    # Epochs: 0 where the check before the first epoch solves the model (few features).
    assert isinstance(clf.n_iter_, np.ndarray) and clf.n_iter_.shape == (1,) and clf.n_iter_[0] >= 0
    assert clf.predict_proba(X).shape == (X.shape[0], 2)
    X, y = read_svmlight(FIXTURES / "multiclass.svm")
    for multi_class in ("auto", "ovr"):
        clf = OptcClassifier(multi_class=multi_class).fit(X, y)
        assert clf.coef_.shape == (3, X.shape[1]) and clf.intercept_.shape == (3,) and clf.n_iter_.shape == (1,)
        assert np.allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    assert not hasattr(OptcClassifier(loss="hinge"), "predict_proba")
    X, y = read_svmlight(FIXTURES / "regression.svm")
    reg = OptcRegressor(alpha=0.05).fit(X, y)
    assert reg.coef_.shape == (X.shape[1],) and isinstance(reg.intercept_, float) and isinstance(reg.n_iter_, int)


def test_a_fit_short_of_tol_warns_with_the_gap_it_certified():
    X, y = read_svmlight(FIXTURES / "binary.svm")
    # The 1-norm SVM: ℓ1-logistic on these 30 features is solved before its first epoch.
    with pytest.warns(ConvergenceWarning) as caught:
        clf = OptcClassifier(loss="hinge", penalty="l1", max_epochs=1, tol=1e-12).fit(X, y)
    assert clf.result_.status == "max_epochs" and clf.result_.relative_gap > 1e-12
    message = str(caught[0].message)
    assert f"certified relative gap of {clf.result_.relative_gap:.3g}" in message
    assert "tol=1e-12" in message and "'max_epochs'" in message and clf.result_.rule in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert OptcClassifier(penalty="l1").fit(X, y).result_.status == "converged"


@pytest.mark.parametrize("estimator, match", [
    (OptcClassifier(C=0.0), "C=0.0"),
    (OptcClassifier(C=-np.inf), "C=-inf"),
    (OptcRegressor(alpha=np.inf), "alpha=inf"),
    (OptcRegressor(alpha=0.0), "alpha=0.0"),
    (OptcClassifier(penalty="elasticnet", l1_ratio=1.5), "l1_ratio=1.5"),
    (OptcClassifier(penalty="l2", l1_ratio=-0.1), "l1_ratio=-0.1"),
    (OptcClassifier(lam=1e-3, l1_ratio=0.5, elastic_alpha=float("nan")), "elastic_alpha=nan"),
    (OptcClassifier(penalty="l3"), "penalty='l3'"),
    (OptcClassifier(multi_class="crammer_singer"), "multi_class"),
    (OptcClassifier(loss="softmax", multi_class="ovr"), "multinomial"),
    (OptcClassifier(lam=-1.0), "lam=-1.0"),
    (OptcRegressor(alpha=-1.0), "alpha=-1.0"),
    (OptcRegressor(loss="logistic"), "loss='logistic'"),
    (OptcRegressor(loss="huber", delta=0.0), "delta=0.0"),
    (OptcRegressor(loss="quantile", quantile=1.0), "quantile=1.0"),
    (OptcRegressor(loss="epsilon_insensitive", epsilon=-0.5), "epsilon=-0.5"),
    (OptcRegressor(loss="squared_epsilon_insensitive", epsilon=float("nan")), "epsilon=nan"),
])
def test_arguments_out_of_range_are_refused(estimator, match):
    X, y = read_svmlight(FIXTURES / "multiclass.svm")
    with pytest.raises(ValueError, match=match):
        estimator.fit(X, y)


def test_one_vs_rest_and_softmax_keep_scikit_learns_class_order():
    X, y = read_svmlight(FIXTURES / "multiclass.svm")
    y = np.array(["class " + str(int(v)) for v in y])  # string labels, sorted unlike first-seen
    C = 0.5
    ours = OptcClassifier(penalty="l1", C=C, multi_class="ovr", fit_intercept=False, tol=1e-9).fit(X, y)
    theirs = OneVsRestClassifier(LogisticRegression(penalty="l1", solver="liblinear", C=C, fit_intercept=False,
                                                    tol=1e-12, max_iter=100_000)).fit(X, y)
    assert list(ours.classes_) == list(theirs.classes_)
    theirs_coef = np.vstack([e.coef_ for e in theirs.estimators_])
    assert np.allclose(ours.coef_, theirs_coef, atol=1e-4)
    for fit_intercept in (False, True):
        soft = OptcClassifier(C=C, fit_intercept=fit_intercept, tol=1e-10).fit(X, y)
        lbfgs = LogisticRegression(C=C, fit_intercept=fit_intercept, tol=1e-12, max_iter=100_000).fit(X, y)
        assert list(soft.classes_) == list(lbfgs.classes_)
        assert np.allclose(soft.coef_, lbfgs.coef_, atol=1e-5)
        assert np.allclose(soft.intercept_, lbfgs.intercept_, atol=1e-5)
        assert np.allclose(soft.predict_proba(X), lbfgs.predict_proba(X), atol=1e-6)


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


@pytest.mark.parametrize("grid, weakest", [
    ({"optcclassifier__lam": [1e-1, 1e-2, 1e-3]}, lambda best: best["optcclassifier__lam"] < 1e-1),
    ({"optcclassifier__C": [0.05, 0.5, 5.0]}, lambda best: best["optcclassifier__C"] > 0.05),
], ids=["lam", "C"])
def test_a_text_pipeline_and_a_grid_search(grid, weakest):
    docs, y = corpus()
    pipe = make_pipeline(TfidfVectorizer(), OptcClassifier(penalty="l1"))
    search = GridSearchCV(pipe, grid, cv=3).fit(docs, y)
    assert weakest(search.best_params_)
    assert search.best_score_ >= 0.9
    test_docs, test_y = corpus(seed=1, n=100)
    assert search.score(test_docs, test_y) >= 0.9
    assert search.best_estimator_[-1].result_.status == "converged"


def test_warm_starts_along_a_grid_take_fewer_epochs():
    X, y = read_svmlight(FIXTURES / "sparse_binary.svm")
    grid = np.geomspace(1e-1, 1e-4, 8)

    def epochs(warm):
        clf = OptcClassifier(penalty="l1", warm_start=warm, tol=1e-8)
        total = 0
        for lam in grid:
            total += clf.set_params(lam=lam).fit(X, y).n_iter_[0]
        return total, clf.coef_

    (warm, w_warm), (cold, w_cold) = epochs(True), epochs(False)
    assert warm < cold, (warm, cold)
    assert np.allclose(w_warm, w_cold, atol=1e-4)


@pytest.mark.parametrize("name, value", [
    ("max_epochs", 0), ("max_epochs", -3), ("max_epochs", 2**70), ("max_epochs", 2.5), ("threads", 0),
    ("threads", -1), ("tol", 0.0), ("tol", float("nan")), ("time_limit", -1.0),
])
def test_a_bad_run_parameter_is_a_value_error_naming_it(name, value):
    X, y = read_svmlight(FIXTURES / "binary.svm")
    with pytest.raises(ValueError, match=f"^{name}="):
        OptcClassifier(**{name: value}).fit(X, y)


def test_a_model_error_is_a_value_error():
    import optc
    assert issubclass(optc.ModelError, ValueError)
    with pytest.raises(ValueError):
        OptcClassifier(model="data x: sparse, y: labels\nminimize nonsense").fit(*read_svmlight(FIXTURES / "binary.svm"))


def pinball(r, tau):
    return np.mean(np.maximum(tau * r, (tau - 1) * r))


@pytest.mark.parametrize("tau", [0.3, 0.5])
def test_the_quantile_regressor_is_scikit_learns(tau):
    """The pinball loss with ℓ1 and a free b: QuantileRegressor's objective (HiGHS solves its LP
    exactly), which optc's certified answer matches to its gap."""
    from sklearn.linear_model import QuantileRegressor

    X, y = read_svmlight(FIXTURES / "offset_regression.svm")
    ours = OptcRegressor(loss="quantile", quantile=tau, alpha=0.01, tol=1e-7).fit(X, y)
    theirs = QuantileRegressor(quantile=tau, alpha=0.01).fit(X.toarray(), y)
    f = lambda coef, b: pinball(y - X @ coef - b, tau) + 0.01 * np.abs(coef).sum()
    f_ours, f_theirs = f(ours.coef_, ours.intercept_), f(theirs.coef_, theirs.intercept_)
    assert ours.result_.status == "converged"
    assert f_ours <= f_theirs * (1 + 1e-6), (f_ours, f_theirs)
    assert f_ours - ours.result_.gap <= f_theirs * (1 + 1e-9), "the gap bounds HiGHS's optimum"


@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared_epsilon_insensitive"])
def test_the_svr_losses_are_linear_svrs(loss):
    """LinearSVR's C·Σ loss + ½‖w‖² (without an intercept, which LinearSVR penalises) is this
    estimator's at l1_ratio=0 and α = 1/(C·n): the same F, optc's certified."""
    from sklearn.svm import LinearSVR

    X, y = read_svmlight(FIXTURES / "regression.svm")
    n, C, eps = X.shape[0], 1.0, 0.1
    ours = OptcRegressor(loss=loss, epsilon=eps, l1_ratio=0.0, alpha=1 / (C * n), fit_intercept=False,
                         tol=1e-9).fit(X, y)
    theirs = LinearSVR(loss=loss, epsilon=eps, C=C, fit_intercept=False, dual=True, tol=1e-10,
                       max_iter=1_000_000).fit(X, y)
    power = 2 if loss.startswith("squared") else 1
    f = lambda coef: np.mean(np.maximum(0.0, np.abs(X @ coef - y) - eps) ** power) + 0.5 / (C * n) * coef @ coef
    f_ours, f_theirs = f(ours.coef_), f(theirs.coef_)
    assert ours.result_.status == "converged"
    assert f_ours <= f_theirs * (1 + 1e-6), (f_ours, f_theirs)
    assert f_ours - ours.result_.gap <= f_theirs * (1 + 1e-9)


def test_the_huber_regressor_takes_delta():
    """Huber's loss at δ: a smaller δ trims the outliers' pull, F is certified at each, and an
    estimator refitted at a new δ (set_params) answers as a fresh one."""
    X, y = read_svmlight(FIXTURES / "offset_regression.svm")
    y = y.copy()
    y[:10] += 50.0  # ten outliers
    fits = {}
    for delta in [100.0, 0.5]:
        est = OptcRegressor(loss="huber", delta=delta, l1_ratio=0.0, alpha=1e-3, tol=1e-8).fit(X, y)
        assert est.result_.status == "converged" and est.result_.gap <= 1e-8 * est.result_.objective
        fits[delta] = est
    clean = OptcRegressor(l1_ratio=0.0, alpha=1e-3, tol=1e-8).fit(X[10:], y[10:])
    err = {d: np.abs(e.coef_ - clean.coef_).max() for d, e in fits.items()}
    assert err[0.5] < 0.5 * err[100.0], err
    warm = OptcRegressor(loss="huber", delta=100.0, l1_ratio=0.0, alpha=1e-3, tol=1e-8, warm_start=True).fit(X, y)
    warm.set_params(delta=0.5).fit(X, y)
    assert np.allclose(warm.coef_, fits[0.5].coef_, atol=1e-5)


def test_the_poisson_regressor_is_scikit_learns():
    """Poisson's loss with ½α‖w‖² and a free b: PoissonRegressor(alpha)'s minimiser (its half
    deviance is the mean loss up to a constant), which optc certifies."""
    from sklearn.linear_model import PoissonRegressor

    X, y = read_svmlight(FIXTURES / "count_regression.svm")
    ours = OptcRegressor(loss="poisson", l1_ratio=0.0, alpha=0.01, tol=1e-10).fit(X, y)
    theirs = PoissonRegressor(alpha=0.01, tol=1e-12, max_iter=10_000).fit(X.toarray(), y)
    f = lambda coef, b: np.mean(np.exp(X @ coef + b) - y * (X @ coef + b)) + 0.005 * coef @ coef
    f_ours, f_theirs = f(ours.coef_, ours.intercept_), f(theirs.coef_, theirs.intercept_)
    assert ours.result_.status == "converged"
    assert f_ours <= f_theirs + 1e-9 * abs(f_theirs), (f_ours, f_theirs)
    assert np.allclose(ours.coef_, theirs.coef_, atol=1e-5)
    with pytest.raises(Exception, match="negative"):
        OptcRegressor(loss="poisson").fit(X, -y)
