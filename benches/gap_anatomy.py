#!/usr/bin/env python3
"""Why the certified gap of ℓ1-logistic trails the true error at weak regularization.

For F(w) = (1/m) Σᵢ log(1 + exp(−yᵢ⟨xᵢ, w⟩)) + λ‖w‖₁, optc's certificate is F(w) − D(θ) with
θ the residual at w (or a combination of earlier ones) scaled by 1/s, s = max(1, ‖∇f(w)‖∞ / λ),
into the dual's feasible set. This script takes optc's iterates after a few epoch counts and
splits that gap:

  - the plain rescaled gap and its s, and where s comes from: the zero columns that violate
    |∇ⱼf| ≤ λ, or the non-zero ones whose |∇ⱼf| is off λ (their optimality residual);
  - exact coordinate descent on the support and the violators, a few passes, then the gap again:
    whether per-coordinate fixes bring s to 1;
  - the dual point of one Newton step's model (the support's face, solved exactly on the dense
    Hessian): ℓ′ linearized along the step, clipped into [0, 1] and scaled, which makes every
    support column tight by construction.

Every dual point is feasible before D is read, so each gap printed is a true bound; the true
error is F(w) − F* with F* from optc at --tol 1e-10.

    cargo build --release
    benches/.venv/bin/python benches/gap_anatomy.py debian-desc.binary.train.svm --c 100 --epochs 22,26

Needs numpy, scipy and scikit-learn (for peers.py's reader): benches/.venv, which
`python3 benches/peers.py` creates, has them. The dense Hessian of a 4,500-column support takes 160 MB and a few seconds.
"""

import argparse
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.sparse as sp
    import sklearn  # noqa: F401 (peers.py's reader)
except ImportError as e:
    sys.exit(f"{e}: run this with benches/.venv/bin/python (python3 benches/peers.py creates it)")

from peers import Data, binary, read_liblinear_model, write_model


def entropy(t):
    t = np.clip(t, 1e-300, 1 - 1e-16)
    return -(t * np.log(t) + (1 - t) * np.log1p(-t))


class Problem:
    """F on `data` (peers.py's reader), with the columns at hand for coordinate descent."""

    def __init__(self, data, lam):
        self.X, self.y, self.lam = data.X, data.y, lam
        self.m, self.n = data.m, data.d
        self.Xc = data.X.tocsc()

    def objective(self, z, w):
        """F from the signed margins z = y ∘ Xw (peers.py's `Data.objective` from w, without
        the product again)."""
        return float(np.mean(np.logaddexp(0.0, -z)) + self.lam * np.abs(w).sum())

    def theta(self, z):
        """The residual in the dual's coordinates: θᵢ = σ(−zᵢ) ∈ (0, 1)."""
        return 1.0 / (1.0 + np.exp(z))

    def correlations(self, th):
        """−∇f at the point whose residual is θ: Xᵀ(y ∘ θ)/m."""
        return (self.Xc.T @ (self.y * th)) / self.m

    def dual(self, th):
        """D at θ clipped into [0, 1] and scaled into |Xᵀ(y∘θ)/m| ≤ λ, and the scale s."""
        th = np.clip(th, 0.0, 1.0)
        s = max(1.0, np.abs(self.correlations(th)).max() / self.lam)
        return float(np.mean(entropy(th / s))), s


def run_optc(optc, model, data, args):
    out = subprocess.run([optc, "run", model, data, "--quiet", *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"optc failed: {out.stderr.strip()}")
    return out


def anatomy(p, w, f_star, passes):
    z = p.y * (p.X @ w)
    f = p.objective(z, w)
    th = p.theta(z)
    d0, s0 = p.dual(th)
    true = f - f_star
    print(f"  F {f:.10e}  true {true / f:.2e} of F  plain gap {(f - d0) / f:.3e} of F (s {s0:.3f}, "
          f"gap / true {(f - d0) / true:.0f})")
    g = p.correlations(th)  # −∇f
    zero = w == 0
    support = np.flatnonzero(~zero)
    violators = np.flatnonzero(zero & (np.abs(g) > p.lam))
    residual = np.abs(g[support] - p.lam * np.sign(w[support])) / p.lam
    print(f"  support {len(support)}: max |∇f|/λ {np.abs(g[support]).max() / p.lam:.3f}; optimality residual / λ "
          f"> 0.01 on {int((residual > 0.01).sum())}, > 0.1 on {int((residual > 0.1).sum())}, "
          f"largest {residual.max():.3f} (the largest |w| there {np.abs(w[support]).max():.1f})")
    if len(violators):
        print(f"  zero columns above λ: {len(violators)}, the largest |∇f|/λ {np.abs(g[violators]).max() / p.lam:.3f}")

    # Exact coordinate descent on the support and the violators.
    wc, zc = w.copy(), z.copy()
    cols = np.concatenate([support, violators])
    Xc = p.Xc
    for k in range(passes):
        for j in cols:
            a, b = Xc.indptr[j], Xc.indptr[j + 1]
            rows = Xc.indices[a:b]
            v = Xc.data[a:b] * p.y[rows]
            for _ in range(3):
                t = 1.0 / (1.0 + np.exp(zc[rows]))
                gj = -(v @ t) / p.m
                hj = (v * v) @ (t * (1 - t)) / p.m + 1e-300
                u = wc[j] - gj / hj
                new = np.sign(u) * max(abs(u) - p.lam / hj, 0.0)
                step = new - wc[j]
                if step == 0.0:
                    break
                zc[rows] += step * v
                wc[j] = new
        fc = p.objective(zc, wc)
        dc, sc = p.dual(p.theta(zc))
        print(f"  exact CD pass {k + 1}: true {(fc - f_star) / fc:.2e}  gap {(fc - dc) / fc:.3e} (s {sc:.3f})")

    # One Newton step's model on the support's face: ℓ′ linearized along its solution.
    xs = p.Xc[:, support]
    curvature = th * (1 - th)
    hessian = (xs.T @ sp.diags(curvature) @ xs).toarray() / p.m
    step = np.linalg.solve(hessian + 1e-14 * np.eye(len(support)), -(-g[support] + p.lam * np.sign(w[support])))
    linear = th - curvature * (p.y * (xs @ step))
    dl, sl = p.dual(linear)
    print(f"  Newton model's dual point: gap {(f - dl) / f:.3e} of F (s {sl:.3f}, "
          f"{int(((linear < 0) | (linear > 1)).sum())} rows clipped), gap / true {(f - dl) / true:.0f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="a LIBSVM file (binary labels)")
    reg = ap.add_mutually_exclusive_group(required=True)
    reg.add_argument("--lambda", dest="lam", type=float, help="λ of F")
    reg.add_argument("--c", type=float, help="LIBLINEAR's C: λ = 1/(C·m)")
    ap.add_argument("--epochs", default="14,18,22,26", help="optc's iterates after these epoch counts (--epochs N)")
    ap.add_argument("--passes", type=int, default=3, help="exact coordinate-descent passes")
    ap.add_argument("--optc", help="the optc binary (default: target/release/optc, as peers.py)")
    args = ap.parse_args()
    optc = binary("optc", args.optc)

    data = Data(os.path.basename(args.data), args.data)
    lam = args.lam if args.lam is not None else 1.0 / (args.c * data.m)
    p = Problem(data, lam)
    with tempfile.TemporaryDirectory() as tmp:
        model = write_model(tmp, lam)
        saved = os.path.join(tmp, "w.model")
        run_optc(optc, model, args.data, ["--tol", "1e-10", "--save", saved])
        w_star = read_liblinear_model(saved, data)
        z_star = data.y * (data.X @ w_star)
        f_star = p.objective(z_star, w_star)
        d_star, _ = p.dual(p.theta(z_star))
        print(f"{args.data}: m {p.m}, d {p.n}, λ {lam:.4g}; F* {f_star:.12e} (gap there {(f_star - d_star) / f_star:.1e})")
        for epochs in [int(e) for e in args.epochs.split(",")]:
            run_optc(optc, model, args.data, ["--epochs", str(epochs), "--save", saved])
            print(f"after {epochs} epochs:")
            anatomy(p, read_liblinear_model(saved, data), f_star, args.passes)

if __name__ == "__main__":
    main()
