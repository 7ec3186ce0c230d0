#!/usr/bin/env python3
"""What the rows' weights cost, and class weights against LIBLINEAR's -wi.

1. Unit weights: each model of the intercept benchmarks (ℓ2- and ℓ1-logistic, the squared
   hinge and the hinge, all with a free b, λ = 1/(C·m)) run by `optc run` once as written and
   once weighted (`s: weights`, `E[s·loss]`, `--weights` a file of ones): the same problem, so
   the same F, and the time to a certified 1e-4 should not move. Seconds are the report's solve
   time (`seconds`), medians of --repeat runs.
2. Class weights: `--class-weight 1=W` on ℓ2-logistic without b at C, against Debian's
   `liblinear-train -s 0 -c C -wi 1 W -e 1e-10` (the same problem: C·Σᵢ ωᵢℓᵢ + ½‖w‖², ωᵢ = W on
   the positive rows). F is recomputed here from both models; the labels both predict on the
   training rows are compared.

    python benches/weights.py ../shared/data/a9a.xz ../shared/data/w8a.xz --repeat 3
"""

import argparse
import json
import lzma
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_svmlight_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTC = os.path.join(ROOT, "target", "release", "optc")

MODELS = [
    ("logistic", "l2sq", 1.0),
    ("logistic", "l1", 1.0),
    ("squared_hinge", "l2sq", 1.0),
    ("hinge", "l2sq", 1.0),
    ("logistic", "l2sq", 0.01),
]


def model_text(loss, penalty, lam, weighted, intercept=True):
    s = ", s: weights" if weighted else ""
    times = "s·" if weighted else ""
    b = "var b: scalar\n" if intercept else ""
    margin = "<x, w> + b" if intercept else "<x, w>"
    return (f"data x: sparse, y: labels{s}\nvar w: vec[dim(x)]\n{b}param λ = {lam!r}\n"
            f"minimize E[{times}{loss}(y, {margin})] + λ·{penalty}(w)\n")


def run(model, data, extra, tmp):
    path = os.path.join(tmp, "m.opt")
    with open(path, "w") as f:
        f.write(model)
    out = subprocess.run([OPTC, "run", path, data, "--json", "--quiet", *extra], capture_output=True, text=True,
                         timeout=600)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout)


def unit_weights(data, rows, repeat, tmp):
    ones = os.path.join(tmp, "ones.txt")
    with open(ones, "w") as f:
        f.write("1\n" * rows)
    name = os.path.basename(data).split(".")[0]
    for loss, penalty, C in MODELS:
        lam = 1.0 / (C * rows)
        times = {}
        for weighted in (False, True):
            extra = ["--weights", ones] if weighted else []
            reports = [run(model_text(loss, penalty, lam, weighted), data, extra, tmp) for _ in range(repeat)]
            times[weighted] = (statistics.median(r["seconds"] for r in reports), reports[0])
        (t0, r0), (t1, r1) = times[False], times[True]
        print(f"| {name} | {C:g} | {loss} + {penalty} | {r0['solver']} | {t0:.3f} | {r1['solver']} | {t1:.3f} | "
              f"{t1 / t0:.2f} | {abs(r1['objective'] - r0['objective']) / r0['objective']:.1e} |", flush=True)


def f_of(X, y, w, weights, C):
    """F = (1/m)·Σ ωᵢ log(1 + exp(−yᵢ⟨xᵢ, w⟩)) + (λ/2)‖w‖², λ = 1/(C·m)."""
    m = X.shape[0]
    z = y * (X @ w)
    return float(np.sum(weights * np.logaddexp(0, -z)) / m + 0.5 / (C * m) * w @ w)


def liblinear_weights(path, d):
    with open(path) as f:
        lines = f.read().split("\n")
    labels = next(l for l in lines if l.startswith("label")).split()[1:]
    start = lines.index("w") + 1
    w = np.array([float(l.split()[0]) for l in lines[start:start + d]])
    # LIBLINEAR's w scores its first label: flip it when that label is −1.
    return w if labels[0] in ("1", "+1") else -w


def class_weights(data, rows, C, W, tmp):
    X, y = load_svmlight_file(lzma.open(data) if data.endswith(".xz") else data)
    y = np.where(y > 0, 1.0, -1.0)
    plain = os.path.join(tmp, "data.svm")
    with open(plain, "wb") as f:
        f.write((lzma.open(data) if data.endswith(".xz") else open(data, "rb")).read())
    lam = 1.0 / (C * rows)
    saved = os.path.join(tmp, "optc.model")
    r = run(model_text("logistic", "l2sq", lam, True, intercept=False), plain,
            ["--class-weight", f"1={W:g}", "--tol", "1e-10", "--save", saved], tmp)
    d = X.shape[1]
    w_optc = liblinear_weights(saved, d)
    ref = os.path.join(tmp, "ll.model")
    subprocess.run(["liblinear-train", "-q", "-s", "0", "-c", f"{C:g}", "-w1", f"{W:g}", "-e", "1e-10", plain, ref],
                   check=True, timeout=600)
    w_ll = liblinear_weights(ref, d)
    weights = np.where(y > 0, W, 1.0)
    f_optc, f_ll = f_of(X, y, w_optc, weights, C), f_of(X, y, w_ll, weights, C)
    same = np.mean(np.sign(X @ w_optc) == np.sign(X @ w_ll))
    name = os.path.basename(data).split(".")[0]
    print(f"| {name} | {C:g} | 1={W:g} | {f_optc:.10f} | {f_ll:.10f} | {abs(f_optc - f_ll) / f_ll:.1e} | "
          f"{same:.4f} | {r['status']} |", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", nargs="+")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        counts = {}
        for data in args.data:
            with (lzma.open(data) if data.endswith(".xz") else open(data, "rb")) as f:
                counts[data] = sum(1 for line in f if line.strip())
        print("| data | C | model | solver | s | solver, weighted | s, weighted | ratio | ΔF/F |")
        print("|---|---|---|---|---:|---|---:|---:|---:|")
        for data in args.data:
            unit_weights(data, counts[data], args.repeat, tmp)
        print()
        print("| data | C | class weight | F optc | F LIBLINEAR | ΔF/F | same labels | optc status |")
        print("|---|---|---|---:|---:|---:|---:|---|")
        for data in args.data:
            class_weights(data, counts[data], 1.0, 5.0, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
