#!/usr/bin/env python3
"""optc vs LIBLINEAR on the same l1-logistic objective, F(w) = (1/m) Σ log(1 + e^{-y⟨x,w⟩}) + λ‖w‖₁.

LIBLINEAR's L1R_LR (-s 6) minimizes ‖w‖₁ + C Σ log(1 + e^{-y⟨x,w⟩}); with C = 1/(λm) its
minimizer is F's. Its run at tolerance 1e-6 gives the reference F*; the table reports each
contender's F, relative gap (F − F*)/F* and training time (data loading excluded for both;
optc's time includes compiling the model and calibrating η₀).

    pip install liblinear-official scikit-learn
    cargo build --release
    python3 benches/peers.py [DATA_DIR]          (default ../shared/data)
"""
import json
import lzma
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from liblinear.liblinearutil import parameter, problem, train
from sklearn.datasets import load_svmlight_file

HERE = os.path.dirname(os.path.abspath(__file__))
OPTC = os.path.join(HERE, "..", "target", "release", "optc")
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "shared", "data")
SETS = [("a9a.xz", 1e-4), ("debian-desc.binary.train.xz", 1e-5), ("debian-files.binary.train.xz", 1e-5)]


def objective(X, y, w, lam):
    a = X @ w
    return float(np.mean(np.logaddexp(0.0, -y * a)) + lam * np.abs(w).sum())


def liblinear(X, y, lam, eps):
    m = X.shape[0]
    prob = problem(y, X)
    t = time.perf_counter()
    model = train(prob, parameter(f"-s 6 -c {1.0 / (lam * m)!r} -e {eps} -q"))
    secs = time.perf_counter() - t
    w, _ = model.get_decfun()
    w = np.array(w[: X.shape[1]] + [0.0] * max(0, X.shape[1] - len(w)))
    # LIBLINEAR's first label is its positive class.
    if model.get_labels()[0] != 1:
        w = -w
    return w, secs


def optc(path, lam, epochs):
    with tempfile.NamedTemporaryFile("w", suffix=".opt", delete=False) as f:
        f.write(f"data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = {lam!r}\n"
                "minimize E[logistic(y, <x, w>)] + λ·l1(w)\n")
    out = subprocess.run([OPTC, "run", f.name, path, "--json", "--quiet", "--epochs", str(epochs)],
                         check=True, capture_output=True, text=True).stdout
    os.unlink(f.name)
    r = json.loads(out)
    # Everything after the data is read: compiling, calibrating η₀, solving.
    calibration = (r.get("eta0_calibration") or {}).get("seconds", 0.0)
    return r["objective"], r["seconds"] + r["compile_seconds"] + calibration, r["nnz"]


def main():
    print("| data | λ | contender | seconds | F | (F − F*)/F* | nnz |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name, lam in SETS:
        path = os.path.join(DATA, name)
        if not os.path.exists(path):
            print(f"skipping {path}", file=sys.stderr)
            continue
        with lzma.open(path) as fh:
            X, y = load_svmlight_file(fh, zero_based=False)
        X = X.tocsr()
        w_star, _ = liblinear(X, y, lam, 1e-6)
        f_star = objective(X, y, w_star, lam)
        rows = []
        for eps in [0.01]:
            w, secs = liblinear(X, y, lam, eps)
            rows.append((f"LIBLINEAR -s 6 -e {eps}", secs, objective(X, y, w, lam), int((w != 0).sum())))
        for epochs in [1, 10, 50]:
            f, secs, nnz = optc(path, lam, epochs)
            rows.append((f"optc fobos, {epochs} epochs", secs, f, nnz))
        for label, secs, f, nnz in rows:
            print(f"| {name.replace('.xz', '')} | {lam:g} | {label} | {secs:.3f} | {f:.6f} | {(f - f_star) / f_star:.2e} | {nnz} |")
        print(f"| {name.replace('.xz', '')} | {lam:g} | F* (LIBLINEAR -e 1e-6) | | {f_star:.6f} | 0 | {int((w_star != 0).sum())} |")


if __name__ == "__main__":
    main()
