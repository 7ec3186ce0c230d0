#!/usr/bin/env python3
"""The regression losses with a constant after the margin (Huber's, the pinball loss, the
ε-insensitive loss and its square) and Poisson's: optc's OptcRegressor against the peers that
fit the same problem, at their defaults, in one process on the same matrix.

    pip install './python[sklearn]' skglm [liblinear-official]    # into the venv that runs this
    python benches/regression_losses.py /work/shared/data/housing_scale.xz \\
        [--rows 20000 --features 1000] [--poisson-rows 100000 --poisson-features 1000] [--repeat 3]

Data: housing (506 × 13, dense), a seeded sparse set with a planted sparse model and Student-t
noise of 2 degrees of freedom (heavy tails, for Huber and the pinball loss), and a seeded sparse
count set from a planted log-linear model (Poisson). Every row minimises the same F, with a free
intercept unless the peer penalises its own (LinearSVR, LIBLINEAR's -B):

  huber, ℓ1         OptcRegressor(loss="huber", delta, alpha)      skglm Huber(delta) + L1(alpha)
  quantile, ℓ1      OptcRegressor(loss="quantile", quantile, alpha) QuantileRegressor (HiGHS)
  eps_insensitive   OptcRegressor(..., l1_ratio=0, fit_intercept=False)  LinearSVR (dual CD),
    + ½‖w‖²                                                        LIBLINEAR -s 13
  squared_eps, ½‖w‖²                                               LinearSVR, LIBLINEAR -s 11
  the same, + ½b²   OptcRegressor(model text with λ·l2sq(b))       LinearSVR (its b), -B 1
  the same, free b  OptcRegressor(...) at its default b            (no peer fits a free b here)
  poisson, ½‖w‖²    OptcRegressor(loss="poisson", l1_ratio=0)      PoissonRegressor (lbfgs)
  poisson, ℓ1       OptcRegressor(loss="poisson", alpha)           skglm Poisson + L1 (ProxNewton)

HuberRegressor is not a row: its epsilon scales a σ fitted jointly with w, another problem.
Seconds are the median of --repeat fits from scratch (`fit` timed). F is computed here from
every answer's coef_ and intercept_; "ΔF" is (F − F_best)/|F_best|, F_best the least F of the
row: no estimator grades itself. optc stops at its default certified relative gap of 1e-4.
"""

import argparse
import lzma
import statistics
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import PoissonRegressor, QuantileRegressor
from sklearn.svm import LinearSVR

from optc.sklearn import OptcRegressor

try:
    from skglm import GeneralizedLinearEstimator
    from skglm.datafits import Huber, Poisson
    from skglm.penalties import L1
    from skglm.solvers import AndersonCD, ProxNewton
except ImportError:  # optional peer
    GeneralizedLinearEstimator = None

try:
    from liblinear import liblinearutil
except ImportError:  # optional peer
    liblinearutil = None


def timed(fit, repeat):
    times, model = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        model = fit()
        times.append(time.perf_counter() - t)
    return statistics.median(times), model


def planted(rows, features, rng, noise):
    X = sp.random(rows, features, density=min(1.0, 20 / features), random_state=rng, format="csr")
    X.data = rng.normal(size=X.data.shape)
    w = np.where(rng.random(features) < 0.05, rng.normal(0, 2, features), 0.0)
    return X, X @ w + 1.0 + noise(rows), w


def loss_values(kind, r, c):
    """ℓ per row at residual r = a − y (Poisson: at a, with y passed as c)."""
    if kind == "huber":
        return np.where(np.abs(r) <= c, 0.5 * r * r, c * (np.abs(r) - 0.5 * c))
    if kind == "quantile":
        return np.maximum(-c * r, (1 - c) * r)
    if kind == "eps":
        return np.maximum(0.0, np.abs(r) - c)
    if kind == "sqeps":
        return np.maximum(0.0, np.abs(r) - c) ** 2
    raise ValueError(kind)


def objective(kind, X, y, coef, b, c, alpha, penalty):
    a = X @ np.ravel(coef) + b
    data = np.mean(np.exp(a) - y * a) if kind == "poisson" else np.mean(loss_values(kind, a - y, c))
    w = np.ravel(coef)
    if penalty == "l1":
        return data + alpha * np.abs(w).sum()
    # "l2, b²": b penalised as a weight (LinearSVR's and LIBLINEAR's -B 1 with a bias of 1).
    return data + 0.5 * alpha * (w @ w + (b * b if penalty == "l2, b²" else 0.0))


def liblinear_fit(s, X, y, C, eps, bias=False):
    model = liblinearutil.train(list(y), X, f"-s {s} -c {C} -p {eps} -q" + (" -B 1" if bias else ""))
    w, b = model.get_decfun()
    return np.array(w), float(b) if bias else 0.0


def penalised_b(loss, eps, lam):
    """optc's model text for LinearSVR's problem with its intercept: b penalised as w is."""
    return ("data x: sparse, y: real\nvar w: vec[dim(x)]\nvar b: scalar\n"
            f"minimize E[{loss}(y, <x, w> + b, {eps!r})] + {lam!r}·l2sq(w) + {lam!r}·l2sq(b)\n")


def rows_for(name, X, y, args):
    """(kind, constant, penalty, alpha, intercept, {peer: fit → (coef, b)}) per benchmark row."""
    n = X.shape[0]
    Xd = X.toarray() if X.shape[1] <= 200 else X
    out = []
    delta, tau, eps = 1.35, 0.5, 0.1
    alpha = args.alpha
    peers = {"optc": lambda: OptcRegressor(loss="huber", delta=delta, alpha=alpha).fit(X, y)}
    if GeneralizedLinearEstimator is not None:
        peers["skglm"] = lambda: GeneralizedLinearEstimator(Huber(delta), L1(alpha), AndersonCD(fit_intercept=True)).fit(X, y)
    out.append(("huber", delta, "l1", alpha, peers))
    peers = {"optc": lambda: OptcRegressor(loss="quantile", quantile=tau, alpha=alpha).fit(X, y)}
    if n <= args.highs_rows:
        peers["QuantileRegressor"] = lambda: QuantileRegressor(quantile=tau, alpha=alpha).fit(Xd, y)
    out.append(("quantile", tau, "l1", alpha, peers))
    C = 1.0
    for kind, loss, s in [("eps", "epsilon_insensitive", 13), ("sqeps", "squared_epsilon_insensitive", 11)]:
        peers = {
            "optc": lambda loss=loss: OptcRegressor(loss=loss, epsilon=eps, l1_ratio=0.0, alpha=1 / (C * n),
                                                    fit_intercept=False).fit(X, y),
            "LinearSVR": lambda loss=loss: LinearSVR(loss=loss, epsilon=eps, C=C, fit_intercept=False,
                                                     dual=True).fit(X, y),
        }
        if liblinearutil is not None:
            peers[f"liblinear -s {s}"] = lambda s=s: liblinear_fit(s, X, y, C, eps)
        out.append((kind, eps, "l2", 1 / (C * n), peers))
        # With an intercept: LinearSVR and LIBLINEAR penalise it as a weight (intercept_scaling
        # 1, -B 1), which optc writes as λ·l2sq(b); optc's default b is free, a row of its own.
        text = penalised_b(loss.replace("epsilon", "eps"), eps, 1 / (C * n))
        peers = {
            "optc": lambda text=text: OptcRegressor(text).fit(X, y),
            "LinearSVR": lambda loss=loss: LinearSVR(loss=loss, epsilon=eps, C=C, dual=True).fit(X, y),
        }
        if liblinearutil is not None:
            peers[f"liblinear -s {s} -B 1"] = lambda s=s: liblinear_fit(s, X, y, C, eps, bias=True)
        out.append((kind, eps, "l2, b²", 1 / (C * n), peers))
        peers = {
            "optc": lambda loss=loss: OptcRegressor(loss=loss, epsilon=eps, l1_ratio=0.0, alpha=1 / (C * n)).fit(X, y)
        }
        out.append((kind, eps, "l2, free b", 1 / (C * n), peers))
    return out


def poisson_rows(X, y, args):
    alpha = args.alpha
    out = []
    peers = {
        "optc": lambda: OptcRegressor(loss="poisson", l1_ratio=0.0, alpha=alpha).fit(X, y),
        "PoissonRegressor": lambda: PoissonRegressor(alpha=alpha).fit(X, y),
    }
    out.append(("poisson", None, "l2", alpha, peers))
    peers = {"optc": lambda: OptcRegressor(loss="poisson", alpha=alpha).fit(X, y)}
    if GeneralizedLinearEstimator is not None:
        peers["skglm"] = lambda: GeneralizedLinearEstimator(Poisson(), L1(alpha), ProxNewton(fit_intercept=True)).fit(X, y)
    out.append(("poisson", None, "l1", alpha, peers))
    return out


def coef_of(model):
    """(coef, intercept) of a fitted estimator, or the pair a LIBLINEAR fit returns."""
    if isinstance(model, tuple):
        return model
    b = np.ravel(getattr(model, "intercept_", 0.0))
    return np.ravel(model.coef_), float(b[0]) if b.size else 0.0


def run(name, X, y, rows, repeat):
    # LinearSVR takes 32-bit indices only (load_svmlight_file gives 64-bit ones).
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    for kind, c, penalty, alpha, peers in rows:
        results = {}
        for peer, fit in peers.items():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t, model = timed(fit, repeat)
                coef, b = coef_of(model)
                results[peer] = (t, objective(kind, X, y, coef, b, c, alpha, penalty))
            except Exception as e:  # a peer that fails is shown, not fatal
                results[peer] = (float("nan"), float("nan"))
                print(f"  {peer} failed: {type(e).__name__}: {str(e)[:120]}")
        best = min(f for _, f in results.values() if np.isfinite(f))
        t_optc = results["optc"][0]
        peer_times = [t for p, (t, _) in results.items() if p != "optc" and np.isfinite(t)]
        for peer, (t, f) in results.items():
            vs = "" if peer != "optc" or not peer_times else f"{t_optc / min(peer_times):.2f}"
            label = f"{kind}{'' if c is None else f' ({c})'}, {penalty}"
            print(f"| {name} | {label} | {peer} | {t:.3f} | {vs} | {(f - best) / abs(best):.1e} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("housing")
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--features", type=int, default=1000)
    ap.add_argument("--poisson-rows", type=int, default=100000)
    ap.add_argument("--poisson-features", type=int, default=1000)
    ap.add_argument("--alpha", type=float, default=1e-3)
    ap.add_argument("--highs-rows", type=int, default=5000, help="QuantileRegressor only up to this many rows")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| data | loss, penalty | estimator | seconds | optc / fastest peer | ΔF |")
    print("|---|---|---|---:|---:|---:|")
    with lzma.open(args.housing) as fh:
        X, y = load_svmlight_file(fh)
    run("housing", X.tocsr(), y, rows_for("housing", X.tocsr(), y, args), args.repeat)
    rng = np.random.default_rng(20261207)
    X, y, _ = planted(args.rows, args.features, rng, lambda m: rng.standard_t(2, m))
    run(f"t₂ {args.rows}×{args.features}", X, y, rows_for("t2", X, y, args), args.repeat)
    X, signal, _ = planted(args.poisson_rows, args.poisson_features, rng, lambda m: np.zeros(m))
    # Rates e^(0.25·⟨x, w⟩ + 0.5): counts of a few units, as a count model's usually are.
    y = rng.poisson(np.exp(np.clip(0.25 * (signal - 1.0) + 0.5, -20, 5))).astype(float)
    run(f"counts {args.poisson_rows}×{args.poisson_features}", X, y, poisson_rows(X, y, args), args.repeat)


if __name__ == "__main__":
    main()
