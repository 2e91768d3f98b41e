#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds lockstep and runs the main job: PageRank on the bundled
# Kronecker graph, printing the ten top-ranked vertices.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_BUILD_TESTS=OFF >/dev/null
cmake --build build --target lockstep

echo "== PageRank on data/kronecker-12.el (local mode, all cores); top 10:"
build/lockstep run pagerank --graph data/kronecker-12.el --undirected \
  --out build/pagerank-local.txt --top 10
