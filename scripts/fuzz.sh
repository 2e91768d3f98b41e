#!/usr/bin/env bash
# Builds lockstep's fuzz targets (fuzz/: libFuzzer with clang, under ASan and UBSan) and runs each
# from its seed corpus (fuzz/corpus/<target>), one at a time:
#   scripts/fuzz.sh --cpu-minutes N     N CPU-minutes in total, shared equally by the targets
#   scripts/fuzz.sh --seconds-each S    S seconds each (the test suite: 5)
# The corpora grow in a temporary directory, never in the repository; a crash's input is kept
# there and named, and the script exits 1. Prints each target's runs, coverage and corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(graph_text properties codecs relay_positions relay_batch config)
each=""
case "${1:-}" in
  --cpu-minutes) each=$(( ${2:?minutes} * 60 / ${#targets[@]} )) ;;
  --seconds-each) each=${2:?seconds} ;;
  *) echo "usage: $0 --cpu-minutes N | --seconds-each S" >&2; exit 2 ;;
esac
[ "$each" -ge 1 ] || { echo "$0: at least a second per target" >&2; exit 2; }

scripts/setup.sh
build=build-fuzz
CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKSTEP_FUZZ=ON \
  -DLOCKSTEP_BUILD_TESTS=OFF -DLOCKSTEP_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_targets

work=$(mktemp -d /tmp/lockstep-fuzz.XXXXXX)
failed=0
for target in "${targets[@]}"; do
  corpus=$work/$target
  mkdir -p "$corpus" "$work/$target-crashes"
  cp fuzz/corpus/"$target"/* "$corpus"/
  log=$work/$target.log
  code=0
  UBSAN_OPTIONS=print_stacktrace=1 "$build/fuzz/fuzz_$target" -max_total_time="$each" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/$target-crashes/" "$corpus" >"$log" 2>&1 || code=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  files=$(find "$corpus" -type f | wc -l)
  if [ "$code" -ne 0 ]; then
    failed=1
    echo "fuzz_$target: FAILED (exit $code) after ${runs:-?} runs; input: $(ls "$work/$target-crashes"/* 2>/dev/null | head -1)"
    grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -5
  else
    echo "fuzz_$target: ${each}s, ${runs} runs, coverage ${cov} edges, corpus ${files} inputs, no crash"
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: a target crashed; its logs and inputs are in $work" >&2
  exit 1
fi
rm -rf "$work"
