#!/bin/sh
# Installs what `npm run bench` compares cantrip with, from Debian, if it is missing:
# etcd (etcd-server, etcd-client) and serf. Idempotent: does nothing when the binaries
# are on PATH. Needs root (or sudo) only when something is missing.
set -eu
missing=""
command -v etcd >/dev/null 2>&1 || missing="$missing etcd-server"
command -v etcdctl >/dev/null 2>&1 || missing="$missing etcd-client"
command -v serf >/dev/null 2>&1 || missing="$missing serf"
[ -z "$missing" ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo -n"
echo "ensure-bench-tools: installing$missing" >&2
# The Debian etcd-server package starts a system etcd on 2379; the bench uses its own
# ports, but keep the package's service from starting at all.
policy=/usr/sbin/policy-rc.d
created_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 755 "$policy" && created_policy=1
fi
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >&2 \
  || { $sudo apt-get update -q >&2 && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >&2; }
[ -n "$created_policy" ] && $sudo rm -f "$policy"
for bin in etcd etcdctl serf; do
  command -v "$bin" >/dev/null 2>&1 || { echo "ensure-bench-tools: expected $bin on PATH after installing, got nothing" >&2; exit 1; }
done
