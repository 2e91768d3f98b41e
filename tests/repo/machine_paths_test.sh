#!/usr/bin/env bash
# Nothing in the repository names a path of one particular machine (a home directory, the
# developers' checkout): the suite must pass from a clone anywhere. Prints each offending
# file:line and fails.
#
#   machine_paths_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
# The directories as one pattern, so that this file does not match itself.
pattern='/(work|home|root)/'
if git -C "$source_dir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  found=$(git -C "$source_dir" grep -n -I -E "$pattern" -- . || true)
else
  # Not a git checkout (an unpacked archive): every file but build trees.
  found=$(cd "$source_dir" && grep -rn -I -E "$pattern" --exclude-dir=.git --exclude-dir='build*' \
    --exclude-dir=node_modules . || true)
fi
if [[ -n "$found" ]]; then
  echo "$found" >&2
  echo "FAIL: the lines above name a path of one machine; find files relative to the source tree" >&2
  exit 1
fi
echo "PASS: no machine-specific paths"
