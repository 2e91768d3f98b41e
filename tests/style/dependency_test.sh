#!/usr/bin/env bash
# The dependency rules of the house style, checked on the C++ sources (.h and .cc) of each folder.
# Each violation prints as `file:line: rule: code`, and the test fails if there is any.
#
# Layering: cli -> {apps, db, dbsp, generate, validate} -> catalogue -> runner -> load -> bsp ->
# partition: the load library (graph input) above bsp and partition, the runner (the job description,
# what a process does before superstep 0, the JobRunner) above the load (docs/design.md §2.1).
#   1. bsp and partition never include grpc, protobuf (google/protobuf, *.pb.h), dbsp, apps, cli,
#      catalogue, generate, validate, load or runner headers; partition does not include bsp
#      either. load never includes grpc, protobuf, a database client, db, dbsp, apps, cli,
#      catalogue, generate, validate or runner headers; runner none of those but load.
#   2. The installed dbsp headers (dbsp/include/...) never include generated protobuf (*.pb.h) or
#      grpc headers: an embedder of dbsp must not need the generated types.
#   3. The engine (bsp, partition, load, runner, dbsp) never names an app: no include of lockstep/apps headers,
#      and none of the names pagerank, sssp, bfs, wcc, cdlp, lcc, coloring, colouring anywhere in
#      code, in any case, as a part of an identifier or string (`kPageRank`, "wcc.labels"): a
#      name counts where a word part starts (after a non-letter, or at a capital after a lower-case
#      letter) and ends (not followed by a lower-case letter), so `ProcessSpace` holds no "sssp".
#      Comments may mention apps (they explain where a design comes from). The short aliases
#      "pr" and "color" are not checked: as parts of words they would match ordinary code.
#   4. apps include, of lockstep's own modules, only bsp, catalogue, runner and apps; and never
#      grpc or protobuf.
#   5. catalogue includes, of lockstep's own modules, only bsp, runner (the JobRunner its entries
#      make) and catalogue.
#   6. Below the command line (bsp, partition, dbsp, apps, catalogue) no string names a flag
#      (`"--checkpoint-dir: ..."`): dbsp names a setting with SettingName (dbsp/settings.h) and the
#      command line says which flag gives it.
#   7. bsp and partition carry no job description: their code never names JobDetails, JobRunner,
#      a coordinator, an attempt, a checkpoint to restore from or a partitioned form to save
#      (runner/job.h holds them; the engine runs supersteps and takes and restores checkpoints).
# Comments are removed before the checks (// to the end of the line, /* ... */), string and
# character literals are kept; raw string literals and digit separators (1'000) are not
# understood, so a file using them could be misread.
# Usage: dependency_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
cd "$source_dir"

# Prints FILE with comments blanked out and its lines kept where they were.
strip_comments() {
  perl -0777 -pe '
    s{ ("(?:\\.|[^"\\\n])*" | '"'"'(?:\\.|[^'"'"'\\\n])*'"'"') | (//[^\n]*) | (/\*.*?\*/) }
     { defined $1 ? $1 : defined $2 ? "" : ($3 =~ tr/\n//cdr) }gsex' "$1"
}

violations=0
# check RULE REGEX FILES...: reports the lines of FILES whose code matches REGEX (perl syntax).
check() {
  local rule=$1 regex=$2
  shift 2
  local file
  for file in "$@"; do
    while IFS= read -r hit; do
      echo "$file:${hit%%:*}: $rule: ${hit#*:}"
      violations=$((violations + 1))
    done < <(strip_comments "$file" | RE="$regex" perl -ne 'if (/$ENV{RE}/) { s/\s+$//; print "$.:$_\n" }')
  done
}

sources() { find "$@" -type f \( -name '*.cc' -o -name '*.h' \) 2>/dev/null | sort; }

inc='^\s*#\s*include\s*[<"]'
rpc='(grpc|grpcpp|grpc\+\+)/|google/protobuf/|[^>"]*\.pb\.h[>"]'
mapfile -t engine < <(sources bsp partition load runner dbsp)
mapfile -t lower < <(sources bsp partition)
mapfile -t input < <(sources load)
mapfile -t runner < <(sources runner)
mapfile -t part < <(sources partition)
mapfile -t dbsp_public < <(sources dbsp/include)
mapfile -t apps < <(sources apps)
mapfile -t catalogue < <(sources catalogue)
for list in engine lower input runner apps catalogue; do
  declare -n files=$list
  if [ ${#files[@]} -eq 0 ]; then
    echo "FAIL: no C++ files found for '$list' under $source_dir" >&2
    exit 1
  fi
done

check "bsp and partition never include grpc or protobuf" "$inc($rpc)" "${lower[@]}"
check "bsp and partition never include db, dbsp, apps, cli, catalogue, generate, validate, load or runner" \
  "$inc(lockstep/)?(db|dbsp|apps|cli|catalogue|generate|validate|load|runner)/" "${lower[@]}"
check "load never includes grpc or protobuf" "$inc($rpc)" "${input[@]}"
check "load never includes db, dbsp, apps, cli, catalogue, generate, validate or runner" \
  "$inc(lockstep/)?(db|dbsp|apps|cli|catalogue|generate|validate|runner)/" "${input[@]}"
check "load never includes a database client" "$inc(libpq|pqxx|postgresql)" "${input[@]}"
check "runner never includes grpc or protobuf" "$inc($rpc)" "${runner[@]}"
check "runner never includes db, dbsp, apps, cli, catalogue, generate or validate" \
  "$inc(lockstep/)?(db|dbsp|apps|cli|catalogue|generate|validate)/" "${runner[@]}"
check "bsp and partition never include a database client" "$inc(libpq|pqxx|postgresql)" \
  "${lower[@]}"
check "partition never includes bsp" "$inc(lockstep/)?bsp/" "${part[@]}"
check "installed dbsp headers never include generated protobuf or grpc headers" "$inc($rpc)" \
  "${dbsp_public[@]}"
check "the engine never includes apps headers" "$inc(lockstep/)?apps/" "${engine[@]}"
check "the engine never names an app" \
  '(?:(?<![A-Za-z])|(?<=[a-z0-9])(?=[A-Z]))(?i:pagerank|sssp|bfs|wcc|cdlp|lcc|colou?ring)(?![a-z])' \
  "${engine[@]}"
check "apps include only bsp, catalogue and runner (of lockstep)" \
  "$inc(lockstep/(?!bsp/|catalogue/|runner/|apps/)|(dbsp|cli|partition|generate|validate|load)/)" \
  "${apps[@]}"
check "apps never include grpc or protobuf" "$inc($rpc)" "${apps[@]}"
check "catalogue includes only bsp and runner (of lockstep)" \
  "$inc(lockstep/(?!bsp/|runner/|catalogue/)|(dbsp|cli|apps|partition|generate|validate|load)/)" \
  "${catalogue[@]}"
check "catalogue never includes grpc or protobuf" "$inc($rpc)" "${catalogue[@]}"
check "bsp and partition carry no job description (runner/job.h)" \
  '(?i)(?<![A-Za-z0-9_])(job_?details|job_?runner|coordinators?|attempts?|restore_from|save_parts)(?![A-Za-z0-9_])' \
  "${lower[@]}"
check "nothing below the command line names a flag" '"[^"\n]*--[a-z]' \
  "${engine[@]}" "${apps[@]}" "${catalogue[@]}"

if [ "$violations" -gt 0 ]; then
  echo "FAIL: $violations dependency rule violations (rules at the top of $0)" >&2
  exit 1
fi
echo "dependency rules: ${#engine[@]} engine, ${#apps[@]} apps, ${#catalogue[@]} catalogue files OK"
