# shellcheck shell=bash
# Shared by every hook of the web charm: `source "$CHARM_DIR/lib/common.sh"`.
# Defines names and functions only. The unit's files live in
# "$(dirname "$CHARM_DIR")/state"; nothing is written anywhere else.

umask 077
UNIT_DIR="$(dirname "$CHARM_DIR")"
STATE_DIR="$UNIT_DIR/state"
UNIT_NUMBER="${JUJU_UNIT_NAME##*/}"
PROXY="$CHARM_DIR/workload/web-proxy.mjs"
CONF_FILE="$STATE_DIR/web-proxy.conf"
BACKENDS_FILE="$STATE_DIR/backends"
PID_FILE="$STATE_DIR/web-proxy.pid"
RUNNING_PORT_FILE="$STATE_DIR/web-proxy.running-port"
LOG_FILE="$STATE_DIR/web-proxy.log"
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

# write_file PATH: replace PATH with stdin atomically (temp file + rename).
write_file() {
  local tmp="$1.tmp.$$"
  cat >"$tmp"
  mv -f "$tmp" "$1"
}

# The port the proxy listens on: config `port`, or port-base + unit number when it is 0.
web_port() {
  local port base
  port="$(config-get port)"
  if [ -z "$port" ] || [ "$port" = 0 ]; then
    base="$(config-get port-base)"
    port=$((${base:-18500} + UNIT_NUMBER))
  fi
  if ! [[ "$port" =~ ^[0-9]+$ ]] || [ "$port" -gt 65535 ]; then
    status-set blocked "invalid port: $port"
    juju-log -l ERROR "invalid port: $port"
    return 1
  fi
  echo "$port"
}

conf_value() {
  [ -f "$CONF_FILE" ] || return 0
  sed -n "/^$1=/{s/^$1=//p;q}" "$CONF_FILE"
}

write_config() {
  local port
  port="$(web_port)"
  write_file "$CONF_FILE" <<EOF
host=0.0.0.0
port=$port
unit=$JUJU_UNIT_NAME
backends-file=$BACKENDS_FILE
log-level=info
EOF
  [ -f "$BACKENDS_FILE" ] || : | write_file "$BACKENDS_FILE"
  log "wrote $CONF_FILE (port $port)"
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
  proxy_running && return 0
  for dir in /proc/[0-9]*; do
    cmd_line "$dir/cmdline" || continue
    if [[ "$cmd" == *"$CONF_FILE"* ]] && [[ "$cmd" == *"${PROXY##*/}"* ]]; then
      echo "${dir#/proc/}" | write_file "$PID_FILE"
      if proxy_running; then log "adopted running workload (pid ${dir#/proc/})"; return 0; fi
    fi
  done
  rm -f "$PID_FILE"
  return 1
}

proxy_running() { proc_running "$PID_FILE" "$CONF_FILE"; }

proxy_url() { echo "http://127.0.0.1:$(conf_value port)"; }

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

# Our web-proxy (the pid we started or adopted) answers /backends.
proxy_healthy() {
  local pid
  IFS= read -r pid <"$PID_FILE" 2>/dev/null || return 1
  http_ok "$(conf_value port)" /backends "$pid"
}

# Starts web-proxy in its own session unless it runs already; waits at most
# START_WAIT_SECONDS until it answers.
start_proxy() {
  if adopt_orphan; then
    log "web-proxy already running (pid $(cat "$PID_FILE"))"
  else
    [ -f "$CONF_FILE" ] || write_config
    log "starting web-proxy on port $(conf_value port)"
    setsid nohup node "$PROXY" "$CONF_FILE" >>"$LOG_FILE" 2>&1 </dev/null &
    echo "$!" | write_file "$PID_FILE"
    conf_value port | write_file "$RUNNING_PORT_FILE"
  fi
  local pid deadline=$((SECONDS + START_WAIT_SECONDS))
  IFS= read -r pid <"$PID_FILE" || true
  until proxy_healthy; do
    # Its pid, not its command line: a process started a moment ago may still be this
    # hook's shell, not yet exec'd into node, and would look like a stranger.
    if ! proc_alive "$pid" || [ "$SECONDS" -ge "$deadline" ]; then
      juju-log -l ERROR "web-proxy did not come up: $(tail -n 3 "$LOG_FILE" 2>/dev/null | tr '\n' ' ')"
      return 1
    fi
    sleep 0.2
  done
  log "web-proxy answering at $(proxy_url)"
}

stop_proxy() {
  if adopt_orphan; then
    local pid i
    pid="$(cat "$PID_FILE")"
    log "stopping web-proxy (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < STOP_WAIT_SECONDS * 10; i++)); do
      proxy_running || break
      sleep 0.1
    done
    if proxy_running; then
      juju-log -l WARNING "web-proxy ignored SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 20; i++)); do proxy_running || break; sleep 0.1; done
    fi
  fi
  rm -f "$PID_FILE" "$RUNNING_PORT_FILE"
}

# Opens the serving port, closing the one opened before if the port moved.
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

# The proxy re-reads the backends file on every request; SIGHUP makes it log the change.
signal_proxy() {
  if proxy_running; then kill -HUP "$(cat "$PID_FILE")" 2>/dev/null || true; fi
}

# rebuild_backends [SKIP_RELATION_ID] [SKIP_UNIT]: rewrite the backends file from every
# unit currently in every backend relation. SKIP_RELATION_ID leaves out a relation
# being broken, SKIP_UNIT a unit departing from the current relation (relation-list
# already leaves both out; the skips only make that explicit).
rebuild_backends() {
  local skip_rid="${1:-}" skip_unit="${2:-}" rids rid units unit host port out=""
  rids="$(relation-ids backend)"
  for rid in $rids; do
    if [ "$rid" = "$skip_rid" ]; then continue; fi
    units="$(relation-list -r "$rid")"
    for unit in $units; do
      if [ "$unit" = "$skip_unit" ] && [ "$rid" = "${JUJU_RELATION_ID:-}" ]; then continue; fi
      host="$(relation-get -r "$rid" hostname "$unit")"
      port="$(relation-get -r "$rid" port "$unit")"
      if [ -n "$host" ] && [ -n "$port" ]; then out+="$host:$port"$'\n'; fi
    done
  done
  printf '%s' "$out" | write_file "$BACKENDS_FILE"
  log "backends: $(printf '%s' "$out" | tr '\n' ' ')"
  signal_proxy
}

backend_count() {
  local n
  n="$(grep -c . "$BACKENDS_FILE" 2>/dev/null || true)"
  echo "${n:-0}"
}

web_status() {
  local n
  n="$(backend_count)"
  if ! proxy_running; then
    status-set blocked "web-proxy is not running"
  elif [ "$n" -gt 0 ]; then
    status-set active "$n backends"
  else
    status-set blocked "no backends"
  fi
}

# After the config file changed: restart a running proxy when its port moved.
apply_config() {
  proxy_running || return 0
  if [ "$(cat "$RUNNING_PORT_FILE" 2>/dev/null)" != "$(conf_value port)" ]; then
    log "port changed: restarting web-proxy"
    stop_proxy
    start_proxy
    open_serving_port
  else
    signal_proxy
  fi
}
