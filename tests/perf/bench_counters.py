#!/usr/bin/env python3
"""The benchmark suite's own counters agree with what the filters promise.

Runs agebloom-bench briefly at W = 64K and checks, from its JSON, the verdict
counters every case reports beside its cycles (true_rate: verdicts answered
true over operations in the timed loop):

- a subject whose live FNR measured at set-up is 0 answers every live probe
  true in the timed loop too (contains, hit 100%);
- test_and_insert with half its keys live repeats answers true at about half;
- fresh negatives are answered true at about the measured FPR.

A harness that mislays the verdicts (Google Benchmark 1.7's DoNotOptimize
once did, under GCC 12: the count came out wrong) fails here.

usage: bench_counters.py AGEBLOOM_BENCH
"""
import json
import math
import os
import subprocess
import sys
import tempfile


def main():
    bench = sys.argv[1]
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        run = subprocess.Popen([bench, "--benchmark_min_time=0.01", "--benchmark_out_format=json",
                                f"--benchmark_out={out.name}",
                                "--benchmark_filter=^(contains|test_and_insert)/.*/W:65536/"],
                               stdout=subprocess.DEVNULL)
        if run.wait() != 0:
            sys.exit(f"{bench} exited {run.returncode}")
        runs = json.load(out)["benchmarks"]

    problems, checked = [], 0
    # The EAL's runtime folder of the run (its --file-prefix is
    # agebloom-bench-PID) is removed at exit, not left one per run.
    runtime = os.environ.get("XDG_RUNTIME_DIR", "/tmp") if os.geteuid() else "/var/run"
    left = os.path.join(runtime, "dpdk", f"agebloom-bench-{run.pid}")
    if os.path.exists(left):
        problems.append(f"the EAL's runtime folder {left} was left behind")
    for r in runs:
        name = r["name"]
        if "true_rate" not in r:
            continue
        rate, fpr, fnr, model = r["true_rate"], r["fpr"], r["live_fnr"], r["model_fpr"]
        if not 0 <= rate <= 1:
            problems.append(f"{name}: true_rate {rate} outside [0, 1]")
            continue
        if fnr != 0:  # peers and baselines that forget live keys by design
            continue
        checked += 1
        if name.startswith("contains/") and "/hit:100" in name and rate != 1:
            problems.append(f"{name}: live keys answered true at {rate}, but its set-up live FNR is 0")
        if math.isnan(model):  # not a filter (the memory floors): no FPR to hold it to
            continue
        slack = 0.01 + 3 * fpr
        if name.startswith("contains/") and "/hit:0/" in name and rate > slack:
            problems.append(f"{name}: negatives answered true at {rate}, measured FPR {fpr}")
        if name.startswith("test_and_insert/") and "/hit:50" in name and not 0.48 <= rate <= 0.52 + slack:
            problems.append(f"{name}: half live repeats answered true at {rate}")
        if name.startswith("test_and_insert/") and "/hit:0/" in name and rate > slack:
            problems.append(f"{name}: fresh keys answered true at {rate}, measured FPR {fpr}")

    if checked < 20:
        problems.append(f"only {checked} cases with live FNR 0 were checked: did the filter match the suite?")
    for p in problems:
        print("FAIL", p)
    print(f"bench counters: {checked} cases checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
