#!/usr/bin/env bash
# Stands in for ssh in tests: `local_ssh.sh HOST COMMAND` runs COMMAND here. A host
# named "unreachable" fails the way ssh does when it cannot connect.
host=$1
shift
if [ "$host" = "unreachable" ]; then
  echo "ssh: connect to host unreachable port 22: Connection refused" >&2
  exit 255
fi
exec bash -c "$*"
