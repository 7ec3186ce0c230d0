#!/usr/bin/env python3
"""optc against LIBLINEAR (and scikit-learn, for softmax) on ℓ2-regularised problems, on the same
data and the same F, always in optc's normalisation:

    F(w) = (1/m) Σᵢ ℓ(yᵢ, ⟨xᵢ, w⟩) + λ·½‖w‖²,   λ = 1/(C·m)                       (no intercept)

  hinge          ℓ = max(0, 1 − ya)          LIBLINEAR -s 3 (dual)
  squared hinge  ℓ = max(0, 1 − ya)²         LIBLINEAR -s 1 (dual), -s 2 (primal); in optc the
                                             built-in `squared_hinge` if `optc check` accepts it,
                                             else declared in the model (`loss sqhinge … smooth 2`)
  logistic       ℓ = log(1 + e^{−ya})        LIBLINEAR -s 0 (primal), -s 7 (dual)
  softmax        F(W) = (1/m) Σᵢ [log Σₖ e^{⟨xᵢ,Wₖ⟩} − ⟨xᵢ,W_{yᵢ}⟩] + λ·½‖W‖²_F, K columns, C = 1
                 scikit-learn LogisticRegression(C, fit_intercept=False), lbfgs / newton-cg / saga
                 (multinomial: the default for K > 2)

LIBLINEAR minimises P(w) = ½‖w‖² + C Σᵢ ℓ and scikit-learn ½‖W‖²_F + C Σᵢ ℓ: both are C·m·F, so the
two have the same minimiser as F and F = P/(C·m). Every contender's weights are read back (LIBLINEAR
model files, optc's --save file, which is in LIBLINEAR's format with K columns in `label` order for
multiclass models, scikit-learn's coef_) and F is computed here, in float64: no contender grades
itself. optc's own reported F is compared with ours, and a certified gap with the suboptimality its
model really has; disagreements are listed at the end under "optc problems seen".

Binary sets are run at C = 1 and C = 0.01, with every loss; the peer of a row is the fastest of
its matching LIBLINEAR solvers. The multiclass sets are run with softmax at C = 1.

Reference F*: the least F of
  binary   LIBLINEAR (Python binding, liblinear-official) at eps 1e-8 with each matching -s (primal
           and dual: two formulations, cross-checked); for the hinge, which has only the dual -s 3
           (capped at 1000 passes inside LIBLINEAR: on a9a at C = 1 that stops 1e-4 above F*),
           scikit-learn's LinearSVC(loss="hinge", tol 1e-8, max_iter 10⁶), the same dual solver
           without that cap, instead of the second formulation;
  softmax  scikit-learn lbfgs and newton-cg at tol 1e-10, max_iter 10⁵;
each run capped at --ref-cap, both F printed with their relative difference.

End to end (CLI, the same plain text file, wall time and peak RSS by GNU time, median of --repeat
runs; a run at --e2e-cap is killed, with its process group, and shown as "> cap"):
  liblinear-train  Debian's CLI, `liblinear-train -s S -c C -B -1 -q FILE MODEL`, default eps, for
                   every matching S; the fastest is the row's peer, and r = (F − F*)/F* of its model
                   is "LIBLINEAR's default accuracy".
  optc             `optc run MODEL FILE --json --quiet --save FILE` at `--tol r/(1+r)` (a certified
                   gap ≤ tol·F bounds (F − F*)/F* by r: that accuracy, proven) and at its default tol
                   (1e-4 certified), what a user gets without options. Models with no certificate
                   (a loss declared in the model) stop on the relative change of F instead: shown as
                   "uncertified".
  softmax          no CLI peer: the peer is the fastest scikit-learn solver at its defaults (tol
                   1e-4, max_iter 100), solver time in-process (forked, median of --repeat runs),
                   and r its model's accuracy; optc's solver time (as below) at
                   `--tol r/(1+r)` for that solver's r is the row's ratio. optc's CLI runs are
                   shown too, for wall time and RSS.

Snap ML (`pip install snapml`, installed into the venv on first use where it has a wheel), the
fastest CPU solver for these models we know: its dual coordinate descent (LogisticRegression with
dual=True, SupportVectorMachine with the hinge or squared hinge) on both cores, `regularizer`
1/C, a ladder over its tol. It is a second peer for time to accuracy, shown beside LIBLINEAR's
(the targets stay LIBLINEAR's); it has no CLI, so no end-to-end row.

Time to accuracy a (1e-1 … 1e-4; the summary shows 1e-2 and 1e-4): the least time of any run of a
contender's ladder (each step a separate run from scratch) whose F satisfies (F − F*)/F* ≤ a. A
ladder stops at the first run that reaches 1e-4, or at the first that hits --cap: "—" is "not
reached within the ladder and cap". Ladders: Snap ML over tol, LIBLINEAR over -e (binding, `train()` on a problem
built beforehand, in a forked child killed at the cap), scikit-learn over tol (max_iter large, same
forked child), optc over --tol with --time-limit. optc's time is "seconds" + "compile_seconds" +
the step calibrations' seconds of its JSON report: everything but reading the data (as peers.py).

Versions: Debian's liblinear-train (bookworm: 2.3.0) and the binding (liblinear-official, 2.5x) are
not the same LIBLINEAR; both are printed in the header. optc uses both cores (its default);
LIBLINEAR and scikit-learn's solvers here use one.

Targets (summary, ratio optc/peer; ✓ met, ✗ missed): end to end at LIBLINEAR's default accuracy
≤ 1.0 on every row and ≤ 0.5 on the text sets (debian-*); time to 1e-4 ≤ 0.5; softmax solver time
to the peer's accuracy ≤ 1.0.

Usage (the venv benches/.venv is shared with peers.py and made the same way; without
`liblinear-train`, as root, Debian's liblinear-tools is apt-get installed):

    cargo build --release                                 # optc (and optc-synth for synth-100k)
    python3 benches/peers_l2.py                           # everything, markdown on stdout
    python3 benches/peers_l2.py --quick                   # a9a, w8a, dna, satimage; caps ≤ 20/120/120 s
    python3 benches/peers_l2.py --only a9a --only dna     # a subset (substring of the set name)
    options: --cap SECONDS (per ladder run, default 60), --ref-cap SECONDS (per F* run, 600),
             --e2e-cap SECONDS (per CLI run, 300), --repeat N (end-to-end runs, 3),
             --skip X (a loss: hinge, squared_hinge, logistic, softmax; a peer solver: s0 … s7,
             lbfgs, newton-cg, saga, snapml; optc; or a part: ladders, e2e), --optc PATH, --synth PATH,
             --data-dir DIR (default ../shared/data), --tmp DIR
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402  (benches/peers.py: the venv, binaries, data files, forked runs)

ROOT = peers.ROOT

ACCURACIES = [1e-1, 1e-2, 1e-3, 1e-4]
OPTC_LADDER = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6]
# LIBLINEAR's eps means different things: dual solvers stop on the maximal violation (default
# 0.1), primal ones on a relative gradient norm (default 0.01).
LIBLINEAR_LADDER = {"dual": [1.0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6],
                    "primal": [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7]}
SKLEARN_LADDER = {"lbfgs": [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8],
                  "newton-cg": [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8],
                  "saga": [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6]}
SKLEARN_SOLVERS = ["lbfgs", "newton-cg", "saga"]
# Snap ML's ladder over its tol (the relative change of the dual between epochs, default 1e-3),
# and its threads: both cores, as optc.
SNAPML_LADDER = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7]
SNAPML_THREADS = 2
SNAPML = f"snapml {SNAPML_THREADS} threads"

LOSSES = ["hinge", "squared_hinge", "logistic"]
# LIBLINEAR's solvers for each loss: -s number, and whether it solves the dual.
SOLVERS = {"hinge": [(3, "dual")], "squared_hinge": [(1, "dual"), (2, "primal")],
           "logistic": [(0, "primal"), (7, "dual")]}
SOLVER_LOSS = {s: loss for loss, ss in SOLVERS.items() for s, _ in ss}
CS = [1.0, 0.01]

BINARY_SETS = [
    ("a9a", "a9a.xz"),
    ("w8a", "w8a.xz"),
    ("debian-desc", "debian-desc.binary.train.xz"),
    ("debian-files", "debian-files.binary.train.xz"),
    # peers.py's synth-100k: written by optc-synth, only when that binary exists.
    ("synth-100k", {"rows": 100_000, "features": 50_000, "seed": 1}),
]
MULTI_SETS = [
    ("dna", "dna.scale.xz"),
    ("satimage", "satimage.scale.xz"),
    ("debian-desc.multiclass", "debian-desc.multiclass.train.xz"),
]
QUICK = ["a9a", "w8a", "dna", "satimage"]
TEXT_SETS = ("debian-",)

# The loss declared in the model, for an optc without the built-in `squared_hinge`.
SQHINGE_DECL = "loss sqhinge(y: labels, a) = max(0, 1 - y·a)²\n    smooth 2\n\n"

PROBLEMS = []  # optc problems seen: (what, command, message)


def problem(what, cmd, message):
    PROBLEMS.append((what, " ".join(cmd), message.strip()))
    print(f"warning: optc: {what}: {message.strip()[:300]}", file=sys.stderr)


# ---------------------------------------------------------------- environment

def ensure_environment():
    """As peers.ensure_environment, which cannot be called: it re-executes peers.py itself. The venv
    is shared with peers.py, so it is made with the same packages."""
    if shutil.which("liblinear-train") is None:
        if os.geteuid() == 0 and shutil.which("apt-get"):
            print("installing Debian's liblinear-tools (liblinear-train)", file=sys.stderr)
            subprocess.run(["apt-get", "update", "-q"], check=True)
            subprocess.run(["apt-get", "install", "-y", "-q", "liblinear-tools"], check=True)
        else:
            print("note: liblinear-train not found and not root: no end-to-end peer", file=sys.stderr)
    python = os.path.join(peers.VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(peers.VENV):
        return
    if not os.path.exists(python):
        print(f"creating {peers.VENV} and installing {' '.join(peers.PACKAGES)}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", peers.VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", *peers.PACKAGES], check=True)
    peers.top_up(python)
    os.execv(python, [python, os.path.abspath(__file__), *sys.argv[1:]])


# ---------------------------------------------------------------- data and F

def int32_csr(X):
    """X as CSR with 32-bit indices: load_svmlight_file returns 64-bit ones here (scikit-learn 1.9,
    scipy 1.17), which LinearSVC and LogisticRegression refuse. (peers.Data's astype happens to
    give 32-bit ones; not relied upon.)"""
    import numpy as np
    import scipy.sparse as sp
    X = X.tocsr().astype(np.float64)
    if X.nnz < 2**31:
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    return X


class Binary(peers.Data):
    """peers.Data (±1 labels, the positive class, padded weights) with 32-bit indices."""

    def __init__(self, name, path):
        super().__init__(name, path)
        self.X = int32_csr(self.X)


def binary_objective(data, w, lam, loss):
    import numpy as np
    z = data.y * (data.X @ w)
    if loss == "hinge":
        ell = np.maximum(0.0, 1.0 - z)
    elif loss == "squared_hinge":
        ell = np.maximum(0.0, 1.0 - z) ** 2
    else:
        ell = np.logaddexp(0.0, -z)
    return float(np.mean(ell) + 0.5 * lam * float(w @ w))


class Multi:
    def __init__(self, name, path):
        import numpy as np
        from sklearn.datasets import load_svmlight_file
        X, raw = load_svmlight_file(path, zero_based=False)
        self.name, self.path = name, path
        self.X = int32_csr(X)
        self.labels = raw
        self.classes = np.unique(raw)  # scikit-learn's classes_ order: coef_ rows follow it
        self.yidx = np.searchsorted(self.classes, raw)
        self.m, self.d = self.X.shape
        self.nnz = self.X.nnz
        self.k = len(self.classes)

    def objective(self, W, lam):
        """W: d × K, columns in self.classes order."""
        import numpy as np
        from scipy.special import logsumexp
        Z = self.X @ W
        loss = logsumexp(Z, axis=1) - Z[np.arange(self.m), self.yidx]
        return float(np.mean(loss) + 0.5 * lam * float(np.sum(W * W)))

    def shape(self, flat):
        return flat.reshape(self.d, self.k)


def read_multiclass_model(path, data):
    """W (d × K, data.classes order) of a LIBLINEAR-format multiclass model: one line per feature,
    K weights in the order of the `label` line (src/model_file.rs)."""
    import numpy as np
    with open(path) as f:
        lines = f.read().split("\n")
    labels = [float(v) for v in next(line for line in lines if line.startswith("label")).split()[1:]]
    k = lines.index("w")
    rows = np.array([[float(v) for v in line.split()] for line in lines[k + 1:] if line.strip()])
    if rows.ndim != 2 or rows.shape[1] != len(labels):
        raise ValueError(f"{path}: {rows.shape} weights for {len(labels)} labels")
    W = np.zeros((data.d, data.k))
    n = min(data.d, rows.shape[0])
    for col, label in enumerate(labels):
        W[:n, int(np.searchsorted(data.classes, label))] = rows[:n, col]
    return W


def sub(f, f_star):
    return None if f is None else (f - f_star) / f_star


# ---------------------------------------------------------------- in-process peers (forked)

def fit_liblinear(data, C, solver, eps, prob):
    return peers.fit_liblinear_solver(data, solver, C, eps, prob)


def fit_linearsvc(data, C, tol):
    from sklearn.svm import LinearSVC
    est = LinearSVC(loss="hinge", dual=True, C=C, tol=tol, fit_intercept=False, max_iter=1_000_000)
    secs = peers.quiet_fit(est, data.X, data.y)  # classes_ = [-1, 1]: coef_ scores +1
    return secs, data.padded(est.coef_)


def fit_snapml(data, C, loss, tol):
    """Snap ML's dual coordinate descent (its CPU solver, on SNAPML_THREADS threads) for the
    binary losses; `regularizer` is 1/C in LIBLINEAR's P(w) = ½‖w‖² + C Σᵢ ℓ."""
    import snapml
    common = dict(regularizer=1.0 / C, fit_intercept=False, n_jobs=SNAPML_THREADS, tol=tol, max_iter=1_000_000)
    if loss == "logistic":
        est = snapml.LogisticRegression(dual=True, **common)
    else:
        est = snapml.SupportVectorMachine(loss=loss, **common)
    return peers.quiet_fit(est, data.X, data.y), data.padded(est.coef_)


def fit_softmax(data, C, solver, tol, max_iter):
    from sklearn.linear_model import LogisticRegression
    est = LogisticRegression(C=C, solver=solver, tol=tol, fit_intercept=False, max_iter=max_iter)
    secs = peers.quiet_fit(est, data.X, data.labels)
    return secs, est.coef_.T.ravel()  # d × K, classes_ order (= data.classes)


def warm_up_sklearn():
    """Imports and first-call costs paid once in the parent, outside any timing (children fork)."""
    import warnings
    import numpy as np
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC
    X = int32_csr(sp.random(60, 20, density=0.3, format="csr", random_state=0))
    y = np.arange(60) % 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for solver in SKLEARN_SOLVERS:
            LogisticRegression(solver=solver, fit_intercept=False).fit(X, y)
        LinearSVC(loss="hinge", fit_intercept=False).fit(X, np.where(y == 0, 1.0, -1.0))


# ---------------------------------------------------------------- optc

def write_model(tmp, loss, lam, sq_builtin):
    path = os.path.join(tmp, f"l2_{loss}_{lam:.6g}.opt")
    if loss == "softmax":
        text = ("data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\n"
                f"param λ = {lam!r}\nminimize E[softmax(y, <x, W>)] + λ·l2sq(W)\n")
    else:
        name = loss
        text = "data x: sparse, y: labels\nvar w: vec[dim(x)]\n"
        if loss == "squared_hinge" and not sq_builtin:
            text, name = SQHINGE_DECL + text, "sqhinge"
        text += f"param λ = {lam!r}\nminimize E[{name}(y, <x, w>)] + λ·l2sq(w)\n"
    with open(path, "w") as f:
        f.write(text)
    return path


def squared_hinge_builtin(optc, tmp):
    """Whether this optc knows `squared_hinge` (else the loss is declared in the model)."""
    model = write_model(tmp, "squared_hinge", 1e-3, True)
    out = subprocess.run([optc, "check", model], capture_output=True, text=True)
    return out.returncode == 0


def optc_time(r):
    calib = sum((r.get(k) or {}).get("seconds", 0.0) for k in ("eta0_calibration", "n0_calibration"))
    return r["seconds"] + r["compile_seconds"] + calib


def check_optc_report(cmd, r, f, f_star):
    """Compare optc's report with F recomputed from its model file, and its certificate with the
    suboptimality the model really has."""
    reported = r.get("objective")
    if reported is not None and abs(reported - f) > 1e-7 * abs(f) + 1e-12:
        problem("reported F differs from the saved model's F", cmd,
                f"optc reports F = {reported:.12g}; its saved model gives F = {f:.12g}")
    rg = r.get("relative_gap")
    if f_star is not None and rg is not None and r.get("status") == "converged" and rg < 1:
        s = (f - f_star) / f_star
        if s > 1.01 * rg / (1 - rg) + 1e-8:
            problem("certificate does not hold", cmd,
                    f"certified relative gap {rg:.3g}, but (F − F*)/F* = {s:.3g} (F = {f:.12g}, F* = {f_star:.12g})")


def fit_optc(ctx, model, data, tol, cap, f_star):
    """One `optc run` to --tol, stopped by --time-limit at the cap. Returns (seconds, F, report),
    None at the cap, or "failed"."""
    saved = os.path.join(ctx["tmp"], "optc.model")
    if os.path.exists(saved):
        os.unlink(saved)
    cmd = [ctx["optc"], "run", model, data.path, "--tol", repr(tol), "--time-limit", repr(cap), "--json", "--quiet",
           "--save", saved]
    try:
        # --time-limit stops after the epoch during which it passed: allow for a long epoch.
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=1.5 * cap + 30)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        problem(f"exit {out.returncode}", cmd, out.stderr)
        return "failed"
    try:
        r = json.loads(out.stdout)
        f = ctx["objective"](saved)
    except (ValueError, OSError, StopIteration) as e:
        problem("unreadable report or model", cmd, f"{e}; stdout: {out.stdout[:200]}")
        return "failed"
    check_optc_report(cmd, r, f, f_star)
    if r["status"] == "time_limit":
        return None
    return optc_time(r), f, r


# ---------------------------------------------------------------- end to end

def measure_cli(cmd, tmp, cap):
    """(wall seconds, peak RSS MB or None, stdout) of one process under GNU time, "cap" at the
    cap, None when it failed. Unlike peers.measure_cli, the whole process group is killed at the
    cap: killing GNU time alone leaves the measured process running, on a 2-core machine."""
    gnu_time = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    report = os.path.join(tmp, "time.txt")
    full = [gnu_time, "-f", "%M", "-o", report, *cmd] if gnu_time else cmd
    t = time.perf_counter()
    p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=cap)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return "cap"
    wall = time.perf_counter() - t
    if p.returncode != 0:
        return None, err.decode(errors="replace")
    rss = None
    if gnu_time:
        with open(report) as f:
            rss = int(f.read().split()[-1]) / 1024.0
    return wall, rss, out.decode(errors="replace")


def timed(cmd, args, tmp):
    """Median wall, max RSS and the last stdout of --repeat runs; "cap", or ("failed", message)."""
    runs = []
    for _ in range(args.repeat):
        r = measure_cli(cmd, tmp, args.e2e_cap)
        if r == "cap":
            return "cap"
        if r[0] is None:
            return "failed", r[1]
        runs.append(r)
        if r[0] > 30:
            break  # one long run is measurement enough
    rss = [r[1] for r in runs if r[1] is not None]
    return statistics.median(r[0] for r in runs), (max(rss) if rss else None), runs[-1][2]


def e2e_optc(ctx, label, model, data, tol, args, f_star):
    """One row of the end-to-end table for `optc run` (--tol tol, or its default for None)."""
    out = os.path.join(ctx["tmp"], "e2e.model")
    cmd = [ctx["optc"], "run", model, data.path, "--json", "--quiet", "--save", out]
    if tol is not None:
        cmd += ["--tol", repr(tol)]
    got = timed(cmd, args, ctx["tmp"])
    if got == "cap":
        return {"label": label, "wall": None, "note": f"> {args.e2e_cap:g} (cap)"}
    if got[0] == "failed":
        problem("end-to-end run failed", cmd, got[1])
        return {"label": label, "wall": None, "note": "failed"}
    wall, rss, stdout = got
    try:
        r = json.loads(stdout)
        f = ctx["objective"](out)
    except (ValueError, OSError, StopIteration) as e:
        problem("unreadable report or model", cmd, str(e))
        return {"label": label, "wall": None, "note": "failed"}
    check_optc_report(cmd, r, f, f_star)
    note = f"{r.get('solver')}, " + ("certified" if r.get("relative_gap") is not None else "uncertified")
    return {"label": label, "wall": wall, "rss": rss, "sub": sub(f, f_star), "note": note}


def e2e_liblinear(data, C, solver, args, tmp, f_star):
    label = f"liblinear-train -s {solver}"
    if shutil.which("liblinear-train") is None:
        return {"label": label, "wall": None, "note": "not installed"}
    out = os.path.join(tmp, "e2e.model")
    cmd = ["liblinear-train", "-s", str(solver), "-c", repr(C), "-B", "-1", "-q", data.path, out]
    got = timed(cmd, args, tmp)
    if got == "cap":
        return {"label": label, "wall": None, "note": f"> {args.e2e_cap:g} (cap)"}
    if got[0] == "failed":
        print(f"warning: {' '.join(cmd)} failed: {got[1].strip()[:300]}", file=sys.stderr)
        return {"label": label, "wall": None, "note": "failed"}
    w = peers.read_liblinear_model(out, data)
    f = binary_objective(data, w, 1.0 / (C * data.m), SOLVER_LOSS[solver])
    return {"label": label, "wall": got[0], "rss": got[1], "sub": sub(f, f_star), "note": "default eps", "solver": solver}


def print_e2e(rows):
    print("\n| end to end (CLI, plain text file) | wall s (median) | peak RSS MB | (F−F*)/F* | note |")
    print("|---|---:|---:|---:|---|")
    for r in rows:
        if r["wall"] is None:
            print(f"| {r['label']} | {r['note']} | | | |")
        else:
            rss = "?" if r.get("rss") is None else f"{r['rss']:.0f}"
            print(f"| {r['label']} | {r['wall']:.2f} | {rss} | {r['sub']:.1e} | {r['note']} |")


# ---------------------------------------------------------------- ladders

def ladder(settings, run, f_star):
    """[(setting, seconds or None, F or None)], loosest first; run(setting) gives (seconds, F),
    None at the cap or "failed"."""
    results = []
    for setting in settings:
        got = run(setting)
        if got is None or got == "failed":
            results.append((setting, None, "cap" if got is None else "failed"))
            break
        secs, f = got[0], got[1]
        results.append((setting, secs, f))
        if (f - f_star) / f_star <= ACCURACIES[-1]:
            break
    return results


def reached(results, f_star):
    out = []
    for a in ACCURACIES:
        ok = [s for _, s, f in results if s is not None and (f - f_star) / f_star <= a]
        out.append(min(ok) if ok else None)
    return out


def print_ladders(ladders, f_star):
    """ladders: [(name, results)]; returns {name: times to ACCURACIES}."""
    times = {}
    print("| contender | " + " | ".join(f"to {a:g}" for a in ACCURACIES) + " | best (F−F*)/F* | ladder (setting: s) |")
    print("|---|" + "---:|" * len(ACCURACIES) + "---|---|")
    for name, res in ladders:
        times[name] = reached(res, f_star)
        done = [f for _, s, f in res if s is not None]
        note = "" if not done else f"{max(0.0, (min(done) - f_star) / f_star):.1e}"
        if any(s is None for _, s, _ in res):
            note += " · " + res[-1][2]
        if any(f < f_star * (1 - 1e-9) for f in done):
            note += " · below F*!"
        steps = ", ".join(f"{st:g}:{f if s is None else f'{s:.2f}s'}" for st, s, f in res)
        print(f"| {name} | " + " | ".join(peers.fmt_time(t) for t in times[name]) + f" | {note} | {steps} |")
    return times


# ---------------------------------------------------------------- one binary row

def reference_binary(data, loss, C, args, ctx):
    """[(label, F or None)] of the F* runs."""
    refs = []
    for s, _ in SOLVERS[loss]:
        got = peers.run_forked(lambda: fit_liblinear(data, C, s, 1e-8, ctx["prob"]), args.ref_cap)
        refs.append((f"LIBLINEAR -s {s} -e 1e-8", None if got is None else binary_objective(data, got[1], ctx["lam"], loss)))
    if loss == "hinge":
        got = peers.run_forked(lambda: fit_linearsvc(data, C, 1e-8), args.ref_cap)
        refs.append(("LinearSVC tol 1e-8", None if got is None else binary_objective(data, got[1], ctx["lam"], loss)))
    return refs


def open_section(title, refs, args):
    """Prints a section's heading and its reference runs; F*, or None (said in the heading) when
    no reference finished within --ref-cap."""
    if all(f is None for _, f in refs):
        print(f"\n### {title}: no reference F* within {args.ref_cap:g} s, skipped\n")
        return None
    print(f"\n### {title}\n")
    return print_reference(refs, args.ref_cap)


def print_reference(refs, cap):
    known = [f for _, f in refs if f is not None]
    f_star = min(known)
    parts = ", ".join(f"{label} {'> cap' if f is None else f'{f:.12g}'}" for label, f in refs)
    diff = "" if len(known) < 2 else f"; largest relative difference {(max(known) - f_star) / f_star:.1e}"
    print(f"F* = {f_star:.12g} ({parts}{diff}; cap {cap:g} s)\n")
    return f_star


def bench_binary(data, loss, C, args, ctx):
    from liblinear import liblinearutil as lu
    lam = 1.0 / (C * data.m)
    ctx["lam"] = lam
    if "prob" not in ctx:
        ctx["prob"] = lu.problem(data.y, data.X)
    refs = reference_binary(data, loss, C, args, ctx)
    title = f"{data.name} ({data.m} × {data.d}, {data.nnz} non-zeros), {loss}, C = {C:g} (λ = {lam:.4g})"
    f_star = open_section(title, refs, args)
    if f_star is None:
        return None
    model = write_model(ctx["tmp"], loss, lam, ctx["sq_builtin"])
    ctx["objective"] = lambda path: binary_objective(data, peers.read_liblinear_model(path, data), lam, loss)
    times = {}
    if "ladders" not in args.skip:
        ladders = []
        if "optc" not in args.skip:
            res = ladder(OPTC_LADDER, lambda tol: fit_optc(ctx, model, data, tol, args.cap, f_star), f_star)
            ladders.append(("optc", res))
        for s, kind in SOLVERS[loss]:
            if f"s{s}" in args.skip:
                continue

            def run(eps, s=s):
                got = peers.run_forked(lambda: fit_liblinear(data, C, s, eps, ctx["prob"]), args.cap)
                return None if got is None else (got[0], binary_objective(data, got[1], lam, loss))
            ladders.append((f"liblinear -s {s}", ladder(LIBLINEAR_LADDER[kind], run, f_star)))
        if "snapml" not in args.skip and ctx["snapml"]:
            def run(tol):
                got = peers.run_forked(lambda: fit_snapml(data, C, loss, tol), args.cap)
                return None if got is None else (got[0], binary_objective(data, got[1], lam, loss))
            ladders.append((SNAPML, ladder(SNAPML_LADDER, run, f_star)))
        times = print_ladders(ladders, f_star)
    e2e = []
    if "e2e" not in args.skip:
        e2e = [e2e_liblinear(data, C, s, args, ctx["tmp"], f_star) for s, _ in SOLVERS[loss] if f"s{s}" not in args.skip]
        done = [r for r in e2e if r["wall"] is not None]
        peer = min(done, key=lambda r: r["wall"]) if done else None
        if peer is not None and "optc" not in args.skip:
            # At least 1e-12: LIBLINEAR may land on F* itself (or below our F*, by rounding).
            r = max(peer["sub"], 1e-12)
            tol = r / (1 + r)
            e2e.append(e2e_optc(ctx, f"optc run --tol {tol:.2g} (-s {peer['solver']}'s accuracy)", model, data, tol,
                                args, f_star))
        if "optc" not in args.skip:
            e2e.append(e2e_optc(ctx, "optc run (default tol)", model, data, None, args, f_star))
        print_e2e(e2e)
    sys.stdout.flush()
    return {"data": data.name, "loss": loss, "C": C, "times": times, "e2e": e2e}


# ---------------------------------------------------------------- one softmax row

def bench_softmax(data, args, ctx):
    C = 1.0
    lam = 1.0 / (C * data.m)
    refs = []
    for solver in ("lbfgs", "newton-cg"):
        got = peers.run_forked(lambda: fit_softmax(data, C, solver, 1e-10, 100_000), args.ref_cap)
        refs.append((f"sklearn {solver} tol 1e-10", None if got is None else data.objective(data.shape(got[1]), lam)))
    title = f"{data.name} ({data.m} × {data.d}, {data.nnz} non-zeros, {data.k} classes), softmax, C = 1 (λ = {lam:.4g})"
    f_star = open_section(title, refs, args)
    if f_star is None:
        return None
    model = write_model(ctx["tmp"], "softmax", lam, True)
    ctx["objective"] = lambda path: data.objective(read_multiclass_model(path, data), lam)

    def sk(solver, tol, max_iter, cap):
        got = peers.run_forked(lambda: fit_softmax(data, C, solver, tol, max_iter), cap)
        return None if got is None else (got[0], data.objective(data.shape(got[1]), lam))

    # The peer: scikit-learn at its defaults (tol 1e-4, max_iter 100), solver time, median of
    # --repeat runs (on the small sets a single forked run varies by 2×).
    print("| at defaults (solver time, median) | s | (F−F*)/F* |\n|---|---:|---:|")
    defaults = []
    for solver in SKLEARN_SOLVERS:
        if solver in args.skip:
            continue
        runs = []
        for _ in range(args.repeat):
            got = sk(solver, 1e-4, 100, args.cap)
            if got is None:
                break
            runs.append(got)
        if len(runs) < args.repeat:
            print(f"| sklearn {solver} | > cap | |")
            continue
        secs, f = statistics.median(s for s, _ in runs), runs[-1][1]
        print(f"| sklearn {solver} | {secs:.3f} | {sub(f, f_star):.1e} |")
        defaults.append((secs, solver, sub(f, f_star)))
    peer = min(defaults) if defaults else None
    at_peer = None
    if peer is not None and "optc" not in args.skip:
        r = max(peer[2], 1e-12)
        tol = r / (1 + r)
        got = fit_optc(ctx, model, data, tol, args.cap, f_star)
        if got is None or got == "failed":
            shown = "> cap | |" if got is None else "failed | |"
        else:
            at_peer = got[0]
            shown = f"{got[0]:.3f} | {sub(got[1], f_star):.1e} |"
        print(f"| optc --tol {tol:.2g} ({peer[1]}'s accuracy) | {shown}")
    print()
    times = {}
    if "ladders" not in args.skip:
        ladders = []
        if "optc" not in args.skip:
            ladders.append(("optc", ladder(OPTC_LADDER, lambda tol: fit_optc(ctx, model, data, tol, args.cap, f_star),
                                           f_star)))
        for solver in SKLEARN_SOLVERS:
            if solver not in args.skip:
                res = ladder(SKLEARN_LADDER[solver], lambda tol, solver=solver: sk(solver, tol, 100_000, args.cap), f_star)
                ladders.append((f"sklearn {solver}", res))
        times = print_ladders(ladders, f_star)
    e2e = []
    if "e2e" not in args.skip and "optc" not in args.skip:
        if peer is not None:
            r = max(peer[2], 1e-12)
            e2e.append(e2e_optc(ctx, f"optc run --tol {r / (1 + r):.2g} ({peer[1]}'s accuracy)", model, data,
                                r / (1 + r), args, f_star))
        e2e.append(e2e_optc(ctx, "optc run (default tol)", model, data, None, args, f_star))
        print_e2e(e2e)
    sys.stdout.flush()
    return {"data": data.name, "peer": peer, "at_peer": at_peer, "times": times, "e2e": e2e}


# ---------------------------------------------------------------- summary

def ratio(o, p, target=None):
    """optc/peer, with ✓/✗ against a target (a ratio ≤ target)."""
    if p is None:
        return "" if o is None or target is None else "peer not reached ✓"
    if o is None:
        return "∞ ✗" if target else "∞"
    q = o / p
    return f"{q:.2f}" + ("" if target is None else (" ✓" if q <= target else " ✗"))


def best_peer(times, k, among=lambda name: name not in ("optc", SNAPML)):
    """The fastest contender `among` to ACCURACIES[k]: (seconds, name), or None."""
    peers_ = [(t[k], name) for name, t in times.items() if among(name) and t[k] is not None]
    return min(peers_) if peers_ else None


def accuracy_cells(times, k, target=None, among=None):
    o = times.get("optc", [None] * len(ACCURACIES))[k]
    best = best_peer(times, k) if among is None else best_peer(times, k, among)
    short = "—" if best is None else best[1].replace("liblinear ", "").replace("sklearn ", "")
    return [peers.fmt_time(o), "—" if best is None else f"{short} {peers.fmt_time(best[0])}",
            ratio(o, best and best[0], target)]


def summary(binary_rows, softmax_rows):
    k2, k4 = ACCURACIES.index(1e-2), ACCURACIES.index(1e-4)
    if binary_rows:
        print("\n## Summary, binary: optc / LIBLINEAR\n")
        print("End to end: CLI wall time, the peer the fastest matching `liblinear-train -s` at default eps, "
              "optc at `--tol r/(1+r)` for the peer's r (target ≤ 1.0, ≤ 0.5 on debian-*). Time to accuracy: "
              "solver time, the best of the matching LIBLINEAR solvers (target ≤ 0.5 at 1e-4); "
              f"the last two columns: Snap ML's time to 1e-4 ({SNAPML}) and optc's to it.\n")
        print("| data | loss | C | peer e2e s | its r | optc s at r | ratio | optc s, default tol | ratio "
              "| to 1e-2: optc s | peer | ratio | to 1e-4: optc s | peer | ratio | Snap ML to 1e-4 | ratio |")
        print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---:|")
        for row in binary_rows:
            e2e = row["e2e"]
            done = [r for r in e2e if r["label"].startswith("liblinear") and r["wall"] is not None]
            peer = min(done, key=lambda r: r["wall"]) if done else None
            at_r = next((r for r in e2e if r["label"].startswith("optc run --tol")), None)
            default = next((r for r in e2e if r["label"].startswith("optc run (default")), None)
            target = 0.5 if row["data"].startswith(TEXT_SETS) else 1.0
            pw = peer and peer["wall"]
            cells = ["—" if peer is None else f"-s {peer['solver']} {peers.fmt_time(pw)}",
                     "" if peer is None else f"{peer['sub']:.1e}"]
            for r, tgt in ((at_r, target), (default, None)):
                w = None if r is None else r["wall"]
                cells += [peers.fmt_time(w) if r is None or r["wall"] is not None else r["note"],
                          ratio(w, pw, tgt) if r is not None else ""]
            cells += accuracy_cells(row["times"], k2) + accuracy_cells(row["times"], k4, 0.5)
            snap = accuracy_cells(row["times"], k4, among=lambda name: name == SNAPML)
            cells += [snap[1].replace(SNAPML + " ", "") if SNAPML in row["times"] else "not run", snap[2]]
            print(f"| {row['data']} | {row['loss']} | {row['C']:g} | " + " | ".join(cells) + " |")
    if softmax_rows:
        print("\n## Summary, softmax: optc / scikit-learn (solver time)\n")
        print("The peer: the fastest scikit-learn solver at its defaults; optc at `--tol r/(1+r)` for its r "
              "(target ≤ 1.0). Time to accuracy: the best scikit-learn solver's ladder.\n")
        print("| data | peer s | its r | optc s at r | ratio | optc CLI s, default tol | peak RSS MB "
              "| to 1e-2: optc s | peer | ratio | to 1e-4: optc s | peer | ratio |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---:|")
        for row in softmax_rows:
            peer = row["peer"]
            default = next((r for r in row["e2e"] if r["label"].startswith("optc run (default")), None)
            cells = ["—" if peer is None else f"{peer[1]} {peers.fmt_time(peer[0])}",
                     "" if peer is None else f"{peer[2]:.1e}",
                     peers.fmt_time(row["at_peer"]), ratio(row["at_peer"], peer and peer[0], 1.0)]
            if default is None or default["wall"] is None:
                cells += ["—" if default is None else default["note"], ""]
            else:
                cells += [peers.fmt_time(default["wall"]), "?" if default["rss"] is None else f"{default['rss']:.0f}"]
            cells += accuracy_cells(row["times"], k2) + accuracy_cells(row["times"], k4, 0.5)
            print(f"| {row['data']} | " + " | ".join(cells) + " |")
    if PROBLEMS:
        print("\n## optc problems seen\n")
        seen = set()
        for what, cmd, message in PROBLEMS:
            if (what, message) in seen:
                continue
            seen.add((what, message))
            print(f"- {what}: `{cmd}`\n\n  ```\n  " + message.replace("\n", "\n  ") + "\n  ```")


# ---------------------------------------------------------------- main

def versions(optc):
    from importlib.metadata import version
    import sklearn
    parts = [f"optc {optc}"]
    try:
        deb = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "liblinear-tools"], capture_output=True,
                             text=True).stdout
        parts.append(f"liblinear-train {deb or '?'}")
    except OSError:
        parts.append("liblinear-train ?")
    parts += [f"liblinear-official {version('liblinear-official')}", f"scikit-learn {sklearn.__version__}"]
    if peers.available("snapml"):
        parts.append(f"snapml {version('snapml')}")
    return "; ".join(parts)


def selected(name, args):
    if args.only:
        return any(o in name for o in args.only)
    return not args.quick or name in QUICK


def main():
    ensure_environment()
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", default=os.path.join(ROOT, "..", "shared", "data"))
    p.add_argument("--only", action="append", default=[], help="run the sets whose name contains this")
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}, caps 20/120/120 s at most")
    p.add_argument("--cap", type=float, default=60.0, help="seconds per ladder run")
    p.add_argument("--ref-cap", type=float, default=600.0, help="seconds per reference (F*) run")
    p.add_argument("--e2e-cap", type=float, default=300.0, help="seconds per end-to-end CLI run")
    p.add_argument("--repeat", type=int, default=3, help="end-to-end runs per command (median)")
    p.add_argument("--skip", action="append", default=[],
                   help="a loss (hinge, squared_hinge, logistic, softmax), a peer solver (s0 … s7, lbfgs, "
                        "newton-cg, saga, snapml), optc, or a part (ladders, e2e)")
    p.add_argument("--optc")
    p.add_argument("--synth")
    p.add_argument("--tmp", help="work directory (default: a fresh temporary one, removed at the end)")
    args = p.parse_args()
    if args.quick:
        args.cap = min(args.cap, 20.0)
        args.ref_cap = min(args.ref_cap, 120.0)
        args.e2e_cap = min(args.e2e_cap, 120.0)
    args.optc = peers.binary("optc", args.optc or os.environ.get("OPTC"))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    args.synth = args.synth or os.path.join(target, "release", "optc-synth")
    tmp = args.tmp or tempfile.mkdtemp(prefix="optc-peers-l2-")
    os.makedirs(tmp, exist_ok=True)
    import platform
    sq_builtin = squared_hinge_builtin(args.optc, tmp)
    print(f"# optc vs peers, ℓ2-regularised\n\n{platform.node()}, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M')}; {versions(args.optc)}\n\ncaps: {args.cap:g} s per ladder run, "
          f"{args.ref_cap:g} s per F* run, {args.e2e_cap:g} s per CLI run; repeat {args.repeat}. Squared hinge in optc: "
          + ("the built-in `squared_hinge`." if sq_builtin else
             "declared in the model (`loss sqhinge … smooth 2`): this optc has no built-in `squared_hinge`."))
    warm_up_sklearn()
    if peers.available("snapml"):
        import snapml  # noqa: F401  (its libraries loaded once, outside any timing: children fork)
    binary_rows, softmax_rows = [], []
    try:
        for name, source in BINARY_SETS:
            if not selected(name, args) or all(loss in args.skip for loss in LOSSES):
                continue
            if isinstance(source, dict) and not os.path.exists(args.synth):
                print(f"skipping {name}: {args.synth} not found", file=sys.stderr)
                continue
            path = peers.materialise(name, source, args, tmp)
            if path is None:
                continue
            data = Binary(name, path)
            ctx = {"optc": args.optc, "tmp": tmp, "sq_builtin": sq_builtin, "snapml": peers.available("snapml")}
            for loss in LOSSES:
                if loss in args.skip:
                    continue
                for C in CS:
                    row = bench_binary(data, loss, C, args, ctx)
                    if row is not None:
                        binary_rows.append(row)
            del data, ctx
            os.unlink(path)
        for name, source in MULTI_SETS:
            if not selected(name, args) or "softmax" in args.skip:
                continue
            path = peers.materialise(name, source, args, tmp)
            if path is None:
                continue
            data = Multi(name, path)
            row = bench_softmax(data, args, {"optc": args.optc, "tmp": tmp})
            if row is not None:
                softmax_rows.append(row)
            del data
            os.unlink(path)
        summary(binary_rows, softmax_rows)
    finally:
        if not args.tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
