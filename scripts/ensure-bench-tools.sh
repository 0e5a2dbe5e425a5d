#!/bin/sh
# Installs what `npm run bench` compares cantrip with, from Debian, if it is missing:
# etcd (etcd-server, etcd-client) and serf. Idempotent: does nothing when the binaries
# are on PATH. Needs root (or sudo) only when something is missing. The Debian
# etcd-server package would start a system etcd on 2379; the bench uses its own ports,
# so the packages' services are kept from starting (ensure-apt.sh --no-services).
set -eu
missing=""
command -v etcd >/dev/null 2>&1 || missing="$missing etcd-server"
command -v etcdctl >/dev/null 2>&1 || missing="$missing etcd-client"
command -v serf >/dev/null 2>&1 || missing="$missing serf"
[ -z "$missing" ] && exit 0
echo "ensure-bench-tools: installing$missing" >&2
# shellcheck disable=SC2086 # one word per package
"$(dirname "$0")/ensure-apt.sh" --no-services ensure-bench-tools $missing
for bin in etcd etcdctl serf; do
  command -v "$bin" >/dev/null 2>&1 || { echo "ensure-bench-tools: expected $bin on PATH after installing, got nothing" >&2; exit 1; }
done
