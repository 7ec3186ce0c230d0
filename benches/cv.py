#!/usr/bin/env python3
"""Choosing λ by 5-fold cross-validation over 50 values: optc's warm-started paths against
scikit-learn's and skglm's CV estimators, end to end from Python, on the same grid.

    pip install './python[sklearn]' skglm
    python benches/cv.py ../shared/data/a9a.xz [--lasso ../shared/data/housing_scale.xz] [--planted]
        [--folds 5] [--values 50] [--repeat 1] [--cap 300]

Rows (λ is optc's: the mean loss plus λ·‖w‖₁, with a free intercept b):

  ℓ1-logistic   OptcClassifierCV(Cs=grid, l1_ratio=1)       LogisticRegressionCV(l1_ratios=[1.0],
                                                            solver="saga" | "liblinear")
                                                            skglm GeneralizedLinearEstimatorCV
                                                            (Logistic, L1, ProxNewton)
                                                            GridSearchCV(OptcClassifier, C)
  lasso         OptcRegressorCV(alphas=grid)                LassoCV, skglm GeneralizedLinearEstimatorCV
                                                            (Quadratic, L1, AndersonCD),
                                                            GridSearchCV(OptcRegressor, alpha)

The grid is 50 values log-spaced from λ_max (computed here: ‖Xᵀ(y − ȳ)‖∞/m for the lasso, the
same with the intercept-only model's residual for logistic) down to 1e-3 of it (scikit-learn's
eps), each peer given it in its own units: C = 1/(λ·m_train) for scikit-learn's logistic (whose
C multiplies a sum of m_train = (K−1)/K·m losses: the same λ in each fold as optc's), α = λ for the
lasso. The folds are the same StratifiedKFold(5) / KFold(5) for every estimator, unshuffled
(scikit-learn's default). Each estimator scores with its own rule: optc the mean held-out loss,
LogisticRegressionCV and skglm accuracy, LassoCV and skglm the MSE. LIBLINEAR's ℓ1 (solver
"liblinear") penalises its intercept, another problem. Columns: seconds for `fit` (one CV and
the refit), its ratio to the fastest peer, the λ each chose, and optc's held-out error (MSE for
the lasso) at that λ with its standard error, from optc's own table: a choice within a
standard error of optc's is as good as the folds can tell. A peer's fit runs in a forked child
killed after --cap seconds.
"""

import argparse
import lzma
import os
import pickle
import signal
import tempfile
import time
import warnings

import numpy as np
from scipy import sparse
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LassoCV, LogisticRegressionCV
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

from optc.sklearn import OptcClassifier, OptcClassifierCV, OptcRegressor, OptcRegressorCV

try:
    from skglm.cv import GeneralizedLinearEstimatorCV
    from skglm.datafits import Logistic, Quadratic
    from skglm.penalties import L1
    from skglm.solvers import AndersonCD, ProxNewton
except ImportError:  # optional peer
    GeneralizedLinearEstimatorCV = None


def capped(fit, cap):
    """(seconds, the fitted estimator's chosen λ) of `fit` in a forked child killed after `cap`
    seconds: None when it does not end."""
    with tempfile.NamedTemporaryFile(suffix=".pickle") as out:
        pid = os.fork()
        if pid == 0:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    start = time.perf_counter()
                    chosen = fit()
                    seconds = time.perf_counter() - start
                with open(out.name, "wb") as f:
                    pickle.dump((seconds, chosen), f)
            finally:
                os._exit(0)
        deadline = time.monotonic() + cap
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            time.sleep(0.01)
        try:
            with open(out.name, "rb") as f:
                return pickle.load(f)
        except EOFError:  # the child failed
            return None


def load(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rb") as f:
        X, y = load_svmlight_file(f)
    X = X.tocsr()
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X, y, os.path.basename(path).split(".")[0]


def planted(m, d, k, seed):
    """A sparse design with a planted k-sparse model, an offset of 3 and noise."""
    rng = np.random.default_rng(seed)
    X = sparse.random(m, d, density=0.01, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    w = np.zeros(d)
    w[rng.choice(d, k, replace=False)] = rng.normal(0, 2, k)
    return X, X @ w + 3.0 + rng.standard_normal(m)


def logistic_lambda_max(X, y):
    p = np.mean(y > 0)
    r = np.where(y > 0, 1.0, 0.0) - p
    return np.max(np.abs(X.T @ r)) / X.shape[0]


def lasso_lambda_max(X, y):
    return np.max(np.abs(X.T @ (y - y.mean()))) / X.shape[0]


def report(name, model, grid, results, table, err_name):
    """One row per estimator: its time, the ratio to the fastest peer, its λ, and optc's
    held-out error there ± its standard error."""
    peers = [t for est, r in results.items() if est != "optc" and r is not None for t in [r[0]]]
    fastest = min(peers) if peers else None
    ours = results.get("optc")
    for est, r in results.items():
        if r is None:
            print(f"| {name} | {model} | {est} | over the cap | | | |")
            continue
        seconds, lam = r
        at = int(np.argmin(np.abs(np.log(grid) - np.log(lam))))
        err = f"{table.cv_error[at]:.4g} ± {table.cv_error_se[at]:.2g}" if table is not None else ""
        ratio = f"{seconds / fastest:.2f}" if est == "optc" and fastest else ""
        print(f"| {name} | {model} | {est} | {seconds:.2f} | {ratio} | {lam:.3e} | {err} |")
    return ours


def classification(path, args):
    X, y, name = load(path)
    y = np.where(y > 0, 1.0, -1.0)
    m, k = X.shape[0], args.folds
    grid = logistic_lambda_max(X, y) * np.geomspace(1.0, 1e-3, args.values)
    m_train = m * (k - 1) / k
    Cs = 1.0 / (grid * m_train)
    folds = StratifiedKFold(k)
    results = {}

    def ours():
        est = OptcClassifierCV(Cs=1.0 / (grid * m), cv=folds, l1_ratio=1.0).fit(X, y)
        ours.table = est.cv_
        return est.lambda_

    start = time.perf_counter()
    lam = ours()
    results["optc"] = (time.perf_counter() - start, lam)
    for solver in ("saga", "liblinear"):
        results[f"LogisticRegressionCV({solver})"] = capped(
            lambda s=solver: 1.0 / (LogisticRegressionCV(Cs=Cs, l1_ratios=[1.0], solver=s, cv=folds).fit(X, y).C_[0]
                                    * m_train), args.cap)
    if GeneralizedLinearEstimatorCV is not None:
        results["skglm CV"] = capped(lambda: GeneralizedLinearEstimatorCV(
            Logistic(), L1(1.0), ProxNewton(fit_intercept=True), alphas=grid, cv=k).fit(X, y).alpha_, args.cap)
    results["GridSearchCV(OptcClassifier)"] = capped(lambda: 1.0 / (GridSearchCV(
        OptcClassifier(l1_ratio=1.0), {"C": list(1.0 / (grid * m_train))}, cv=folds).fit(X, y).best_params_["C"]
        * m_train), args.cap)
    report(name, "ℓ1-logistic + b", grid, results, ours.table, "error")


def regression(name, X, y, args):
    m, k = X.shape[0], args.folds
    grid = lasso_lambda_max(X, y) * np.geomspace(1.0, 1e-3, args.values)
    folds = KFold(k)
    results = {}

    def ours():
        est = OptcRegressorCV(alphas=grid, cv=folds).fit(X, y)
        ours.table = est.cv_
        return est.lambda_

    start = time.perf_counter()
    lam = ours()
    results["optc"] = (time.perf_counter() - start, lam)
    results["LassoCV"] = capped(lambda: LassoCV(alphas=grid, cv=folds).fit(X, y).alpha_, args.cap)
    if GeneralizedLinearEstimatorCV is not None:
        results["skglm CV"] = capped(lambda: GeneralizedLinearEstimatorCV(
            Quadratic(), L1(1.0), AndersonCD(fit_intercept=True), alphas=grid, cv=k).fit(X, y).alpha_, args.cap)
    results["GridSearchCV(OptcRegressor)"] = capped(lambda: GridSearchCV(
        OptcRegressor(), {"alpha": list(grid)}, cv=folds).fit(X, y).best_params_["alpha"], args.cap)
    report(name, "lasso + b", grid, results, ours.table, "mse")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="classification sets (LIBSVM, .xz or plain)")
    ap.add_argument("--lasso", action="append", default=[], help="regression sets")
    ap.add_argument("--planted", action="store_true", help="also a planted sparse 20,000 × 2,000 regression")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--values", type=int, default=50)
    ap.add_argument("--cap", type=float, default=300.0)
    args = ap.parse_args()
    print("| data | model | estimator | seconds | optc / fastest peer | λ chosen | optc's held-out error there |")
    print("|---|---|---|---:|---:|---:|---|")
    for path in args.files:
        classification(path, args)
    for path in args.lasso:
        X, y, name = load(path)
        regression(name, X, y, args)
    if args.planted:
        X, y = planted(20_000, 2_000, 20, 7)
        regression("planted 20,000 × 2,000", X, y, args)


if __name__ == "__main__":
    main()
