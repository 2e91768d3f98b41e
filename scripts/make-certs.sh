#!/bin/sh
# Makes a cluster's certificates with openssl (docs/design.md §11, k8s/README.md):
#   scripts/make-certs.sh DIR [NAME ...]
# writes DIR/ca.pem and DIR/ca.key (the cluster's own authority: keep ca.key off the cluster),
# and for each NAME (default: master worker) DIR/NAME.pem and DIR/NAME.key, signed by it, for
# --tls-ca, --tls-cert and --tls-key. Every certificate serves both ends of a connection (a worker
# is a client of the master and a server to its peers). Peers are trusted for being signed by
# the authority, not for their host names, so one worker certificate serves every worker.
# With `--token`, also DIR/token: a random join token for --token-file.
set -eu
if [ $# -lt 1 ]; then
  echo "usage: $0 DIR [--token] [NAME ...]" >&2
  exit 2
fi
dir=$1
shift
token=no
if [ "${1:-}" = "--token" ]; then
  token=yes
  shift
fi
[ $# -gt 0 ] || set -- master worker
command -v openssl >/dev/null || { echo "$0: openssl is not installed" >&2; exit 1; }
mkdir -p "$dir"
umask 077
days=825
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/ca.key" 2>/dev/null
openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=lockstep cluster authority" -days "$days" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out "$dir/ca.pem" 2>/dev/null
ext="$dir/.ext.$$"
trap 'rm -f "$ext" "$dir"/*.csr' EXIT
for name in "$@"; do
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/$name.key" 2>/dev/null
  openssl req -new -key "$dir/$name.key" -subj "/CN=lockstep-$name" -out "$dir/$name.csr" 2>/dev/null
  printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth,clientAuth" "subjectAltName=DNS:lockstep-$name,DNS:localhost,IP:127.0.0.1" >"$ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -days "$days" -extfile "$ext" -out "$dir/$name.pem" 2>/dev/null
done
rm -f "$dir/ca.srl" "$dir"/*.csr
if [ "$token" = yes ]; then
  openssl rand -hex 32 >"$dir/token"
fi
chmod 644 "$dir"/*.pem
echo "$0: wrote $(cd "$dir" && ls | tr '\n' ' ')in $dir"
