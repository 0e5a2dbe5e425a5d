#!/usr/bin/env bash
# Makes sure an OpenSSH server binary is present for the manual provider's tests
# (test/manual-provider.test.ts). It only installs (scripts/ensure-apt.sh --no-services):
# the test starts its own sshd on a spare loopback port with a throwaway config, so
# nothing here starts or enables a system service. Exit 0 when /usr/sbin/sshd exists
# afterwards; otherwise exit 1 with one line on stderr that says why (the test then skips
# with that reason).
set -uo pipefail

sshd=/usr/sbin/sshd
if [ -x "$sshd" ]; then
  exit 0
fi
"$(dirname "$0")/ensure-apt.sh" --no-services ensure-sshd openssh-server || exit 1
if [ ! -x "$sshd" ]; then
  echo "ensure-sshd: openssh-server installed but $sshd is still missing" >&2
  exit 1
fi
exit 0
