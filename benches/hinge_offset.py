#!/usr/bin/env python3
"""Dual CD for the hinge at a fixed offset b: how many epochs the problem with a free intercept
needs once b is already right, against the problem without b (b = 0).

    pip install numba scikit-learn
    python benches/hinge_offset.py /work/shared/data/w8a.xz --C 1 --b -1.02999 0

For each b, plain dual CD (Hsieh et al. 2008, LIBLINEAR's -s 3 without shrinking, a fresh
permutation each epoch, seed 1) on min_w ½‖w‖² + C·Σᵢ max(0, 1 − yᵢ(⟨xᵢ, w⟩ + b)), whose dual is
max over 0 ≤ α ≤ C of Σᵢ αᵢ(1 − yᵢb) − ½‖Σᵢ αᵢyᵢxᵢ‖². Printed after 50, 100, 200, 400 and 800
epochs: the relative duality gap of that fixed-offset problem, and Σᵢ αᵢyᵢ (0 at the free
problem's optimum when b is its b*). With b = b* the fixed-offset problem has the free problem's
solution, so its epochs are what any method pays that ends with dual CD at the right offset
(the outer 1-D search on b of ALGORITHMS.md §12): the cost b adds that no step rule on b removes.
"""

import argparse
import lzma

import numba
import numpy as np
from sklearn.datasets import load_svmlight_file


@numba.njit(cache=True)
def epoch(indptr, indices, data, y, alpha, w, q, C, b, perm):
    for i in perm:
        g = b
        for p in range(indptr[i], indptr[i + 1]):
            g += data[p] * w[indices[p]]
        G = y[i] * g - 1.0
        a = alpha[i]
        pg = min(G, 0.0) if a == 0.0 else (max(G, 0.0) if a == C else G)
        if abs(pg) > 1e-12:
            an = min(max(a - G / q[i], 0.0), C)
            d = (an - a) * y[i]
            alpha[i] = an
            for p in range(indptr[i], indptr[i + 1]):
                w[indices[p]] += d * data[p]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--b", type=float, nargs="+", default=[0.0])
    args = ap.parse_args()
    opener = lzma.open if args.file.endswith(".xz") else open
    with opener(args.file, "rb") as f:
        X, y = load_svmlight_file(f)
    X, y = X.tocsr(), np.where(y == np.max(y), 1.0, -1.0)
    m, d = X.shape
    q = np.maximum(np.asarray(X.multiply(X).sum(1)).ravel(), 1e-12)
    print("| b | epochs | relative gap at b | Σ αᵢyᵢ |")
    print("|---:|---:|---:|---:|")
    for b in args.b:
        alpha, w = np.zeros(m), np.zeros(d)
        rng = np.random.default_rng(1)
        for ep in range(1, 801):
            epoch(X.indptr, X.indices, X.data, y, alpha, w, q, args.C, b, rng.permutation(m))
            if ep in (50, 100, 200, 400, 800):
                primal = 0.5 * w @ w + args.C * np.maximum(0.0, 1.0 - y * (X @ w + b)).sum()
                dual = alpha.sum() - b * (alpha * y).sum() - 0.5 * w @ w
                print(f"| {b:g} | {ep} | {(primal - dual) / primal:.1e} | {(alpha * y).sum():.2f} |", flush=True)


if __name__ == "__main__":
    main()
