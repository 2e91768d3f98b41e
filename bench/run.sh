#!/usr/bin/env bash
# Runs the benchmarks and prints their figures (see bench/README.md). The machine is shared and
# noisy: compare the ratios printed, measured side by side in one run, not absolute times.
#
#   bench/run.sh [BUILD_DIR] [SCALE...]     default: build 18 20
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
scales=("${@:-18 20}")
[ ${#scales[@]} -eq 1 ] && read -r -a scales <<<"${scales[0]}"
lockstep=$build/lockstep
harness=$build/lockstep_bench
data=${BENCH_DATA:-bench-data}
mkdir -p "$data"

for scale in "${scales[@]}"; do
  graph=$data/kronecker-$scale.el
  [ -s "$graph" ] || "$lockstep" generate kronecker --scale "$scale" --degree 16 --weights \
    --out "$graph" 2>/dev/null
  echo "=== Kronecker scale $scale, degree 16, undirected ($graph)"
  kernels=load,pagerank,reference,sssp,coloring
  [ "$scale" -le 18 ] && kernels=$kernels,bfs,wcc,cdlp,lcc
  "$harness" --graph "$graph" --undirected --trials 3 --threads 1,2 --kernels "$kernels"

  # Peak RSS of the whole command, loading included, per directed edge.
  edges=$(awk 'END {print NR * 2}' "$graph")
  rss_kb=$(/usr/bin/time -f "%M" "$lockstep" run pagerank --graph "$graph" --undirected \
    --tolerance 0 --max-iterations 20 --out "$data/pr-$scale.txt" 2>&1 >/dev/null | tail -1)
  awk -v kb="$rss_kb" -v e="$edges" \
    'BEGIN {printf "  peak RSS of lockstep run pagerank: %.0f MB, %.1f bytes per directed edge\n", kb / 1024, kb * 1024 / e}'
done

# Distributed PageRank on the first scale: local mode and a master with 1, 2 and 4 workers on
# loopback, 20 iterations each, in the same run.
scale=${scales[0]}
graph=$data/kronecker-$scale.el
echo "=== Distributed PageRank, Kronecker scale $scale, 20 iterations"
per_step() {  # the median superstep time (ms) of a log's progress lines, supersteps 1..19
  grep -oE 'superstep ([1-9]|1[0-9]) \|.*\| ([0-9.]+) ms' "$1" | awk '{print $(NF - 1)}' |
    sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}
"$lockstep" run pagerank --graph "$graph" --undirected --tolerance 0 --max-iterations 20 \
  --out "$data/local.txt" 2>"$data/local.log"
local_ms=$(per_step "$data/local.log")
echo "  local: ${local_ms} ms per superstep (median)"
for workers in 1 2 4; do
  rm -f "$data/port"
  /usr/bin/time -f "%e %U %S" -o "$data/master.time" "$lockstep" master --listen 127.0.0.1:0 \
    --port-file "$data/port" --app pagerank --graph "$graph" --undirected --tolerance 0 \
    --max-iterations 20 --out "$data/dist-$workers" --min-workers "$workers" \
    --max-workers "$workers" --acquire-timeout 60s 2>"$data/master.log" &
  master=$!
  for _ in $(seq 200); do [ -s "$data/port" ] && break; sleep 0.05; done
  for i in $(seq "$workers"); do
    "$lockstep" worker --master "127.0.0.1:$(cat "$data/port")" --max-jobs 1 \
      2>"$data/worker-$workers-$i.log" &
  done
  wait "$master"
  wait
  ms=$(per_step "$data/master.log")
  bytes=$(grep -oE 'superstep 5 \|.*relayed [0-9]+ batches, [0-9]+ bytes' "$data/master.log" |
    grep -oE '[0-9]+ bytes' | grep -oE '[0-9]+')
  read -r wall user sys <"$data/master.time"
  awk -v w="$workers" -v ms="$ms" -v lms="$local_ms" -v b="$bytes" -v wall="$wall" \
    -v cpu="$(echo "$user + $sys" | bc)" \
    'BEGIN {printf "  %d worker%s: %s ms per superstep (%.2fx local), relayed %.1f MB per superstep (%.0f MB/s), master CPU %.0f%% of its wall time\n",
            w, (w == 1 ? " " : "s"), ms, ms / lms, b / 1e6, (ms > 0 ? b / 1e6 / (ms / 1e3) : 0), 100 * cpu / wall}'
  "$lockstep" validate --expected "$data/local.txt" --actual "$data/dist-$workers" \
    --rule epsilon --epsilon 1e-12 | tail -1 | sed 's/^/    /'
  # Where the time went: the master's and each worker's split, logged at the job's end.
  grep -ohE 'time split: .*' "$data/master.log" | sed 's/^/    master: /'
  for i in $(seq "$workers"); do
    grep -ohE 'time split: .*' "$data/worker-$workers-$i.log" | sed "s/^/    worker $i: /"
  done
done
