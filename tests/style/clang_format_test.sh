#!/usr/bin/env bash
# Every tracked C++ file (git ls-files '*.cc' '*.h') is formatted as the root .clang-format says.
# Fails listing each unformatted place as file:line:col, from clang-format itself.
# Usage: clang_format_test.sh SOURCE_DIR [CLANG_FORMAT]
set -euo pipefail
source_dir=$1
clang_format=${2:-clang-format}

if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "FAIL: $clang_format not found (scripts/setup.sh installs clang-format)" >&2
  exit 1
fi
cd "$source_dir"
if ! files=$(git ls-files -- '*.cc' '*.h'); then
  echo "FAIL: $source_dir: git ls-files failed; the check needs a git checkout" >&2
  exit 1
fi
if [ -z "$files" ]; then
  echo "FAIL: no tracked C++ files under $source_dir" >&2
  exit 1
fi

# --dry-run -Werror prints "file:line:col: error: code should be clang-formatted" per place.
status=0
out=$(printf '%s\n' "$files" | xargs -d '\n' "$clang_format" --style=file --dry-run -Werror 2>&1) ||
  status=$?
if [ "$status" -ne 0 ]; then
  printf '%s\n' "$out" >&2
  echo "FAIL: files above are not clang-formatted; run: clang-format -i FILE" >&2
  exit 1
fi
echo "clang-format: $(printf '%s\n' "$files" | wc -l) files formatted"
