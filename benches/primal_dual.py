#!/usr/bin/env python3
"""The 1-norm SVM (hinge + ℓ1 + a free intercept) by optc's `pdhg` against LP solvers on the
same problem:

    F(w, b) = (1/m)·Σᵢ max(0, 1 − yᵢ(⟨xᵢ, w⟩ + b)) + λ·‖w‖₁,   λ = k/m for each --k.

    pip install scipy scikit-learn [ortools] [cvxpy clarabel]      # into the venv that runs this
    python benches/primal_dual.py /work/shared/data/a9a.xz /work/shared/data/w8a.xz \\
        [--k 1 10] [--optc target/release/optc] [--cap 600] [--peers highs pdlp clarabel]

- optc: `optc run` on the file, its default tol (a certified relative gap of 1e-4); seconds
  are its solve time (`seconds` of --json) and the wall time of the whole command.
- HiGHS: scipy's `linprog(method="highs")` on the LP in w⁺, w⁻ ≥ 0, b free and slacks ξ ≥ 0,
  min (1/m)·Σξ + λ·Σ(w⁺ + w⁻) s.t. ξᵢ ≥ 1 − yᵢ(xᵢ(w⁺ − w⁻) + b): exact (its default tolerances).
- PDLP (OR-Tools' pywraplp, one thread) on the same LP, to its default relative KKT tolerance
  (1e-4 at the versions tried): not a certified gap on F.
- CVXPY + Clarabel on the problem as written (where installed).

Each peer's seconds time its solve alone, the LP built beforehand; each runs in a forked child
killed after --cap seconds. F is computed here from every answer's w and b, and ΔF is
(F − F_best)/F_best against the least F of the row: no solver grades itself.
"""

import argparse
import json
import lzma
import os
import pickle
import signal
import subprocess
import tempfile
import time

import numpy as np
from scipy import sparse
from scipy.optimize import linprog
from sklearn.datasets import load_svmlight_file

MODEL = """data x: sparse, y: labels
var w: vec[dim(x)]
var b: scalar
param λ = 1
minimize E[hinge(y, <x, w> + b)] + λ·l1(w)
"""


def load(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rb") as f:
        X, y = load_svmlight_file(f)
    y = np.where(y > 0, 1.0, -1.0)
    return X.tocsr(), y, path.rsplit("/", 1)[-1].split(".")[0]


def objective(X, y, w, b, lam):
    return float(np.mean(np.maximum(0.0, 1.0 - y * (X @ w + b))) + lam * np.abs(w).sum())


def capped(solve, cap):
    """solve() in a forked child killed after `cap` seconds: None when it does not end."""
    with tempfile.NamedTemporaryFile(suffix=".pickle") as out:
        pid = os.fork()
        if pid == 0:
            try:
                with open(out.name, "wb") as f:
                    pickle.dump(solve(), f)
            finally:
                os._exit(0)
        deadline = time.monotonic() + cap
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            time.sleep(0.05)
        try:
            with open(out.name, "rb") as f:
                return pickle.load(f)
        except EOFError:
            return None


def lp(X, y, lam):
    """c, A_ub, b_ub and bounds of the LP over [w⁺, w⁻, b, ξ]."""
    m, d = X.shape
    yx = sparse.diags(y) @ X
    a_ub = sparse.hstack([-yx, yx, sparse.csr_matrix(-y.reshape(-1, 1)), -sparse.identity(m)], format="csr")
    c = np.concatenate([np.full(2 * d, lam), [0.0], np.full(m, 1.0 / m)])
    bounds = [(0, None)] * (2 * d) + [(None, None)] + [(0, None)] * m
    return c, a_ub, -np.ones(m), bounds


def highs(X, y, lam):
    d = X.shape[1]
    c, a_ub, b_ub, bounds = lp(X, y, lam)
    start = time.perf_counter()
    r = linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
    seconds = time.perf_counter() - start
    return seconds, r.x[:d] - r.x[d : 2 * d], r.x[2 * d], r.status


def pdlp(X, y, lam):
    from ortools.linear_solver import pywraplp

    m, d = X.shape
    s = pywraplp.Solver.CreateSolver("PDLP")
    s.SetNumThreads(1)
    inf = s.infinity()
    wp = [s.NumVar(0, inf, "") for _ in range(d)]
    wn = [s.NumVar(0, inf, "") for _ in range(d)]
    b = s.NumVar(-inf, inf, "")
    xi = [s.NumVar(0, inf, "") for _ in range(m)]
    for i in range(m):
        row = s.Constraint(1.0, inf)
        lo, hi = X.indptr[i], X.indptr[i + 1]
        for j, v in zip(X.indices[lo:hi], X.data[lo:hi]):
            row.SetCoefficient(wp[j], y[i] * v)
            row.SetCoefficient(wn[j], -y[i] * v)
        row.SetCoefficient(b, y[i])
        row.SetCoefficient(xi[i], 1.0)
    goal = s.Objective()
    for j in range(d):
        goal.SetCoefficient(wp[j], lam)
        goal.SetCoefficient(wn[j], lam)
    for i in range(m):
        goal.SetCoefficient(xi[i], 1.0 / m)
    goal.SetMinimization()
    start = time.perf_counter()
    status = s.Solve()
    seconds = time.perf_counter() - start
    w = np.array([wp[j].solution_value() - wn[j].solution_value() for j in range(d)])
    return seconds, w, b.solution_value(), status


def clarabel(X, y, lam):
    import cvxpy as cp

    m, d = X.shape
    w, b = cp.Variable(d), cp.Variable()
    problem = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b))) / m + lam * cp.norm1(w)))
    start = time.perf_counter()
    problem.solve(solver=cp.CLARABEL)
    seconds = time.perf_counter() - start
    return seconds, np.array(w.value), float(b.value), problem.status


def optc(binary, path, d, lam, model):
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "w.txt")
        start = time.perf_counter()
        out = subprocess.run(
            [binary, "run", model, path, "--set", f"λ={lam!r}", "--json", "--save", saved, "-q"],
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - start
        report = json.loads(out.stdout)
        with open(saved) as f:
            lines = f.read().split()
        at = lines.index("w") + 1
        labels = lines[lines.index("label") + 1 : lines.index("label") + 3]
        values = np.array([float(v) for v in lines[at : at + d + 1]])
        sign = 1.0 if float(labels[0]) > 0 else -1.0
        return report, wall, sign * values[:d], sign * values[d]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--k", type=float, nargs="+", default=[1.0, 10.0], help="λ = k/m")
    p.add_argument("--optc", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "optc"))
    p.add_argument("--cap", type=float, default=600.0, help="seconds before a peer is stopped")
    p.add_argument("--peers", nargs="*", default=["highs", "pdlp", "clarabel"])
    args = p.parse_args()
    peers = {"highs": highs, "pdlp": pdlp, "clarabel": clarabel}
    with tempfile.NamedTemporaryFile("w", suffix=".opt", delete=False) as f:
        f.write(MODEL)
        model = f.name
    print("| data | λ | solver | seconds | wall | ΔF | optc gap | status |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for path in args.files:
        X, y, name = load(path)
        m, d = X.shape
        for k in args.k:
            lam = k / m
            report, wall, w, b = optc(args.optc, path, d, lam, model)
            rows = [("optc pdhg", report["seconds"], wall, objective(X, y, w, b, lam), report["status"])]
            for peer in args.peers:
                r = capped(lambda: peers[peer](X, y, lam), args.cap)
                if r is None:
                    rows.append((peer, None, None, None, f"over {args.cap:g} s"))
                else:
                    seconds, pw, pb, status = r
                    rows.append((peer, seconds, None, objective(X, y, pw, pb, lam), str(status)))
            best = min(f for _, _, _, f, _ in rows if f is not None)
            for solver, seconds, wall, f, status in rows:
                cells = [
                    name,
                    f"{k:g}/m",
                    solver,
                    "" if seconds is None else f"{seconds:.2f}",
                    "" if wall is None else f"{wall:.2f}",
                    "" if f is None else f"{(f - best) / best:.1e}",
                    f"{report['relative_gap']:.1e}" if solver.startswith("optc") else "",
                    status,
                ]
                print("| " + " | ".join(cells) + " |", flush=True)
    os.unlink(model)


if __name__ == "__main__":
    main()
