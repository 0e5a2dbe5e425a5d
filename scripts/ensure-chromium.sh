#!/usr/bin/env bash
# Makes sure Debian's chromium is installed for the viewer's browser test
# (test/inspect-browser.test.ts) and bench (bench/inspect-viewer.ts), which drive it
# headless with playwright-core. Idempotent: exits 0 at once when /usr/bin/chromium is
# there; otherwise installs the package with apt-get (refreshing the lists once if the
# install fails). Exit 1 with one line on stderr that says why when it cannot.
set -uo pipefail

chromium=/usr/bin/chromium
if [ -x "$chromium" ]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: $chromium missing and there is no apt-get; install Debian's chromium by hand" >&2
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "ensure-chromium: $chromium missing and not root (no passwordless sudo); install chromium by hand" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
apt_options=(-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold --no-install-recommends)
if ! "${sudo[@]}" apt-get install "${apt_options[@]}" chromium >/dev/null 2>&1; then
  # The package lists may be missing or stale (a fresh container): refresh once and retry.
  if ! "${sudo[@]}" apt-get update -q >/dev/null 2>&1; then
    echo "ensure-chromium: apt-get update failed; cannot install chromium" >&2
    exit 1
  fi
  if ! "${sudo[@]}" apt-get install "${apt_options[@]}" chromium >/dev/null 2>&1; then
    echo "ensure-chromium: apt-get install chromium failed" >&2
    exit 1
  fi
fi

if [ ! -x "$chromium" ]; then
  echo "ensure-chromium: chromium installed but $chromium is still missing" >&2
  exit 1
fi
exit 0
