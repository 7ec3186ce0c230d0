#!/usr/bin/env python3
"""optc's estimators on dense NumPy arrays against scikit-learn's, end to end from Python.

    pip install ./python scikit-learn
    python benches/dense.py [--data ../shared/data] [--repeat 3] [--only NAME ...] [--big]

Every set is a C-ordered float64 array handed to both sides as it is. Regression sets are fitted
by three pairs at scikit-learn's defaults (alpha = 1), classification sets by one estimator
against two:

  lasso        OptcRegressor()                       vs  Lasso()
  elastic net  OptcRegressor(l1_ratio=0.5)           vs  ElasticNet()
  ridge        OptcRegressor(alpha=1/n, l1_ratio=0)  vs  Ridge()  (Ridge's ‖y − Xw − b‖² + ‖w‖²
               is 2n times optc's F, the same w)
  logistic     OptcClassifier()                      vs  LogisticRegression() (lbfgs) and
                                                         LogisticRegression(solver="newton-cholesky")

F is computed here from each answer's coef_ and intercept_ by the one formula of its row
(regression: (1/(2n))‖y − Xw − b‖² + l1‖w‖₁ + ½·l2‖w‖²; logistic: C·Σᵢ log(1 + exp(−yᵢ(xᵢᵀw +
b))) + ½‖w‖², C = 1), so no estimator grades itself. Seconds are the median wall time of `fit`
over --repeat fits in this process, after one fit of each estimator on a tiny set; "peak MB" is
how far one more fit, in a fresh child process that holds the array already, raised its peak
resident memory (VmHWM − VmRSS before the fit): near 0 means no copy of X.

Sets: make_regression and make_classification (seeded) from 15,000 × 20 to 200,000 × 50, one
wide regression set (2,000 × 5,000), and satimage, dna (both binarised: class 1 against the rest)
and housing from --data read as dense arrays. --big adds 200,000 × 500 (800 MB a copy).
"""

import argparse
import lzma
import multiprocessing
import os
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file, make_classification, make_regression
from sklearn.linear_model import ElasticNet, Lasso, LogisticRegression, Ridge

from optc.sklearn import OptcClassifier, OptcRegressor
from sklearn_defaults import timed_fit


def regression_objective(X, y, est, l1, l2):
    w, b = np.ravel(est.coef_), float(np.ravel(est.intercept_)[0])
    r = y - (X @ w + b)
    return float(0.5 * r @ r / X.shape[0] + l1 * np.abs(w).sum() + 0.5 * l2 * w @ w)


def logistic_objective(X, y, est):
    w, b = np.ravel(est.coef_), float(np.ravel(est.intercept_)[0])
    s = np.where(y == est.classes_[1], 1.0, -1.0)
    return float(np.logaddexp(0.0, -s * (X @ w + b)).sum() + 0.5 * w @ w)


def memory_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def peak_in_child(make, X, y, out):
    """One fit in a fresh child process (spawned: a child forked from a process whose thread
    pools run would wait on threads it does not have): how far its peak resident memory rose
    above what it held with the array received."""
    cls, kwargs = make
    cls(**kwargs).fit(X[:50], y[:50])
    before = memory_kb("VmRSS")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cls(**kwargs).fit(X, y)
    out.put(max(0, memory_kb("VmHWM") - before) / 1024)


def timed(make, X, y, repeat):
    """(median seconds over `repeat` fits in this process, the peak MB of one fit in a forked
    child, the last estimator, the fits that warned)."""
    cls, kwargs = make
    seconds, est, warned = timed_fit(lambda: cls(**kwargs), X, y, repeat)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    child = ctx.Process(target=peak_in_child, args=(make, X, y, out))
    child.start()
    peak = out.get(timeout=600)
    child.join()
    return seconds, peak, est, warned


def sets(args):
    """(name, kind, X, y): kind "regression" or "classification"."""
    for m, d in [(15000, 20), (15000, 200), (50000, 100), (200000, 50)] + ([(200000, 500)] if args.big else []):
        X, y = make_regression(n_samples=m, n_features=d, n_informative=min(20, d), noise=1.0, random_state=0)
        yield f"make_regression {m:,} × {d}", "regression", X, y
    X, y = make_regression(n_samples=2000, n_features=5000, n_informative=20, noise=1.0, random_state=0)
    yield "make_regression 2,000 × 5,000 (wide)", "regression", X, y
    for m, d in [(15000, 20), (15000, 200), (100000, 100), (200000, 50)] + ([(200000, 500)] if args.big else []):
        X, y = make_classification(n_samples=m, n_features=d, n_informative=d // 2, random_state=0)
        yield f"make_classification {m:,} × {d}", "classification", X, y
    for name, kind in [("housing_scale", "regression"), ("satimage.scale", "classification"),
                       ("dna.scale", "classification")]:
        path = os.path.join(args.data, name + ".xz")
        if not os.path.exists(path):
            continue
        with lzma.open(path) as f:
            X, y = load_svmlight_file(f)
        X = np.ascontiguousarray(X.toarray())
        if kind == "classification":
            y = np.where(y == 1, 1.0, -1.0)
        yield f"{name} (dense)", kind, X, y


def pairs(kind, n):
    """(model, optc's (class, arguments), [(peer, (class, arguments))], the regression's (l1, l2))."""
    if kind == "regression":
        return [
            ("lasso", (OptcRegressor, {}), [("Lasso()", (Lasso, {}))], (1.0, 0.0)),
            ("elastic net", (OptcRegressor, {"l1_ratio": 0.5}), [("ElasticNet()", (ElasticNet, {}))], (0.5, 0.5)),
            ("ridge", (OptcRegressor, {"alpha": 1.0 / n, "l1_ratio": 0.0}), [("Ridge()", (Ridge, {}))], (0.0, 1.0 / n)),
        ]
    return [("logistic l2", (OptcClassifier, {}), [
        ("LogisticRegression()", (LogisticRegression, {})),
        ('LogisticRegression(solver="newton-cholesky")', (LogisticRegression, {"solver": "newton-cholesky"})),
    ], None)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", action="append", help="run the sets whose name contains this")
    parser.add_argument("--big", action="store_true")
    args = parser.parse_args()
    # Each fit runs in a child forked from this process: what a process does once (optc parses
    # its standard library, numpy and scikit-learn warm their caches) is done here first.
    Xw, yw = make_regression(n_samples=50, n_features=5, random_state=0)
    for make in (OptcRegressor, Lasso, Ridge):
        make().fit(Xw, yw)
    Xw, yw = make_classification(n_samples=50, n_features=5, random_state=0)
    OptcClassifier().fit(Xw, yw)
    LogisticRegression().fit(Xw, yw)
    rows = []
    for name, kind, X, y in sets(args):
        if args.only and not any(o in name for o in args.only):
            continue
        n = X.shape[0]
        for model, ours, peers, terms in pairs(kind, n):
            f = (lambda a: regression_objective(X, y, a, *terms)) if terms else (lambda a: logistic_objective(X, y, a))
            t_o, mem_o, a_o, w_o = timed(ours, X, y, args.repeat)
            for peer, make in peers:
                t_p, mem_p, a_p, w_p = timed(make, X, y, args.repeat)
                f_o, f_p = f(a_o), f(a_p)
                rows.append((name, model, peer, t_o, t_p, mem_o, mem_p, (f_o - f_p) / abs(f_p), w_o, w_p))
                print(f"  {name}, {model}: optc {t_o:.3f} s ({mem_o:.0f} MB), {peer} {t_p:.3f} s ({mem_p:.0f} MB), "
                      f"(F_optc − F_peer)/F_peer {(f_o - f_p) / abs(f_p):.1e}", flush=True)
    print()
    print("| data | model | peer | optc s | peer s | optc/peer | optc peak MB | peer peak MB "
          "| (F_optc − F_peer)/F_peer | ConvergenceWarnings optc / peer |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, model, peer, t_o, t_p, mem_o, mem_p, df, w_o, w_p in rows:
        print(f"| {name} | {model} | {peer} | {t_o:.3f} | {t_p:.3f} | {t_o / t_p:.2f} | {mem_o:.0f} | {mem_p:.0f} "
              f"| {df:.1e} | {w_o}/{args.repeat} / {w_p}/{args.repeat} |")


if __name__ == "__main__":
    main()
