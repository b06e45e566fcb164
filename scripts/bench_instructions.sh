#!/usr/bin/env bash
# Instructions per packet, per stage, for dedup_fwd's burst code and for
# testpmd's 5tswap, counted by valgrind's callgrind in the in-memory pipeline
# benchmark (perf/pipeline_bench.cpp). This VM, like many, exposes no
# hardware counters to perf; callgrind counts the instructions executed,
# exactly and the same on any x86-64 machine for the same build, where the
# cycle figures of scripts/bench_pipeline.sh move with the machine and its
# load.
#
#   scripts/bench_instructions.sh [--out FILE.json]
#
# Each case runs alone under callgrind with collection off except around its
# timed bursts (4 iterations of 256 bursts of 32 packets; the filter is
# filled to steady state first, uncounted). The stages are differences of
# cumulative cases: parse (the fast key extraction), + hash (the rest of
# stage 1: key_burst), + filter (the lines requested, and decide_burst on the
# burst before, as the worker keeps one in flight), + split and counters (the
# whole stage_burst + decide_staged, as dedup_fwd runs it). 5tswap's parse and swap are one
# loop in testpmd and are reported as one stage. Receive and transmit are not
# in either figure (no PMD here; scripts/bench_pipeline.sh has them).
set -euo pipefail
caller=$PWD  # --out is the caller's path
cd "$(dirname "$0")/.."
out=""
while (($#)); do
  case "$1" in
    --out) [[ $# -ge 2 && -n "$2" ]] || { echo "usage: $0 [--out FILE.json]" >&2; exit 2; }; out=$2; [[ "$out" == /* ]] || out="$caller/$out"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--out FILE.json]" >&2; exit 2 ;;
  esac
done
scripts/setup.sh >/dev/null
build=${AGEBLOOM_BUILD_DIR:-build}
bench="$build/perf/agebloom-bench"
command -v valgrind >/dev/null || { echo "bench_instructions: valgrind not found (package valgrind)" >&2; exit 1; }
[[ -x "$bench" ]] || { echo "bench_instructions: $bench not built" >&2; exit 1; }
# The list is read whole: `bench | grep -q` fails under pipefail when grep
# exits at the first match and the benchmark dies of SIGPIPE.
cases=$("$bench" --benchmark_list_tests 2>/dev/null || true)
grep -q '^pipeline/' <<< "$cases" ||
  { echo "bench_instructions: $bench has no pipeline cases (built without libdpdk-dev?)" >&2; exit 1; }
[[ -n "$out" ]] || { mkdir -p "$build/bench-results"; out="$build/bench-results/instructions.json"; }
# Checked before the eight callgrind runs (minutes), not at the end: a folder
# or a missing parent made a traceback after all of them.
mkdir -p "$(dirname "$out")" 2>/dev/null || true
if [[ -e "$out" && ! -f "$out" ]] || [[ ! -d "$(dirname "$out")" || ! -w "$(dirname "$out")" ]]; then
  echo "bench_instructions: --out $out: cannot write a file there" >&2
  exit 2
fi
python3 - "$bench" "$out" <<'PY'
import json, os, re, subprocess, sys, tempfile

bench, out = sys.argv[1], sys.argv[2]
W = "W:1048576"
cases = [
    ("5tswap", "parse+swap", f"pipeline/5tswap/burst:32"),
    ("dedup_fwd src-ip auto", "parse", f"pipeline/stage/dedup_fwd_src_ip/auto/{W}/parse"),
    ("dedup_fwd src-ip auto", "parse+hash", f"pipeline/stage/dedup_fwd_src_ip/auto/{W}/parse+hash"),
    ("dedup_fwd src-ip auto", "parse+hash+filter", f"pipeline/stage/dedup_fwd_src_ip/auto/{W}/parse+hash+filter"),
    ("dedup_fwd src-ip auto", "all", f"pipeline/dedup_fwd_src_ip/auto/{W}/burst:32"),
    ("dedup_fwd src-ip interleaved-128", "all", f"pipeline/dedup_fwd_src_ip/interleaved-128/{W}/burst:32"),
    ("dedup_fwd src-ip two-line", "all", f"pipeline/dedup_fwd_src_ip/two-line/{W}/burst:32"),
    ("dedup_fwd flow auto", "all", f"pipeline/dedup_fwd_flow/auto/{W}/burst:32"),
]

def pattern(name):
    # Google Benchmark's regex is POSIX extended: escape what it treats as special, nothing else.
    return re.sub(r"([+.()\[\]?*^$|])", r"\\\1", name)

def count(name):
    with tempfile.TemporaryDirectory() as tmp:
        cg, js = os.path.join(tmp, "cg.out"), os.path.join(tmp, "b.json")
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={cg}", bench,
               f"--benchmark_filter=^{pattern(name)}(/iterations:[0-9]+)?/real_time$", f"--benchmark_out={js}", "--benchmark_out_format=json"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"bench_instructions: {name}: exit {run.returncode}\n{run.stderr[-2000:]}")
        if os.path.getsize(js) == 0:
            sys.exit(f"bench_instructions: {name}: no benchmark ran\n{run.stdout[-1000:]}{run.stderr[-1000:]}")
        ir = None
        with open(cg) as f:
            for line in f:
                if line.startswith(("summary:", "totals:")):
                    ir = int(line.split()[1])
        runs = json.load(open(js))["benchmarks"]
        if ir is None or len(runs) != 1 or "error_occurred" in runs[0]:
            sys.exit(f"bench_instructions: {name}: no count ({runs[0].get('error_message', '') if runs else 'no run'})")
        return ir, int(runs[0]["packets"]), runs[0].get("label", "")

rows = []
for subject, stage, name in cases:
    ir, packets, label = count(name)
    rows.append({"subject": subject, "stage": stage, "case": name, "instructions": ir, "packets": packets,
                 "per_packet": ir / packets, "label": label})
    print(f"  {subject:28} {stage:18} {ir / packets:8.1f} instructions/packet ({packets} packets)", flush=True)

per = {(r["subject"], r["stage"]): r["per_packet"] for r in rows}
a = "dedup_fwd src-ip auto"
stages = {
    "parse": per[(a, "parse")],
    "hash": per[(a, "parse+hash")] - per[(a, "parse")],
    "filter": per[(a, "parse+hash+filter")] - per[(a, "parse+hash")],
    "split": per[(a, "all")] - per[(a, "parse+hash+filter")],
}
swap = per[("5tswap", "parse+swap")]
print("\ninstructions per packet by stage (callgrind; Rx/Tx excluded):")
print(f"  5tswap      parse+swap {swap:6.1f}")
print("  dedup_fwd   " + "  ".join(f"{k} {v:.1f}" for k, v in stages.items()) +
      f"  total {per[(a, 'all')]:.1f}  ({per[(a, 'all')] / swap:.2f} of 5tswap)")
print(f"  whole path with interleaved-128: {per[('dedup_fwd src-ip interleaved-128', 'all')]:.1f};"
      f" two-line: {per[('dedup_fwd src-ip two-line', 'all')]:.1f};"
      f" flow mode: {per[('dedup_fwd flow auto', 'all')]:.1f}")
try:
    with open(out, "w") as f:
        json.dump({"rows": rows, "stages": stages, "5tswap": swap}, f, indent=1)
except OSError as e:
    sys.exit(f"bench_instructions: cannot write {out}: {e.strerror}")
print(f"\nwritten: {out}")
PY
