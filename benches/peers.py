#!/usr/bin/env python3
"""optc against its peers on l1-regularised logistic regression, on the same data and the same F:

    F(w) = (1/m) Σᵢ log(1 + exp(−yᵢ⟨xᵢ, w⟩)) + λ‖w‖₁          (no intercept)

Every contender's weights are read back and F is computed here, in float64, so no contender
grades itself. The reference F* is LIBLINEAR at eps 1e-8, cross-checked with skglm at tol 1e-10
(both printed, with their relative difference); F* is the lower of the two.

Contenders and how their objective is matched to F:
  optc            `optc run --tol T --json --quiet --save FILE` on the model above.
                  Time: "seconds" + "compile_seconds" + the step calibration's seconds of the
                  JSON report, i.e. everything but reading and binding the data (the "seconds"
                  field alone excludes parsing, JIT compilation and calibration: src/cli/run.rs).
  liblinear       liblinear-official (the Python binding of LIBLINEAR), `-s 6 -B -1`, C = 1/(λm):
                  ‖w‖₁ + C Σ log(1 + e^{−y⟨x,w⟩}) is m·C·F. Ladder over -e. Time: `train()`
                  on a problem built beforehand (train() includes LIBLINEAR's own transpose).
  skglm           SparseLogisticRegression(alpha=λ, fit_intercept=False): its datafit is the
                  mean logistic loss, its penalty α‖w‖₁, i.e. exactly F. Ladder over tol. numba
                  is warmed up on a small problem before any timing.
  celer           celer.LogisticRegression(C=1/(λm), fit_intercept=False) (Massias, Gramfort &
                  Salmon's working sets with dual extrapolation): Σ loss + ‖w‖₁/C, i.e. m·F.
                  Ladder over tol. Optional: installed where pip has a wheel, else skipped.
  sklearn-liblinear, sklearn-saga
                  LogisticRegression(l1_ratio=1, C=1/(λm), fit_intercept=False): C Σ loss + ‖w‖₁.
                  Ladder over tol.
  vw              Vowpal Wabbit through its Python module (the PyPI package ships no `vw` CLI):
                  `--loss_function logistic --l1 λ --noconstant --holdout_off`, a ladder over
                  --passes, weights read back from --readable_model (6 significant digits).
                  VW's objective is NOT matched exactly: it runs online adaptive, normalised
                  steps with truncated-gradient l1 (λ per example, as F's mean loss implies), so
                  its F is reported for what it is. Its time includes reading its own input
                  (it learns while it parses); its text is converted to VW's format untimed.

Time to accuracy a: the least time of any run in the contender's ladder whose F satisfies
(F − F*)/F* ≤ a (each ladder step is a separate run from scratch). A ladder stops at the first
run that reaches 1e-4, or at the first run that hits the per-run time cap (`--cap`, enforced by
running every fit in a forked child that is killed at the cap): "—" in the tables is "not
reached within the ladder and cap".

End to end: wall time and peak RSS (GNU time) of Debian's `liblinear-train -s 6 -B -1 -c C FILE`
(default eps 0.01) and of the CLI `optc run MODEL FILE`, on the same plain text file, median of
--repeat runs, with the F each reached. optc runs twice: at LIBLINEAR's default accuracy, i.e.
`--tol r/(1+r)` with r = (F−F*)/F* of liblinear-train's model (a certified gap of tol·F then
bounds (F−F*)/F* by r: optc reaches at least that accuracy and proves it), which the summary's
CLI ratio uses; and at its own default tol (1e-4 certified), what a user gets without options.

Data (../shared/data/*.xz, decompressed to a temporary directory; the synthetic sets written by
`optc-synth` with fixed seeds), each at two λ with ~100 and ~1000 non-zeros at the optimum, found
once by `--find-lambdas` (log-bisection of λ with LIBLINEAR at eps 1e-4) and recorded in SETS.

Usage (the first run makes benches/.venv and installs the peers; later runs reuse it; without
`liblinear-train`, as root, it apt-get installs Debian's liblinear-tools):

    cargo build --release                                  # optc and optc-synth
    python3 benches/peers.py                               # everything, markdown on stdout
    python3 benches/peers.py --quick                       # the small sets, shorter caps
    python3 benches/peers.py --only a9a --only w8a         # a subset (substring of the name)
    python3 benches/peers.py --find-lambdas [--only NAME]  # redo the λ search
    python3 benches/peers.py --cs 1,10,100 --skip vw        # LIBLINEAR's C instead: λ = 1/(C·m),
                                                           # with the weak-regularization summary
    options: --data-dir DIR (default ../shared/data), --cap SECONDS (per run, default 60),
             --ref-cap SECONDS (per F* run, default 600), --e2e-cap SECONDS (per CLI run,
             default 300), --repeat N (end-to-end runs, default 3), --skip CONTENDER,
             --optc PATH, --synth PATH, --tmp DIR

The binaries are taken from $CARGO_TARGET_DIR/release (else target/release); set OPTC to
point elsewhere.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV = os.path.join(HERE, ".venv")
PACKAGES = ["numpy", "scipy", "scikit-learn", "liblinear-official", "skglm", "vowpalwabbit"]

ACCURACIES = [1e-1, 1e-2, 1e-3, 1e-4]
LADDERS = {
    "optc": [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6],
    "liblinear": [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6],
    "skglm": [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7],
    "celer": [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7],
    "sklearn-liblinear": [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6],
    "sklearn-saga": [1e-1, 1e-2, 1e-3, 1e-4, 1e-5],
    "vw": [1, 3, 10, 30],
}
PEERS = ["liblinear", "skglm", "celer", "sklearn-liblinear", "sklearn-saga", "vw"]
# Peers the venv gets where pip can install them, and skips (said once) where it cannot.
OPTIONAL = ["celer", "snapml"]

# name, source (a file of the data dir, or an optc-synth spec), [(λ, non-zeros at the optimum)]
# for ~100 and ~1000 non-zeros, found by --find-lambdas (the count is LIBLINEAR's at eps 1e-4).
# a9a (123 features) and w8a (300) cannot have 1000: their targets are d/2 and 0.9·d.
SETS = [
    ("a9a", "a9a.xz", [(2.02e-4, 60), (1.13e-5, 100)]),
    ("w8a", "w8a.xz", [(7.61e-4, 92), (7.08e-6, 256)]),
    ("debian-desc", "debian-desc.binary.train.xz", [(9.91e-5, 97), (9.56e-6, 985)]),
    ("debian-files", "debian-files.binary.train.xz", [(1.28e-4, 110), (1.03e-5, 1067)]),
    ("synth-100k", {"rows": 100_000, "features": 50_000, "seed": 1}, [(1.12e-4, 95), (1.55e-5, 1054)]),
    ("synth-1m", {"rows": 1_000_000, "features": 100_000, "seed": 2}, [(8.9e-5, 100), (8.59e-6, 1008)]),
]
QUICK = ["a9a", "w8a", "debian-desc", "synth-100k"]


# ---------------------------------------------------------------- environment

def ensure_environment():
    """Re-executes this script inside benches/.venv, creating it (and liblinear-train) first."""
    if shutil.which("liblinear-train") is None:
        if os.geteuid() == 0 and shutil.which("apt-get"):
            print("installing Debian's liblinear-tools (liblinear-train)", file=sys.stderr)
            subprocess.run(["apt-get", "update", "-q"], check=True)
            subprocess.run(["apt-get", "install", "-y", "-q", "liblinear-tools"], check=True)
        else:
            print("note: liblinear-train not found and not root: the end-to-end table is skipped", file=sys.stderr)
    python = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(python):
        print(f"creating {VENV} and installing {' '.join(PACKAGES)}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", *PACKAGES], check=True)
    top_up(python)
    os.execv(python, [python, os.path.abspath(__file__), *sys.argv[1:]])


def top_up(python):
    """Installs the PACKAGES that a venv made earlier lacks: the venv is shared (peers_l2.py,
    docs/figures.sh's papers.py), and one made by an older script or by hand may miss some."""
    probe = ("import sys\nfrom importlib.metadata import version, PackageNotFoundError\nfor p in sys.argv[1:]:\n"
             "    try:\n        version(p)\n    except PackageNotFoundError:\n        print(p)\n")
    missing = subprocess.run([python, "-c", probe, *PACKAGES, *OPTIONAL], capture_output=True, text=True).stdout.split()
    required = [p for p in missing if p in PACKAGES]
    if required:
        print(f"installing {' '.join(required)} into {VENV}", file=sys.stderr)
        subprocess.run([python, "-m", "pip", "install", "-q", *required], check=True)
    # One at a time: a package with no wheel here must not keep the others out.
    for package in (p for p in missing if p in OPTIONAL):
        print(f"installing {package} into {VENV}", file=sys.stderr)
        if subprocess.run([python, "-m", "pip", "install", "-q", package]).returncode != 0:
            print(f"note: pip could not install {package}: its peer is skipped", file=sys.stderr)


def binary(name, override):
    if override:
        return override
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    path = os.path.join(target, "release", name)
    if not os.path.exists(path):
        sys.exit(f"{path} not found: run `cargo build --release` first (or pass --optc/--synth)")
    return path


# ---------------------------------------------------------------- data and F

class Data:
    def __init__(self, name, path):
        import numpy as np
        from sklearn.datasets import load_svmlight_file
        X, raw = load_svmlight_file(path, zero_based=False)
        self.name, self.path = name, path
        self.X = X.tocsr().astype(np.float64)
        labels = sorted(set(raw.tolist()))
        if len(labels) != 2:
            sys.exit(f"{path}: {len(labels)} labels, a binary set has 2")
        # The positive class: label 1 when present (LIBSVM's ±1 and 0/1), else the larger.
        self.pos = 1.0 if 1.0 in labels else labels[-1]
        self.y = np.where(raw == self.pos, 1.0, -1.0)
        self.m, self.d = self.X.shape
        self.nnz = self.X.nnz

    def objective(self, w, lam):
        import numpy as np
        return float(np.mean(np.logaddexp(0.0, -self.y * (self.X @ w))) + lam * np.abs(w).sum())

    def padded(self, w):
        import numpy as np
        w = np.asarray(w, dtype=np.float64).ravel()
        return np.concatenate([w, np.zeros(max(0, self.d - len(w)))])[: self.d]


def read_liblinear_model(path, data):
    """Weights of a LIBLINEAR-format model file (optc's --save writes the same), scoring +1."""
    import numpy as np
    with open(path) as f:
        lines = f.read().split("\n")
    labels = [float(v) for v in next(l for l in lines if l.startswith("label")).split()[1:]]
    k = lines.index("w")
    w = data.padded([float(l.split()[0]) for l in lines[k + 1:] if l.strip()])
    return w if labels[0] == data.pos else -w


def lambda_max(data):
    """The least λ with w = 0 optimal: ‖∇ mean loss(0)‖∞ = ‖Xᵀy‖∞ / (2m)."""
    import numpy as np
    return float(np.abs(data.X.T @ data.y).max() / (2 * data.m))


# ---------------------------------------------------------------- in-process peers

def run_forked(fn, cap):
    """fn() in a forked child (the data is shared copy-on-write), killed after `cap` seconds.
    Returns (seconds, weights) or None at the cap."""
    import multiprocessing as mp
    import numpy as np
    ctx = mp.get_context("fork")
    out = tempfile.NamedTemporaryFile(suffix=".npy", delete=False)
    out.close()

    def child():
        secs, w = fn()
        np.save(out.name, np.concatenate([[secs], w]))

    p = ctx.Process(target=child)
    p.start()
    p.join(cap)
    try:
        if p.is_alive():
            p.kill()
            p.join()
            return None
        if p.exitcode != 0:
            print(f"warning: a run failed (exit {p.exitcode})", file=sys.stderr)
            return None
        r = np.load(out.name)
        return float(r[0]), r[1:]
    finally:
        os.unlink(out.name)


def fit_liblinear(data, lam, eps, prob):
    return fit_liblinear_solver(data, 6, 1.0 / (lam * data.m), eps, prob)


def fit_liblinear_solver(data, solver, C, eps, prob):
    """LIBLINEAR's `-s solver` at C and eps, no bias: its train() seconds and w in data's sign."""
    import numpy as np
    from liblinear import liblinearutil as lu
    param = lu.parameter(f"-s {solver} -B -1 -q -c {C!r} -e {eps!r}")
    t = time.perf_counter()
    model = lu.train(prob, param)
    secs = time.perf_counter() - t
    w = np.ctypeslib.as_array(model.w, shape=(model.nr_feature,)).copy()
    if model.get_labels()[0] != data.pos:
        w = -w
    return secs, data.padded(w)


def fit_skglm(data, lam, tol):
    from skglm import SparseLogisticRegression
    est = SparseLogisticRegression(alpha=lam, tol=tol, fit_intercept=False, max_iter=1000, max_epochs=100_000)
    t = time.perf_counter()
    est.fit(data.X, data.y)
    return time.perf_counter() - t, data.padded(est.coef_)


def fit_celer(data, lam, tol):
    """celer takes CSC with 32-bit indices only (it refuses load_svmlight_file's 64-bit ones):
    converted outside the timing, as LIBLINEAR's problem is built beforehand."""
    import numpy as np
    import scipy.sparse as sp
    from celer import LogisticRegression
    X = data.X.tocsc()
    X = sp.csc_matrix((X.data.astype(np.float64), X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    est = LogisticRegression(C=1.0 / (lam * data.m), tol=tol, fit_intercept=False, max_iter=1000, max_epochs=100_000)
    t = time.perf_counter()
    est.fit(X, data.y)  # classes_ = [-1, 1]: coef_ scores +1
    return time.perf_counter() - t, data.padded(est.coef_)


def available(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def quiet_fit(est, X, y):
    """Seconds of est.fit(X, y), its convergence warnings silenced (a ladder's loose steps stop
    early on purpose)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        est.fit(X, y)
        return time.perf_counter() - t


def fit_sklearn(data, lam, tol, solver):
    from sklearn.linear_model import LogisticRegression
    est = LogisticRegression(l1_ratio=1.0, C=1.0 / (lam * data.m), solver=solver, tol=tol, fit_intercept=False,
                             max_iter=100_000 if solver == "saga" else 1000)
    return quiet_fit(est, data.X, data.y), data.padded(est.coef_)


def vw_text(data, path):
    """The data in VW's text format (numeric feature names keep their index: no hashing clash
    with -b large enough)."""
    with open(data.path) as src, open(path, "w") as dst:
        for line in src:
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            y = 1 if float(line[0]) == data.pos else -1
            dst.write(f"{y} | {' '.join(line[1:])}\n")


def fit_vw(data, lam, passes, text, tmp):
    import vowpalwabbit
    bits = max(18, int(data.d).bit_length() + 1)
    cache, model = os.path.join(tmp, "vw.cache"), os.path.join(tmp, "vw.txt")
    for p in (cache, model):
        if os.path.exists(p):
            os.unlink(p)
    args = (f"--data {text} --loss_function logistic --l1 {lam!r} --noconstant --holdout_off -b {bits} "
            f"--passes {passes} -c -k --cache_file {cache} --readable_model {model} --quiet")
    t = time.perf_counter()
    ws = vowpalwabbit.Workspace(args)
    ws.finish()
    secs = time.perf_counter() - t
    import numpy as np
    import re
    w = np.zeros(data.d)
    weight = re.compile(r"^(\d+):(\S+)")  # "index:weight ..." (header lines never match)
    with open(model) as f:
        for line in f:
            hit = weight.match(line)
            if hit and 0 < int(hit.group(1)) <= data.d:
                w[int(hit.group(1)) - 1] = float(hit.group(2))
    return secs, w


def warm_up_skglm():
    """numba compiles skglm's kernels on the first fit: pay for that outside any timing."""
    import numpy as np
    import scipy.sparse as sp
    rng = np.random.default_rng(0)
    X = sp.random(50, 20, density=0.3, format="csr", random_state=0)
    y = np.where(rng.random(50) > 0.5, 1.0, -1.0)
    from skglm import SparseLogisticRegression
    SparseLogisticRegression(alpha=1e-3, fit_intercept=False).fit(X, y)


# ---------------------------------------------------------------- optc and the CLIs

def write_model(tmp, lam):
    path = os.path.join(tmp, f"l1_logistic_{lam:g}.opt")
    with open(path, "w") as f:
        f.write(f"data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = {lam!r}\n"
                "minimize E[logistic(y, <x, w>)] + λ·l1(w)\n")
    return path


def fit_optc(optc, data, lam, tol, cap, tmp):
    model, saved = write_model(tmp, lam), os.path.join(tmp, "optc.model")
    cmd = [optc, "run", model, data.path, "--tol", repr(tol), "--time-limit", repr(cap), "--json", "--quiet",
           "--save", saved]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=cap + 120)
    except subprocess.TimeoutExpired:
        return None, None
    if out.returncode != 0:
        print(f"warning: {' '.join(cmd)} exited {out.returncode}: {out.stderr.strip()[:300]}", file=sys.stderr)
        return None, None
    r = json.loads(out.stdout)
    calib = sum((r.get(k) or {}).get("seconds", 0.0) for k in ("eta0_calibration", "n0_calibration"))
    secs = r["seconds"] + r["compile_seconds"] + calib
    # Stopped by the time limit: the weights are an answer, but past the cap; the ladder ends.
    return (None if r["status"] == "time_limit" else (secs, read_liblinear_model(saved, data))), r


def measure_cli(cmd, tmp, cap):
    """Wall seconds and peak RSS (MB, None without GNU time) of one process. The RSS is GNU
    time's: a child forked from this (large) Python process would report the parent's pages."""
    gnu_time = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    report = os.path.join(tmp, "time.txt")
    full = [gnu_time, "-f", "%M", "-o", report, *cmd] if gnu_time else cmd
    t = time.perf_counter()
    try:
        p = subprocess.run(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=cap)
    except subprocess.TimeoutExpired:
        return "cap"
    wall = time.perf_counter() - t
    if p.returncode != 0:
        print(f"warning: {' '.join(cmd)} failed: {p.stderr.decode(errors='replace').strip()[:300]}", file=sys.stderr)
        return None
    rss = None
    if gnu_time:
        with open(report) as f:
            rss = int(f.read().split()[-1]) / 1024.0
    return wall, rss


def end_to_end(optc, data, lam, tmp, repeat, cap, f_star):
    import statistics
    rows = []
    model = write_model(tmp, lam)
    out = os.path.join(tmp, "e2e.model")
    optc_run = [optc, "run", model, data.path, "--quiet", "--save", out]
    cmds = []
    if shutil.which("liblinear-train"):
        cmds.append(("liblinear-train -s 6 (default eps)",
                     ["liblinear-train", "-s", "6", "-B", "-1", "-q", "-c", repr(1.0 / (lam * data.m)), data.path, out]))
    cmds.append(("optc run (default tol)", optc_run))
    while cmds:
        label, cmd = cmds.pop(0)
        runs = []
        for _ in range(repeat):
            r = measure_cli(cmd, tmp, cap)
            if r == "cap":
                rows.append((label, f"> {cap:g} (cap)", None, None, None))
                break
            if r is None:
                break
            runs.append(r)
            if r[0] > 30:
                break  # one long run is measurement enough
        if not runs:
            if not rows or rows[-1][0] != label:
                rows.append((label, None, None, None, None))
            continue
        w = read_liblinear_model(out, data)
        f = data.objective(w, lam)
        rss = [r[1] for r in runs if r[1] is not None]
        rows.append((label, statistics.median(r[0] for r in runs), max(rss) if rss else None,
                     (f - f_star) / f_star, int((w != 0).sum())))
        if label.startswith("liblinear"):
            # optc to the accuracy LIBLINEAR's default reached, certified: gap ≤ tol·F gives
            # (F − F*)/F* ≤ tol/(1 − tol) = r. (At least 1e-12: LIBLINEAR may land on F* itself.)
            r = max((f - f_star) / f_star, 1e-12)
            tol = r / (1 + r)
            cmds.insert(0, (f"optc run --tol {tol:.2g} (LIBLINEAR's accuracy)", optc_run + ["--tol", repr(tol)]))
    return rows


# ---------------------------------------------------------------- one (data, λ)

def ladder(name, data, lam, cap, ctx):
    """[(setting, seconds or None, F or None, nnz)] for one contender, loosest first."""
    from liblinear import liblinearutil as lu
    results = []
    for setting in LADDERS[name]:
        if name == "optc":
            got, _ = fit_optc(ctx["optc"], data, lam, setting, cap, ctx["tmp"])
        else:
            if name == "liblinear":
                if "prob" not in ctx:
                    ctx["prob"] = lu.problem(data.y, data.X)
                fn = lambda: fit_liblinear(data, lam, setting, ctx["prob"])
            elif name == "skglm":
                fn = lambda: fit_skglm(data, lam, setting)
            elif name == "celer":
                fn = lambda: fit_celer(data, lam, setting)
            elif name.startswith("sklearn-"):
                fn = lambda: fit_sklearn(data, lam, setting, name.split("-")[1])
            elif name == "vw":
                if "vw" not in ctx:
                    ctx["vw"] = os.path.join(ctx["tmp"], "data.vw")
                    vw_text(data, ctx["vw"])
                fn = lambda: fit_vw(data, lam, setting, ctx["vw"], ctx["tmp"])
            got = run_forked(fn, cap)
        if got is None:
            results.append((setting, None, None, None))
            break
        secs, w = got
        f = data.objective(w, lam)
        results.append((setting, secs, f, int((w != 0).sum())))
        if ctx.get("f_star") and (f - ctx["f_star"]) / ctx["f_star"] <= ACCURACIES[-1]:
            break
    return results


def reference(data, lam, ref_cap, ctx):
    """F* from LIBLINEAR at eps 1e-8 and skglm at tol 1e-10."""
    from liblinear import liblinearutil as lu
    if "prob" not in ctx:
        ctx["prob"] = lu.problem(data.y, data.X)
    ll = run_forked(lambda: fit_liblinear(data, lam, 1e-8, ctx["prob"]), ref_cap)
    sk = run_forked(lambda: fit_skglm(data, lam, 1e-10), ref_cap)
    f_ll = None if ll is None else data.objective(ll[1], lam)
    f_sk = None if sk is None else data.objective(sk[1], lam)
    nnz = None if ll is None else int((ll[1] != 0).sum())
    return f_ll, f_sk, nnz


def fmt_time(v):
    return "—" if v is None else (f"{v:.3f}" if v < 10 else f"{v:.1f}")


def bench_one(data, lam, args, ctx):
    f_ll, f_sk, nnz_star = reference(data, lam, args.ref_cap, ctx)
    known = [f for f in (f_ll, f_sk) if f is not None]
    if not known:
        print(f"\n### {data.name}, λ = {lam:g}: no reference F* within {args.ref_cap} s, skipped\n")
        return None
    f_star = min(known)
    ctx["f_star"] = f_star
    print(f"\n### {data.name} ({data.m} × {data.d}, {data.nnz} non-zeros), λ = {lam:g}\n")
    diff = "" if len(known) < 2 else f", relative difference {abs(f_ll - f_sk) / f_star:.1e}"
    print(f"F* = {f_star:.12g}: LIBLINEAR -e 1e-8 {f_ll if f_ll is None else f'{f_ll:.12g}'} "
          f"({nnz_star} non-zeros), skglm tol 1e-10 {f_sk if f_sk is None else f'{f_sk:.12g}'}{diff}\n")
    times = {}
    lines = []
    ladders = {}
    for name in ["optc", *PEERS]:
        if name in args.skip or (name in OPTIONAL and not available(name)):
            continue
        res = ladder(name, data, lam, args.cap, ctx)
        ladders[name] = res
        reached = []
        for a in ACCURACIES:
            ok = [s for _, s, f, _ in res if s is not None and (f - f_star) / f_star <= a]
            reached.append(min(ok) if ok else None)
        times[name] = reached
        done = [r for r in res if r[1] is not None]
        best = min(done, key=lambda r: r[2]) if done else None
        capped = any(r[1] is None for r in res)
        note = ("" if best is None else f"{max(0.0, (best[2] - f_star) / f_star):.1e} ({best[3]} nnz)") + \
               (" · capped" if capped else "")
        if any(r[2] is not None and r[2] < f_star * (1 - 1e-9) for r in res):
            note += " · below F*!"
        steps = ", ".join(f"{s:g}:{'cap' if t is None else f'{t:.2f}s'}" for s, t, _, _ in res)
        lines.append(f"| {name} | " + " | ".join(fmt_time(t) for t in reached) + f" | {note} | {steps} |")
    print("| contender | " + " | ".join(f"to {a:g}" for a in ACCURACIES) + " | best (F−F*)/F* | ladder (setting: s) |")
    print("|---|" + "---:|" * len(ACCURACIES) + "---|---|")
    print("\n".join(lines))
    # The weak-regularization summary's runs, with --cs only.
    cert = None
    if args.cs:
        cert = certified(data, lam, args, ctx, f_star, ladders)
        cert["C"] = 1.0 / (lam * data.m)
    e2e = end_to_end(ctx["optc"], data, lam, ctx["tmp"], args.repeat, args.e2e_cap, f_star)
    print("\n| end to end (CLI, plain text file) | wall s (median) | peak RSS MB | (F−F*)/F* | nnz |")
    print("|---|---:|---:|---:|---:|")
    for label, wall, rss, sub, nnz in e2e:
        if wall is None or isinstance(wall, str):
            print(f"| {label} | {wall or 'failed'} | | | |")
        else:
            print(f"| {label} | {wall:.2f} | {'?' if rss is None else f'{rss:.0f}'} | {sub:.1e} | {nnz} |")
    sys.stdout.flush()
    return times, e2e, cert


def certified(data, lam, args, ctx, f_star, ladders):
    """optc at --tol 1e-4 (a certified 1e-4): its solver seconds, certified and true relative
    suboptimality; and, for LIBLINEAR at -e 1e-2 and 1e-4 (from its ladder), its seconds, the
    true accuracy r it reached, and optc's least ladder time to r."""
    got, report = (None, None) if "optc" in args.skip else fit_optc(ctx["optc"], data, lam, 1e-4, args.cap, ctx["tmp"])
    out = {"optc_s": None, "gap": None, "true": None, "peer": {}}
    if got is not None and report is not None:
        f = data.objective(got[1], lam)
        out.update(optc_s=got[0], gap=report["gap"] / abs(report["objective"]), true=max(0.0, (f - f_star) / f_star))
    optc_ladder = [(s, f) for _, s, f, _ in ladders.get("optc", []) if s is not None]
    if got is not None:
        optc_ladder.append((got[0], data.objective(got[1], lam)))
    for setting, secs, f, _ in ladders.get("liblinear", []):
        if secs is None or setting not in (1e-2, 1e-4):
            continue
        r = max(0.0, (f - f_star) / f_star)
        ok = [s for s, fo in optc_ladder if (fo - f_star) / f_star <= r]
        out["peer"][setting] = (secs, r, min(ok) if ok else None)
    line = "optc --tol 1e-4: " + ("failed or capped" if out["optc_s"] is None else
                                  f"{out['optc_s']:.3f} s, certified {out['gap']:.1e}, true {out['true']:.1e}, "
                                  f"certified/true {out['gap'] / max(out['true'], 1e-16):.2g} (past F*'s precision "
                                  "when true < 1e-10)")
    for e, (secs, r, o) in sorted(out["peer"].items()):
        line += f"; LIBLINEAR -e {e:g}: {secs:.3f} s to {r:.1e}, optc to that accuracy {fmt_time(o)} s"
    print(f"\n{line}")
    return out


def certificate_summary(rows):
    print("\n## Summary: weak regularization (optc / LIBLINEAR -s 6, solver seconds)\n")
    print("To LIBLINEAR -e 1e-4's accuracy (target ≤ 1.0; blank where LIBLINEAR's ladder stopped before "
          "-e 1e-4, having reached 1e-4); a certified 1e-4 against LIBLINEAR -e 1e-4's time (target ≤ 2.0); "
          "the ratio of optc's certified gap to its true suboptimality at the end of that run; skglm's and "
          "celer's time to a true 1e-4, and optc's over theirs.\n")
    print("| data | λ | C | LIBLINEAR -e 1e-4 s | its r | optc s to r | ratio | optc certified 1e-4 s | ratio "
          "| certified / true | skglm to 1e-4 s | ratio | celer to 1e-4 s | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, lam, (times, _, cert) in rows:
        peer = cert["peer"].get(1e-4)
        secs, r, o = peer if peer else (None, None, None)
        ratio = "" if o is None or secs is None else f"{o / secs:.2f}"
        cs = cert["optc_s"]
        cratio = "" if cs is None or secs is None else f"{cs / secs:.2f}"
        # Below 1e-10 the true suboptimality is past the reference's own precision.
        trust = ("" if cert["gap"] is None else "— (true < 1e-10)" if cert["true"] < 1e-10
                 else f"{cert['gap'] / cert['true']:.2g}")
        o4 = times.get("optc", [None] * len(ACCURACIES))[-1]
        others = ""
        for peer in ("skglm", "celer"):
            p4 = times[peer][-1] if peer in times else None
            others += f" | {fmt_time(p4) if peer in times else 'not run'} | " + \
                ("" if o4 is None or p4 is None else f"{o4 / p4:.2f}")
        print(f"| {name} | {lam:.3g} | {cert['C']:g} | {fmt_time(secs)} | "
              f"{'' if r is None else f'{r:.1e}'} | {fmt_time(o)} | {ratio} | {fmt_time(cs)} | {cratio} | {trust}"
              f"{others} |")


def summary(rows):
    print("\n## Summary: optc / best peer (time to accuracy, solver only), and CLI optc / liblinear-train\n")
    print("| data | λ | to 1e-2: optc s | best peer | ratio | to 1e-4: optc s | best peer | ratio "
          "| CLI liblinear s | CLI optc s, LIBLINEAR's accuracy | ratio | CLI optc s, default tol | ratio |")
    print("|---|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for name, lam, (times, e2e, _) in rows:
        cells = []
        for k in (1, 3):
            o = times.get("optc", [None] * 4)[k]
            peers = [(t[k], p) for p, t in times.items() if p != "optc" and t[k] is not None]
            best = min(peers) if peers else None
            ratio = "" if o is None or best is None else f"{o / best[0]:.2f}"
            if o is None and best is not None:
                ratio = "∞ (optc not reached)"
            cells += [fmt_time(o), "—" if best is None else f"{best[1]} {fmt_time(best[0])}", ratio]
        def wall(prefix):
            row = next((r for r in e2e if r[0].startswith(prefix)), None)
            return None if row is None or isinstance(row[1], str) else row[1]
        lw = wall("liblinear")
        cells.append(fmt_time(lw))
        for prefix in ("optc run --tol", "optc run (default"):
            ow = wall(prefix)
            cells += [fmt_time(ow), "" if ow is None or lw is None else f"{ow / lw:.2f}"]
        print(f"| {name} | {lam:g} | " + " | ".join(cells) + " |")


# ---------------------------------------------------------------- λ search

def find_lambdas(data, ctx, cap):
    """Log-bisection of λ for ~100 and ~1000 non-zeros (LIBLINEAR at eps 1e-4)."""
    import math
    from liblinear import liblinearutil as lu
    prob = lu.problem(data.y, data.X)
    lmax = lambda_max(data)
    found = []
    # A set with few features (a9a: 123, w8a: 300) cannot have 1000 non-zeros: there the two
    # targets are half the features and 90% of them.
    for target in (min(100, data.d // 2), min(1000, data.d * 9 // 10)):
        lo, hi = math.log(lmax * 1e-5), math.log(lmax)  # nnz(lo) ≥ target ≥ nnz(hi)
        best = None
        for _ in range(14):
            mid = (lo + hi) / 2
            got = run_forked(lambda: fit_liblinear(data, math.exp(mid), 1e-4, prob), cap)
            if got is None:
                lo = mid  # too slow: larger λ are cheaper
                continue
            nnz = int((got[1] != 0).sum())
            if best is None or abs(math.log(nnz + 1) - math.log(target)) < abs(math.log(best[1] + 1) - math.log(target)):
                best = (math.exp(mid), nnz)
            if abs(nnz - target) <= 0.1 * target:
                break
            if nnz > target:
                lo = mid
            else:
                hi = mid
        print(f"{data.name}: λ_max = {lmax:.4g}; λ = {best[0]:.3g} gives {best[1]} non-zeros (target {target})")
        sys.stdout.flush()
        found.append(best)
    return found


# ---------------------------------------------------------------- main

def materialise(name, source, args, tmp):
    path = os.path.join(tmp, name + ".svm")
    if isinstance(source, dict):
        cmd = [binary("optc-synth", args.synth), "--rows", str(source["rows"]), "--features", str(source["features"]), "--seed",
               str(source["seed"]), "--quiet", "-o", path]
        subprocess.run(cmd, check=True)
        return path
    src = os.path.join(args.data_dir, source)
    if not os.path.exists(src):
        print(f"skipping {name}: {src} not found", file=sys.stderr)
        return None
    with open(path, "wb") as out:
        subprocess.run(["xz", "-dc", src], stdout=out, check=True)
    return path


def main():
    ensure_environment()
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", default=os.path.join(ROOT, "..", "shared", "data"))
    p.add_argument("--only", action="append", default=[], help="run the sets whose name contains this")
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}, cap 20 s")
    p.add_argument("--cap", type=float, default=60.0, help="seconds per run")
    p.add_argument("--ref-cap", type=float, default=600.0, help="seconds per reference (F*) run")
    p.add_argument("--repeat", type=int, default=3, help="end-to-end runs per command (median)")
    p.add_argument("--e2e-cap", type=float, default=300.0, help="seconds per end-to-end CLI run")
    p.add_argument("--skip", action="append", default=[], help="leave out a contender (e.g. vw)")
    p.add_argument("--find-lambdas", action="store_true")
    p.add_argument("--cs", help="LIBLINEAR's C values instead of the recorded λ (λ = 1/(C·m)), "
                               "comma-separated, e.g. 1,10,100: weak regularization")
    p.add_argument("--optc")
    p.add_argument("--synth")
    p.add_argument("--tmp", help="work directory (default: a fresh temporary one, removed at the end)")
    args = p.parse_args()
    if args.quick:
        args.cap = min(args.cap, 20.0)
        args.ref_cap = min(args.ref_cap, 120.0)
    args.optc = binary("optc", args.optc or os.environ.get("OPTC"))
    tmp = args.tmp or tempfile.mkdtemp(prefix="optc-peers-")
    os.makedirs(tmp, exist_ok=True)
    import platform
    print(f"# optc vs peers, l1-logistic\n\n{platform.node()}, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M')}; optc {args.optc}; per-run cap {args.cap:g} s\n")
    warm_up_skglm()
    rows = []
    try:
        for name, source, lams in SETS:
            if args.only and not any(o in name for o in args.only):
                continue
            if args.quick and not args.only and name not in QUICK:
                continue
            path = materialise(name, source, args, tmp)
            if path is None:
                continue
            data = Data(name, path)
            ctx = {"optc": args.optc, "tmp": tmp}
            if args.find_lambdas:
                find_lambdas(data, ctx, args.ref_cap)
            else:
                if args.cs:
                    lams = [(1.0 / (float(c) * data.m), None) for c in args.cs.split(",")]
                for lam, _ in lams:
                    r = bench_one(data, lam, args, ctx)
                    if r is not None:
                        rows.append((name, lam, r))
            del data
            os.unlink(path)
        if rows:
            summary(rows)
            if args.cs:
                certificate_summary(rows)
    finally:
        if not args.tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
