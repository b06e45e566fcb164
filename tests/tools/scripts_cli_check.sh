#!/usr/bin/env bash
# The helper scripts a user runs by hand, on their cheap paths only (none of
# these installs, builds or benchmarks): --help prints and exits 0 without
# side effects, bad arguments are exit 2, a file that is not a benchmark JSON
# is one line and exit 1, never a Python traceback.
#   scripts_cli_check.sh REPO_ROOT
set -uo pipefail
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
check() {  # check WANT_RC "CMD..." [TEXT the output must hold]
  local want=$1 cmd=$2 text=${3:-}
  bash -c "$cmd" >out.txt 2>&1
  local rc=$?
  if [[ $rc -ne $want ]] || { [[ -n "$text" ]] && ! grep -qF -- "$text" out.txt; } || grep -q Traceback out.txt; then
    echo "FAIL: $cmd: exit $rc (want $want${text:+, text '$text'}):"; head -5 out.txt; fails=$((fails + 1))
  fi
}
echo garbage > garbage.json; echo '{}' > empty.json; echo '[1]' > list.json; echo '{"benchmarks":[]}' > none.json
check 0 "$root/scripts/demo.sh --help" "replays real traces"
check 2 "$root/scripts/demo.sh --bogus" "takes no options"
check 0 "$root/scripts/bench.sh --help" "Runs the whole benchmark suite"
check 2 "$root/scripts/bench.sh --report" "--report needs a value"
check 2 "$root/scripts/bench.sh --report missing.json" "no such readable file"
for f in garbage empty list none; do
  check 1 "$root/scripts/bench.sh --report $f.json" "bench.sh: $tmp/$f.json"
  check 1 "$root/scripts/bench_tables.py $f.json" "bench_tables.py: $f.json"
done
check 0 "$root/scripts/bench_tables.py --help" "usage: scripts/bench_tables.py"
check 0 "$root/scripts/bench_instructions.sh --help" "scripts/bench_pipeline.sh has them"
check 0 "$root/scripts/bench_pipeline.sh --help" "The pipeline figure"
check 2 "$root/scripts/bench_pipeline.sh --window" "--window needs a value"
check 2 "$root/scripts/bench_pipeline.sh --window 1e6" "--window must be a positive integer, not '1e6'"
check 2 "$root/scripts/bench_pipeline.sh --rounds 0" "--rounds must be a positive integer"
check 2 "$root/scripts/bench_pipeline.sh --bogus" "unknown option '--bogus'"
check 2 "$root/scripts/bench_instructions.sh --out"
check 0 "$root/scripts/sweep_captures.sh --help" "Runs every capture"
check 2 "$root/scripts/sweep_captures.sh no-such-folder" "is not a folder"
mkdir empty_dir
check 2 "$root/scripts/sweep_captures.sh empty_dir $root/build-does-not-exist" "was not built"
echo "scripts_cli_check: $fails failure(s)"
[[ $fails -eq 0 ]]
