#!/usr/bin/env bash
# Installs Debian packages for the project's own scripts (ensure-chromium.sh,
# ensure-sshd.sh, ensure-bench-tools.sh), so nothing needs installing by hand:
#
#   scripts/ensure-apt.sh [--no-services] CALLER PACKAGE...
#
# As root, or through passwordless sudo. Refreshes the package lists once if the first
# install fails (a fresh container has none). --no-services keeps the packages' postinst
# from starting system daemons (a policy-rc.d answering 101, removed again only if this
# script made it): the tests and benches start their own on spare ports. Exit 1 with one
# line on stderr, prefixed with CALLER, that says why when it cannot.
set -uo pipefail

no_services=0
if [ "${1:-}" = "--no-services" ]; then
  no_services=1
  shift
fi
caller=${1:?usage: ensure-apt.sh [--no-services] CALLER PACKAGE...}
shift
if [ "$#" -eq 0 ]; then
  echo "$caller: ensure-apt.sh expected at least one package, got none" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "$caller: there is no apt-get; install $* by hand" >&2
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "$caller: not root (no passwordless sudo); install $* by hand" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ "$no_services" = 1 ] && [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null && "${sudo[@]}" chmod 755 "$policy" && made_policy=1
fi
cleanup () { if [ "$made_policy" = 1 ]; then "${sudo[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT

apt_options=(-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold --no-install-recommends)
if ! "${sudo[@]}" apt-get install "${apt_options[@]}" "$@" >/dev/null 2>&1; then
  if ! "${sudo[@]}" apt-get update -q >/dev/null 2>&1; then
    echo "$caller: apt-get update failed; cannot install $*" >&2
    exit 1
  fi
  if ! "${sudo[@]}" apt-get install "${apt_options[@]}" "$@" >/dev/null 2>&1; then
    echo "$caller: apt-get install $* failed" >&2
    exit 1
  fi
fi
exit 0
