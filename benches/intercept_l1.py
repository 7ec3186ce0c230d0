#!/usr/bin/env python3
"""ℓ1 models with a free intercept: optc with b against optc without b, and against skglm and
LIBLINEAR ≥ 2.40's `-B 1 -R` (where PyPI's liblinear-official is installed) at their defaults,
fitted in one process on the same matrix.

    pip install './python[sklearn]' skglm [liblinear-official]     # into the venv that runs this
    python benches/intercept_l1.py /work/shared/data/a9a.xz /work/shared/data/w8a.xz \\
        [--C 1 10] [--repeat 3] [--lasso /work/shared/data/housing_scale.xz]

Every classification row minimises LIBLINEAR's P(w, b) = C·Σᵢ ℓ(yᵢ, ⟨xᵢ, w⟩ + b) + ‖w‖₁, b
unpenalised (optc's E[ℓ] + λ·l1(w) and skglm's mean loss + α‖w‖₁ with λ = α = 1/(C·m): the
same minimiser), at optc's default tol (a certified relative gap of 1e-4) and each peer's
default tol:

  logistic       OptcClassifier(C, l1_ratio=1)         skglm SparseLogisticRegression(alpha,
                                                       fit_intercept=True); liblinear-official
                                                       -s 6 -B 1 -R (newGLMNET, bias free)
  squared_hinge  OptcClassifier(loss="squared_hinge",  liblinear-official -s 5 -B 1 -R
                 C, l1_ratio=1)

LIBLINEAR also gets a row at the first -e of 1e-3 … 1e-8 whose P is within 1e-4 of optc's (the
accuracy optc certifies). A peer's fit runs in a forked child killed after CAP seconds.

The lasso rows (`--lasso FILE`, and a planted sparse model) minimise scikit-learn's
(1/(2m))·‖y − Xw − b‖² + α‖w‖₁ at α = --alpha·α_max: OptcRegressor(alpha) against
scikit-learn's Lasso and skglm's Lasso, both with fit_intercept=True.

Seconds are the median of --repeat fits from scratch (scipy's CSR given, `fit` timed). "b cost"
is optc's time with b over its time without b (`fit_intercept=False`), the issue's target 1
(≤ 1.3×); "vs" is optc's time over the peer's. P is computed here from every answer's coef_
and intercept_, and "ΔP" is (P − P_best)/P_best with P_best the least P of the row: no
estimator grades itself.
"""

import argparse
import lzma
import os
import pickle
import signal
import tempfile
import statistics
import time
import warnings

import numpy as np
from scipy import sparse
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import Lasso

from optc.sklearn import OptcClassifier, OptcRegressor

try:
    from liblinear import liblinearutil
except ImportError:  # optional peer
    liblinearutil = None
try:
    from skglm import Lasso as SkglmLasso
    from skglm import SparseLogisticRegression
except ImportError:  # optional peer
    SkglmLasso = SparseLogisticRegression = None

LOSSES = {
    "logistic": lambda z: np.logaddexp(0.0, -z),
    "squared_hinge": lambda z: np.maximum(0.0, 1.0 - z) ** 2,
}
LIBLINEAR_S = {"logistic": 6, "squared_hinge": 5}
# LIBLINEAR's stopping tolerances, tried in turn for its row at optc's accuracy.
LADDER = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8]


def primal(loss, X, y, coef, intercept, C):
    w = np.ravel(coef)
    return C * LOSSES[loss](y * (X @ w + intercept)).sum() + np.abs(w).sum()


def lasso_primal(X, y, coef, intercept, alpha):
    w = np.ravel(coef)
    r = y - X @ w - intercept
    return 0.5 * r @ r / X.shape[0] + alpha * np.abs(w).sum()


def timed(fit, repeat):
    seconds, model = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = fit()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), model, len(caught)


CAP = 60.0


def capped(fit, repeat):
    """`timed` in a forked child killed after CAP seconds a fit: None when a peer does not end."""
    with tempfile.NamedTemporaryFile(suffix=".pickle") as out:
        pid = os.fork()
        if pid == 0:
            try:
                with open(out.name, "wb") as f:
                    pickle.dump(timed(fit, repeat), f)
            finally:
                os._exit(0)
        deadline = time.monotonic() + CAP * repeat
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            time.sleep(0.01)
        with open(out.name, "rb") as f:
            return pickle.load(f)


def liblinear_fit(X, y, s, C, eps=None):
    """(coef, intercept) of liblinear-official's -s S -B 1 -R: the bias unpenalised."""
    model = liblinearutil.train(y, X, f"-s {s} -c {C} -B 1 -R -q" + (f" -e {eps:g}" if eps else ""))
    w = np.array([model.w[j] for j in range(X.shape[1] + 1)])
    sign = 1.0 if model.label[0] == 1 else -1.0
    return sign * w[:-1], sign * w[-1]


def load(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rb") as f:
        X, y = load_svmlight_file(f)
    X = X.tocsr()
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X, y, path.rsplit("/", 1)[-1].split(".")[0]


def row(name, setting, model, t, t_nob, peers, ours_p, gap):
    best = min([ours_p] + [p for _, p in peers.values()])
    # A peer stopped at the cap has no answer: "inf" seconds and P.
    rel = lambda p: (p - best) / best
    if not peers:
        peers = {"—": (float("nan"), float("nan"))}
    for label, (s, p) in peers.items():
        print(f"| {name} | {setting} | {model} | {t:.3f} | {t / t_nob:.2f} | {label} | {s:.3f} | {t / s:.2f} | "
              f"{rel(ours_p):.1e} | {rel(p):.1e} | {gap:.1e} |", flush=True)


def classification(path, Cs, losses, repeat):
    X, y, name = load(path)
    y = np.where(y == np.max(y), 1.0, -1.0)
    m = X.shape[0]
    for C in Cs:
        for loss in losses:
            fit = lambda b: OptcClassifier(loss=loss, C=C, l1_ratio=1.0, fit_intercept=b).fit(X, y)
            t, ours, _ = timed(lambda: fit(True), repeat)
            t_nob, _, _ = timed(lambda: fit(False), repeat)
            peers = {}
            if loss == "logistic" and SparseLogisticRegression is not None:
                got = capped(lambda: SparseLogisticRegression(alpha=1.0 / (C * m), fit_intercept=True).fit(X, y), repeat)
                if got is None:
                    peers[f"skglm (over {CAP:g} s)"] = (float("inf"), float("inf"))
                else:
                    s, est, warned = got
                    peers["skglm" + ("*" if warned else "")] = (
                        s, primal(loss, X, y, est.coef_, np.ravel(est.intercept_)[0], C))
            ours_p = primal(loss, X, y, ours.coef_, ours.intercept_[0], C)
            if liblinearutil is not None:
                s_ = LIBLINEAR_S[loss]
                s, (w, b) = timed(lambda: liblinear_fit(X, y, s_, C), repeat)[:2]
                peers[f"liblinear -s {s_} -B 1 -R"] = (s, primal(loss, X, y, w, b, C))
                # And at the first eps of a ladder whose P is within optc's certified 1e-4 of
                # optc's: the same accuracy.
                for eps in LADDER:
                    got = capped(lambda: liblinear_fit(X, y, s_, C, eps), repeat)
                    if got is None:
                        peers[f"liblinear -e {eps:g} (over {CAP:g} s)"] = (float("inf"), float("inf"))
                        break
                    s, (w, b), _ = got
                    p = primal(loss, X, y, w, b, C)
                    if p <= ours_p * (1 + 1e-4):
                        peers[f"liblinear -s {s_} -B 1 -R -e {eps:g}"] = (s, p)
                        break
            row(name, f"C = {C:g}", loss, t, t_nob, peers, ours_p, ours.result_.relative_gap)


def regression(name, X, y, fraction, repeat):
    m = X.shape[0]
    alpha_max = np.abs(X.T @ (y - y.mean())).max() / m
    alpha = fraction * alpha_max
    fit = lambda b: OptcRegressor(alpha=alpha, fit_intercept=b).fit(X, y)
    t, ours, _ = timed(lambda: fit(True), repeat)
    t_nob, _, _ = timed(lambda: fit(False), repeat)
    peers = {}
    s, est, warned = timed(lambda: Lasso(alpha=alpha).fit(X, y), repeat)
    peers["sklearn Lasso" + ("*" if warned else "")] = (s, lasso_primal(X, y, est.coef_, est.intercept_, alpha))
    if SkglmLasso is not None:
        s, est, warned = timed(lambda: SkglmLasso(alpha=alpha).fit(X, y), repeat)
        peers["skglm Lasso" + ("*" if warned else "")] = (s, lasso_primal(X, y, est.coef_, est.intercept_, alpha))
    ours_p = lasso_primal(X, y, ours.coef_, ours.intercept_, alpha)
    row(name, f"α = {fraction:g}·α_max", "lasso", t, t_nob, peers, ours_p, ours.result_.relative_gap)


def planted(m, d, k, seed):
    """A sparse design with a planted k-sparse model and an offset of 3."""
    rng = np.random.default_rng(seed)
    X = sparse.random(m, d, density=0.01, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    w = np.zeros(d)
    w[rng.choice(d, k, replace=False)] = rng.normal(0, 2, k)
    y = X @ w + 3.0 + 0.1 * rng.standard_normal(m)
    return X, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--C", type=float, nargs="+", default=[1.0, 10.0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--losses", nargs="+", default=list(LOSSES))
    ap.add_argument("--lasso", nargs="*", default=[], help="regression files for the lasso rows")
    ap.add_argument("--alpha", type=float, nargs="+", default=[0.1, 0.01], help="α as a fraction of α_max")
    ap.add_argument("--planted", action="store_true", help="add the planted sparse lasso rows")
    args = ap.parse_args()
    print("| data | setting | model | optc s | b cost | peer | peer s | vs | ΔP optc | ΔP peer | optc gap |")
    print("|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for path in args.files:
        classification(path, args.C, args.losses, args.repeat)
    sets = []
    for path in args.lasso:
        X, y, name = load(path)
        sets.append((name, X, y))
    if args.planted:
        for m, d in [(20000, 2000), (5000, 20000)]:
            X, y = planted(m, d, 20, 20261206)
            sets.append((f"planted {m}×{d}", X, y))
    for name, X, y in sets:
        for fraction in args.alpha:
            regression(name, X, y, fraction, args.repeat)


if __name__ == "__main__":
    main()
