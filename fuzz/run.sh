#!/usr/bin/env bash
# Coverage-guided fuzzing of optc's input readers with libFuzzer (cargo-fuzz) on stable Rust.
#   bash fuzz/run.sh [SECONDS_PER_TARGET] [TARGET ...]
# Runs each target in turn, then minimises its corpus (fuzz/corpus/TARGET) in place. A crash is
# left in fuzz/artifacts/TARGET/; add it as a regression test in tests/fuzz_regressions.rs.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model libsvm model_file load_files)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# -s none: no sanitizer (they need nightly; the readers are safe Rust); -a: overflow and debug checks.
flags=(-s none -O -a)
for t in "${targets[@]}"; do
  echo "== $t: ${seconds}s"
  cargo fuzz run "${flags[@]}" "$t" "corpus/$t" -- \
    -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=4096 -timeout=20 -print_final_stats=1
  cargo fuzz cmin "${flags[@]}" "$t" "corpus/$t" -- -max_len=8192 -rss_limit_mb=4096 -timeout=20
done
