# The command line the folder checks share (check_folder_includes.sh,
# check_folder_readmes.sh), sourced by each after it defines two functions:
#   scan ROOT   prints every offence under ROOT, returns 1 if there is one
#   self_test TREE   proves scan fails on an offence and passes on a clean tree,
#                    building them in the empty scratch folder TREE
#
# folder_check_main PASS_LINE FIX_HINT ARGS...
#   ARGS = SOURCE_DIR: scans it; prints PASS_LINE when clean, else FIX_HINT on stderr
#          and exits 1.
#   ARGS = --self-test: runs self_test in a scratch folder it then removes.
#   Anything else: usage, exit 2.
folder_check_main() {
  local pass_line=$1 fix_hint=$2
  shift 2
  if [[ ${1:-} == --self-test ]]; then
    local tree status=0
    tree=$(mktemp -d)
    self_test "$tree" || status=$?
    rm -rf "$tree"
    return $status
  elif [[ $# -eq 1 ]]; then
    if scan "$1"; then
      echo "$pass_line"
    else
      echo "$fix_hint" >&2
      exit 1
    fi
  else
    echo "usage: $0 SOURCE_DIR | --self-test" >&2
    exit 2
  fi
}
