#!/usr/bin/env bash
# scripts/container/cuda_libs.sh, which puts the CUDA libraries of the image's binary
# into the image, on a binary whose libraries are known: /bin/ls, with the folder its
# libc comes from standing in for a CUDA toolkit. It copies exactly the libraries ls
# loads from that folder, under their sonames, as the files they resolve to; with no
# toolkit it makes an empty folder; a toolkit the binary loads nothing from is an error.
#
#   cuda_libs_test.sh SOURCE_DIR
set -euo pipefail
script=$1/scripts/container/cuda_libs.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

binary=/bin/ls
libc=$(ldd "$binary" | awk '$1 == "libc.so.6" { print $3 }')
[ -n "$libc" ] || fail "ldd $binary names no libc.so.6"
toolkit=$(dirname "$(realpath "$libc")")

# Every library ls loads from that folder, by soname, as ldd resolves it.
expected=$(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
  while read -r soname path; do
    case "$(realpath "$path")" in "$toolkit"/*) echo "$soname $path" ;; esac
  done | sort)
[ -n "$expected" ] || fail "ls loads nothing from $toolkit"

bash "$script" "$binary" "$toolkit" "$work/libs" > "$work/log" || fail "$(cat "$work/log")"
[ "$(ls "$work/libs" | sort)" = "$(cut -d' ' -f1 <<< "$expected")" ] ||
  fail "copied $(ls "$work/libs" | tr '\n' ' '), expected $(cut -d' ' -f1 <<< "$expected" | tr '\n' ' ')"
while read -r soname path; do
  [ -f "$work/libs/$soname" ] && [ ! -L "$work/libs/$soname" ] || fail "$soname is not a file"
  cmp -s "$work/libs/$soname" "$(realpath "$path")" || fail "$soname differs from $path"
done <<< "$expected"

bash "$script" "$binary" "" "$work/none" > "$work/log" || fail "no toolkit: $(cat "$work/log")"
[ -d "$work/none" ] && [ -z "$(ls -A "$work/none")" ] || fail "no toolkit: $work/none not empty"

mkdir "$work/empty-toolkit"
if bash "$script" "$binary" "$work/empty-toolkit" "$work/other" > "$work/log" 2>&1; then
  fail "a toolkit ls loads nothing from was taken: $(cat "$work/log")"
fi
grep -q "loads no library of $work/empty-toolkit" "$work/log" || fail "$(cat "$work/log")"
echo "cuda_libs.sh copied $(wc -l <<< "$expected") libraries of $toolkit as ls loads them"
