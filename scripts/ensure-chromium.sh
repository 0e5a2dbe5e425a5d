#!/usr/bin/env bash
# Makes sure Debian's chromium is installed for the viewer's browser test
# (test/inspect-browser.test.ts) and bench (bench/inspect-viewer.ts), which drive it
# headless with playwright-core. Idempotent: exits 0 at once when /usr/bin/chromium is
# there; otherwise installs the package (scripts/ensure-apt.sh). Exit 1 with one line on
# stderr that says why when it cannot.
set -uo pipefail

chromium=/usr/bin/chromium
if [ -x "$chromium" ]; then
  exit 0
fi
"$(dirname "$0")/ensure-apt.sh" ensure-chromium chromium || exit 1
if [ ! -x "$chromium" ]; then
  echo "ensure-chromium: chromium installed but $chromium is still missing" >&2
  exit 1
fi
exit 0
