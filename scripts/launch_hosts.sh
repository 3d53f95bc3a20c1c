#!/usr/bin/env bash
# Starts `actex node` on every host of HOSTFILE over ssh, host 0 (the first line)
# first as the coordinator, collects each host's log, and stops them all on Ctrl-C.
#
#   scripts/launch_hosts.sh HOSTFILE [--port 8476] [--actex PATH] [--logs DIR] \
#       [--workdir DIR] -- <node options: --model --data --out --layers --mesh ...>
#
# HOSTFILE: one host per line, `address` or `user@address`; blank lines and lines
# starting with # are skipped. Host i is the i-th remaining line; the coordinator
# listens on host 0's address (give addresses the other hosts can reach, e.g. the
# cluster network's IPs). Every host must see the model, corpus and output paths
# at the same place (a shared file system) and have actex installed.
#
# ACTEX_SSH overrides the ssh command (default: "ssh -o BatchMode=yes -tt"); -tt
# makes a remote node receive SIGHUP when its ssh session is killed.
set -euo pipefail

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

[ $# -ge 1 ] || usage
hostfile=$1
shift
port=8476
actex=actex
logs=actex-logs
workdir=$PWD
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --port) port=$2; shift 2 ;;
    --actex) actex=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "launch_hosts.sh: unknown option $1 (node options go after --)" >&2; exit 2 ;;
  esac
done
[ "${1:-}" = "--" ] || { echo "launch_hosts.sh: put the node options after --" >&2; exit 2; }
shift
[ -r "$hostfile" ] || { echo "launch_hosts.sh: cannot read HOSTFILE $hostfile" >&2; exit 2; }

mapfile -t hosts < <(grep -v '^[[:space:]]*\(#\|$\)' "$hostfile" | awk '{print $1}')
[ ${#hosts[@]} -ge 1 ] || { echo "launch_hosts.sh: $hostfile lists no host" >&2; exit 2; }
coordinator_address=${hosts[0]#*@}
read -r -a ssh_command <<< "${ACTEX_SSH:-ssh -o BatchMode=yes -tt}"
mkdir -p "$logs"

quoted_options=$(printf ' %q' "$@")
pids=()
stop_all() {
  trap - INT TERM
  echo "launch_hosts.sh: stopping every node" >&2
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait || true
  exit 130
}
trap stop_all INT TERM

for index in "${!hosts[@]}"; do
  host=${hosts[$index]}
  remote="cd $(printf '%q' "$workdir") && exec $(printf '%q' "$actex") node"
  remote+=" --coordinator $coordinator_address:$port --host-id $index --num-hosts ${#hosts[@]}"
  remote+="$quoted_options"
  "${ssh_command[@]}" "$host" "$remote" > "$logs/host_$(printf '%02d' "$index").log" 2>&1 &
  pids+=($!)
  # The coordinator binds before the others try to join (they would retry anyway).
  [ "$index" -eq 0 ] && sleep 1
done
echo "launch_hosts.sh: ${#hosts[@]} node(s) started, coordinator $coordinator_address:$port," \
     "logs in $logs/; watch with: actex monitor tcp://$coordinator_address:$((port + 1))" >&2

failed=0
for index in "${!pids[@]}"; do
  if wait "${pids[$index]}"; then
    echo "host $index (${hosts[$index]}): done" >&2
  else
    echo "host $index (${hosts[$index]}): FAILED, see $logs/host_$(printf '%02d' "$index").log" >&2
    failed=1
  fi
done
exit $failed
