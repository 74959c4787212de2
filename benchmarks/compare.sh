#!/usr/bin/env bash
# Engine speed against the compiled baseline (benchmarks/baseline.c), side by side: the two run
# alternately on the same core, so both see the same machine state.
# Usage: benchmarks/compare.sh [BMN] [ROUNDS] [SECONDS]
#   BMN defaults to .venv/bin/bmn; it must print {"games_per_s": ...} for `bench --json --seconds S`.
# Prints one line per round and, last, "ratio R": the median of bmn / baseline over the rounds.
set -euo pipefail
bmn=${1:-.venv/bin/bmn}; rounds=${2:-3}; secs=${3:-4}
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-$(command -v cc || command -v gcc || command -v clang || true)}
if [ -z "$cc" ]; then
  echo "compare.sh: no C compiler found (set CC or install gcc); the baseline cannot be built" >&2
  exit 2
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$cc" -O3 -march=native -o "$tmp/baseline" "$here/baseline.c"
pin=""; command -v taskset >/dev/null && pin="taskset -c 0"
ratios=()
for ((i = 1; i <= rounds; i++)); do
  c=$($pin "$tmp/baseline" "$secs" | awk '/^games_per_s/ {print $2}')
  k=$($pin $bmn bench --json --no-baseline --seconds "$secs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["games_per_s"])')
  r=$(python3 -c "print(round($k / $c, 3))")
  echo "round $i: bmn $k games/s, baseline $c games/s, ratio $r"
  ratios+=("$r")
done
python3 -c "import statistics,sys; print('ratio', statistics.median(map(float, sys.argv[1:])))" "${ratios[@]}"
