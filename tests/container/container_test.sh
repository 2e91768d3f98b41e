#!/usr/bin/env bash
# The container image (k8s/Dockerfile, target `prebuilt`) around the binary of this build tree,
# run as a cluster: a master and two workers, each in its own container on a podman bridge
# network, PageRank on data/kronecker-12.el mounted read-only, the result published into a
# mounted directory and checked against `lockstep run` in local mode.
#
#   container_test.sh LOCKSTEP_BINARY SOURCE_DIR
#
# Needs root, podman, runc and debootstrap (scripts/setup.sh). No registry but Debian's is
# reachable, so nothing is pulled: the base image is a debootstrap'ed Debian 12 (minbase), kept
# as a tarball in /var/cache/lockstep and imported into a podman store of the test's own
# (/var/lib/lockstep/containers), where it and the runtime stage's layers (apt) stay between
# runs. Not being root or a missing tool is a failure: scripts/setup.sh installs them and CI
# runs as root.
set -euo pipefail
binary=$(readlink -f "$1")
source_dir=$(readlink -f "$2")

skip() {
  echo "FAIL: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, podman with runc)"
for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (scripts/setup.sh)"
done

start=$(date +%s)
log() { echo "[$(($(date +%s) - start))s] $*" >&2; }

work=$(mktemp -d /tmp/lockstep-container.XXXXXX)
chmod 0755 "$work"
id=$$
net=lockstep-test-$id
image=localhost/lockstep:test-$id
master=lockstep-master-$id
workers=(lockstep-worker1-$id lockstep-worker2-$id)

# runc as the runtime; fixed rlimits, since this machine's hard limits are below podman's
# defaults (without them: "error setting rlimits for ready process: ... operation not
# permitted").
cat >"$work/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
runtime = "runc"
CONF
# The test's own store: it never sees or changes the machine's images, and may remove what it
# made; the base image and the build cache stay in it between runs.
cat >"$work/storage.conf" <<'CONF'
[storage]
driver = "overlay"
graphroot = "/var/lib/lockstep/containers/storage"
runroot = "/run/lockstep/containers/storage"
CONF
export CONTAINERS_CONF=$work/containers.conf
export CONTAINERS_STORAGE_CONF=$work/storage.conf

cleanup() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    for c in "$master" "${workers[@]}"; do
      if podman container exists "$c" 2>/dev/null; then
        echo "---- podman logs $c" >&2
        podman logs "$c" 2>&1 | tail -40 >&2 || true
      fi
    done
  fi
  podman rm -f -v -t 0 "$master" "${workers[@]}" >/dev/null 2>&1 || true
  podman network rm -f "$net" >/dev/null 2>&1 || true
  podman rmi -f "$image" >/dev/null 2>&1 || true
  # A debootstrap that failed half-way may leave /proc or /sys mounted in its target.
  awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r |
    xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$work" || true
  exit "$rc"
}
trap cleanup EXIT

# What a run killed before its trap (a CTest timeout) left behind: its names end in its PID.
for n in $(podman network ls --format '{{.Name}}' | grep '^lockstep-test-[0-9]*$' || true); do
  pid=${n##*-}
  if ! kill -0 "$pid" 2>/dev/null; then
    podman rm -f -v -t 0 "lockstep-master-$pid" "lockstep-worker1-$pid" "lockstep-worker2-$pid" \
      >/dev/null 2>&1 || true
    podman rmi -f "localhost/lockstep:test-$pid" >/dev/null 2>&1 || true
    podman network rm -f "$n" >/dev/null 2>&1 || true
  fi
done

# ---- the base image: Debian 12 minbase, cached by the hash of how it is made ----
suite=bookworm
mirror=http://deb.debian.org/debian
recipe="debootstrap --variant=minbase $suite $mirror; sources: $suite $suite-updates $suite-security; v1"
key=$(printf '%s' "$recipe" | sha256sum | cut -c1-16)
base=localhost/lockstep-base:$suite-$key
cache=/var/cache/lockstep
tarball=$cache/debian-$suite-minbase-$key.tar
mkdir -p "$cache"
(
  flock 9 # one debootstrap at a time, however many runs start together
  if [ ! -s "$tarball" ]; then
    log "debootstrap $suite (minbase) -> $tarball"
    rootfs=$work/rootfs
    debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
      tail -20 "$work/debootstrap.log" >&2
      exit 1
    }
    # The same apt sources as Debian's own bookworm image, and no package lists or archives.
    cat >"$rootfs/etc/apt/sources.list" <<SOURCES
deb $mirror $suite main
deb $mirror $suite-updates main
deb ${mirror%/debian}/debian-security $suite-security main
SOURCES
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
      "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/*.log "$rootfs"/debootstrap
    tar --numeric-owner -C "$rootfs" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$rootfs"
  fi
  if ! podman image exists "$base"; then
    log "podman import $tarball -> $base"
    podman import --quiet "$tarball" "$base" >/dev/null
  fi
) 9>"$cache/.lock"

# ---- the image: the runtime stage (cached) plus this build tree's binary ----
ctx=$work/context # the binary alone: no need to send the repository
mkdir -p "$ctx"
cp "$binary" "$ctx/lockstep"
build() { # TARGET TAG
  podman build --pull=never -f "$source_dir/k8s/Dockerfile" --target "$1" \
    --build-arg BASE_IMAGE="$base" --build-arg LOCKSTEP_BINARY=lockstep \
    -t "$2" "$ctx" >"$work/build.log" 2>&1 || {
    tail -30 "$work/build.log" >&2
    exit 1
  }
}
# runtime-base (apt) under a tag of its own first: removing the test image then leaves its layers
# in the store, and the next run's build finds them in the layer cache.
log "podman build --target runtime-base, then --target prebuilt -> $image"
runtime_base=localhost/lockstep-runtime-base:$suite-$key
previous=$(podman image inspect -f '{{.Id}}' "$runtime_base" 2>/dev/null || true)
build runtime-base "$runtime_base"
build prebuilt "$image"
# A changed Dockerfile leaves the previous runtime-base untagged: remove it (if nothing uses it).
if [ -n "$previous" ] && [ "$previous" != "$(podman image inspect -f '{{.Id}}' "$runtime_base")" ]; then
  podman rmi "$previous" >/dev/null 2>&1 || true
fi

# Every shared library is there (libpq too, which the binary opens on first use rather than
# links: db/libpq.h), and the image runs as the fixed non-root user.
podman run --rm --entrypoint /bin/sh "$image" -c \
  'echo "user $(id -u):$(id -g)"; ldd /usr/local/bin/lockstep;
   ldconfig -p | grep -q "libpq\.so\.5 " || echo "libpq.so.5 => not found"' >"$work/inspect.txt"
if grep 'not found' "$work/inspect.txt" >&2; then
  echo "FAIL: shared libraries missing in the image" >&2
  exit 1
fi
grep -qx 'user 10001:10001' "$work/inspect.txt" || {
  echo "FAIL: the image runs as $(head -1 "$work/inspect.txt"), not 10001:10001" >&2
  exit 1
}

# ---- the cluster: one bridge network, a container per process ----
# Each container has its own network namespace and IP, so the master listens on its usual port
# 7000 whatever else runs on the machine, and nothing is published on the host. The CNI network
# here has no DNS plugin, so workers get the master's address as the host name `master`
# (--add-host), as a Kubernetes Service would give it.
results=$work/results
mkdir -p "$results"
chown 10001:10001 "$results" # the mounted output directory, writable by the image's user
podman network create "$net" >/dev/null
volumes=(-v "$source_dir/data:/data:ro" -v "$results:/results")
log "master and two workers on network $net"
podman run -d --name "$master" --network "$net" "${volumes[@]}" "$image" \
  master --listen 0.0.0.0:7000 --app pagerank --graph /data/kronecker-12.el --undirected \
  --out /results/pagerank --min-workers 2 --acquire-timeout 120s >/dev/null
ip=$(podman inspect -f "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}" "$master")
[ -n "$ip" ] || { echo "FAIL: no address for the master on $net" >&2; exit 1; }
for w in "${workers[@]}"; do
  podman run -d --name "$w" --network "$net" --add-host "master:$ip" "${volumes[@]}" "$image" \
    worker --master master:7000 --threads 1 >/dev/null
done

# The master runs one job and exits; give it at most 5 minutes.
code=$(timeout 300 podman wait "$master") || { echo "FAIL: the master did not finish" >&2; exit 1; }
[ "$code" = "0" ] || { echo "FAIL: the master exited with $code" >&2; exit 1; }
log "master done; stopping the workers (SIGTERM)"
# Workers serve until SIGTERM, which they get as PID 1 of their containers: each must stop
# cleanly (exit 0) well before podman's 20 s grace period would end in SIGKILL.
podman stop -t 20 "${workers[@]}" >/dev/null
for w in "${workers[@]}"; do
  wcode=$(podman inspect -f '{{.State.ExitCode}}' "$w")
  [ "$wcode" = "0" ] || { echo "FAIL: $w exited with $wcode after SIGTERM" >&2; exit 1; }
done

# ---- the published result ----
[ -L "$results/pagerank" ] || { echo "FAIL: no published result /results/pagerank" >&2; exit 1; }
job=$results/$(readlink "$results/pagerank")
for f in _SUCCESS part-00000 part-00001; do
  [ -s "$job/$f" ] || { echo "FAIL: $f missing from the published result" >&2; exit 1; }
done
owner=$(stat -c %u:%g "$job/part-00000")
[ "$owner" = "10001:10001" ] || { echo "FAIL: the result is owned by $owner" >&2; exit 1; }
"$binary" run pagerank --graph "$source_dir/data/kronecker-12.el" --undirected \
  --out "$work/local.txt" >/dev/null 2>&1
"$binary" validate --expected "$work/local.txt" --actual "$results/pagerank" --app pagerank
log "container cluster OK"
