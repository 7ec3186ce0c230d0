#!/usr/bin/env bash
# Every figure in docs/, drawn anew by the command that made it: run this after a change that
# moves a figure, and commit what it writes.
#
#   cargo build --release
#   bash docs/figures.sh [DATA_DIR]     # DATA_DIR: the LIBSVM sets of benches/papers.py
#                                       # (default ../shared/data)
#
# The Python scripts need matplotlib, scikit-learn and pillow (`pip install matplotlib
# scikit-learn pillow`; spams-bin adds SPAMS to the dictionary table); PYTHON names the
# interpreter (default python3).
#
# The list is read by tests/docs.rs: each `# figure` line names an image the command after it
# writes, every image in docs/ must be named here, and the test runs each command in its quick
# form (the Python scripts with --smoke on the repository's data, every `docs/` output moved to
# a scratch directory), so a figure whose command no longer runs is a failing test.
set -euo pipefail
# DATA_DIR as the caller named it, before the cd below.
data="${1:-$(dirname "$0")/../../shared/data}"
[ -d "$data" ] && data="$(cd "$data" && pwd)"
cd "$(dirname "$0")/.."
optc=target/release/optc
python="${PYTHON:-python3}"
[ -x "$optc" ] || { echo "build first: cargo build --release" >&2; exit 1; }
# The scripts run this build, whatever OPTC the caller's environment holds.
export OPTC="$PWD/$optc"

# figure docs/trace_fobos_a9a.svg
"$optc" run examples/l1_logistic.opt examples/data/a9a.xz --test examples/data/a9a.t.xz --solver fobos --epochs 30 --quiet --plot docs/trace_fobos_a9a.svg

# figure docs/papers_a_scd_smidas_tg.svg
# figure docs/papers_b_epochs.svg
# figure docs/papers_b_seconds.svg
# figure docs/papers_c_dc.svg
# figure docs/papers_d_fobos_nnz.svg
"$python" benches/papers.py "$data" --out docs

# figure docs/dictionary_atoms.png
"$python" benches/dictionary.py --train 20000 --test 2000 --atoms 256 --epochs 1,2,3 --figure docs/dictionary_atoms.png

# figure docs/dictionary_atoms_structured.png
"$python" benches/dictionary.py --train 20000 --test 2000 --atoms 256 --epochs 1 --gamma 0.003 --figure docs/dictionary_atoms_structured.png
