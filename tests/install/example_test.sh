#!/usr/bin/env bash
# Installs lockstep from the build tree into a scratch prefix, builds the user-written examples in
# examples/indegree and examples/minreach against the installed package, and checks their answers
# on a small graph.
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/examples/indegree" -B "$work/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" >/dev/null
cmake -S "$source_dir/examples/minreach" -B "$work/minreach" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/minreach" >/dev/null

cat >"$work/g.el" <<'GRAPH'
# src dst weight
a b 1
a c 2
b c 3
c a 1
c c 5
d c 0.5
GRAPH
# Same `run` options as the built-in apps: --graph, --out, --threads, app flags.
"$work/build/indegree_example" run indegree --graph "$work/g.el" --out "$work/all.txt" \
  --threads 2 >"$work/report.txt" 2>/dev/null
"$work/build/indegree_example" run indegree --graph "$work/g.el" --out "$work/heavy.txt" \
  --min-weight 2 >/dev/null 2>&1

expect() {
  local got
  got=$(sort "$1" | tr '\n' ' ')
  if [ "$got" != "$2" ]; then
    echo "FAIL: $1: got '$got', expected '$2'" >&2
    exit 1
  fi
}
expect "$work/all.txt" "a 1 b 1 c 4 d 0 "
expect "$work/heavy.txt" "a 0 b 0 c 3 d 0 "  # a->c, b->c and the self-loop c->c
grep -qx "vertices without in-edges: 1" "$work/report.txt" || {
  echo "FAIL: report: $(cat "$work/report.txt")" >&2
  exit 1
}
# d reaches c, which reaches a and b: a, b and c are reached first by a (smallest), d only by d.
"$work/minreach/minreach_example" run minreach --graph "$work/g.el" --out "$work/reach.txt" \
  >/dev/null 2>&1
expect "$work/reach.txt" "a a b a c a d d "
# The built-in apps come along in the user's binary.
"$work/build/indegree_example" run pagerank --graph "$work/g.el" --out "$work/pr.txt" >/dev/null 2>&1
[ "$(wc -l <"$work/pr.txt")" -eq 4 ] || { echo "FAIL: pagerank in the example binary" >&2; exit 1; }
echo "example program OK"
