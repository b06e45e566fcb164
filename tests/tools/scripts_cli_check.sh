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
# Outputs and inputs that are devices: /dev/full took the JSON silently and
# the report then read it until memory ran out.
check 2 "$root/scripts/bench.sh --out /dev/full" "is not a regular file"
check 2 "$root/scripts/bench.sh --report /dev/zero" "no such readable file"
check 2 "$root/scripts/bench.sh --out a.json --out b.json" "--out given twice"
# A run with a case that reported an error: named, left out, the rest reported.
cat > errored.json <<'JSON'
{"benchmarks":[{"name":"test_and_insert/interleaved/bulk/W:1048576/hit:0","run_type":"iteration","cpu_cycles_per_op":10,
"bits_per_item":27,"fpr":0.01,"live_fnr":0,"items_per_second":1e8},
{"name":"test_and_insert/rte_member_ht_cache/bulk/W:1048576/hit:0","run_type":"iteration","error_occurred":true,
"error_message":"no hugepages"},{"name":"pipeline/5tswap/burst:32","run_type":"iteration","error_occurred":true}]}
JSON
check 0 "$root/scripts/bench.sh --report errored.json" "skipped (the benchmark reported an error) test_and_insert/rte_member_ht_cache"
check 0 "$root/scripts/bench_tables.py errored.json" "| 1048576 | interleaved | 27.0 |"
# Runs bench_tables.py cannot tabulate: one line and exit 1, before any row
# (a redirect kept a table cut at the bad run).
echo '{"benchmarks":[{"name":"test_and_insert/x/bulk","run_type":"iteration"}]}' > no_window.json
echo '{"benchmarks":[{"name":"test_and_insert/x/bulk/W:5/hit:0","run_type":"iteration","cpu_cycles_per_op":null}]}' > null.json
for f in no_window null; do
  check 1 "$root/scripts/bench_tables.py $f.json" "bench_tables.py: $f.json: not an agebloom-bench JSON"
  "$root/scripts/bench_tables.py" $f.json > out.md 2>/dev/null
  [[ ! -s out.md ]] || { echo "FAIL: bench_tables.py $f.json printed rows before its error"; fails=$((fails + 1)); }
done
check 2 "$root/scripts/bench_pipeline.sh --frames 9999999999" "--frames must be at most 1048576"
check 2 "$root/scripts/bench_pipeline.sh --seconds 1 --seconds 2" "--seconds given twice"
# fuzz.sh and sanitize.sh check their arguments before building anything
# (a typo built the whole ASan tree; SECONDS 0 fuzzed without end).
check 0 "$root/scripts/fuzz.sh --help" "Fuzz one target"
check 2 "$root/scripts/fuzz.sh no_such_target" "no fuzz target 'no_such_target'"
for bad in 0 -1 abc; do check 2 "$root/scripts/fuzz.sh options $bad" "SECONDS must be a positive whole number"; done
check 0 "$root/scripts/sanitize.sh --help" "The sanitizer builds"
check 2 "FUZZ_SECONDS=0 $root/scripts/sanitize.sh" "FUZZ_SECONDS must be a positive whole number"
check 2 "AGEBLOOM_GPU_BASELINE=/no/such/bench $root/scripts/gpu_bundle.sh" "no such program"
check 2 "$root/scripts/bench_cluster.py --rounds 0" "--rounds must be at least 1, not 0"
check 2 "$root/scripts/bench_cluster.py --build $tmp/no-build" "was not built"
echo "scripts_cli_check: $fails failure(s)"
[[ $fails -eq 0 ]]
