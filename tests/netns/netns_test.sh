#!/usr/bin/env bash
# A multi-host cluster stood in for by network namespaces: a master and three workers, each in its
# own namespace, joined by a Linux bridge that lives in a namespace of its own, so the host's
# network is never touched. Three scenarios:
#   1. PageRank across the three workers equals `lockstep run pagerank` (local mode).
#   2. A worker's traffic is dropped mid-job with nftables (no FIN, no RST reaches either side):
#      the job fails within the keepalive bound, and the master, in --every mode, keeps serving:
#      its next job completes on the two remaining workers and equals the local result.
#   3. A bandwidth limit (tc tbf) on one worker's link, both directions, still gives the local
#      result.
# Needs root (CI runs as root); without network-namespace support it fails, it does not skip.
# Usage: netns_test.sh LOCKSTEP_BINARY DATA_DIR  (LOCKSTEP_NETNS_KEEP=1 keeps the logs)
set -uo pipefail
lockstep=$1
data=$2

test_start_us=${EPOCHREALTIME/./}
now_us() { echo "${EPOCHREALTIME/./}"; }
seconds_since() { awk -v a="$1" -v b="$(now_us)" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
say() { echo "[netns +$(seconds_since "$test_start_us")s] $*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# --- Preconditions: a missing capability is a failure, not a skip.
[ "$(id -u)" -eq 0 ] || fail "needs root for network namespaces, nftables and tc (CI runs as root)"
for tool in ip nft tc awk; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/setup.sh installs it)"
done
[ -x "$lockstep" ] || fail "no lockstep binary at $lockstep"
[ -r "$data/kronecker-12.el" ] || fail "no $data/kronecker-12.el"

# Names unique per run (PID and a random suffix), so parallel or leftover runs do not collide.
tag="lsn$$x$RANDOM"
ns_br="$tag-br"
ns_m="$tag-m"
workers=(w1 w2 w3)
work=$(mktemp -d /tmp/lockstep-netns.XXXXXX)
pids=()
namespaces=()

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  local deadline=$(($(now_us) + 5000000))
  for p in "${pids[@]}"; do
    while kill -0 "$p" 2>/dev/null && [ "$(now_us)" -lt "$deadline" ]; do sleep 0.05; done
    kill -KILL "$p" 2>/dev/null
  done
  wait 2>/dev/null
  for ns in "${namespaces[@]}"; do
    # Anything still inside one of this run's namespaces was started by this run.
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null  # takes its veth ends (and their peers) and the bridge along
  done
  if [ "$rc" -ne 0 ]; then
    for f in "$work"/*.log; do
      [ -f "$f" ] || continue
      echo "--- $(basename "$f") (last 25 lines)" >&2
      tail -25 "$f" >&2
    done
  fi
  if [ -n "${LOCKSTEP_NETNS_KEEP:-}" ]; then
    echo "logs kept in $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Polls COMMAND every $poll seconds (0.1 by default) until it succeeds or SECONDS pass; returns
# non-zero on the deadline.
wait_until() {
  local deadline=$(($(now_us) + $1 * 1000000))
  shift
  until "$@"; do
    [ "$(now_us)" -ge "$deadline" ] && return 1
    sleep "${poll:-0.1}"
  done
}
running() { kill -0 "$1" 2>/dev/null; }
exited() { ! running "$1"; }
in_log() { grep -q -- "$2" "$work/$1.log"; }

# Starts `lockstep ARGS...` inside namespace NS with its output in LOG.log; the PID is in $started.
# `ip netns exec` execs the command, so $started is lockstep's own PID.
start() {
  local ns=$1 log=$2
  shift 2
  ip netns exec "$ns" "$lockstep" "$@" >"$work/$log.log" 2>&1 &
  started=$!
  pids+=("$started")
}

# Waits up to SECONDS for PID to exit and returns its exit code (124 on the deadline).
wait_exit() {
  wait_until "$2" exited "$1" || return 124
  wait "$1"
}

# --- A private subnet that no host route covers (the namespaces are isolated anyway).
ip_int() {
  local IFS=.
  # shellcheck disable=SC2086
  set -- $1
  echo $((($1 << 24) | ($2 << 16) | ($3 << 8) | $4))
}
overlaps() {  # a.b.c.d/len a.b.c.d/len
  local a=${1%/*} al=${1#*/} b=${2%/*} bl=${2#*/}
  [ "$al" = "$1" ] && al=32
  [ "$bl" = "$2" ] && bl=32
  local len=$((al < bl ? al : bl))
  local mask=$(((0xffffffff << (32 - len)) & 0xffffffff))
  [ $(($(ip_int "$a") & mask)) -eq $(($(ip_int "$b") & mask)) ]
}
host_prefixes=$( (ip -4 route show; ip -4 -o addr show | awk '{print $4}') 2>/dev/null |
  awk '$1 ~ /^[0-9]/ {print $1}')
net=""
for candidate in 10.213.47 10.231.93 172.29.213 172.23.147 10.251.7; do
  clash=0
  for p in $host_prefixes; do
    if overlaps "$candidate.0/24" "$p"; then clash=1; fi
  done
  if [ "$clash" -eq 0 ]; then
    net=$candidate
    break
  fi
done
[ -n "$net" ] || fail "every candidate subnet clashes with a host route: $host_prefixes"

# --- The topology: bridge namespace with br0; one veth pair per host, eth0 on the host's side.
ip netns add "$ns_br" || fail "cannot create a network namespace (ip netns add $ns_br)"
namespaces+=("$ns_br")
ip -n "$ns_br" link add br0 type bridge || fail "cannot create a bridge in $ns_br"
ip -n "$ns_br" link set br0 up || fail "cannot bring br0 up"
declare -A addr=([m]="$net.1" [w1]="$net.11" [w2]="$net.12" [w3]="$net.13")
declare -A ns_of=([m]="$ns_m")
for w in "${workers[@]}"; do ns_of[$w]="$tag-$w"; done
for host in m "${workers[@]}"; do
  ns=${ns_of[$host]}
  ip netns add "$ns" || fail "cannot create a network namespace (ip netns add $ns)"
  namespaces+=("$ns")
  ip -n "$ns_br" link add "port-$host" type veth peer name eth0 netns "$ns" &&
    ip -n "$ns_br" link set "port-$host" master br0 &&
    ip -n "$ns_br" link set "port-$host" up &&
    ip -n "$ns" addr add "${addr[$host]}/24" dev eth0 &&
    ip -n "$ns" link set eth0 up &&
    ip -n "$ns" link set lo up ||
    fail "cannot wire $ns to the bridge"
done
say "namespaces $tag-{br,m,w1,w2,w3} on $net.0/24 (master ${addr[m]}, workers .11 .12 .13)"

master_at="${addr[m]}:7070"
graph12="$data/kronecker-12.el"
"$lockstep" run pagerank --graph "$graph12" --undirected --out "$work/local12.txt" --threads 2 \
  >/dev/null 2>"$work/local12.log" || fail "local PageRank on kronecker-12"

# The workers serve every job of this test; each redials the master between jobs.
declare -A worker_pid
for w in "${workers[@]}"; do
  start "${ns_of[$w]}" "$w" worker --master "$master_at" --threads 1
  worker_pid[$w]=$started
done

# Runs one master job (pagerank over GRAPH with FLAGS) on three workers; checks it connected them
# over the bridge and that its published result equals the local one.
run_job() {  # name expected graph flags...
  local name=$1 expected=$2 graph=$3
  shift 3
  start "$ns_m" "master-$name" master --listen "$master_at" --app pagerank --graph "$graph" \
    --out "$work/$name/pr" --min-workers 3 --max-workers 3 --acquire-timeout 60s "$@"
  local m=$started code
  wait_exit "$m" 90
  code=$?
  [ "$code" -ne 124 ] || fail "$name: the master did not finish within 90 s"
  [ "$code" -eq 0 ] || fail "$name: the master exited $code: $(tail -1 "$work/master-$name.log")"
  for w in "${workers[@]}"; do
    in_log "master-$name" "worker ipv4:${addr[$w]}:" ||
      fail "$name: worker $w (${addr[$w]}) did not connect through the bridge"
  done
  grep -q '"workers": 3' "$work/$name/pr/_SUCCESS" || fail "$name: _SUCCESS does not say 3 workers"
  "$lockstep" validate --expected "$expected" --actual "$work/$name/pr" --app pagerank \
    >"$work/validate-$name.log" 2>&1 ||
    fail "$name: the cluster's result differs from local mode: $(tail -3 "$work/validate-$name.log")"
}

# --- 1. PageRank across three namespaces equals local mode.
t=$(now_us)
run_job plain "$work/local12.txt" "$graph12" --undirected
say "1. pagerank on 3 workers across the bridge equals local mode ($(seconds_since "$t") s)"

# --- 3. A bandwidth limit on worker 3's link (both directions) still gives the local result.
rate=4mbit
tc -n "${ns_of[w3]}" qdisc add dev eth0 root tbf rate "$rate" burst 16kb latency 400ms &&
  tc -n "$ns_br" qdisc add dev port-w3 root tbf rate "$rate" burst 16kb latency 400ms ||
  fail "cannot add a tbf qdisc"
t=$(now_us)
run_job shaped "$work/local12.txt" "$graph12" --undirected
shaped_s=$(seconds_since "$t")
# The job's traffic went through both shapers, and each had to hold some of it back.
for side in "${ns_of[w3]} eth0" "$ns_br port-w3"; do
  read -r side_ns side_dev <<<"$side"
  stats=$(tc -s -n "$side_ns" qdisc show dev "$side_dev")
  sent=$(echo "$stats" | awk '/Sent/ {print $2; exit}')
  over=$(echo "$stats" | awk '{for (i = 1; i < NF; i++) if ($i == "overlimits") {print $(i + 1); exit}}')
  [ "${sent:-0}" -gt 100000 ] || fail "3: the tbf on $side passed only ${sent:-0} bytes"
  [ "${over:-0}" -gt 0 ] || fail "3: the tbf on $side never held traffic back (overlimits 0)"
  say "   tbf $rate on $side: sent $sent bytes, overlimits $over"
done
tc -n "${ns_of[w3]}" qdisc del dev eth0 root && tc -n "$ns_br" qdisc del dev port-w3 root ||
  fail "cannot remove the tbf qdiscs"
say "3. pagerank with worker 3's link limited to $rate equals local mode (${shaped_s} s)"

# --- 2. A worker vanishes from the network mid-job.
# A job long enough to be mid-superstep when the traffic is dropped: Kronecker scale 15 (21k
# vertices with edges, 0.5M messages a superstep) and a fixed 300 PageRank iterations, which take
# 5-10 ms each here: the job has over a second to go when the drop lands a few tens of ms after
# superstep 2, yet the later job on two workers is short.
big="$work/kronecker-15.el"
job_flags=(--undirected --tolerance 0 --max-iterations 300)
"$lockstep" generate kronecker --scale 15 --degree 8 --seed 5 --out "$big" \
  >/dev/null 2>"$work/generate.log" || fail "lockstep generate"
"$lockstep" run pagerank --graph "$big" "${job_flags[@]}" --out "$work/local15.txt" --threads 2 \
  >/dev/null 2>"$work/local15.log" || fail "local PageRank on kronecker-15"

# Periodic mode: a job every second, on at least two workers, three if they are there within 5 s.
start "$ns_m" master-periodic master --listen "$master_at" --app pagerank --graph "$big" \
  "${job_flags[@]}" --out "$work/periodic/pr" --every 1s --min-workers 2 --max-workers 3 \
  --last-call 5s
periodic=$started
poll=0.02 wait_until 60 in_log master-periodic "superstep 2 |" ||
  fail "2: the first periodic job did not reach superstep 2 within 60 s"
in_log master-periodic "pagerank on 3 workers" || fail "2: the first periodic job has not 3 workers"
first_job=$(grep -o 'job [0-9a-f-]*: pagerank on 3 workers' "$work/master-periodic.log" |
  head -1 | awk '{print $2}' | tr -d :)

# Worker 1 drops every packet in and out: its peers see neither FIN nor RST.
ip netns exec "${ns_of[w1]}" nft -f - <<'NFT' || fail "2: cannot load the nftables drop rules"
table inet lockstep_netns_drop {
  chain input { type filter hook input priority -300; policy drop; }
  chain output { type filter hook output priority -300; policy drop; }
}
NFT
dropped=$(now_us)
in_log master-periodic "job $first_job: completed" &&
  fail "2: the first job completed before the drop; the job is too short"
say "2. dropped all traffic of worker w1 (${addr[w1]}) during job $first_job"

# The bound: a keepalive ping at most 3 s after the last frame, dead after 4 s without its ack:
# noticed within 7 s. The master logs the abort once the other workers have hung up (at most
# kHangUpGrace + 1 s = 6 s in dbsp/master.cc, well under a second here); 2 s more for a loaded
# 2-core machine.
bound=15
wait_until 40 in_log master-periodic "job $first_job: aborted:" ||
  fail "2: the master did not abort the job within 40 s of the drop"
to_failure=$(seconds_since "$dropped")
awk -v s="$to_failure" -v b="$bound" 'BEGIN { exit !(s <= b) }' ||
  fail "2: the job failed ${to_failure} s after the drop, later than the ${bound} s keepalive bound"
reason=$(grep "job $first_job: aborted:" "$work/master-periodic.log" | head -1)
case "$reason" in
  *"${addr[w1]}:"*disconnected*) ;;
  *) fail "2: the abort does not blame worker w1 (${addr[w1]}): $reason" ;;
esac
say "   master aborted the job ${to_failure} s after the drop (bound ${bound} s): ${reason#*aborted: }"
# The failed job published nothing and left no staging directory behind (the master discards
# them before it logs the abort).
leftover=$(find "$work/periodic" -mindepth 1 -maxdepth 1 -name "*$first_job*" 2>/dev/null)
[ -z "$leftover" ] || fail "2: the failed job left $leftover"
grep -qs "$first_job" "$work/periodic/pr/_SUCCESS" && fail "2: the failed job published a result"
# The cut-off worker notices too, through its own keepalive, and keeps running (redialling).
wait_until 5 in_log w1 "job $first_job worker [0-9]*: failed: " || fail "2: worker w1 did not notice the drop"
to_worker_failure=$(seconds_since "$dropped")
awk -v s="$to_worker_failure" -v b="$bound" 'BEGIN { exit !(s <= b) }' ||
  fail "2: worker w1 noticed the drop only after ${to_worker_failure} s (bound ${bound} s)"
running "${worker_pid[w1]}" || fail "2: worker w1 exited after losing the master"
say "   worker w1 noticed within ${to_worker_failure} s and keeps running"
running "$periodic" || fail "2: the master exited after the failed job"

# The master keeps serving: its next job completes on the two remaining workers.
t=$(now_us)
wait_until 90 test -e "$work/periodic/pr/_SUCCESS" ||
  fail "2: no later periodic job completed within 90 s of the failure"
say "   the next periodic job completed $(seconds_since "$t") s after the failure"
# Stop the master before reading the result: a third periodic job would replace it.
kill -TERM "$periodic"
wait_exit "$periodic" 20
code=$?
[ "$code" -eq 0 ] || fail "2: the periodic master exited $code after SIGTERM"
grep -q '"workers": 2' "$work/periodic/pr/_SUCCESS" ||
  fail "2: the later job did not run on the 2 remaining workers: $(cat "$work/periodic/pr/_SUCCESS")"
"$lockstep" validate --expected "$work/local15.txt" --actual "$work/periodic/pr" --app pagerank \
  >"$work/validate-periodic.log" 2>&1 ||
  fail "2: the later job's result differs from local mode: $(tail -3 "$work/validate-periodic.log")"
say "2. the master kept serving: a later job on 2 workers equals local mode"

say "PASS (total $(seconds_since "$test_start_us") s)"
