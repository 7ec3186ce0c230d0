"""optc from Python against optc's CLI, scikit-learn and skglm, in one process, on one F.

    pip install ./python skglm scikit-learn            # into the venv that runs this
    cargo build --release
    python benches/python_fit.py [--data ../shared/data/debian-desc.binary.train.xz] [--lam 9.56e-6]

For each λ of ℓ1-logistic (no intercept: F = mean log(1 + exp(−y·xᵀw)) + λ‖w‖₁, LIBLINEAR's -s 6
with C = 1/(λ·n)):
- `Model.fit` on a scipy CSR matrix (float64, the int64 indices scikit-learn's reader gives,
  or int32 ones with `--int32`: either is read in place) against `optc run
  --json` on the same file, both at `--tol 1e-4`: the solve seconds each reports (the same
  solver: their ratio is the cost of arrays instead of a file, within the machine's noise), and
  the whole: the fit's wall seconds as Python sees them against the CLI's wall seconds less
  its parse (the bind, the compile and the report are in both); medians, and their ratio;
- the time to a true relative suboptimality of 1e-4 (F* from optc at tol 1e-9, certified: F*
  lies in [F − gap, F]) of optc's fit, scikit-learn's `LogisticRegression(penalty="l1")` with
  `solver="liblinear"` and `"saga"`, and skglm's `SparseLogisticRegression`, each the least
  wall time over a ladder of its tolerance that reached it (F recomputed here from each
  answer's weights).
"""

import argparse
import json
import lzma
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file

import optc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = """data x: sparse, y: labels
var w: vec[dim(x)]
param λ = 1
minimize E[logistic(y, <x, w>)] + λ·l1(w)
"""


def objective(X, y, w, lam):
    return float(np.mean(np.logaddexp(0.0, -y * (X @ w))) + lam * np.abs(w).sum())


def timed(fit):
    start = time.perf_counter()
    out = fit()
    return time.perf_counter() - start, out


def median(values):
    return float(np.median(values))


def ladder(name, fit, X, y, lam, f_star, tols, cap):
    """The least wall time over `tols` (loosest first) whose answer is within 1e-4 of F*."""
    best, reached = None, None
    for tol in tols:
        seconds, w = timed(lambda: fit(tol))
        rel = (objective(X, y, w, lam) - f_star) / f_star
        print(f"  {name} tol {tol:g}: {seconds:.3f} s, true {rel:.1e}", flush=True)
        if rel <= 1e-4:
            best, reached = seconds, rel
            break
        if seconds > cap:
            break
    return best, reached


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "debian-desc.binary.train.xz"))
    p.add_argument("--lam", type=float, action="append")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--cap", type=float, default=120.0, help="a peer's ladder stops past this many seconds")
    p.add_argument("--optc", default=os.path.join(ROOT, "target", "release", "optc"))
    p.add_argument("--int32", action="store_true", help="narrow the matrix's indices to int32 first")
    p.add_argument("--no-peers", action="store_true", help="time optc's fit against optc run only")
    args = p.parse_args()
    lams = args.lam or [9.91e-5, 9.56e-6]

    with lzma.open(args.data) if args.data.endswith(".xz") else open(args.data, "rb") as f:
        X, y = load_svmlight_file(f)
    X = X.tocsr()
    if args.int32:
        X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    labels = np.unique(y)
    y = np.where(y == labels[-1], 1.0, -1.0)
    n = X.shape[0]
    print(f"{os.path.basename(args.data)}: {n} rows, {X.shape[1]} features, {X.nnz} non-zeros, "
          f"{X.indices.dtype} indices")
    rows = []
    for lam in lams:
        print(f"\nλ = {lam:g} (C = {1 / (lam * n):.4g})", flush=True)
        model_file = os.path.join(tempfile.gettempdir(), "python_fit.opt")
        with open(model_file, "w") as f:
            f.write(MODEL.replace("param λ = 1", f"param λ = {lam!r}"))
        reference = optc.Model(MODEL, lam=lam).fit(X, y, tol=1e-9)
        f_star = reference.objective - reference.gap
        print(f"  F* in [{f_star:.12g}, {reference.objective:.12g}] (optc, tol 1e-9, certified)")

        fit_seconds, fit_walls, cli_seconds, cli_walls = [], [], [], []
        for _ in range(args.repeat):
            wall, r = timed(lambda: optc.Model(MODEL, lam=lam).fit(X, y, tol=1e-4))
            fit_seconds.append(r.seconds)
            fit_walls.append(wall)
            wall, out = timed(lambda: subprocess.run(
                [args.optc, "run", model_file, args.data, "--tol", "1e-4", "--json"],
                capture_output=True, text=True, check=True))
            report = json.loads(out.stdout)
            cli_seconds.append(report["seconds"])
            cli_walls.append(wall - report["parse_seconds"])
        fit_s, wall_s, cli_s, cli_w = median(fit_seconds), median(fit_walls), median(cli_seconds), median(cli_walls)
        print(f"  optc run: {cli_s:.3f} s solve, {cli_w:.3f} s wall less parse; Model.fit: {fit_s:.3f} s solve, "
              f"{wall_s:.3f} s wall; ratios {fit_s / cli_s:.3f} (solve), {wall_s / cli_w:.3f} (whole)")

        C = 1.0 / (lam * n)
        peers = {}
        if args.no_peers:
            rows.append((lam, C, cli_s, fit_s, cli_w, wall_s, peers))
            continue
        peers["optc Model.fit"] = ladder(
            "optc", lambda tol: optc.Model(MODEL, lam=lam).fit(X, y, tol=tol).coef_, X, y, lam, f_star,
            [1e-2, 1e-3, 1e-4], args.cap)
        from sklearn.linear_model import LogisticRegression

        def sklearn_fit(solver):
            def fit(tol):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = LogisticRegression(penalty="l1", solver=solver, C=C, fit_intercept=False, tol=tol,
                                             max_iter=100_000 if solver == "liblinear" else 1000)
                    return est.fit(X, y).coef_.ravel()
            return fit

        peers["scikit-learn liblinear"] = ladder("liblinear", sklearn_fit("liblinear"), X, y, lam, f_star,
                                                 [1e-2, 1e-3, 1e-4, 1e-5, 1e-6], args.cap)
        peers["scikit-learn saga"] = ladder("saga", sklearn_fit("saga"), X, y, lam, f_star,
                                            [1e-2, 1e-3, 1e-4, 1e-5], args.cap)
        try:
            from skglm import SparseLogisticRegression

            def skglm_fit(tol):
                est = SparseLogisticRegression(alpha=lam, fit_intercept=False, tol=tol, max_iter=1000)
                return est.fit(X, y).coef_.ravel()

            peers["skglm"] = ladder("skglm", skglm_fit, X, y, lam, f_star, [1e-2, 1e-4, 1e-6, 1e-8], args.cap)
        except ImportError:
            print("  skglm is not installed: skipped")
        rows.append((lam, C, cli_s, fit_s, cli_w, wall_s, peers))

    head = ["λ", "C", "`optc run` solve s", "`Model.fit` solve s", "ratio", "`optc run` wall less parse s",
            "`Model.fit` wall s", "ratio"] + [f"{name} to 1e-4 s" for name in rows[0][6]]
    print("\n| " + " | ".join(head) + " |")
    print("|" + "---:|" * len(head))
    for lam, C, cli_s, fit_s, cli_w, wall_s, peers in rows:
        cells = [f"{lam:g}", f"{C:.4g}", f"{cli_s:.3f}", f"{fit_s:.3f}", f"{fit_s / cli_s:.3f}", f"{cli_w:.3f}",
                 f"{wall_s:.3f}", f"{wall_s / cli_w:.3f}"]
        cells += ["—" if t is None else f"{t:.3f}" for t, _ in peers.values()]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
