#!/usr/bin/env bash
# Makes sure an OpenSSH server binary is present for the manual provider's tests
# (test/manual-provider.test.ts). It only installs: the test starts its own sshd on a
# spare loopback port with a throwaway config, so nothing here starts or enables a
# system service. Exit 0 when /usr/sbin/sshd exists afterwards; otherwise exit 1 with one
# line on stderr that says why (the test then skips with that reason).
set -uo pipefail

sshd=/usr/sbin/sshd
if [ -x "$sshd" ]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-sshd: $sshd missing and there is no apt-get; install openssh-server by hand" >&2
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "ensure-sshd: $sshd missing and not root (no passwordless sudo); install openssh-server by hand" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
# policy-rc.d answering 101 keeps the package's postinst from starting the system sshd on
# port 22: the tests want only their own daemon. Remove it again only if we made it.
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null && "${sudo[@]}" chmod 755 "$policy" && made_policy=1
fi
cleanup () { if [ "$made_policy" = 1 ]; then "${sudo[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT

apt_options=(-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold --no-install-recommends)
if ! "${sudo[@]}" apt-get install "${apt_options[@]}" openssh-server >/dev/null 2>&1; then
  # The package lists may be missing or stale (a fresh container): refresh once and retry.
  if ! "${sudo[@]}" apt-get update -q >/dev/null 2>&1; then
    echo "ensure-sshd: apt-get update failed; cannot install openssh-server" >&2
    exit 1
  fi
  if ! "${sudo[@]}" apt-get install "${apt_options[@]}" openssh-server >/dev/null 2>&1; then
    echo "ensure-sshd: apt-get install openssh-server failed" >&2
    exit 1
  fi
fi

if [ ! -x "$sshd" ]; then
  echo "ensure-sshd: openssh-server installed but $sshd is still missing" >&2
  exit 1
fi
exit 0
