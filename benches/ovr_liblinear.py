#!/usr/bin/env python3
"""One-vs-rest against LIBLINEAR's CLI on multiclass sets: a two-class loss on k > 2 labels is k
one-vs-rest problems in both (docs/algorithms.md §11), C = 1 (λ = 1/m), no bias.

  hinge          optc `E[hinge(y, <x, w>)] + λ·l2sq(w)`          liblinear-train -s 3
  squared hinge  optc `E[squared_hinge(y, <x, w>)] + λ·l2sq(w)`  liblinear-train -s 1
  logistic       optc `E[logistic(y, <x, w>)] + λ·l2sq(w)`       liblinear-train -s 0

Each side trains on SET and is scored on SET.t by its own predict (`optc predict`,
`liblinear-predict`); the check is that optc's test accuracy is within 0.5 points of LIBLINEAR's.
Wall times are whole processes (reading the text included), the best of --repeat runs; optc also
shows the solve seconds of its JSON report. LIBLINEAR stops at its default eps (0.1 for the duals,
0.01 for -s 0), optc at its default certified relative gap 1e-4.

    benches/ovr_liblinear.py --data /work/shared/data dna.scale satimage.scale

SET.xz and SET.t.xz are decompressed to a temporary directory first (plain SET works as well).
"""

import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time

LOSSES = [("hinge", 3), ("squared_hinge", 1), ("logistic", 0)]


def plain(data_dir, name, tmp):
    """The path of SET as plain text: SET itself, or SET.xz decompressed into tmp."""
    path = os.path.join(data_dir, name)
    if os.path.exists(path):
        return path
    out = os.path.join(tmp, name)
    with lzma.open(path + ".xz") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def timed(args, repeat):
    """The best wall time of `repeat` runs of args, and the last run's stdout and stderr."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = subprocess.run(args, capture_output=True, text=True, check=True)
        best = min(best, time.perf_counter() - t)
    return best, out


def accuracy(out):
    """`Accuracy = 94.688% (1123/1186)` somewhere in a predict's output → 94.688."""
    line = next(l for l in (out.stdout + out.stderr).splitlines() if l.startswith("Accuracy = "))
    return float(line.split("=")[1].split("%")[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="+")
    ap.add_argument("--data", default="examples/data")
    ap.add_argument("--optc", default="target/release/optc")
    ap.add_argument("--threads", default=None, help="optc's --threads (default: its own, the cores)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    failed = False
    print(f"{'set':<16}{'loss':<15}{'optc acc':>9}{'LL acc':>9}{'diff':>7}  {'optc wall':>9} {'solve':>7} "
          f"{'LL wall':>8}  status")
    with tempfile.TemporaryDirectory() as tmp:
        for s in a.sets:
            train, test = plain(a.data, s, tmp), plain(a.data, s + ".t", tmp)
            m = sum(1 for _ in open(train))
            for loss, solver in LOSSES:
                model = os.path.join(tmp, f"{loss}.opt")
                with open(model, "w") as f:
                    f.write(f"data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1/{m}\n"
                            f"minimize E[{loss}(y, <x, w>)] + λ·l2sq(w)\n")
                saved, ll_model = os.path.join(tmp, "optc.model"), os.path.join(tmp, "ll.model")
                args = [a.optc, "run", model, train, "--json", "--quiet", "--save", saved]
                if a.threads:
                    args += ["--threads", a.threads]
                optc_wall, run = timed(args, a.repeat)
                report = json.loads(run.stdout)
                pred = subprocess.run([a.optc, "predict", saved, test, "--out", os.path.join(tmp, "optc.pred")],
                                      capture_output=True, text=True, check=True)
                ours = accuracy(pred)
                ll_wall, _ = timed(["liblinear-train", "-q", "-s", str(solver), "-c", "1", "-B", "-1", train,
                                    ll_model], a.repeat)
                lp = subprocess.run(["liblinear-predict", test, ll_model, os.path.join(tmp, "ll.pred")],
                                    capture_output=True, text=True, check=True)
                theirs = accuracy(lp)
                ok = abs(ours - theirs) <= 0.5
                failed |= not ok
                print(f"{s:<16}{loss:<15}{ours:>8.3f}%{theirs:>8.3f}%{ours - theirs:>+7.3f}  {optc_wall:>8.3f}s "
                      f"{report['seconds']:>6.3f}s {ll_wall:>7.3f}s  {report['status']} ({report['solver']}, "
                      f"{len(report['classes'])} classes){'' if ok else '  ← more than 0.5 points apart'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
