/**
 * The shell script the manual provider (providers/manual-provider.ts) runs on a host for
 * every action, as one `sh -c` argument: its inputs are positional arguments, so no input
 * is ever parsed as shell code. Machine agents live in `ROOT/machine-<id>`, controllers
 * placed on the host (`cantrip enable-ha --to ssh:…`) in `ROOT/controller-<name>/cN`,
 * and the agent code both run in `ROOT/code/<stamp>`.
 */
/**
 * The one remote script: `sh -c SCRIPT sh ROOT ACTION ARGS...`. ROOT's leading `~/` is
 * resolved here, on the host, so every path given back is absolute. An agent counts as
 * alive only if its pid is live *and* started when the recorded one did (pid reuse).
 */
export const remoteScript = `
set -u
root=$1; action=$2; shift 2
case $root in "~") root=$HOME ;; "~/"*) root=$HOME/\${root#"~/"} ;; esac
# A zombie is not alive: where nothing reaps orphans promptly, a killed agent lingers as one.
live () {
  kill -0 "$1" 2>/dev/null || return 1
  if command -v ps >/dev/null 2>&1; then
    case $(ps -o stat= -p "$1" 2>/dev/null | tr -d ' ') in ''|Z*) return 1 ;; esac
  fi
  return 0
}
# systemd manages this host and this user may install system units: agents run as units there.
systemd_ok () {
  [ -d /run/systemd/system ] && [ "$(id -u)" = 0 ] && command -v systemctl >/dev/null 2>&1
}
# An agent run by a unit is whatever systemd runs now (it restarts it under a new pid).
unit_pid () {
  [ -f "$1/unit" ] && command -v systemctl >/dev/null 2>&1 || return 0
  up=$(systemctl show -p MainPID --value "$(cat "$1/unit").service" 2>/dev/null)
  case $up in ''|0|*[!0-9]*) rm -f "$1/pid" ;; *)
    [ "$(cat "$1/pid" 2>/dev/null)" = "$up" ] || { echo "$up" > "$1/pid"; ps -o lstart= -p "$up" > "$1/started" 2>/dev/null; } ;;
  esac
}
alive () {
  unit_pid "$1"
  [ -f "$1/pid" ] || return 1
  p=$(cat "$1/pid") || return 1
  case $p in ''|*[!0-9]*) return 1 ;; esac
  live "$p" || return 1
  if [ -s "$1/started" ] && command -v ps >/dev/null 2>&1; then
    [ "$(ps -o lstart= -p "$p" 2>/dev/null)" = "$(cat "$1/started")" ] || return 1
  fi
  return 0
}
stop_agent () {
  # A unit is disabled first, or systemd would start the agent again.
  if [ -f "$1/unit" ]; then
    u=$(cat "$1/unit")
    systemctl disable --now "$u.service" >/dev/null 2>&1
    rm -f "/etc/systemd/system/$u.service" "$1/unit"
    systemctl daemon-reload >/dev/null 2>&1
  fi
  if alive "$1"; then
    p=$(cat "$1/pid")
    kill -s TERM -- "-$p" 2>/dev/null || kill -s TERM "$p" 2>/dev/null
    n=0
    while [ "$n" -lt "$2" ] && live "$p"; do sleep 0.1; n=$((n + 1)); done
    if live "$p"; then
      kill -s KILL -- "-$p" 2>/dev/null || kill -s KILL "$p" 2>/dev/null
      # A killed process takes a moment to go; the stop answers only once it has.
      n=0
      while [ "$n" -lt 50 ] && live "$p"; do sleep 0.1; n=$((n + 1)); done
    else
      kill -s KILL -- "-$p" 2>/dev/null
    fi
  fi
  return 0
}
# launch DIR LOG CHECK-TENTHS ARGV...: ARGV detached in a new session (so a stop kills its
# whole process group), writing its own pid before it becomes ARGV, so the pid is ARGV's;
# true (printing "started PID") if it still runs CHECK tenths of a second later.
launch () {
  ld=$1; llog=$2; lcheck=$3; shift 3
  rm -f "$ld/pid" "$ld/started"
  setsid sh -c 'echo $$ > "$0/pid.new" && mv "$0/pid.new" "$0/pid" && exec "$@"' "$ld" "$@" < /dev/null >> "$llog" 2>&1 &
  n=0
  while [ ! -s "$ld/pid" ] && [ "$n" -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
  if [ -s "$ld/pid" ] && command -v ps >/dev/null 2>&1; then ps -o lstart= -p "$(cat "$ld/pid")" > "$ld/started" 2>/dev/null; fi
  n=0
  while [ "$n" -lt "$lcheck" ]; do sleep 0.1; n=$((n + 1)); done
  alive "$ld" || return 1
  echo "started $(cat "$ld/pid")"
}
# launch_unit DIR UNIT CHECK-TENTHS: the unit (already written) enabled and started; as launch answers.
launch_unit () {
  printf '%s' "$2" > "$1/unit" || return 1
  systemctl daemon-reload && systemctl enable --now "$2.service" >/dev/null 2>&1 || return 1
  n=0
  while [ "$n" -lt "$3" ]; do sleep 0.1; n=$((n + 1)); done
  alive "$1" || return 1
  echo "started $(cat "$1/pid") as systemd unit $2"
}
case $action in
probe)
  # probe MACHINE-DIR-NAME TOKEN STAMP
  d=$root/$1
  echo "root $root"
  if [ -f "$root/code/$3/.complete" ]; then echo "code present"; else echo "code missing"; fi
  if [ ! -d "$d" ]; then echo "machine absent"
  elif [ ! -f "$d/token" ]; then echo "machine partial"
  elif [ "$(cat "$d/token")" = "$2" ]; then
    if alive "$d"; then echo "machine same-running"; else echo "machine same-stopped"; fi
  else
    if alive "$d"; then echo "machine other-running"; else echo "machine other-stopped"; fi
  fi
  ;;
install)
  # install STAMP TAR-FLAG: the archive on stdin, unpacked beside and renamed into place
  # so a half-copied tree is never taken for the code.
  mkdir -p "$root/code" || exit 1
  [ -f "$root/code/$1/.complete" ] && { cat >/dev/null; exit 0; }
  t=$(mktemp -d "$root/code/.incoming.XXXXXX") || exit 1
  if ! tar "-x$2f" - -C "$t"; then rm -rf "$t"; exit 1; fi
  : > "$t/.complete"
  if ! mv -T "$t" "$root/code/$1" 2>/dev/null; then
    rm -rf "$t"
    [ -f "$root/code/$1/.complete" ] || exit 1
  fi
  ;;
start)
  # start MACHINE-DIR-NAME TOKEN MACHINE-ID STAMP CHECK-TENTHS RUN-SH UNIT-NAME UNIT-TEXT:
  # bootstrap data on stdin; RUN-SH (the agent's settings and command) is kept, so a
  # restart runs the same agent. Where systemd runs the host the agent is UNIT-NAME, a
  # unit that restarts it on failure and at boot; else a detached process.
  d=$root/$1; token=$2; machine=$3; stamp=$4; check=$5; run=$6; unit=\${7:-}; unit_text=\${8:-}
  umask 077
  if [ -d "$d" ] && [ "$(cat "$d/token" 2>/dev/null)" != "$token" ]; then
    stop_agent "$d" 20
    rm -rf "$d"
  fi
  mkdir -p "$d/agent" || exit 1
  cat > "$d/bootstrap.new" && chmod 600 "$d/bootstrap.new" && mv "$d/bootstrap.new" "$d/bootstrap" || exit 1
  printf '%s' "$machine" > "$d/machine" && printf '%s' "$stamp" > "$d/code" || exit 1
  printf '%s' "$run" > "$d/run.sh.new" && mv "$d/run.sh.new" "$d/run.sh" || exit 1
  printf '%s' "$token" > "$d/token.new" && mv "$d/token.new" "$d/token" || exit 1
  if alive "$d"; then echo "started already"; exit 0; fi
  cd "$root/code/$stamp" || exit 1
  if [ -n "$unit" ] && systemd_ok; then
    printf '%s' "$unit_text" > "/etc/systemd/system/$unit.service" || exit 1
    if launch_unit "$d" "$unit" "$check"; then exit 0; fi
  elif launch "$d" "$d/agent.log" "$check" sh "$d/run.sh"; then exit 0; fi
  echo "agent exited at once: $(tail -c 400 "$d/agent.log" 2>/dev/null | tr '\\n' ' ')"
  stop_agent "$d" 20
  rm -rf "$d"
  exit 3
  ;;
restart)
  # restart MACHINE-DIR-NAME CHECK-TENTHS: the agent started again from its kept run.sh
  # (cantrip start-agent); one that runs is left alone.
  d=$root/$1; check=$2
  [ -f "$d/run.sh" ] && [ -f "$d/token" ] || { echo "no agent in $d"; exit 4; }
  if alive "$d"; then echo "started $(cat "$d/pid") already"; exit 0; fi
  cd "$root/code/$(cat "$d/code")" || exit 1
  if [ -f "$d/unit" ]; then
    if systemctl start "$(cat "$d/unit").service" >/dev/null 2>&1 && sleep 0.5 && alive "$d"; then echo "started $(cat "$d/pid")"; exit 0; fi
  elif launch "$d" "$d/agent.log" "$check" sh "$d/run.sh"; then exit 0; fi
  echo "agent exited at once: $(tail -c 400 "$d/agent.log" 2>/dev/null | tr '\\n' ' ')"
  exit 3
  ;;
stop)
  # stop MACHINE-DIR-NAME GRACE-TENTHS
  d=$root/$1
  if [ -d "$d" ]; then
    stop_agent "$d" "$2"
    # Workloads a charm daemonised out of the agent's process group record their pids
    # under the units' state directories (as on the local provider): they go with it.
    for f in "$d"/agent/agents/*/state/*.pid; do
      [ -f "$f" ] || continue
      p=$(head -c 20 "$f" | tr -dc 0-9)
      [ -n "$p" ] && [ "$p" -gt 1 ] && live "$p" && kill -s KILL "$p" 2>/dev/null
    done
    rm -rf "$d" || exit 1
  fi
  n=0; for m in "$root"/machine-*; do [ -d "$m" ] && n=$((n + 1)); done
  echo "remaining $n"
  ;;
purge)
  # Only a root that holds no machine and no controller any more: the code, then the root if nothing else is in it.
  for m in "$root"/machine-* "$root"/controller-*; do [ -d "$m" ] && { echo "kept $root"; exit 0; }; done
  rm -rf "$root/code" "$root"/.code-* 2>/dev/null
  rmdir "$root" 2>/dev/null
  echo "purged $root"
  ;;
list)
  for m in "$root"/machine-*; do
    [ -f "$m/token" ] && [ -f "$m/machine" ] || continue
    if alive "$m"; then s=running; else s=failed; fi
    printf 'machine %s %s %s\\n' "$s" "$(cat "$m/machine" | od -An -tx1 | tr -d ' \\n')" "$(cat "$m/token" | od -An -tx1 | tr -d ' \\n')"
  done
  echo "end"
  ;;
controller-start)
  # controller-start DIR STAMP CHECK-TENTHS: the member's files on stdin, one "NAME BASE64"
  # line each (agent.key, swarm.key, run.sh); none on a restart, which runs the kept
  # run.sh again. A member that runs is left alone.
  d=$root/$1; stamp=$2; check=$3
  umask 077
  mkdir -p "$d" || exit 1
  while read -r name data; do
    case $name in
    agent.key|swarm.key|run.sh) printf '%s' "$data" | base64 -d > "$d/$name.new" && mv "$d/$name.new" "$d/$name" || exit 1 ;;
    *) echo "unknown file $name" >&2; exit 2 ;;
    esac
  done
  [ -f "$d/run.sh" ] || { echo "no run.sh in $d"; exit 3; }
  if alive "$d"; then echo "started $(cat "$d/pid") already"; exit 0; fi
  printf '%s' "$stamp" > "$d/code" || exit 1
  cd "$root/code/$stamp" || exit 1
  if launch "$d" "$d/cantripd.log" "$check" sh "$d/run.sh"; then exit 0; fi
  echo "controller exited at once: $(tail -c 400 "$d/cantripd.log" 2>/dev/null | tr '\\n' ' ')"
  exit 3
  ;;
controller-stop)
  # controller-stop DIR GRACE-TENTHS [purge]: the member stopped and its directory removed.
  # With purge (destroy-controller), the machines this host's members started go too, and
  # the hosts its manual provider knew are told (base64) so they can be cleaned up.
  d=$root/$1; c=\${d%/*}
  [ -d "$d" ] && { stop_agent "$d" "$2"; rm -rf "$d" || exit 1; }
  if [ "\${3:-}" = purge ] && [ -d "$c" ]; then
    [ -f "$c/machines/manual-hosts.json" ] && echo "manual-hosts $(base64 < "$c/machines/manual-hosts.json" | tr -d '\\n')"
    for f in "$c"/machines/machine-*/agent.pid "$c"/machines/m-*/machine-*/agent.pid; do
      [ -f "$f" ] || continue
      p=$(head -n 1 "$f" | cut -d ' ' -f 1 | tr -dc 0-9)
      [ -n "$p" ] && [ "$p" -gt 1 ] && kill -s KILL -- "-$p" 2>/dev/null
    done
    n=0; for m in "$c"/c*; do [ -d "$m" ] && n=$((n + 1)); done
    [ "$n" -eq 0 ] && rm -rf "$c"
  fi
  echo "stopped"
  ;;
*) echo "unknown action $action" >&2; exit 2 ;;
esac
`
