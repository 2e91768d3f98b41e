#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds lockstep and runs the main job: PageRank on the bundled
# Kronecker graph, printing the ten top-ranked vertices; then the same job on a local cluster (a
# master and three workers on loopback), checked against the local result.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_BUILD_TESTS=OFF \
  -DLOCKSTEP_BUILD_BENCH=OFF >/dev/null
cmake --build build --target lockstep

graph=(--graph data/kronecker-12.el --undirected)
echo "== PageRank on data/kronecker-12.el (local mode, all cores); top 10:"
build/lockstep run pagerank "${graph[@]}" --out build/pagerank-local.txt --top 10 \
  2>build/pagerank-local.log

echo "== The same job on a local cluster: a master and three workers on 127.0.0.1"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
rm -f build/cluster.port
build/lockstep master --listen 127.0.0.1:0 --port-file build/cluster.port --app pagerank \
  "${graph[@]}" --out build/pagerank-cluster --min-workers 3 --acquire-timeout 60s \
  2>build/cluster-master.log &
master=$!
pids+=("$master")
for _ in $(seq 100); do [ -s build/cluster.port ] && break; sleep 0.1; done
port=$(cat build/cluster.port)
for i in 1 2 3; do
  build/lockstep worker --master "127.0.0.1:$port" --max-jobs 1 2>"build/cluster-worker-$i.log" &
  pids+=("$!")
done
if ! wait "$master"; then
  echo "the cluster job failed; see build/cluster-master.log:" >&2
  tail -5 build/cluster-master.log >&2
  exit 1
fi
grep -E "completed" build/cluster-master.log | sed 's/^\[[^]]*\] \[[^]]*\] //'
echo "   results in build/pagerank-cluster/ (part-00000..2, _SUCCESS); compared with the local run:"
build/lockstep validate --expected build/pagerank-local.txt --actual build/pagerank-cluster \
  --rule epsilon --epsilon 1e-9
