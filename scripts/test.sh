#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds lockstep with warnings as errors and runs the whole
# test suite: the Release build's tests (unit, apps, conformance, integration, the example program
# built against the installed package), then the unit tests again under ASan + UBSan, then each
# fuzz target for a few seconds (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
jobs=$(nproc)

echo "== Release build (-Werror)"
cmake -S . -B build-ci -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_WERROR=ON >/dev/null
cmake --build build-ci -j "$jobs"
# The full conformance matrix (label `matrix`) runs on demand: ctest -L matrix.
(cd build-ci && ctest --output-on-failure -j "$jobs" --timeout 900 -LE matrix)

echo "== ASan + UBSan build of the unit tests (and the quick ones on loopback)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLOCKSTEP_WERROR=ON \
  -DLOCKSTEP_SANITIZE=ON -DLOCKSTEP_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j "$jobs"
# The transport's tests on loopback (tests/integration/dbsp_integration_test) are quick: they run
# there too.
(cd build-asan && export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 &&
  ctest --output-on-failure -j "$jobs" --timeout 900 -L unit &&
  ctest --output-on-failure -j "$jobs" --timeout 900 -R '^(HealthTest|TransportTest|PeerTest)\.')

echo "== Fuzz targets, 5 s each (libFuzzer, ASan + UBSan)"
scripts/fuzz.sh --seconds-each 5
