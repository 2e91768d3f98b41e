#!/usr/bin/env bash
# What the lockstep binary links, checked on the built binary (its ELF NEEDED entries):
#   1. no database client: libpq is opened on first use (db/libpq.h), so that a process that
#      never reads a database does not load it and what it pulls in at every start.
# Usage: linked_libraries_test.sh LOCKSTEP_BINARY
set -euo pipefail
binary=$1
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if [ -z "$needed" ]; then
  echo "FAIL: readelf found no NEEDED entries in $binary" >&2
  exit 1
fi
if grep -E '^lib(pq|pqxx)\.' <<<"$needed"; then
  echo "FAIL: $binary links a database client (above); open it on first use (db/libpq.h)" >&2
  exit 1
fi
echo "linked libraries of $binary: $(wc -l <<<"$needed") entries, no database client"
