#!/usr/bin/env bash
# What libagebloom.so exports: every function agebloom.h declares, C++
# symbols of the agebloom namespace (the compiled C++ API), and nothing else
# of its own (no xxHash, no helpers): the library is built hidden. Vague
# linkage the C++ runtime's headers force to default visibility (typeinfo of
# std:: exceptions, weak template statics: nm types V, W, u) is allowed. The
# soname's number is AGEBLOOM_ABI_VERSION.
#   exports.sh LIBAGEBLOOM_SO AGEBLOOM_H
set -euo pipefail
lib=$1 header=$2
fail=0

declared=$(grep -oE 'AGEBLOOM_API [^(]*\bagebloom_[a-z0-9_]+\(' "$header" | grep -oE 'agebloom_[a-z0-9_]+\($' | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" && $3 ~ /^agebloom_/ {print $3}' | sort -u)
if [[ "$declared" != "$exported" ]]; then
  echo "exports: the C functions exported differ from those agebloom.h declares:"
  diff <(echo "$declared") <(echo "$exported") || true
  fail=1
fi
[[ $(echo "$declared" | grep -c .) -ge 30 ]] || { echo "exports: too few declarations parsed from $header"; fail=1; }

# Strong symbols (T, D, B, R) of anything else but the agebloom namespace.
stray=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ {print $3}' |
        grep -vE '^agebloom_|^_ZN?K?8agebloom|^_ZT[ISV]N8agebloom|^_ZTh?N8agebloom' || true)
if [[ -n "$stray" ]]; then
  echo "exports: symbols outside the API are visible:"
  echo "$stray" | head -20
  fail=1
fi

abi=$(sed -nE 's/^#define AGEBLOOM_ABI_VERSION ([0-9]+).*/\1/p' "$header")
soname=$(readelf -d "$lib" | sed -nE 's/.*Library soname: \[(.*)\].*/\1/p')
if [[ "$soname" != "libagebloom.so.$abi" ]]; then
  echo "exports: soname $soname, but AGEBLOOM_ABI_VERSION is $abi"
  fail=1
fi
[[ $fail -eq 0 ]] && echo "exports: $(echo "$exported" | wc -l) C functions, soname $soname"
exit $fail
