#!/usr/bin/env bash
# LDBC Graphalytics conformance: every graph of the shared example data sets and every kernel its
# properties list, run in local mode at 1 and 2 threads and in distributed mode at 2 and 3
# workers, each result checked with `lockstep validate` against the expected output.
set -uo pipefail
lockstep=$1
graphs=$2
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
check() {  # name expected actual app
  local report
  if report=$("$lockstep" validate --expected "$2" --actual "$3" --app "$4" 2>&1); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1:"
    echo "$report" | tail -5
  fi
}
app_of() { [ "$1" = pr ] && echo pagerank || echo "$1"; }

# Local mode.
for props in "$graphs"/*.properties; do
  name=$(basename "$props" .properties)
  for alg in $(grep -E '^graph\.[^ ]+\.algorithms' "$props" | sed 's/.*=//; s/,/ /g'); do
    app=$(app_of "$alg")
    upper=$(echo "$alg" | tr '[:lower:]' '[:upper:]')
    for threads in 1 2; do
      out="$work/$name-$alg-t$threads.txt"
      if "$lockstep" run "$app" --graph "$props" --threads "$threads" --out "$out" \
        2>"$work/run.log"; then
        check "$name $alg local threads=$threads" "$graphs/$name-$upper" "$out" "$app"
      else
        failed=$((failed + 1))
        echo "FAIL $name $alg local threads=$threads: $(tail -1 "$work/run.log")"
      fi
    done
  done
done

# Distributed mode: three long-lived workers serve one master per job on a fixed port.
"$lockstep" master --listen 127.0.0.1:0 --port-file "$work/port" --app bfs --graph \
  "$graphs/example-directed.properties" --out "$work/warmup" --min-workers 3 \
  --acquire-timeout 60s 2>"$work/master-warmup.log" &
master=$!
for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.05; done
port=$(cat "$work/port")
for i in 1 2 3; do
  "$lockstep" worker --master "127.0.0.1:$port" 2>"$work/worker-$i.log" &
  pids+=("$!")
done
wait "$master" || { echo "FAIL warm-up job: $(tail -1 "$work/master-warmup.log")"; exit 1; }

for props in "$graphs"/*.properties; do
  name=$(basename "$props" .properties)
  for alg in $(grep -E '^graph\.[^ ]+\.algorithms' "$props" | sed 's/.*=//; s/,/ /g'); do
    app=$(app_of "$alg")
    upper=$(echo "$alg" | tr '[:lower:]' '[:upper:]')
    for workers in 2 3; do
      out="$work/$name-$alg-w$workers"
      if "$lockstep" master --listen "127.0.0.1:$port" --app "$app" --graph "$props" \
        --out "$out" --min-workers "$workers" --max-workers "$workers" --acquire-timeout 60s \
        2>"$work/master.log"; then
        check "$name $alg workers=$workers" "$graphs/$name-$upper" "$out" "$app"
      else
        failed=$((failed + 1))
        echo "FAIL $name $alg workers=$workers: $(tail -1 "$work/master.log")"
      fi
    done
  done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
