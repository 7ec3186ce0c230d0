#!/usr/bin/env python3
"""ℓ2 models with a free intercept: optc with b against optc without b, and against scikit-learn
(and LIBLINEAR ≥ 2.40's `-B 1 -R` where PyPI's liblinear-official is installed) at their
defaults, fitted in one process on the same matrix.

    pip install './python[sklearn]' [liblinear-official]      # into the venv that runs this
    python benches/intercept_l2.py /work/shared/data/a9a.xz /work/shared/data/w8a.xz \\
        [--C 1 0.01] [--repeat 3]

Every row minimises scikit-learn's P(w, b) = C·Σᵢ ℓ(yᵢ, ⟨xᵢ, w⟩ + b) + ½‖w‖², b unpenalised
(optc's E[ℓ] + λ·l2sq(w) with λ = 1/(C·m), the same minimiser), at optc's default tol (a
certified relative gap of 1e-4) and each peer's default tol:

  logistic       OptcClassifier(C)                     LogisticRegression(C) (lbfgs), and
                                                       solver="newton-cholesky" where d ≤ 2000;
                                                       liblinear-official -s 0 -B 1 -R
  squared_hinge  OptcClassifier(loss="squared_hinge")  liblinear-official -s 2 -B 1 -R
  hinge          OptcClassifier(loss="hinge")          LinearSVC(loss="hinge"), whose b is
                                                       penalised (intercept_scaling = 1): not the
                                                       same problem, its P is shown with ½b² added

Seconds are the median of --repeat fits from scratch (scipy's CSR given, `fit` timed: optc's
compile and solve, scikit-learn's validation and solve). "b cost" is optc's time with b over its
time without b (`fit_intercept=False`), the issue's target 1 (≤ 1.3× smooth, ≤ 2× hinge); "vs"
is optc's time over the fastest peer of the row that solves the same problem. P is computed here
from every answer's coef_ and intercept_, and "ΔP" is (P − P_best)/P_best with P_best the least P
of the row: no estimator grades itself.
"""

import argparse
import lzma
import statistics
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from optc.sklearn import OptcClassifier

try:
    from liblinear import liblinearutil
except ImportError:  # optional peer
    liblinearutil = None

LOSSES = {
    "logistic": lambda z: np.logaddexp(0.0, -z),
    "squared_hinge": lambda z: np.maximum(0.0, 1.0 - z) ** 2,
    "hinge": lambda z: np.maximum(0.0, 1.0 - z),
}
LIBLINEAR_S = {"logistic": 0, "squared_hinge": 2}


def primal(loss, X, y, coef, intercept, C):
    w = np.ravel(coef)
    return C * LOSSES[loss](y * (X @ w + intercept)).sum() + 0.5 * w @ w


def timed(fit, repeat):
    seconds, model = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = fit()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), model, len(caught)


def liblinear_fit(X, y, s, C):
    """(coef, intercept) of liblinear-official's -s S -B 1 -R: the bias unpenalised."""
    model = liblinearutil.train(y, X, f"-s {s} -c {C} -B 1 -R -q")
    w = np.array([model.w[j] for j in range(X.shape[1] + 1)])
    sign = 1.0 if model.label[0] == 1 else -1.0
    return sign * w[:-1], sign * w[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--C", type=float, nargs="+", default=[1.0, 0.01])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--losses", nargs="+", default=list(LOSSES))
    args = ap.parse_args()
    print("| data | C | loss | optc s | b cost | peer | peer s | vs | ΔP optc | ΔP peer | optc gap |")
    print("|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for path in args.files:
        opener = lzma.open if path.endswith(".xz") else open
        with opener(path, "rb") as f:
            X, y = load_svmlight_file(f)
        X = X.tocsr()
        # scikit-learn's newton-cholesky takes int32 indices only.
        X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
        y = np.where(y == np.max(y), 1.0, -1.0)
        name = path.rsplit("/", 1)[-1].split(".")[0]
        for C in args.C:
            for loss in args.losses:
                row = {}
                t, ours, _ = timed(lambda: OptcClassifier(loss=loss, C=C).fit(X, y), args.repeat)
                t_nob, _, _ = timed(lambda: OptcClassifier(loss=loss, C=C, fit_intercept=False).fit(X, y), args.repeat)
                row["optc"] = (t, primal(loss, X, y, ours.coef_, ours.intercept_[0], C))
                peers = {}
                if loss == "logistic":
                    fits = {"lbfgs": lambda: LogisticRegression(C=C).fit(X, y)}
                    if X.shape[1] <= 2000:
                        fits["newton-cholesky"] = lambda: LogisticRegression(C=C, solver="newton-cholesky").fit(X, y)
                    for label, fit in fits.items():
                        s, m, warned = timed(fit, args.repeat)
                        peers[label + ("*" if warned else "")] = (s, primal(loss, X, y, m.coef_, m.intercept_[0], C))
                if loss in LIBLINEAR_S and liblinearutil is not None:
                    s, (w, b) = timed(lambda: liblinear_fit(X, y, LIBLINEAR_S[loss], C), args.repeat)[:2]
                    peers[f"liblinear -s {LIBLINEAR_S[loss]} -B 1 -R"] = (s, primal(loss, X, y, w, b, C))
                best = min([row["optc"][1]] + [p for _, p in peers.values()])
                if loss == "hinge":
                    s, m, warned = timed(lambda: LinearSVC(loss="hinge", C=C).fit(X, y), args.repeat)
                    b = m.intercept_[0]
                    # Its own objective, b penalised: a different problem, shown for its time.
                    peers["LinearSVC (b penalised)" + ("*" if warned else "")] = (
                        s, primal(loss, X, y, m.coef_, b, C) + 0.5 * b * b)
                gap = ours.result_.relative_gap
                rel = lambda p: (p - best) / best
                if not peers:
                    peers = {"—": (float("nan"), float("nan"))}
                fastest = min(peers, key=lambda k: peers[k][0])
                for label, (s, p) in peers.items():
                    print(f"| {name} | {C:g} | {loss} | {t:.3f} | {t / t_nob:.2f} | {label} | {s:.3f} | "
                          f"{t / s:.2f}{' (fastest)' if label == fastest and len(peers) > 1 else ''} | "
                          f"{rel(row['optc'][1]):.1e} | {rel(p):.1e} | {gap:.1e} |", flush=True)


if __name__ == "__main__":
    main()
