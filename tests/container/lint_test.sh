#!/usr/bin/env bash
# Lints k8s/Dockerfile with dockerfilelint, at the version pinned in package-lock.json beside this
# script, installed by `npm ci` into the build tree (the source tree stays clean). Rules switched
# off are in k8s/.dockerfilelintrc, each with its reason.
#
#   lint_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
source_dir=$(readlink -f "$1")
work=$2
command -v npm >/dev/null 2>&1 || { echo "FAIL: npm is not installed (scripts/setup.sh)" >&2; exit 1; }

mkdir -p "$work"
cp "$source_dir/tests/container/package.json" "$source_dir/tests/container/package-lock.json" "$work/"
(cd "$work" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null)
lint="$work/node_modules/.bin/dockerfilelint"

# The linter does flag what it should (an untagged base image, apt-get without -y) ...
printf 'FROM debian\nRUN apt-get install curl\n' >"$work/Dockerfile.bad"
if "$lint" "$work/Dockerfile.bad" >"$work/bad.txt" 2>&1; then
  cat "$work/bad.txt" >&2
  echo "FAIL: dockerfilelint passed a Dockerfile it should flag" >&2
  exit 1
fi
# ... and finds nothing in ours (it reads k8s/.dockerfilelintrc beside the Dockerfile).
"$lint" "$source_dir/k8s/Dockerfile"
