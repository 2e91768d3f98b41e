#!/usr/bin/env bash
# rooms_test.pl finds what it is for: on a scratch tree with a 121-line function, a 901-line file
# and an include circle it fails naming each, and with them allowed it passes.
set -euo pipefail
checker=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/bsp" "$tree/tests/style"
{
  echo '#include "b.h"'
  echo 'namespace x {'
  echo 'int Long(int a) {'
  for i in $(seq 119); do echo "  a += $i;"; done
  echo '}'
  echo 'struct S { int Short() { return 1; } };'
  echo '}  // namespace x'
} >"$tree/bsp/a.cc"
echo '#include "a.h"' >"$tree/bsp/b.h"
: >"$tree/bsp/a.h"
for i in $(seq 901); do echo "// $i"; done >"$tree/bsp/big.h"
: >"$tree/tests/style/rooms_allowlist.txt"
if out=$(perl "$checker" "$tree"); then
  echo "rooms_test.pl passed a tree it should fail:"; echo "$out"; exit 1
fi
for want in "bsp/a.cc:3: function Long is 121 lines" "bsp/big.h: 901 lines" \
    "include circle: bsp/a bsp/b"; do
  grep -qF "$want" <<<"$out" || { echo "missing: $want"; echo "$out"; exit 1; }
done
printf 'file bsp/big.h\nfunction bsp/a.cc Long\ncircle bsp/a bsp/b\n' \
  >"$tree/tests/style/rooms_allowlist.txt"
perl "$checker" "$tree"
echo "rooms self-test OK"
