#!/usr/bin/env bash
# The Kubernetes manifests without a cluster:
#  1. every overlay renders with the machine's kubectl and with Debian's kubernetes-client 1.20
#     (kustomize v2), and every rendered object validates against kubernetes-models' schemas;
#  2. the validator rejects a broken object (so that step 1 can fail);
#  3. the dev overlay's own command lines (init containers, master with its ConfigMap, workers) run
#     here as processes, against a throw-away PostgreSQL standing in for its StatefulSet (initdb
#     and pg_ctl in a temporary directory, as nobody under root): the graph is loaded with the
#     load-graph container's psql command, the probes' ports and services answer SERVING, the
#     periodic master publishes PageRank into the database equal to local mode, and SIGTERM ends
#     master and workers within the pods' termination grace period.
set -euo pipefail
lockstep=$1
source_dir=$2
build_dir=$3
k8s=$source_dir/k8s
work=$(mktemp -d)
pids=()
pg=""
pg_as=()
pgbin=""
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  if [ -n "$pg" ]; then
    "${pg_as[@]}" "$pgbin/pg_ctl" -D "$pg/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$pg"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done
  exit 1
}

# --- the validator, from the pinned lock file
validator=$build_dir/k8s-validate
mkdir -p "$validator"
cp "$k8s/validate/package.json" "$k8s/validate/package-lock.json" "$k8s/validate/"*.mjs "$validator/"
(cd "$validator" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

# --- kubectl: the machine's, and Debian's 1.20 (kept between runs)
kubectls=("$(command -v kubectl)")
if ! kubectl version --client 2>/dev/null | grep -q 'v1\.20\.'; then
  cache=${LOCKSTEP_CACHE:-/var/cache/lockstep}/kubernetes-client
  if [ ! -x "$cache/usr/bin/kubectl" ]; then
    mkdir -p "$work/deb" "$cache"
    (cd "$work/deb" && apt-get download -q kubernetes-client >/dev/null 2>&1) ||
      fail "cannot download Debian's kubernetes-client"
    dpkg -x "$work"/deb/kubernetes-client_*.deb "$cache"
  fi
  kubectls+=("$cache/usr/bin/kubectl")
fi

# --- 1. render and validate every overlay with every kubectl
overlays=()
for dir in "$k8s"/overlays/*/; do overlays+=("$(basename "$dir")"); done
[ ${#overlays[@]} -ge 2 ] || fail "expected the dev and prod overlays, found: ${overlays[*]}"
for kc in "${kubectls[@]}"; do
  version=$("$kc" version --client 2>/dev/null | grep -o 'v1\.[0-9]*' | head -1)
  for o in "${overlays[@]}"; do
    out=$work/$o-$version.yaml
    "$kc" kustomize "$k8s/overlays/$o" >"$out" 2>"$work/render.err" ||
      fail "kubectl $version kustomize overlays/$o: $(cat "$work/render.err")"
    report=$(node "$validator/validate.mjs" "$out") || fail "overlays/$o ($version): $report"
    kinds=$(grep -c '^kind: ' "$out")
    [ "$(echo "$report" | tail -1)" = "$kinds passed, 0 failed" ] ||
      fail "overlays/$o ($version): $report (expected $kinds objects)"
    kinds_wanted=(Namespace ConfigMap Service Deployment PersistentVolumeClaim)
    [ "$o" = dev ] && kinds_wanted+=(StatefulSet Secret)  # its PostgreSQL and the password
    for kind in "${kinds_wanted[@]}"; do
      grep -q "^kind: $kind\$" "$out" || fail "overlays/$o ($version) renders no $kind"
    done
    echo "overlays/$o with kubectl $version: $(echo "$report" | tail -1)"
  done
done

# --- 2. a broken object is reported
sed 's/containerPort: 7000/containerPort: seven-thousand/' "$work/dev-${version}.yaml" >"$work/broken.yaml"
if report=$(node "$validator/validate.mjs" "$work/broken.yaml"); then
  fail "the validator passed a containerPort that is not a number: $report"
fi
echo "$report" | grep -q 'containerPort must be integer' || fail "unexpected report: $report"

# --- 3. the dev overlay's commands, run here as processes
dev=$work/dev-${version}.yaml
args() { node "$validator/args.mjs" "$dev" "$@"; }
# The StatefulSet's PostgreSQL: a server of this test's, on a Unix socket in its directory.
pg=$(mktemp -d /tmp/lockstep-k8s-pg.XXXXXX)
if [ "$(id -u)" -eq 0 ]; then
  chown nobody "$pg"
  pg_as=(runuser -u nobody --)
fi
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || fail "no PostgreSQL server (scripts/setup.sh installs it)"
"${pg_as[@]}" "$pgbin/initdb" -D "$pg/data" -A trust -U lockstep >"$work/initdb.log" 2>&1 ||
  fail "initdb: $(tail -3 "$work/initdb.log")"
"${pg_as[@]}" "$pgbin/pg_ctl" -D "$pg/data" -w -l "$pg/log" \
  -o "-k $pg -c listen_addresses='' -p 5432 -c fsync=off" start >/dev/null || fail "pg_ctl start"
pg_uri="postgresql://lockstep@${pg//\//%2F}:5432/links"
psql -X -q "postgresql://lockstep@${pg//\//%2F}:5432/postgres" -c "CREATE DATABASE links" ||
  fail "CREATE DATABASE links"
sql() { psql -X -q -At "$pg_uri" -c "$1" 2>/dev/null; }

# The pods' paths (/data, /results, /checkpoints, /etc/lockstep) become directories of this test,
# and the database's Service this test's server.
mkdir -p "$work/data" "$work/results" "$work/checkpoints" "$work/etc"
# The Secret lockstep-tls, made as k8s/README.md says.
"$source_dir/scripts/make-certs.sh" "$work/tls" --token >/dev/null || fail "make-certs.sh"
relocate() { sed -e "s#/data/#$work/data/#g" -e "s#/results/#$work/results/#g" \
  -e "s#/checkpoints/#$work/checkpoints/#g" -e "s#/etc/lockstep/#$work/etc/#g" \
  -e "s#/etc/lockstep-tls/#$work/tls/#g" -e "s#^--data-root=/\(.*\)\$#--data-root=$work/\1#" \
  -e "s#postgresql://lockstep@lockstep-postgres:5432/links#$pg_uri#g" \
  -e "s#^--host=lockstep-postgres\$#--host=$pg#"; }
mapfile -t generate < <(args lockstep-master generate-graph | relocate)
"$lockstep" "${generate[@]}" >"$work/generate.log" 2>&1 || fail "init container: ${generate[*]}"
mapfile -t load < <(args lockstep-master load-graph | relocate)
psql "${load[@]}" >"$work/load.log" 2>&1 || fail "init container load-graph: $(cat "$work/load.log")"
[ "$(sql "SELECT count(*) FROM edges")" -gt 0 ] || fail "load-graph loaded no edge"
args configmap lockstep-job job.toml | relocate >"$work/etc/job.toml"

# The probes: `lockstep health` over TLS (exec), with the pod's own certificate.
mapfile -t master_ready < <(args lockstep-master master readinessProbe | relocate)
mapfile -t master_live < <(args lockstep-master master livenessProbe | relocate)
mapfile -t worker_ready < <(args lockstep-worker worker readinessProbe | relocate)
mapfile -t worker_live < <(args lockstep-worker worker livenessProbe | relocate)
probe_port() { printf '%s\n' "$@" | grep -o '^127\.0\.0\.1:[0-9]*$' | cut -d: -f2; }
master_port=$(probe_port "${master_ready[@]}")
worker_port=$(probe_port "${worker_ready[@]}")
[ "${master_ready[0]}" = lockstep ] && [ "${master_ready[1]}" = health ] ||
  fail "the master's readiness probe is not lockstep health: ${master_ready[*]}"
printf '%s\n' "${master_ready[@]}" | grep -qx -- "--service=lockstep.v1.JobQueue" ||
  fail "the master's readiness probe asks for another service"
printf '%s\n' "${worker_ready[@]}" | grep -qx -- "--service=lockstep.v1.Worker" ||
  fail "the workers' readiness probe asks for another service"
[ "$(probe_port "${master_live[@]}")" = "$master_port" ] &&
  ! printf '%s\n' "${master_live[@]}" | grep -q -- "--service" || fail "master liveness probe"
mapfile -t master_args < <(args lockstep-master master | relocate)
mapfile -t worker_args < <(args lockstep-worker worker | relocate)
printf '%s\n' "${master_args[@]}" | grep -qx -- "--listen=0.0.0.0:$master_port" ||
  fail "the master's probes use port $master_port, its --listen does not"
printf '%s\n' "${worker_args[@]}" | grep -qx -- "--health-port=$worker_port" ||
  fail "the workers' probes use port $worker_port, their --health-port does not"
for a in "${master_args[@]}" "${worker_args[@]}"; do
  case $a in --tls-cert=*|--tls-key=*|--tls-ca=*|--token-file=*) [ -r "${a#*=}" ] ||
    fail "$a: no such file in the Secret as k8s/README.md makes it";; esac
done
printf '%s\n' "${worker_args[@]}" | grep -q -- "--data-root=" ||
  fail "the workers run without --data-root"
printf '%s\n' "${worker_args[@]}" | grep -qx -- "--master=lockstep-master:$master_port" ||
  fail "the workers dial another port than the master's Service"
# The database's Service is this test's server on a Unix socket, a path that --data-root confines
# (design §11): its directory is a root here, as a TCP host needs none in the pods.
worker_args+=(--data-root="$pg")

# Ports are chosen free here: --listen and --health-port become port 0, --master the master's.
master_args=("${master_args[@]/#--listen=*/--listen=127.0.0.1:0}")
master_args=("${master_args[@]/#--metrics-port=*/--metrics-port=0}")
master_args+=(--port-file="$work/port")
"$lockstep" "${master_args[@]}" >"$work/master.log" 2>&1 &
master_pid=$!
pids+=("$master_pid")
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || fail "the master did not start: ${master_args[*]}"
port=$(cat "$work/port")
worker_args=("${worker_args[@]/#--master=*/--master=127.0.0.1:$port}")
worker_args=("${worker_args[@]/#--health-port=*/--health-port=0}")
worker_args=("${worker_args[@]/#--metrics-port=*/--metrics-port=0}")
worker_pids=()
for i in 1 2; do
  "$lockstep" "${worker_args[@]}" >"$work/worker$i.log" 2>&1 &
  worker_pids+=($!)
  pids+=($!)
done

# The periodic master publishes its first result once both workers are in.
published() {
  local n
  n=$(sql "SELECT count(*) FROM lockstep_jobs") || return 1
  [ "${n:-0}" -ge 1 ]
}
for _ in $(seq 300); do published && break; sleep 0.1; done
published || fail "no result published in 30 s"
# The probes' own commands, at the ports chosen here.
probe() {
  local port=$1
  shift
  "$lockstep" "${@:2}" >/dev/null 2>&1 || return 1
}
at() { local p=$1; shift; printf '%s\n' "${@/#127.0.0.1:[0-9]*/127.0.0.1:$p}"; }
mapfile -t cmd < <(at "$port" "${master_ready[@]}")
probe "$port" "${cmd[@]}" || fail "master readiness is not SERVING: ${cmd[*]}"
mapfile -t cmd < <(at "$port" "${master_live[@]}")
probe "$port" "${cmd[@]}" || fail "master liveness is not SERVING: ${cmd[*]}"
# Without the certificate the master's port refuses even a health check.
"$lockstep" health "127.0.0.1:$port" --timeout 1s >/dev/null 2>&1 &&
  fail "the master answered a health check in plain text"
for i in 1 2; do
  hp=$(grep -o 'health service on port [0-9]*' "$work/worker$i.log" | grep -o '[0-9]*$')
  [ -n "$hp" ] || fail "worker $i logged no health port"
  mapfile -t cmd < <(at "$hp" "${worker_ready[@]}")
  probe "$hp" "${cmd[@]}" || fail "worker $i readiness is not SERVING: ${cmd[*]}"
  mapfile -t cmd < <(at "$hp" "${worker_live[@]}")
  probe "$hp" "${cmd[@]}" || fail "worker $i liveness is not SERVING: ${cmd[*]}"
done
grep -q "master listening on 127.0.0.1:0: mutual TLS and a join token" "$work/master.log" ||
  fail "the master does not say it uses mutual TLS and the token"
# The metrics the pods are annotated for: the master's count the published job.
mp=$(grep -o 'metrics on port [0-9]*' "$work/master.log" | grep -o '[0-9]*$')
grep -q 'prometheus.io/port: "9090"' "$dev" || fail "the pods are not annotated for scraping"
curl -s -f "http://127.0.0.1:$mp/metrics" | grep -q '^lockstep_jobs_total{role="master",outcome="completed"} [1-9]' ||
  fail "the master's metrics do not count the published job"

# The same job in local mode: the ConfigMap's job as a [run.pagerank] section, less the options
# that only a master has.
sed -e 's/^\[master\]$/[run.pagerank]/' -e '/^app = /d' -e '/^min-workers = /d' \
  -e '/^max-workers = /d' -e '/^last-call = /d' -e '/^acquire-timeout = /d' \
  -e '/^checkpoint-/d' -e '/^max-restarts = /d' -e '/^recovery-timeout = /d' \
  -e "s#^out = .*#out = \"$work/local.txt\"#" "$work/etc/job.toml" >"$work/local.toml"
"$lockstep" --config "$work/local.toml" run pagerank >"$work/local.log" 2>&1 ||
  fail "local mode with the ConfigMap's job"
sql "COPY (SELECT id, value FROM pagerank) TO STDOUT" | tr '\t' ' ' >"$work/table.txt"
"$lockstep" validate --app pagerank --expected "$work/local.txt" \
  --actual "$work/table.txt" >"$work/validate.log" 2>&1 ||
  fail "the dev overlay's result differs from local mode: $(cat "$work/validate.log")"
cat "$work/validate.log"

# SIGTERM, as the kubelet sends it: every process exits within the grace period.
grace=$(grep -o 'terminationGracePeriodSeconds: [0-9]*' "$dev" | grep -o '[0-9]*$' | sort -n | head -1)
[ -n "$grace" ] || fail "no terminationGracePeriodSeconds in the dev overlay"
start=$(date +%s.%N)
kill -TERM "$master_pid" "${worker_pids[@]}"
for p in "$master_pid" "${worker_pids[@]}"; do
  code=0
  wait "$p" || code=$?
  [ "$code" -eq 0 ] || fail "process $p exited with $code after SIGTERM"
done
pids=()
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
[ "$(echo "$elapsed < $grace" | bc)" -eq 1 ] ||
  fail "SIGTERM took ${elapsed}s, more than the ${grace}s grace period"
echo "SIGTERM: master and workers exited in ${elapsed}s (grace period ${grace}s)"
echo PASS
