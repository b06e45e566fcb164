#!/bin/sh
# agebloom-gpu-bench's options, on any machine (no device needed: they are
# checked before the device is asked for): --help prints the usage and exits
# 0; each bad option exits 2 with a line that names the program.
b=$1
"$b" --help >"${TMPDIR:-/tmp}/gpu_bench_help.$$" 2>&1 || { echo "--help: exit $?"; exit 1; }
grep '^usage: agebloom-gpu-bench' "${TMPDIR:-/tmp}/gpu_bench_help.$$" >/dev/null || { echo "--help printed no usage"; exit 1; }
rm -f "${TMPDIR:-/tmp}/gpu_bench_help.$$"
fail=0
for a in "--sizes 8Q" "--sizes 0" "--sizes -1G" "--keys 12x" "--keys 0" "--seed zz" "--replay-distinct 0" \
         "--layouts foo" "--bogus"; do
  # shellcheck disable=SC2086
  out=$("$b" $a 2>&1)
  rc=$?
  case $rc:$out in
    2:*agebloom-gpu-bench*) ;;
    *) echo "'$a': exit $rc: $out"; fail=1 ;;
  esac
done
exit $fail
