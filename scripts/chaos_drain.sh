#!/bin/bash
# Loops a chaos scenario of a job of real processes on 127.0.0.1 and prints how long
# a SIGTERMed host took to drain: 5 hosts, --mesh 2d, a standby coordinator (every
# other run at a fixed --standby-coordinator address); once host 0 listed a shard,
# a worker is killed with SIGKILL and started again, and 3 s later another worker
# gets SIGTERM. A drain that waits on something it should not shows as seconds
# instead of a fraction of one (a run past --drain-timeout says "stopped where it
# was"). Each run's logs stay in WORK/runNN; its activations are removed.
#
#   scripts/chaos_drain.sh [RUNS (10)] [--actex PATH] [--work DIR] [--kill HOST] [--term HOST]
#
# --kill / --term fix the two workers (default: drawn at random among hosts 1-4).
set -euo pipefail

runs=10
actex=build/actors/actex
work=/tmp/actex-chaos-drain
kill_host=""
term_host=""
while [ $# -gt 0 ]; do
  case "$1" in
    --actex) actex="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --kill) kill_host="$2"; shift 2 ;;
    --term) term_host="$2"; shift 2 ;;
    [0-9]*) runs="$1"; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
actex=$(realpath "$actex")
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work"

# A model of 8 small layers and 20,000 documents: about a minute of work for 5 hosts.
if [ ! -d "$work/model" ]; then
  "$actex" make-model --preset tiny --layers 8 --vocab 3259 --seed 7 --out "$work/model" \
    --tokenizer "$repo/tests/fixtures/tokenizers/bpe-qwen2-style/tokenizer.json" >/dev/null
fi
if [ ! -f "$work/corpus.jsonl" ]; then
  python3 - "$repo/scripts/demo/corpus.jsonl" "$work/corpus.jsonl" <<'EOF'
import json, random, sys
words = [w for w in open(sys.argv[1]).read().split() if w.isalpha()] or ["word"]
draw = random.Random(1)
with open(sys.argv[2], "w") as out:
    for _ in range(20000):
        count = draw.randint(50, 200)
        out.write(json.dumps({"text": " ".join(draw.choice(words) for _ in range(count))}) + "\n")
EOF
fi

one_run() {  # RUN KILL TERM STANDBY_AT(0|1)
  local run=$1 kill=$2 term=$3 standby_at=$4
  local port=$((30000 + RANDOM % 20000))
  local dir="$work/run$run"
  rm -rf "$dir"
  mkdir -p "$dir"
  local standby=()
  [ "$standby_at" = 1 ] && standby=(--standby-coordinator "127.0.0.1:$((port + 10))")
  node() {  # HOST LOG; exec, so that a signal reaches actex itself
    (exec "$actex" node --coordinator "127.0.0.1:$port" "${standby[@]}" --bind 127.0.0.1 \
      --host-id "$1" --num-hosts 5 --shards-per-host 1 --mesh 2d --model "$work/model" \
      --data "$work/corpus.jsonl" --out "$dir/out" --layers 0 --sites resid_post \
      --shard-size 64KB --chunk-docs 16 --heartbeat-timeout 10 --blas-threads 1 >"$2" 2>&1) &
  }
  local pids=()
  for host in 0 1 2 3 4; do
    node "$host" "$dir/host$host.log"
    pids[host]=$!
  done
  for _ in $(seq 600); do
    compgen -G "$dir/out/host_00/shard_*" >/dev/null && break
    sleep 0.1
  done
  kill -9 "${pids[kill]}"
  wait "${pids[kill]}" 2>/dev/null || true
  node "$kill" "$dir/host$kill.again.log"
  pids[kill]=$!
  sleep 3
  local start status=0
  start=$(date +%s.%N)
  kill -TERM "${pids[term]}"
  wait "${pids[term]}" || status=$?
  printf 'run %d: host %d killed and started again%s, host %d SIGTERMed: exit %d after %.2f s\n' \
    "$run" "$kill" "$([ "$standby_at" = 1 ] && echo ' (fixed standby address)')" "$term" \
    "$status" "$(echo "$(date +%s.%N) - $start" | bc)"
  for host in 0 1 2 3 4; do
    [ "$host" = "$term" ] || wait "${pids[host]}" || true
  done
  rm -rf "$dir/out"
}

for run in $(seq "$runs"); do
  kill=${kill_host:-$((1 + RANDOM % 4))}
  term=${term_host:-$((1 + RANDOM % 4))}
  [ "$term" = "$kill" ] && term=$((1 + kill % 4))
  one_run "$run" "$kill" "$term" $((run % 2))
done
