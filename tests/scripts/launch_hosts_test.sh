#!/usr/bin/env bash
# scripts/launch_hosts.sh drives a 2-host job (ssh replaced by a local shim, every
# host on 127.0.0.1): each host's log is collected and both write their shards; a
# host whose ssh fails makes the launcher fail naming it.
set -euo pipefail
actex=$1
source_dir=$2
work=$(mktemp -d /tmp/actex-launch-XXXXXX)
trap 'rm -rf "$work"' EXIT
export ACTEX_SSH="$source_dir/tests/scripts/local_ssh.sh"
port=$(python3 - <<'PY'
import socket
for _ in range(100):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    others = []
    try:
        for p in (port + 1, port + 2):
            o = socket.socket(); o.bind(("127.0.0.1", p)); others.append(o)
    except OSError:
        continue
    finally:
        for o in others: o.close()
        s.close()
    print(port); break
PY
)
for i in $(seq 0 29); do echo "{\"input_ids\": [$((i % 500)), 7, 9, 11]}"; done > "$work/corpus.jsonl"
node_options=(--model "$source_dir/tests/fixtures/qwen2-tiny" --data "$work/corpus.jsonl"
              --layers 0 --mesh 2d --shards-per-host 1 --dtype float32 --blas-threads 1
              --join-timeout 3 --heartbeat-timeout 5)

printf '127.0.0.1\n# a comment\n\n127.0.0.1\n' > "$work/hosts"
bash "$source_dir/scripts/launch_hosts.sh" "$work/hosts" --port "$port" --actex "$actex" \
  --logs "$work/logs" -- "${node_options[@]}" --out "$work/out" 2> "$work/launcher.err"
for host in 00 01; do
  grep -q '"complete": *true' "$work/out/host_$host/metadata.json" || {
    echo "FAIL: host_$host has no complete metadata.json"; cat "$work/launcher.err"; exit 1; }
  grep -q "host ${host#0}" "$work/logs/host_$host.log" || {
    echo "FAIL: no log collected for host $host"; exit 1; }
done

printf '127.0.0.1\nunreachable\n' > "$work/hosts"
if bash "$source_dir/scripts/launch_hosts.sh" "$work/hosts" --port "$port" --actex "$actex" \
     --logs "$work/logs2" -- "${node_options[@]}" --out "$work/out2" 2> "$work/launcher2.err"; then
  echo "FAIL: the launcher succeeded although host 1 could not be reached"; exit 1
fi
grep -q "host 1 (unreachable): FAILED" "$work/launcher2.err" || {
  echo "FAIL: the launcher did not name the unreachable host"; cat "$work/launcher2.err"; exit 1; }
grep -q "host 1" "$work/logs2/host_00.log" || {
  echo "FAIL: host 0 did not name the host that never joined"; cat "$work/logs2/host_00.log"; exit 1; }
echo "1 passed, 0 failed"
