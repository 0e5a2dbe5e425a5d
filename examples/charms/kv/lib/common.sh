# shellcheck shell=bash
# Shared by every hook and action of the kv charm: `source "$CHARM_DIR/lib/common.sh"`.
# Defines names and functions only; nothing here runs a hook tool on its own.
#
# Layout: the unit's own files live in "$(dirname "$CHARM_DIR")/state" (next to the
# charm directory, so they survive charm upgrades). Nothing is written anywhere else.

umask 077
UNIT_DIR="$(dirname "$CHARM_DIR")"
STATE_DIR="$UNIT_DIR/state"
UNIT_NUMBER="${JUJU_UNIT_NAME##*/}"
SERVER="$CHARM_DIR/workload/kv-server.mjs"
CLIENT="$CHARM_DIR/workload/kv-client.mjs"
CONF_FILE="$STATE_DIR/kv-server.conf"
PID_FILE="$STATE_DIR/kv-server.pid"
RUNNING_PORT_FILE="$STATE_DIR/kv-server.running-port"
DATA_FILE="$STATE_DIR/kv-data.json"
PEERS_FILE="$STATE_DIR/peers"
LOG_FILE="$STATE_DIR/kv-server.log"
# A node start and a health probe each take seconds on a busy host (load 20 on 2 cores):
# the bound is for a server that will never answer, not for a slow one.
START_WAIT_SECONDS=60
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

# write_file PATH: replace PATH with stdin atomically (temp file + rename).
write_file() {
  local tmp="$1.tmp.$$"
  cat >"$tmp"
  mv -f "$tmp" "$1"
}

# The port this unit serves on: config `port`, or port-base + unit number when it is 0.
kv_port() {
  local port base
  port="$(config-get port)"
  if [ -z "$port" ] || [ "$port" = 0 ]; then
    base="$(config-get port-base)"
    port=$((${base:-18000} + UNIT_NUMBER))
  fi
  if ! [[ "$port" =~ ^[0-9]+$ ]] || [ "$port" -gt 65535 ]; then
    status-set blocked "invalid port: $port"
    juju-log -l ERROR "invalid port: $port"
    return 1
  fi
  echo "$port"
}

log_level() {
  local level
  level="$(config-get log-level)"
  case "$level" in
    debug|info|warn|error) echo "$level" ;;
    '') echo info ;;
    *) juju-log -l WARNING "unknown log-level '$level', using info"; echo info ;;
  esac
}

# conf_value KEY: a value from the workload config file (empty if absent).
conf_value() {
  [ -f "$CONF_FILE" ] || return 0
  sed -n "/^$1=/{s/^$1=//p;q}" "$CONF_FILE"
}

# Generates the workload config from charm config and leader settings.
write_config() {
  local port level token
  port="$(kv_port)"
  level="$(log_level)"
  token="$(leader-get token)"
  write_file "$CONF_FILE" <<EOF
host=0.0.0.0
port=$port
unit=$JUJU_UNIT_NAME
data-file=$DATA_FILE
peers-file=$PEERS_FILE
token=$token
log-level=$level
EOF
  log "wrote $CONF_FILE (port $port, log-level $level, token $([ -n "$token" ] && echo set || echo 'not yet shared'))"
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
  server_running && return 0
  for dir in /proc/[0-9]*; do
    cmd_line "$dir/cmdline" || continue
    if [[ "$cmd" == *"$CONF_FILE"* ]] && [[ "$cmd" == *"${SERVER##*/}"* ]]; then
      echo "${dir#/proc/}" | write_file "$PID_FILE"
      if server_running; then log "adopted running workload (pid ${dir#/proc/})"; return 0; fi
    fi
  done
  rm -f "$PID_FILE"
  return 1
}

server_running() { proc_running "$PID_FILE" "$CONF_FILE"; }

server_url() { echo "http://127.0.0.1:$(conf_value port)"; }

# http_ok PORT PATH: GET http://127.0.0.1:PORT/PATH answers 200 within a second. Bash's
# /dev/tcp rather than a node start per look: the start loop looks every 0.2 s, and a
# node start is ~0.1 CPU-s (more on a busy host).
# With PID, the answer must also carry `X-Workload-Pid: PID`: our own workload answered,
# not whatever else listens on the port (another deployment's, which a second demo on
# the same host once passed for ours until it went away).
http_ok() {
  local fd status='' line mine=''
  { exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$2" >&"$fd" 2>/dev/null || true
  IFS= read -r -t 1 status <&"$fd" || true
  if [ -z "${3:-}" ]; then
    mine=yes
  else
    local i
    for ((i = 0; i < 32; i++)); do
      IFS= read -r -t 1 line <&"$fd" || break
      line="${line%$'\r'}"
      [ -z "$line" ] && break
      if [ "${line,,}" = "x-workload-pid: $3" ]; then mine=yes; break; fi
    done
  fi
  exec {fd}>&-
  [[ "$status" =~ ^HTTP/1\.[01]\ 200\  ]] && [ -n "$mine" ]
}

# Our kv-server (the pid we started or adopted) answers /health.
server_healthy() {
  local pid
  IFS= read -r pid <"$PID_FILE" 2>/dev/null || return 1
  http_ok "$(conf_value port)" /health "$pid"
}

# Starts kv-server in its own session (it must outlive the hook) unless it runs already,
# then waits at most START_WAIT_SECONDS for /health.
start_server() {
  if adopt_orphan; then
    log "kv-server already running (pid $(cat "$PID_FILE"))"
  else
    [ -f "$CONF_FILE" ] || write_config
    log "starting kv-server on port $(conf_value port)"
    setsid nohup node "$SERVER" "$CONF_FILE" >>"$LOG_FILE" 2>&1 </dev/null &
    echo "$!" | write_file "$PID_FILE"
    conf_value port | write_file "$RUNNING_PORT_FILE"
  fi
  local pid deadline=$((SECONDS + START_WAIT_SECONDS))
  IFS= read -r pid <"$PID_FILE" || true
  until server_healthy; do
    # Its pid, not its command line: a process started a moment ago may still be this
    # hook's shell, not yet exec'd into node, and would look like a stranger.
    if ! proc_alive "$pid"; then
      juju-log -l ERROR "kv-server exited before answering on port $(conf_value port) (a port taken shows as EADDRINUSE): $(last_server_lines)"
      return 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      juju-log -l ERROR "kv-server (pid $(cat "$PID_FILE")) runs but did not answer /health at $(server_url) within ${START_WAIT_SECONDS}s: $(last_server_lines)"
      return 1
    fi
    sleep 0.2
  done
  log "kv-server healthy at $(server_url)"
}

# The workload's last log lines, on one line (why it exited or what it last did).
last_server_lines() { tail -n 3 "$LOG_FILE" 2>/dev/null | tr '\n' ' '; }

# Stops kv-server: SIGTERM, at most STOP_WAIT_SECONDS, then SIGKILL.
stop_server() {
  if adopt_orphan; then
    local pid i
    pid="$(cat "$PID_FILE")"
    log "stopping kv-server (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < STOP_WAIT_SECONDS * 10; i++)); do
      server_running || break
      sleep 0.1
    done
    if server_running; then
      juju-log -l WARNING "kv-server ignored SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 20; i++)); do server_running || break; sleep 0.1; done
    fi
  fi
  rm -f "$PID_FILE" "$RUNNING_PORT_FILE"
}

# After the config file changed: restart for a new port, otherwise SIGHUP (reload).
apply_config() {
  server_running || return 0
  if [ "$(cat "$RUNNING_PORT_FILE" 2>/dev/null)" != "$(conf_value port)" ]; then
    log "port changed: restarting kv-server"
    stop_server
    start_server
    open_serving_port
  else
    log "reloading kv-server"
    kill -HUP "$(cat "$PID_FILE")" 2>/dev/null || true
  fi
}

# Opens the serving port, closing the one opened before if the port moved.
# (open-port, close-port and state-set all take effect only if the hook succeeds.)
open_serving_port() {
  local port old
  port="$(conf_value port)"
  old="$(state-get opened-port)"
  if [ -n "$old" ] && [ "$old" != "$port" ]; then
    close-port "$old/tcp"
  fi
  open-port "$port/tcp"
  state-set opened-port="$port"
}

new_token() { od -An -tx1 -N16 /dev/urandom | tr -d ' \n'; }

# The leader shares one token through leader settings; generated once.
ensure_token() {
  if [ "$(is-leader)" = True ] && [ -z "$(leader-get token)" ]; then
    leader-set token="$(new_token)"
    log "generated and shared a new token"
  fi
}

# Tells every website relation where this unit serves.
publish_website() {
  local rids rid host port
  rids="$(relation-ids website)"
  host="$(unit-get private-address)"
  port="$(kv_port)"
  for rid in $rids; do
    relation-set -r "$rid" hostname="$host" port="$port"
  done
}

# Tells peers (cluster relation) where this unit serves.
publish_cluster() {
  local rids rid host port
  rids="$(relation-ids cluster)"
  host="$(unit-get private-address)"
  port="$(kv_port)"
  for rid in $rids; do
    relation-set -r "$rid" hostname="$host" port="$port"
  done
}

# Rebuilds the peers file (`<unit> <host:port>` lines) from every cluster peer in scope.
record_peers() {
  local rids rid units unit addr port out=""
  rids="$(relation-ids cluster)"
  for rid in $rids; do
    units="$(relation-list -r "$rid")"
    for unit in $units; do
      addr="$(relation-get -r "$rid" hostname "$unit")"
      if [ -z "$addr" ]; then addr="$(relation-get -r "$rid" private-address "$unit")"; fi
      port="$(relation-get -r "$rid" port "$unit")"
      if [ -n "$addr" ] && [ -n "$port" ]; then out+="$unit $addr:$port"$'\n'; fi
    done
  done
  printf '%s' "$out" | write_file "$PEERS_FILE"
  log "peers: $(printf '%s' "$out" | wc -l)"
}

serving_status() {
  if server_running && server_healthy; then
    status-set active "serving on $(conf_value port)"
  elif server_running; then
    status-set blocked "kv-server not answering on $(conf_value port)"
  else
    status-set blocked "kv-server is not running"
  fi
}
