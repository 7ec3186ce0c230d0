#!/usr/bin/env python3
"""End to end, as a user runs them: `optc run` against LIBLINEAR's `liblinear-train -s 6` on the
same l1-logistic objective

    F(w) = (1/m) Σᵢ log(1 + exp(−yᵢ⟨xᵢ, w⟩)) + λ‖w‖₁.

LIBLINEAR's L1R_LR minimises ‖w‖₁ + C Σ log(1 + e^{−y⟨x,w⟩}); with C = 1/(λm) its minimiser is
F's. Both read the same decompressed LIBSVM file; every time is the wall time of the whole
process (parsing, solving, writing the model). F is computed here, in float64, from the model
file each one wrote, so no contender grades itself. F* is the lowest F any run reached (LIBLINEAR
at -e 1e-6 and optc at --tol 1e-8), and the two are printed for the cross-check.

    apt-get install liblinear-tools            # liblinear-train
    pip install numpy scipy scikit-learn
    cargo build --release
    python3 benches/peers.py [DATA_DIR] [SET ...]   # default ../shared/data, all sets

Each run has a time cap (optc `--time-limit`, LIBLINEAR a process timeout); a run stopped by it is
shown as such, with the F it reached (optc) or as not finished (LIBLINEAR).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_svmlight_file

HERE = os.path.dirname(os.path.abspath(__file__))
OPTC = os.path.join(HERE, "..", "target", "release", "optc")
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "shared", "data")
ONLY = sys.argv[2:]
CAP_SECONDS = 120
SETS = [
    ("a9a.xz", 1e-4),
    ("debian-desc.binary.train.xz", 1.5e-4),
    ("debian-files.binary.train.xz", 1.1e-5),
]
LIBLINEAR_EPS = [0.01, 1e-3, 1e-4, 1e-5, 1e-6]
OPTC_TOL = [1e-2, 1e-3, 1e-4, 1e-6, 1e-8]


def read_model(path, d):
    """Weights of a LIBLINEAR-format model file, as the decision for label +1."""
    with open(path) as f:
        lines = f.read().split("\n")
    labels = [float(v) for v in next(l for l in lines if l.startswith("label")).split()[1:]]
    k = lines.index("w")
    w = np.array([float(l.split()[0]) for l in lines[k + 1:] if l.strip()])
    w = np.concatenate([w, np.zeros(max(0, d - len(w)))])[:d]
    return w if labels[0] == 1 else -w


def objective(X, y, w, lam):
    return float(np.mean(np.logaddexp(0.0, -y * (X @ w))) + lam * np.abs(w).sum())


def timed(cmd, timeout=None):
    t = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=timeout)
    return time.perf_counter() - t, out


def main():
    if shutil.which("liblinear-train") is None:
        sys.exit("liblinear-train not found: apt-get install liblinear-tools")
    tmp = tempfile.mkdtemp()
    model_file = os.path.join(tmp, "model.opt")
    print("| data | λ | run | wall s | (F − F*)/F* | optc's certified gap / F | nnz |")
    print("|---|---:|---|---:|---:|---:|---:|")
    summary = []
    for name, lam in SETS:
        src = os.path.join(DATA, name)
        if ONLY and not any(o in name for o in ONLY):
            continue
        if not os.path.exists(src):
            print(f"skipping {src}", file=sys.stderr)
            continue
        plain = os.path.join(tmp, name.replace(".xz", ""))
        subprocess.run(f"xz -dc '{src}' > '{plain}'", shell=True, check=True)
        X, y = load_svmlight_file(plain, zero_based=False)
        X = X.tocsr()
        m, d = X.shape
        with open(model_file, "w") as f:
            f.write(f"data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = {lam!r}\n"
                    "minimize E[logistic(y, <x, w>)] + λ·l1(w)\n")
        runs = []
        for eps in LIBLINEAR_EPS:
            out = os.path.join(tmp, "ll.model")
            try:
                secs, _ = timed(["liblinear-train", "-s", "6", "-c", repr(1.0 / (lam * m)), "-e", str(eps), "-B", "-1",
                                 "-q", plain, out], timeout=CAP_SECONDS)
            except subprocess.TimeoutExpired:
                print(f"| {name.replace('.xz', '')} | {lam:g} | liblinear-train -e {eps:g} | > {CAP_SECONDS} | not finished | | |")
                continue
            w = read_model(out, d)
            runs.append((f"liblinear-train -e {eps:g}" + (" (default)" if eps == 0.01 else ""), secs,
                         objective(X, y, w, lam), None, int((w != 0).sum())))
        for tol in OPTC_TOL:
            out = os.path.join(tmp, "optc.model")
            secs, res = timed([OPTC, "run", model_file, plain, "--tol", str(tol), "--time-limit", str(CAP_SECONDS), "--json",
                               "--quiet", "--save", out])
            r = json.loads(res.stdout)
            w = read_model(out, d)
            runs.append((f"optc run --tol {tol:g} ({r['solver']}, {r['epochs']} epochs, {r['status']})", secs,
                         objective(X, y, w, lam), r["relative_gap"], int((w != 0).sum())))
        f_star = min(f for _, _, f, _, _ in runs)
        ll_best = min(f for label, _, f, _, _ in runs if label.startswith("liblinear"))
        optc_best = min(f for label, _, f, _, _ in runs if label.startswith("optc"))
        short = name.replace(".xz", "")
        for label, secs, f, gap, nnz in runs:
            g = "" if gap is None else f"{gap:.1e}"
            print(f"| {short} | {lam:g} | {label} | {secs:.2f} | {(f - f_star) / f_star:.1e} | {g} | {nnz} |")
        print(f"| {short} | | F* = {f_star:.10f} (best LIBLINEAR {ll_best:.10f}, best optc {optc_best:.10f}) | | | | |")
        for target in [1e-2, 1e-4]:
            def first(prefix):
                ok = [s for label, s, f, _, _ in runs if label.startswith(prefix) and (f - f_star) / f_star <= target]
                return min(ok) if ok else None
            summary.append((short, target, first("optc"), first("liblinear"), runs[0][1]))
        os.unlink(plain)
    print()
    print("| data | target (F − F*)/F* | optc wall s | liblinear-train wall s | optc / liblinear | optc / liblinear default |")
    print("|---|---:|---:|---:|---:|---:|")
    for short, target, o, l, default in summary:
        fmt = lambda v: "not reached" if v is None else f"{v:.2f}"
        ratio = "" if o is None or l is None else f"{o / l:.2f}"
        print(f"| {short} | {target:g} | {fmt(o)} | {fmt(l)} | {ratio} | {'' if o is None else f'{o / default:.2f}'} |")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
