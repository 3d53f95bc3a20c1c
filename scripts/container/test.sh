#!/usr/bin/env bash
# A real job of 4 containers of the actex image, each with its own network namespace and
# address on a podman network, run the way deploy/k8s/job.yaml runs it: the manifest's
# command line (scripts/container/manifest_args.sh), the host id in JOB_COMPLETION_INDEX,
# --bind the container's address, the coordinator and standby by DNS name (a network
# alias actex-I.actex, as the headless Service names pod I), the job key as a read-only
# file. Three runs, each ending with `actex verify` clean and activations identical, row
# by row, to one `actex extract` process:
#   uninterrupted;
#   worker: host 2's container killed (-9) and started again at a new address;
#   host0:  host 0's container killed (-9), the standby takes over, host 0 started again
#           at a new address.
# Prints each run's wall time. Needs root and the image (scripts/container/build.sh);
# takes several minutes, too long for CI.
#
#   scripts/container/test.sh [--image actex:latest] [--subnet 10.89.27] [--keep]
#
# --keep leaves the work folder (printed) with each run's output and logs.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
here="$repo/scripts/container"


image=actex:latest
subnet=10.89.27
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --image) image=$2; shift 2 ;;
    --subnet) subnet=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage ;;
    *) echo "test.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
podman image exists "$image" || { echo "test.sh: no image $image: run build.sh" >&2; exit 2; }

readonly hosts=4
# Seconds of silence before a host is lost: the manifest keeps the default (60 s); the
# test shortens the wait, nothing else.
readonly test_flags=(--heartbeat-timeout=10)
# The bundled demo corpus repeated (1,720 documents), so that a run lasts long enough
# (half a minute to a minute on 2 shared cores) to be interrupted.
readonly corpus_copies=40
# Seconds a run may take before its containers are given up on.
readonly run_limit=400

work=$(mktemp -d /var/tmp/actex-container-test.XXXXXX)
name=actex-ct$$
network=$name
# Host $1's log so far.
host_log() { podman logs "$name-$1" 2>&1 || true; }

# Removes the containers and the network; keeps the work folder with --keep or on failure,
# saving every host's log there first.
cleanup() {
  local status=$? i
  [ "$status" -eq 0 ] || keep=1
  for i in $(seq 0 $((hosts - 1))); do
    host_log "$i" > "$work/host_$i.last.log"
    podman rm -f "$name-$i" >/dev/null 2>&1 || true
  done
  podman network rm -f "$network" >/dev/null 2>&1 || true
  if [ "$keep" -eq 1 ]; then echo "test.sh: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

mapfile -t node_args < <("$here/manifest_args.sh")
# `actex extract` takes the node's extraction flags; the job's own flags are left out.
extract_args=()
for arg in "${node_args[@]}"; do
  case "$arg" in
    node|--coordinator=*|--standby-coordinator=*|--num-hosts=*|--bind=*|--job-key-file=*| \
    --mesh=*|--shards-per-host=*|--out=*) ;;
    *) extract_args+=("$arg") ;;
  esac
done

# One container of the image, removed when it ends.
actex_once() { podman run --rm "${podman_flags[@]}" "$@"; }

mkdir -p "$work/data" "$work/key" "$work/single"
for _ in $(seq "$corpus_copies"); do cat "$repo/scripts/demo/corpus.jsonl"; done \
  > "$work/data/corpus.jsonl"
actex_once -v "$work/data:/data" \
  -v "$repo/tests/fixtures/tokenizers/bpe-qwen2-style/tokenizer.json:/tokenizer.json:ro" \
  "$image" make-model --preset qwen2.5-0.5b --layers 2 --vocab 3259 --seed 7 \
  --tokenizer /tokenizer.json --out /data/model > "$work/setup.log" 2>&1
actex_once -v "$work/key:/key" "$image" make-job-key /key/job-key >> "$work/setup.log" 2>&1
# Seconds since $1 (an $EPOCHREALTIME), one decimal.
seconds_since() { awk -v since="$1" -v now="$EPOCHREALTIME" 'BEGIN { printf "%.1f", now - since }'; }

start=$EPOCHREALTIME
actex_once -v "$work/data:/data:ro" -v "$work/single:/single" "$image" extract \
  "${extract_args[@]}" --out=/single --shards=1 2> "$work/single.log"
echo "test.sh: one process (actex extract): $(seconds_since "$start") s"

podman network create --subnet "$subnet.0/24" "$network" >> "$work/setup.log" 2>&1

# podman's DNS server (aardvark-dns) reloads on every container start and drops the
# queries that arrive meanwhile (containers/aardvark-dns#389); with the defaults (5 s
# timeouts, then the host's own server, which a container cannot reach here) a node's
# lookup stalled 30 s, and ZeroMQ resolves in the thread that also carries heartbeats.
# Only podman's server, asked again after 1 s.
readonly dns_flags=(--dns "$subnet.1" --dns-option timeout:1 --dns-option attempts:5)

# Starts host $1's container at address $2, writing into run folder $3.
start_host() {
  local host=$1 address=$2 run=$3
  podman rm -f "$name-$host" >/dev/null 2>&1 || true
  podman run -d "${podman_flags[@]}" --name "$name-$host" "${dns_flags[@]}" \
    --network "$network" --ip "$address" --network-alias "actex-$host.actex" \
    -e JOB_COMPLETION_INDEX="$host" \
    -v "$work/data:/data:ro" -v "$work/key:/etc/actex:ro" -v "$run/out:/out" \
    "$image" "${node_args[@]//\$(POD_IP)/$address}" "${test_flags[@]}" >/dev/null
}


# Waits until command "$@" succeeds, at most $1 seconds; fails naming $2.
wait_until() {
  local deadline=$(( $(date +%s) + $1 )) what=$2
  shift 2
  until "$@"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "test.sh: no $what within the time allowed" >&2
      return 1
    fi
    sleep 0.5
  done
}

# True once run $1's lease log (OUT/host_00/leases.log) granted host $2 at least $3 chunks
# and the job at least $4: the job is under way, the host has finished chunks.
granted() {
  local log="$1/out/host_00/leases.log"
  [ "$(grep -cE "^granted [0-9]+ host-$2\$" "$log" 2>/dev/null)" -ge "$3" ] &&
    [ "$(grep -c "^granted " "$log" 2>/dev/null)" -ge "$4" ]
}

# True once host $1's log says $2 (a fixed string).
logged() { host_log "$1" | grep -qF -- "$2"; }

# Kills host $1's container (-9), keeping its log in the run folder $2.
kill_host() {
  podman kill --signal KILL "$name-$1" >/dev/null
  host_log "$1" > "$2/host_$1.killed.log"
}

# Waits for every container of run $1, then checks its exit codes, `actex verify` and the
# rows against the single process.
finish_run() {
  local run=$1 host failed=0 code
  for host in $(seq 0 $((hosts - 1))); do
    code=$(timeout "$run_limit" podman wait "$name-$host") || code="still running after $run_limit s"
    host_log "$host" > "$run/host_$host.log"
    if [ "$code" != 0 ]; then
      echo "test.sh: host $host exited $code; its log: $run/host_$host.log" >&2
      tail -5 "$run/host_$host.log" >&2
      failed=1
    fi
  done
  actex_once -v "$run/out:/out:ro" -v "$work/data:/data:ro" "$image" verify /out > "$run/verify.log" 2>&1 ||
    { echo "test.sh: actex verify found faults:" >&2; tail -20 "$run/verify.log" >&2; failed=1; }
  actex_once --entrypoint python3 -v "$run/out:/out:ro" -v "$work/single:/single:ro" "$image" \
    /usr/local/bin/read_activations.py /out --same-as /single > "$run/same.log" 2>&1 ||
    { echo "test.sh: rows differ from one process:" >&2; cat "$run/same.log" >&2; failed=1; }
  return $failed
}

# Runs the job into a fresh folder; $1 names the run, $2 (optional) is a function that
# interrupts it. Prints the wall time.
run_job() {
  local label=$1 interrupt=${2:-} run="$work/$1" host
  mkdir -p "$run/out"
  local start=$EPOCHREALTIME
  for host in $(seq 0 $((hosts - 1))); do start_host "$host" "$subnet.$((10 + host))" "$run"; done
  [ -z "$interrupt" ] || "$interrupt" "$run"
  if finish_run "$run"; then
    printf 'test.sh: %-14s %s s, verify clean, rows identical to one process\n' "$label:" \
      "$(seconds_since "$start")"
  else
    echo "test.sh: $label: FAILED (logs in $run)" >&2
    exit 1
  fi
}

# Host 2 (a worker) killed while the job runs, started again at once at a new address.
interrupt_worker() {
  wait_until 120 "third lease of host 2" granted "$1" 2 3 10
  kill_host 2 "$1"
  start_host 2 "$subnet.$((20 + 2))" "$1"
}

# Host 0 killed while the job runs; once the standby (host 1) took over the job, host 0's
# command runs again at a new address and rejoins through the standby.
interrupt_host0() {
  wait_until 120 "third lease of host 0" granted "$1" 0 3 10
  kill_host 0 "$1"
  wait_until 120 "takeover by the standby" logged 1 "took over the job"
  start_host 0 "$subnet.$((20 + 0))" "$1"
}

run_job uninterrupted
run_job worker interrupt_worker
run_job host0 interrupt_host0
