# shellcheck shell=bash
# Shared by every hook of the cluster charm: `source "$CHARM_DIR/lib/common.sh"`.
# Defines names and functions only. The unit's files live in
# "$(dirname "$CHARM_DIR")/state"; nothing is written anywhere else.

umask 077
UNIT_DIR="$(dirname "$CHARM_DIR")"
STATE_DIR="$UNIT_DIR/state"
SUMMARY_FILE="$STATE_DIR/cluster.json"

log() { juju-log "$*"; }

ensure_state_dir() { mkdir -p "$STATE_DIR"; }

write_file() {
  local tmp="$1.tmp.$$"
  cat >"$tmp"
  mv -f "$tmp" "$1"
}

is_leader() { [ "$(is-leader)" = True ]; }

leader_bool() { if is_leader; then echo true; else echo false; fi; }

# This unit's generation as last committed with state-set (0 before the first).
current_generation() {
  local generation
  generation="$(state-get generation)"
  if ! [[ "$generation" =~ ^[0-9]+$ ]]; then
    if [ -n "$generation" ]; then juju-log -l WARNING "ignoring bad stored generation '$generation'"; fi
    generation=0
  fi
  echo "$generation"
}

# The leader picks the shared secret once; later leaders keep it.
ensure_secret() {
  if is_leader && [ -z "$(leader-get secret)" ]; then
    leader-set secret="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
    log "picked the shared secret"
  fi
}

# `<relation id> <unit>` for every peer currently in scope.
peers() {
  local rids rid units unit
  rids="$(relation-ids replicas)"
  for rid in $rids; do
    units="$(relation-list -r "$rid")"
    for unit in $units; do echo "$rid $unit"; done
  done
}

member_count() {
  local list
  list="$(peers)"
  if [ -z "$list" ]; then echo 1; else echo $((1 + $(printf '%s\n' "$list" | wc -l))); fi
}

# Tells every peer this unit's generation.
publish_generation() {
  local rids rid
  rids="$(relation-ids replicas)"
  for rid in $rids; do
    relation-set -r "$rid" generation="$1"
  done
}

# write_summary GENERATION: state/cluster.json with every member's generation, the
# replicated counter (the highest generation), leadership and the secret's digest.
write_summary() {
  local own="$1" list rid unit generation members counter="$1" secret digest=""
  list="$(peers)"
  members="{\"unit\":\"$JUJU_UNIT_NAME\",\"generation\":$own}"
  while read -r rid unit; do
    if [ -z "$unit" ]; then continue; fi
    generation="$(relation-get -r "$rid" generation "$unit")"
    if [[ "$generation" =~ ^[0-9]+$ ]]; then
      if [ "$generation" -gt "$counter" ]; then counter="$generation"; fi
    else
      generation=null
    fi
    members+=",{\"unit\":\"$unit\",\"generation\":$generation}"
  done <<<"$list"
  secret="$(leader-get secret)"
  if [ -n "$secret" ]; then digest="$(printf '%s' "$secret" | sha256sum | cut -c1-16)"; fi
  write_file "$SUMMARY_FILE" <<EOF2
{"unit":"$JUJU_UNIT_NAME","leader":$(leader_bool),"generation":$own,"counter":$counter,"secret-sha256-prefix":"$digest","members":[$members]}
EOF2
}

cluster_status() {
  status-set active "member of $(member_count), leader=$(leader_bool)"
}
