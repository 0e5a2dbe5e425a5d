# shellcheck shell=bash
# Shared by every hook of the logship charm: `source "$CHARM_DIR/lib/common.sh"`.
# Defines names and functions only. The unit's files live in
# "$(dirname "$CHARM_DIR")/state"; nothing is written anywhere else.

umask 077
UNIT_DIR="$(dirname "$CHARM_DIR")"
STATE_DIR="$UNIT_DIR/state"
SHIPPER="$CHARM_DIR/workload/shipper.mjs"
CONF_FILE="$STATE_DIR/shipper.conf"
PID_FILE="$STATE_DIR/shipper.pid"
OUT_FILE="$STATE_DIR/shipped.log"
OFFSETS_FILE="$STATE_DIR/offsets.json"
READY_FILE="$STATE_DIR/shipper.ready"
# Not *.log: the shipper's own chatter must never match anyone's glob.
SHIPPER_OUT="$STATE_DIR/shipper.out"
START_WAIT_SECONDS=10
STOP_WAIT_SECONDS=5

log() { juju-log "$*"; }

ensure_state_dir() { mkdir -p "$STATE_DIR"; }

require_node() {
  if ! command -v node >/dev/null 2>&1; then
    status-set blocked "node is not installed"
    juju-log -l ERROR "node is not on PATH ($PATH)"
    return 1
  fi
}

write_file() {
  local tmp="$1.tmp.$$"
  cat >"$tmp"
  mv -f "$tmp" "$1"
}

# The principal this subordinate is attached to: $JUJU_PRINCIPAL_UNIT, or else the one
# unit on the other side of the container-scoped juju-info relation.
principal_unit() {
  if [ -n "${JUJU_PRINCIPAL_UNIT:-}" ]; then
    echo "$JUJU_PRINCIPAL_UNIT"
    return 0
  fi
  local rids rid units
  rids="$(relation-ids juju-info)"
  for rid in $rids; do
    units="$(relation-list -r "$rid")"
    if [ -n "$units" ]; then
      echo "${units%%$'\n'*}"
      return 0
    fi
  done
  echo unknown
}

# config `glob`, or every unit's state/*.log on this machine when empty.
log_glob() {
  local glob
  glob="$(config-get glob)"
  if [ -z "$glob" ]; then glob="$UNIT_DIR/../*/state/*.log"; fi
  echo "$glob"
}

write_config() {
  local glob interval principal
  glob="$(log_glob)"
  interval="$(config-get poll-interval-ms)"
  principal="$(principal_unit)"
  write_file "$CONF_FILE" <<EOF2
glob=$glob
out=$OUT_FILE
prefix=$principal
offsets-file=$OFFSETS_FILE
exclude-dir=$STATE_DIR
exclude-name=$(basename "$OUT_FILE")
interval-ms=${interval:-1000}
ready-file=$READY_FILE
EOF2
  log "wrote $CONF_FILE (glob $glob, prefix $principal)"
}

# proc_running PIDFILE NEEDLE: the pid in PIDFILE is alive (zombies count as dead) and
# its command line contains NEEDLE, so a stale pid file never matches a stranger.
# Bash builtins only (read, mapfile): hooks call this in loops and per /proc entry, and
# a fork per look (cat, sed, tr) cost a deployment's hooks seconds of CPU.
proc_running() {
  local pid cmd
  [ -s "$1" ] || return 1
  IFS= read -r pid <"$1" || [ -n "$pid" ] || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  proc_alive "$pid" || return 1
  cmd_line "/proc/$pid/cmdline" || return 1
  [[ "$cmd" == *"$2"* ]]
}

# proc_alive PID: the process lives and is not a zombie.
proc_alive() {
  local stat state
  IFS= read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  # The state follows the command name in parentheses (which may hold spaces and ")").
  state="${stat##*) }"
  state="${state%% *}"
  case "$state" in ''|Z|X) return 1 ;; esac
}

# cmd_line FILE: sets cmd to a /proc cmdline file's arguments joined by spaces.
cmd_line() {
  local -a args
  mapfile -d '' args 2>/dev/null <"$1" || return 1
  local IFS=' '
  cmd="${args[*]}"
}

# A workload started by a hook that was killed before it wrote the pid file still
# names CONF_FILE on its command line: find it and record its pid.
adopt_orphan() {
  local dir cmd
  shipper_running && return 0
  for dir in /proc/[0-9]*; do
    cmd_line "$dir/cmdline" || continue
    if [[ "$cmd" == *"$CONF_FILE"* ]] && [[ "$cmd" == *"${SHIPPER##*/}"* ]]; then
      echo "${dir#/proc/}" | write_file "$PID_FILE"
      if shipper_running; then log "adopted running workload (pid ${dir#/proc/})"; return 0; fi
    fi
  done
  rm -f "$PID_FILE"
  return 1
}

shipper_running() { proc_running "$PID_FILE" "$CONF_FILE"; }

# Starts the shipper in its own session unless it runs already. It has no port to
# probe: it counts as up once it has survived its first poll (bounded wait).
start_shipper() {
  if adopt_orphan; then
    log "shipper already running (pid $(cat "$PID_FILE"))"
    return 0
  fi
  [ -f "$CONF_FILE" ] || write_config
  log "starting shipper"
  rm -f "$READY_FILE"
  setsid nohup node "$SHIPPER" "$CONF_FILE" >>"$SHIPPER_OUT" 2>&1 </dev/null &
  echo "$!" | write_file "$PID_FILE"
  local pid deadline=$((SECONDS + START_WAIT_SECONDS))
  IFS= read -r pid <"$PID_FILE" || true
  until [ -f "$READY_FILE" ]; do
    # Its pid, not its command line: a process started a moment ago may still be this
    # hook's shell, not yet exec'd into node, and would look like a stranger.
    if ! proc_alive "$pid" || [ "$SECONDS" -ge "$deadline" ]; then
      juju-log -l ERROR "shipper did not start: $(tail -n 3 "$SHIPPER_OUT" 2>/dev/null | tr '\n' ' ')"
      return 1
    fi
    sleep 0.2
  done
  log "shipper running (pid $(cat "$PID_FILE"))"
}

stop_shipper() {
  if adopt_orphan; then
    local pid i
    pid="$(cat "$PID_FILE")"
    log "stopping shipper (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < STOP_WAIT_SECONDS * 10; i++)); do
      shipper_running || break
      sleep 0.1
    done
    if shipper_running; then
      juju-log -l WARNING "shipper ignored SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 20; i++)); do shipper_running || break; sleep 0.1; done
    fi
  fi
  rm -f "$PID_FILE" "$READY_FILE"
}

reload_shipper() {
  if shipper_running; then kill -HUP "$(cat "$PID_FILE")" 2>/dev/null || true; fi
}

shipper_status() {
  if shipper_running; then
    status-set active "shipping for $(principal_unit)"
  else
    status-set blocked "shipper is not running"
  fi
}
