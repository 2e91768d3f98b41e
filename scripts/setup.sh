#!/usr/bin/env bash
# Installs every Debian package that lockstep's build, tests and benchmarks need.
# Skips what is already present, so a second run costs a dpkg query and nothing else.
set -euo pipefail

# With --build-only, only what building lockstep needs (the container image's build stage).
# With --grape, also what building libgrape-lite for bench/scale.py --grape needs (MPI, glog,
# gflags; bench/README.md), and perf for profiling.
packages=(
  g++ cmake ninja-build pkg-config ccache
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libtbb-dev libspdlog-dev libfmt-dev libboost-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libabsl-dev libssl-dev
  libpq-dev                         # PostgreSQL client: the db module's source and sink
)
if [ "${1:-}" = "--grape" ]; then
  packages+=(libopenmpi-dev openmpi-bin libgoogle-glog-dev libgflags-dev linux-perf)
fi
if [ "${1:-}" != "--build-only" ]; then
  packages+=(
    clang-format time bc
    iproute2 nftables                 # multi-host tests in network namespaces
    postgresql                        # a throw-away server for the database tests
    openssl                           # the security tests' certificates (scripts/make-certs.sh)
    curl                              # the metrics tests' HTTP client
    clang libclang-rt-14-dev          # the fuzz targets (libFuzzer; scripts/fuzz.sh)
    podman runc debootstrap           # container image test
  )
  # The machine's own kubectl and Node.js are used when present; Debian's otherwise.
  command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
  command -v node >/dev/null 2>&1 || packages+=(nodejs)
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
