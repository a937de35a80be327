#!/bin/bash
# tls-reloader DIR PROCESS [SECONDS]: the sidecar that makes cert-manager's renewals reach a
# running gdrbench-agent or gdrbench-server, which re-read their TLS files on SIGHUP only.
# The kubelet updates a mounted Secret by swapping DIR/..data to a new timestamped folder;
# every SECONDS (60) this compares that link, and on a change sends SIGHUP to every process
# whose name (/proc/PID/comm) is PROCESS. The pod shares its process namespace
# (shareProcessNamespace: true) and the sidecar runs as the same user as PROCESS, so the
# signal needs no capability. A failed read or send is logged and tried again next time.
set -u
dir=${1:?usage: tls-reloader DIR PROCESS [SECONDS]} name=${2:?usage: tls-reloader DIR PROCESS [SECONDS]}
every=${3:-60}
log() { echo "tls-reloader: $*"; }
current() { readlink "$dir/..data" 2>/dev/null || stat -c %Y "$dir" 2>/dev/null; }
signal() {
  local p comm sent=0
  for p in /proc/[0-9]*; do
    read -r comm <"$p/comm" 2>/dev/null || continue
    [[ "$comm" == "$name" ]] || continue
    if kill -HUP "${p#/proc/}" 2>/dev/null; then sent=$((sent + 1)); else log "cannot signal ${p#/proc/}"; fi
  done
  ((sent > 0)) || { log "no process named $name to signal"; return 1; }
  log "$dir changed ($1): SIGHUP sent to $sent $name process(es)"
}
trap 'exit 0' TERM INT
seen=$(current)
log "watching $dir (now ${seen:-unreadable}) for $name every $every s"
pending=0
while :; do
  sleep "$every" &
  wait $!
  now=$(current)
  if [[ "$now" != "$seen" || $pending == 1 ]]; then
    if signal "$now"; then pending=0; else pending=1; fi
    seen=$now
  fi
done
