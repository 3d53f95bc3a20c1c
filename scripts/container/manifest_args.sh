#!/usr/bin/env bash
# Prints the node's command line from a Kubernetes manifest, one argument a line: the
# `- ARG` lines between `# args-begin` and `# args-end` (deploy/k8s/job.yaml). The
# container test runs exactly these, and a unit test checks them against the manifest.
#
#   scripts/container/manifest_args.sh [MANIFEST]   (default: deploy/k8s/job.yaml)
set -euo pipefail
manifest=${1:-$(cd "$(dirname "$0")/../.." && pwd)/deploy/k8s/job.yaml}
awk -v file="$manifest" '
  /# args-begin/ { inside = 1; found = 1; next }
  /# args-end/ { inside = 0; next }
  inside && /^[[:space:]]*- / { sub(/^[[:space:]]*- /, ""); print; count++ }
  END {
    if (!found || count == 0) {
      print file ": no `- ARG` lines between # args-begin and # args-end" > "/dev/stderr"
      exit 1
    }
  }' "$manifest"
