#!/usr/bin/env python3
"""optc's scikit-learn estimators against scikit-learn and skglm with the arguments a user
switching over would write: the defaults, on the same objective.

    pip install './python[sklearn]' skglm       # into the venv that runs this (skglm optional)
    python benches/sklearn_defaults.py ../shared/data/a9a.xz ../shared/data/w8a.xz \\
        ../shared/data/housing_scale.xz [--planted 20000x2000 --planted 100000x50000] \\
        [--repeat 3] [--l1-C 1.0] [--threads N]

The synthetic 100k × 50k classification set is optc-synth's (`target/release/optc-synth --rows
100000 --features 50000 --seed 1 -o synth-100k.svm`, as benches/peers.py writes it).

A LIBSVM file (plain or .xz, read by scikit-learn's load_svmlight_file) with two labels is a
classification set, fitted by five pairs, every estimator at its default tolerance and iteration
cap:

  logistic l2   OptcClassifier()  vs  LogisticRegression(): C = 1, unpenalised intercept, lbfgs;
                F = C·Σᵢ log(1 + exp(−yᵢ(xᵢᵀw + b))) + ½‖w‖².
  logistic l1   OptcClassifier(penalty="l1", C)  vs  skglm's SparseLogisticRegression(alpha =
                1/(C·n)), whose objective is the mean loss + α‖w‖₁, F/(C·n); both fit an
                unpenalised intercept. F = C·Σᵢ log(1 + exp(−yᵢ(xᵢᵀw + b))) + ‖w‖₁. Skipped when
                skglm is not installed; numba compiles its kernels on a small problem first.
  no penalty    OptcClassifier(C=np.inf)  vs  LogisticRegression(C=np.inf): F = Σᵢ log(1 +
                exp(−yᵢ(xᵢᵀw + b))), no penalty (optc stops on ‖∇F‖ ≤ tol·‖∇F(w₀)‖, so the
                certified gap column reads none).
  hinge l2      OptcClassifier(model=…) with the intercept penalised as a weight vs
                LinearSVC(loss="hinge"), whose intercept_scaling = 1 penalises b so:
                F = C·Σᵢ max(0, 1 − yᵢ(xᵢᵀw + b)) + ½(‖w‖² + b²), C = 1. (OptcClassifier(loss=
                "hinge") leaves b free, a different objective.)
  squared hinge OptcClassifier(model=…) with b penalised so vs LinearSVC() (its defaults: the
                squared hinge, C = 1, b penalised, `dual="auto"`, LIBLINEAR's primal -s 2 where
                the rows outnumber the features): F = C·Σᵢ max(0, 1 − yᵢ(xᵢᵀw + b))² + ½(‖w‖² + b²).

Any other file, and each --planted M×D set, is a regression set, fitted by three pairs, the
peers at their defaults (alpha = 1):

  lasso         OptcRegressor()  vs  Lasso(): F = (1/(2n))‖y − Xw − b‖² + ‖w‖₁.
  elastic net   OptcRegressor(l1_ratio=0.5)  vs  ElasticNet(): F = (1/(2n))‖y − Xw − b‖² +
                ½‖w‖₁ + ¼‖w‖².
  ridge         OptcRegressor(alpha=1/n, l1_ratio=0)  vs  Ridge(): Ridge's ‖y − Xw − b‖² + ‖w‖²
                is 2n times F = (1/(2n))‖y − Xw − b‖² + (1/(2n))‖w‖², so both fit the same w.

A planted M×D set (seeded) has a sparse X with 50 non-zeros a row on average, each N(0, 1/ρ)
at density ρ (so each column's mean square is 1, as after standardising), 20 planted weights
±U(2, 5), an intercept of 3 and N(0, 1) noise: Lasso() at alpha = 1 keeps the planted features.
housing's y (median house prices, 5–50) and 13 scaled features are the dense, tiny case.

--dense hands every set over as a dense NumPy array, to both sides (scikit-learn's dense
solvers then run: Lasso's and Ridge's on the array as it is).

Seconds are the wall time of `fit` (validation, optc's compile and the solve; not reading the
file), the median of --repeat fits each from scratch. optc runs at its default threads (every
core) unless --threads says otherwise; the peers run as they come. F is computed here, by the one
formula of each row, from each answer's coef_ and intercept_, so no estimator grades itself;
the table gives optc's certified relative gap and |F_optc − F_peer|/F_peer. The last
column counts the fits that warned ConvergenceWarning: optc's, when it says that no minimiser
exists (the no-penalty row on separable data, whose F then only says how far each went towards
0), and the peer's.
"""

import argparse
import lzma
import os
import statistics
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import ElasticNet, Lasso, LogisticRegression, Ridge
from sklearn.svm import LinearSVC

from optc.sklearn import OptcClassifier, OptcRegressor

# LIBLINEAR's -B 1: the intercept penalised like a weight (docs/language.md, Intercepts).
HINGE_PENALISED_B = """data x: sparse, y: labels
var w: vec[dim(x)]
var b: scalar
param λ = 1
minimize E[hinge(y, <x, w> + b)] + λ·l2sq(w) + λ·l2sq(b)
"""
SQUARED_HINGE_PENALISED_B = HINGE_PENALISED_B.replace("hinge(", "squared_hinge(")


def read(path):
    """(CSR X, y), X's indices narrowed to int32: skglm refuses the reader's int64 ones, and the
    other estimators read both."""
    with lzma.open(path) if path.endswith(".xz") else open(path, "rb") as f:
        X, y = load_svmlight_file(f)
    X = X.tocsr()
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X, y


def objective(X, y, coef, intercept, C, loss, penalty, penalised_b=False):
    """scikit-learn's C·Σᵢ ℓ(yᵢ, xᵢᵀw + b) + P(w) (+ ½b² when b is penalised), y in {−1, +1}."""
    w, b = np.ravel(coef), float(np.ravel(intercept)[0])
    margins = y * (X @ w + b)
    if loss == "logistic":
        losses = np.logaddexp(0.0, -margins)
    elif loss == "squared_hinge":
        losses = np.maximum(0.0, 1.0 - margins) ** 2
    else:
        losses = np.maximum(0.0, 1.0 - margins)
    P = np.abs(w).sum() if penalty == "l1" else 0.0 if penalty == "none" else 0.5 * w @ w
    return float(C * losses.sum() + P + (0.5 * b * b if penalised_b else 0.0))


def regression_objective(X, y, coef, intercept, l1, l2):
    """(1/(2n))‖y − Xw − b‖² + l1·‖w‖₁ + ½·l2·‖w‖²."""
    w, b = np.ravel(coef), float(np.ravel(intercept)[0])
    r = y - (X @ w + b)
    return float(0.5 * r @ r / X.shape[0] + l1 * np.abs(w).sum() + 0.5 * l2 * w @ w)


def planted(spec, seed=7):
    """(name, CSR X, y) of a seeded planted regression set, spec "M×D" (or "MxD")."""
    m, d = (int(v) for v in spec.lower().replace("×", "x").split("x"))
    rng = np.random.default_rng(seed)
    density = min(1.0, 50.0 / d)
    X = sp.random(m, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.standard_normal(k) / np.sqrt(density))
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    w = np.zeros(d)
    support = rng.choice(d, size=min(20, d), replace=False)
    w[support] = rng.choice([-1.0, 1.0], size=support.size) * rng.uniform(2.0, 5.0, size=support.size)
    y = X @ w + 3.0 + rng.standard_normal(m)
    return f"planted-{m}x{d}", X, y


def timed_fit(make, X, y, repeat):
    """(median seconds, the last fitted estimator, how many fits warned ConvergenceWarning)."""
    seconds, warned, est = [], 0, None
    for _ in range(repeat):
        est = make()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            start = time.perf_counter()
            est.fit(X, y)
            seconds.append(time.perf_counter() - start)
        warned += any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return statistics.median(seconds), est, warned


def skglm_logistic():
    """skglm's SparseLogisticRegression, its numba kernels compiled, or None without skglm."""
    try:
        from skglm import SparseLogisticRegression
    except ImportError:
        return None
    rng = np.random.default_rng(0)
    X = sp.random(50, 5, density=0.5, format="csr", random_state=0)  # the sparse kernels are the ones timed
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    SparseLogisticRegression(alpha=0.01).fit(X, np.sign(rng.standard_normal(50)))
    return SparseLogisticRegression


def pairs(n, l1_C, threads, sparse_logistic):
    """(model, optc's estimator, the peer's, its name, the F formula's arguments) per row."""
    yield ("logistic l2", lambda: OptcClassifier(threads=threads), LogisticRegression, "LogisticRegression()",
           dict(C=1.0, loss="logistic", penalty="l2"))
    if sparse_logistic is None:
        print("skglm is not installed: the l1 row is skipped", file=sys.stderr)
    else:
        alpha = 1.0 / (l1_C * n)
        yield (f"logistic l1, C={l1_C:g}", lambda: OptcClassifier(penalty="l1", C=l1_C, threads=threads),
               lambda: sparse_logistic(alpha=alpha), f"skglm SparseLogisticRegression(alpha={alpha:.3g})",
               dict(C=l1_C, loss="logistic", penalty="l1"))
    yield ("logistic, no penalty", lambda: OptcClassifier(C=np.inf, threads=threads),
           lambda: LogisticRegression(C=np.inf), "LogisticRegression(C=np.inf)",
           dict(C=1.0, loss="logistic", penalty="none"))
    yield ("hinge l2, b penalised", lambda: OptcClassifier(model=HINGE_PENALISED_B, params={"λ": 1.0 / n}, threads=threads),
           lambda: LinearSVC(loss="hinge"), 'LinearSVC(loss="hinge")',
           dict(C=1.0, loss="hinge", penalty="l2", penalised_b=True))
    yield ("squared hinge l2, b penalised",
           lambda: OptcClassifier(model=SQUARED_HINGE_PENALISED_B, params={"λ": 1.0 / n}, threads=threads),
           LinearSVC, "LinearSVC()", dict(C=1.0, loss="squared_hinge", penalty="l2", penalised_b=True))


def regression_pairs(n, threads):
    """(model, optc's estimator, the peer's, its name, the F formula's arguments) per row."""
    yield ("lasso", lambda: OptcRegressor(threads=threads), Lasso, "Lasso()", dict(l1=1.0, l2=0.0))
    yield ("elastic net", lambda: OptcRegressor(l1_ratio=0.5, threads=threads), ElasticNet, "ElasticNet()",
           dict(l1=0.5, l2=0.5))
    yield ("ridge", lambda: OptcRegressor(alpha=1.0 / n, l1_ratio=0.0, threads=threads), Ridge, "Ridge()",
           dict(l1=0.0, l2=1.0 / n))


def sets(args):
    """(name, X, y) of each data file, then of each planted set."""
    for path in args.data:
        X, y = read(path)
        yield os.path.basename(path).removesuffix(".xz"), X, y
    for spec in args.planted:
        yield planted(spec)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", nargs="*", help="LIBSVM files, plain or .xz: two labels classify, others regress")
    p.add_argument("--planted", action="append", default=[], metavar="M×D",
                   help="a seeded planted sparse regression set of M rows and D features (repeatable)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--l1-C", type=float, default=1.0, help="C of the l1 row (default: scikit-learn's 1.0)")
    p.add_argument("--threads", type=int, help="optc's threads (default: every core)")
    p.add_argument("--dense", action="store_true", help="fit every set as a dense NumPy array (X.toarray())")
    args = p.parse_args()
    sparse_logistic = skglm_logistic()
    rows = []
    for name, X, y in sets(args):
        if args.dense:
            X, name = X.toarray(), name + " (dense)"
        labels = np.unique(y)
        print(f"{name}: {X.shape[0]} rows, {X.shape[1]} features, {np.count_nonzero(X) if args.dense else X.nnz} "
              "non-zeros", flush=True)
        if len(labels) == 2:
            signs = np.where(y == labels[1], 1.0, -1.0)  # classes_[1] is the positive score in all three
            fits = [(model, ours, theirs, peer, lambda est, formula=formula: objective(
                        X, signs, est.coef_, est.intercept_, **formula))
                    for model, ours, theirs, peer, formula in pairs(X.shape[0], args.l1_C, args.threads, sparse_logistic)]
        elif len(labels) > 2 and np.all(labels == np.round(labels)) and len(labels) <= 100:
            raise SystemExit(f"{name}: {len(labels)} classes; this benchmark fits two, or a real y")
        else:
            fits = [(model, ours, theirs, peer, lambda est, formula=formula: regression_objective(
                        X, y, est.coef_, est.intercept_, **formula))
                    for model, ours, theirs, peer, formula in regression_pairs(X.shape[0], args.threads)]
        for model, ours, theirs, peer, f in fits:
            t_ours, est_ours, ours_warned = timed_fit(ours, X, y, args.repeat)
            t_peer, est_peer, peer_warned = timed_fit(theirs, X, y, args.repeat)
            f_ours, f_peer = f(est_ours), f(est_peer)
            result = est_ours.result_
            print(f"  {model}: optc {t_ours:.3f} s F {f_ours:.10g} ({result.status}, {result.solver}, "
                  f"{result.epochs} epochs); {peer} {t_peer:.3f} s F {f_peer:.10g}", flush=True)
            rows.append((name, model, peer, t_ours, t_peer, result.relative_gap, abs(f_ours - f_peer) / f_peer,
                         ours_warned, peer_warned))

    print("\n| data | model | peer | optc s | peer s | peer/optc | optc certified rel. gap "
          "| \\|F_optc − F_peer\\|/F_peer | ConvergenceWarnings optc / peer |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for name, model, peer, t_ours, t_peer, gap, diff, ours_warned, warned in rows:
        gap_cell = "none" if gap is None else f"{gap:.1e}"
        print(f"| {name} | {model} | {peer} | {t_ours:.3f} | {t_peer:.3f} | {t_peer / t_ours:.2f} | {gap_cell} "
              f"| {diff:.1e} | {ours_warned}/{args.repeat} / {warned}/{args.repeat} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
