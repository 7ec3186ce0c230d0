#!/usr/bin/env python3
"""The seed papers' comparisons, reproduced with optc's compiled solvers on real data.

    (a) SCD vs SMIDAS vs truncated gradient: F against passes over the data on a text set
        (Shalev-Shwartz & Tewari 2009, §5).
    (b) SMM vs FOBOS vs AdaGrad vs FISTA on l1-logistic: F against epochs and against seconds
        (Mairal 2013, Fig. 1).
    (c) Online DC vs batch DC on the non-convex log penalty: F against epochs (Mairal 2013,
        §4.2).
    (d) The sparsity of FOBOS's iterate over time (Duchi & Singer 2009, §6).

Every curve comes from `optc run --trace`, which records F (and the non-zeros) after each epoch,
with the epoch's wall time. A solver this build does not compile is listed as such, not drawn.
The plots are SVG; the table of the final values goes to docs/papers.md.

    pip install matplotlib
    cargo build --release
    python3 benches/papers.py [DATA_DIR] [--out DIR]    # default ../shared/data, docs

--smoke runs every experiment for two epochs on the repository's a9a (examples/data) instead:
what tests/docs.rs does to check that the figures' command still runs (docs/figures.sh).
"""
import argparse
import csv
import io
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
# The binary: $OPTC (tests/docs.rs passes the one it built), else the release build.
OPTC = os.environ.get("OPTC") or os.path.join(ROOT, "target", "release", "optc")
# Each run stops after the epoch during which this many seconds passed (SMIDAS's exact steps
# are O(d): on text data an epoch costs far more than the others').
CAP_SECONDS = 60

HEAD = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = {lam}\n"
L1 = "minimize E[logistic(y, <x, w>)] + λ·l1(w)\n"
LOGEPS = "minimize E[logistic(y, <x, w>)] + λ·logeps(w, {eps})\n"


def decompress(data_dir, name, tmp):
    """A LIBSVM file from `data_dir`, decompressed once (optc reads .xz too, but every run would
    pay for it, and the traces time the solver)."""
    out = os.path.join(tmp, name.removesuffix(".xz"))
    if not os.path.exists(out):
        with lzma.open(os.path.join(data_dir, name)) as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
    return out


def trace(model, data, epochs, tmp, extra=()):
    """[(epoch, seconds, F, nnz)] after each epoch, or the reason there is none."""
    path = os.path.join(tmp, "model.opt")
    with open(path, "w") as f:
        f.write(model)
    cmd = [OPTC, "run", path, data, "--epochs", str(epochs), "--trace", "-", "--quiet",
           "--time-limit", str(CAP_SECONDS), *extra]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        lines = [l.strip() for l in run.stderr.splitlines() if l.strip()]
        # A diagnostic's message is the line marked ×; anything else, its first line.
        said = next((l.lstrip("×").strip() for l in lines if l.startswith("×")), lines[0] if lines else "failed")
        return said.replace("|", "/")
    rows = list(csv.DictReader(io.StringIO(run.stdout)))
    elapsed, out = 0.0, []
    for r in rows:
        elapsed = float(r["seconds"])
        out.append((int(r["epoch"]), elapsed, float(r["objective"]), int(r["nnz"])))
    return out


def experiment(title, data, lam, runs, epochs, tmp, objective=L1, eps=None):
    """Traces of each (label, solve clause) on one data set."""
    head = HEAD.format(lam=lam) + objective.format(eps=eps)
    results = []
    for label, solve in runs:
        model = head + (f"solve with {solve}\n" if solve else "")
        results.append((label, trace(model, data, epochs, tmp)))
        print(f"  {title}: {label}: {'ok' if isinstance(results[-1][1], list) else results[-1][1]}", flush=True)
    return results


def plot(results, x, path, xlabel, title, ylabel="F − F_best (log)", values=None):
    """One curve per solver; F relative to the best value any run reached, on a log scale."""
    drawn = [(l, r) for l, r in results if isinstance(r, list) and r]
    if not drawn:
        return
    best = min(min(p[2] for p in r) for _, r in drawn)
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, r in drawn:
        xs = [p[x] for p in r]
        ys = [values(p) if values else max(p[2] - best, 1e-12) for p in r]
        ax.plot(xs, ys, marker="o", markersize=2, label=label)
    if not values:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def table(results):
    lines = ["| solver | epochs | seconds | final F | non-zeros |", "|---|---:|---:|---:|---:|"]
    for label, r in results:
        if isinstance(r, list) and r:
            e, sec, f, nnz = r[-1]
            lines.append(f"| {label} | {e} | {sec:.2f} | {f:.8f} | {nnz} |")
        else:
            lines.append(f"| {label} | – | – | not run: {r} | – |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", nargs="?", default=os.path.join(ROOT, "..", "shared", "data"))
    p.add_argument("--out", default=os.path.join(ROOT, "docs"), help="where the figures and papers.md go")
    p.add_argument("--smoke", action="store_true", help="two epochs of each on examples/data's a9a")
    args = p.parse_args()
    if not os.path.exists(OPTC):
        sys.exit("build first: cargo build --release")
    out = args.out
    os.makedirs(out, exist_ok=True)
    # The smoke run's sets and epochs: the same experiments, small.
    data_dir = os.path.join(ROOT, "examples", "data") if args.smoke else args.data
    text_set = "a9a.xz" if args.smoke else "debian-desc.binary.train.xz"
    n = (lambda e: 2) if args.smoke else (lambda e: e)
    tmp = tempfile.mkdtemp(prefix="optc-papers-")
    md = ["# The papers' comparisons, reproduced", "", "Made by `python3 benches/papers.py` (which `bash docs/figures.sh` runs) on ../shared/data "
          "(see its docstring). F is the objective as [algorithms.md](algorithms.md) defines it, recorded after each epoch.", ""]
    try:
        text = decompress(data_dir, text_set, tmp)

        print("(a) SCD vs SMIDAS vs truncated gradient", flush=True)
        a = experiment("a", text, 1.5e-4, [
            ("SCD", "scd(newton = 0)"),
            ("SMIDAS", "smidas"),
            ("truncated gradient", "truncated"),
        ], n(20), tmp)
        plot(a, 0, os.path.join(out, "papers_a_scd_smidas_tg.svg"), "passes over the data",
             "l1-logistic, debian-desc (λ = 1.5e-4)")
        md += ["## (a) SCD vs SMIDAS vs truncated gradient (Shalev-Shwartz & Tewari)", "",
               "![](papers_a_scd_smidas_tg.svg)", "", table(a), ""]

        print("(b) SMM vs FOBOS vs AdaGrad vs FISTA", flush=True)
        b = experiment("b", text, 1.5e-4, [
            ("SMM", "smm"),
            ("FOBOS", "fobos"),
            ("AdaGrad", "adagrad"),
            ("FISTA", "proxgrad"),
        ], n(20), tmp)
        plot(b, 0, os.path.join(out, "papers_b_epochs.svg"), "epochs", "l1-logistic, debian-desc (λ = 1.5e-4)")
        plot(b, 1, os.path.join(out, "papers_b_seconds.svg"), "seconds", "l1-logistic, debian-desc (λ = 1.5e-4)")
        md += ["## (b) SMM vs FOBOS vs AdaGrad vs FISTA (Mairal, Fig. 1)", "",
               "![](papers_b_epochs.svg) ![](papers_b_seconds.svg)", "", table(b), ""]

        print("(c) online DC vs batch DC", flush=True)
        a9a = decompress(data_dir, "a9a.xz", tmp)
        c = experiment("c", a9a, 1e-3, [("online DC", "dc"), ("batch DC", "dc(batch = 1)")], n(30), tmp,
                       objective=LOGEPS, eps=0.01)
        plot(c, 0, os.path.join(out, "papers_c_dc.svg"), "epochs", "logistic + λΣlog(|w|+ε), a9a")
        md += ["## (c) Online DC vs batch DC (Mairal §4.2)", "", "![](papers_c_dc.svg)", "", table(c), ""]

        print("(d) FOBOS sparsity over time", flush=True)
        d = [(label, r) for label, r in b if label == "FOBOS"]
        plot(d, 0, os.path.join(out, "papers_d_fobos_nnz.svg"), "epochs", "FOBOS non-zeros, debian-desc",
             ylabel="non-zeros", values=lambda p: p[3])
        md += ["## (d) FOBOS sparsity over time (Duchi & Singer)", "", "![](papers_d_fobos_nnz.svg)", ""]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(out, "papers.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"wrote {os.path.join(out, 'papers.md')}")


if __name__ == "__main__":
    main()
