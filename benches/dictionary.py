#!/usr/bin/env python3
"""Dictionary learning (Mairal 2013 §4.3): optc against scikit-learn's MiniBatchDictionaryLearning
on the same patches, the same λ, K and constraint, and the same held-out cost.

The data: 20×20 patches of the two photographs that ship inside scikit-learn
(`load_sample_images`, no download), in grey levels, each patch centred and the whole set
scaled to unit variance per pixel ("whitened" in the simple sense); --train and --test patches,
drawn with a seed, the test ones from other positions.

The cost of a dictionary D (m × K, atoms in the ℓ2 ball of radius 1) on a signal x:

    ℓ(x, D) = min over α of ½‖x − Dα‖² + λ‖α‖₁           (λ₂ = 0, as scikit-learn has none)

and the held-out cost is its mean over the test patches, computed here for every contender's D
by one coder (scikit-learn's `sparse_encode`, lasso_cd, tol 1e-8): no contender grades itself.

Contenders, each from scratch, one run per budget, wall time of the fit only (the data is read
before the clock starts for scikit-learn; optc's "seconds" excludes parsing):
  optc     `optc run dict.opt train.svm --epochs E --save D.txt --json` for E in --epochs,
           the model `E[sparse_code(x, D, λ, 0)]` with `st columns(D) ∈ L2Ball(1)` (and, with
           --structured, `+ γ·group_linf(groups(load("squares.txt")), D)` over the 2×2 squares);
  sklearn  MiniBatchDictionaryLearning(n_components=K, alpha=λ, batch_size=100,
           max_iter=E, fit_algorithm="cd", transform_algorithm="lasso_cd", random_state=seed).
  spams    when `import spams` works (`pip install spams-bin`): trainDL(mode=2, lambda1=λ,
           lambda2=0, K, batchsize=100, iter=E·n/100, numThreads=2), the same ball.

The summary's ratio: optc's least time to reach the held-out cost of scikit-learn's last
budget, over scikit-learn's time for it (target ≤ 0.5).

    cargo build --release
    python3 benches/dictionary.py --train 20000 --test 2000 --epochs 1,2,4
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_sample_images
from sklearn.decomposition import MiniBatchDictionaryLearning, sparse_encode
from sklearn.feature_extraction.image import extract_patches_2d

HERE = os.path.dirname(os.path.abspath(__file__))
# The binary: $OPTC (tests/docs.rs passes the one it built), else the release build.
OPTC = os.environ.get("OPTC") or os.path.join(HERE, "..", "target", "release", "optc")


def patches(n, size, seed):
    rng = np.random.RandomState(seed)
    images = [img.mean(axis=2) / 255.0 for img in load_sample_images().images]
    per = n // len(images) + 1
    out = np.concatenate([extract_patches_2d(img, (size, size), max_patches=per, random_state=rng) for img in images])
    out = out.reshape(len(out), -1)[:n]
    out -= out.mean(axis=1, keepdims=True)
    return out


def write_svm(path, X):
    with open(path, "w") as f:
        for x in X:
            f.write("0 " + " ".join(f"{j + 1}:{v:.7g}" for j, v in enumerate(x) if v != 0.0) + "\n")


def squares(size, path):
    with open(path, "w") as f:
        for r in range(size - 1):
            for c in range(size - 1):
                p = r * size + c + 1
                f.write(f"{p} {p + 1} {p + size} {p + size + 1}\n")


def held_out_cost(D, X, lam):
    """Mean over X of min_α ½‖x − Dα‖² + λ‖α‖₁, D (m × K) with its atoms as columns."""
    codes = sparse_encode(X, D.T, algorithm="lasso_cd", alpha=lam, max_iter=5000)
    r = X - codes @ D.T
    return float(np.mean(0.5 * (r * r).sum(axis=1) + lam * np.abs(codes).sum(axis=1)))


def read_optc_dictionary(path):
    return np.loadtxt(path, comments="#", ndmin=2)


def run_optc(model, train, epochs, seed, extra=()):
    with tempfile.NamedTemporaryFile(suffix=".txt", delete=False) as f:
        saved = f.name
    out = subprocess.run(
        [OPTC, "run", model, train, "--epochs", str(epochs), "--seed", str(seed), "--save", saved, "--json", "--quiet", *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    r = json.loads(out.stdout)
    D = read_optc_dictionary(saved)
    os.unlink(saved)
    # The fit alone: the final evaluation codes every signal, which scikit-learn's fit does not.
    return D, r["seconds"] - r.get("check_seconds", 0.0), r


def run_sklearn(X, k, lam, epochs, seed):
    m = MiniBatchDictionaryLearning(
        n_components=k,
        alpha=lam,
        batch_size=100,
        max_iter=epochs,
        fit_algorithm="cd",
        transform_algorithm="lasso_cd",
        random_state=seed,
        tol=0.0,
        max_no_improvement=None,
    )
    t = time.perf_counter()
    m.fit(X)
    return m.components_.T, time.perf_counter() - t


def run_spams(X, k, lam, epochs, seed):
    import spams

    np.random.seed(seed)
    Xf = np.asfortranarray(X.T)
    t = time.perf_counter()
    D = spams.trainDL(
        Xf, K=k, lambda1=lam, lambda2=0.0, mode=2, batchsize=100, iter=epochs * X.shape[0] // 100, numThreads=2, verbose=False
    )
    return np.asarray(D), time.perf_counter() - t


def have_spams():
    try:
        import spams  # noqa: F401

        return True
    except ImportError:
        return False


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", type=int, default=20000)
    p.add_argument("--test", type=int, default=2000)
    p.add_argument("--size", type=int, default=20)
    p.add_argument("--atoms", type=int, default=256)
    p.add_argument("--lam", type=float, default=0.15)
    p.add_argument("--gamma", type=float, default=0.0, help="γ of the structured term; 0 leaves it out")
    p.add_argument("--epochs", default="1,2,4")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--figure", help="optc's atoms after its last budget as an image (--plot: .png or .svg)")
    p.add_argument("--smoke", action="store_true",
                   help="a few patches and atoms, one epoch: what tests/docs.rs runs to check the figures' command (docs/figures.sh)")
    a = p.parse_args()
    if a.smoke:
        a.train, a.test, a.atoms, a.epochs = 300, 30, 16, "1"
    epochs = [int(e) for e in a.epochs.split(",")]

    X = patches(a.train + a.test, a.size, a.seed)
    X /= X.std()
    rng = np.random.RandomState(a.seed)
    order = rng.permutation(len(X))
    Xtr, Xte = X[order[: a.train]], X[order[a.train :]]
    work = tempfile.mkdtemp()
    train = os.path.join(work, "train.svm")
    write_svm(train, Xtr)
    model = os.path.join(work, "dict.opt")
    term = ""
    if a.gamma > 0:
        squares(a.size, os.path.join(work, "squares.txt"))
        term = f' + {a.gamma}·group_linf(groups(load("squares.txt")), D)'
    with open(model, "w") as f:
        f.write(
            f"data x: sparse\nvar D: mat[dim(x), {a.atoms}]\n"
            f"minimize E[sparse_code(x, D, {a.lam}, 0)]{term}\nst columns(D) ∈ L2Ball(1)\n"
        )
    print(f"# dictionary learning: {a.train} train and {a.test} test patches of {a.size}×{a.size}, K = {a.atoms}, λ = {a.lam}, γ = {a.gamma}")
    print()
    print("| contender | epochs | fit s | held-out cost | zero entries of D |")
    print("|---|---:|---:|---:|---:|")
    rows = []
    for e in epochs:
        extra = ["--plot", os.path.abspath(a.figure)] if a.figure and e == epochs[-1] else []
        D, secs, _ = run_optc(model, train, e, a.seed, extra)
        c = held_out_cost(D, Xte, a.lam)
        rows.append(("optc", e, secs, c))
        print(f"| optc | {e} | {secs:.2f} | {c:.5f} | {np.mean(D == 0):.1%} |", flush=True)
    if a.gamma == 0:
        for e in epochs:
            D, secs = run_sklearn(Xtr, a.atoms, a.lam, e, a.seed)
            c = held_out_cost(D, Xte, a.lam)
            rows.append(("sklearn", e, secs, c))
            print(f"| scikit-learn | {e} | {secs:.2f} | {c:.5f} | {np.mean(D == 0):.1%} |", flush=True)
        if have_spams():
            for e in epochs:
                D, secs = run_spams(Xtr, a.atoms, a.lam, e, a.seed)
                c = held_out_cost(D, Xte, a.lam)
                rows.append(("spams", e, secs, c))
                print(f"| SPAMS trainDL | {e} | {secs:.2f} | {c:.5f} | {np.mean(D == 0):.1%} |", flush=True)
        peer = [r for r in rows if r[0] == "sklearn"][-1]
        ours = [r for r in rows if r[0] == "optc" and r[3] <= peer[3]]
        print()
        if ours:
            best = min(ours, key=lambda r: r[2])
            print(f"optc reaches scikit-learn's held-out cost {peer[3]:.5f} ({peer[1]} epochs, {peer[2]:.2f} s) in {best[2]:.2f} s ({best[1]} epochs): ratio {best[2] / peer[2]:.2f}")
        else:
            print(f"optc does not reach scikit-learn's held-out cost {peer[3]:.5f} within its budgets")
        spams_rows = [r for r in rows if r[0] == "spams"]
        if spams_rows:
            peer = spams_rows[-1]
            ours = [r for r in rows if r[0] == "optc" and r[3] <= peer[3]]
            if ours:
                best = min(ours, key=lambda r: r[2])
                print(f"optc reaches SPAMS's held-out cost {peer[3]:.5f} ({peer[1]} epochs, {peer[2]:.2f} s) in {best[2]:.2f} s ({best[1]} epochs): ratio {best[2] / peer[2]:.2f}")
            else:
                print(f"optc does not reach SPAMS's held-out cost {peer[3]:.5f} within its budgets")


if __name__ == "__main__":
    sys.exit(main())
