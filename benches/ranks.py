#!/usr/bin/env python3
"""One solve on 1 and on N processes: `optc run MODEL DATA` alone against
`mpirun -np N optc run MODEL DATA` (each rank holding its share of the rows, or streaming it
with --stream), whole-process wall time, the solver's own seconds, F, the certified gap, the
epochs (batch iterations) and the bytes rank 0 sent in reductions.

    python3 benches/ranks.py --optc target/release/optc --model m.opt --data a9a.svm \
        --procs 1 2 4 --tol 1e-4 --repeat 3

Weak scaling (`--weak ROWS`): the same number of rows a rank, N·ROWS rows written by
optc-synth for each N, so the iterations and the bytes, not the time, are the claim when the
ranks share one machine's cores.

The optc binary must be built with `--features mpi`. As root OpenMPI needs
--allow-run-as-root; more ranks than cores need --oversubscribe: both are passed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]


def run(optc, procs, model, data, extra):
    """One run: wall seconds and rank 0's JSON report."""
    cmd = [optc, "run", model, data, "--json", "--quiet"] + extra
    if procs > 1:
        cmd = MPIRUN + ["-np", str(procs)] + cmd
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return wall, json.loads(out.stdout)


def row(procs, walls, r):
    stream = r.get("stream") or {}
    sent = stream.get("bytes_communicated")
    epochs = r["epochs"]
    gap = r.get("relative_gap")
    return {
        "procs": procs,
        "solver": r["solver"],
        "epochs": epochs,
        "wall": statistics.median(walls),
        "seconds": r["seconds"],
        "F": r["objective"],
        "rel_gap": gap,
        "status": r["status"],
        "bytes": sent,
        "bytes_per_epoch": sent / max(epochs, 1) if sent else None,
    }


def show(rows):
    print("| processes | solver | epochs | wall s | solve s | F | relative gap | status | bytes sent | a epoch |")
    print("|---:|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for x in rows:
        gap = f"{x['rel_gap']:.2e}" if x["rel_gap"] is not None else "—"
        sent = f"{x['bytes'] / 1e6:.2f} MB" if x["bytes"] else "—"
        per = f"{x['bytes_per_epoch'] / 1e3:.1f} kB" if x["bytes_per_epoch"] else "—"
        print(
            f"| {x['procs']} | {x['solver']} | {x['epochs']} | {x['wall']:.2f} | {x['seconds']:.3f} "
            f"| {x['F']:.8f} | {gap} | {x['status']} | {sent} | {per} |"
        )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--optc", default="target/release/optc")
    p.add_argument("--synth", default="target/release/optc-synth")
    p.add_argument("--model", required=True)
    p.add_argument("--data", help="a LIBSVM file the ranks cut by bytes")
    p.add_argument("--procs", type=int, nargs="+", default=[1, 2])
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--stream", action="store_true", help="stream the rows instead of holding them")
    p.add_argument("--solver", help="the solver of the one-process run (default: the model's)")
    p.add_argument("--weak", type=int, help="rows a rank: weak scaling on optc-synth data")
    p.add_argument("--features", type=int, default=100_000, help="optc-synth's features (--weak)")
    args = p.parse_args()
    extra = ["--tol", str(args.tol)] + (["--stream"] if args.stream else [])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for procs in args.procs:
            data = args.data
            if args.weak:
                data = os.path.join(tmp, f"synth{procs}.svm")
                subprocess.run(
                    [args.synth, "--rows", str(procs * args.weak), "--features", str(args.features), "-o", data, "-q"],
                    check=True,
                )
            alone = ["--solver", args.solver] if procs == 1 and args.solver else []
            walls, report = [], None
            for _ in range(args.repeat):
                wall, report = run(args.optc, procs, args.model, data, extra + alone)
                walls.append(wall)
            rows.append(row(procs, walls, report))
    show(rows)


if __name__ == "__main__":
    main()
