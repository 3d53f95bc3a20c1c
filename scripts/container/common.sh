# Sourced by the container scripts: what they share.

# The repository this script belongs to.
repo=$(cd "$(dirname "$0")/../.." && pwd)

# What every `podman build` and `podman run` here passes: properties of the host, not of
# the image, so they stay out of the Containerfile. podman asks for the host's file and
# process limits by default; the sandboxes these scripts run in forbid raising them, so
# explicit ones go with every build and run. crun (podman's default runtime) refuses hosts
# whose cgroups are mounted in hybrid mode (v1 controllers beside a v2 tree, as here);
# runc runs containers on either.
podman_flags=(--runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

# Prints the script's header comment (from its second line to the first blank one) as
# its usage, and exits 2.
usage() {
  sed -n '2,/^$/p' "$0" | sed -n 's/^# \{0,1\}//p'
  exit 2
}
