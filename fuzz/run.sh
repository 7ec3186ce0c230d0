#!/usr/bin/env bash
# Coverage-guided fuzzing of optc's input readers with libFuzzer (cargo-fuzz) on stable Rust.
#   bash fuzz/run.sh [SECONDS_PER_TARGET] [TARGET ...]
# Runs each target in turn, then minimises its corpus (fuzz/corpus/TARGET) in place. A crash,
# hang or blow-up is left in fuzz/artifacts/TARGET/ and the next target still runs; fix it, then
# keep the input in fuzz/regressions/TARGET/, which tests/fuzz_regressions.rs replays (with the
# corpora and the hand-made seeds of fuzz/seeds/TARGET/).
set -uo pipefail
cd "$(dirname "$0")"
seconds="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model libsvm model_file load_files stream_log data_cache repl model_solve weights)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# -s none: no sanitizer (they need nightly; the readers are safe Rust); -a: overflow and debug checks.
flags=(-s none -O -a)
found=0
for t in "${targets[@]}"; do
  echo "== $t: ${seconds}s"
  # fuzz/seeds/TARGET: hand-made inputs kept by name (minimising the corpus renames its files).
  seeds=()
  [ -d "seeds/$t" ] && seeds=("seeds/$t")
  if ! cargo fuzz run "${flags[@]}" "$t" "corpus/$t" ${seeds[@]+"${seeds[@]}"} -- \
    -max_total_time="$seconds" -close_fd_mask=1 -max_len=8192 -rss_limit_mb=4096 -timeout=20 -print_final_stats=1; then
    echo "!! $t: a finding in fuzz/artifacts/$t/"
    found=1
  fi
  cargo fuzz cmin "${flags[@]}" "$t" "corpus/$t" -- -max_len=8192 -rss_limit_mb=4096 -timeout=20
done
exit "$found"
