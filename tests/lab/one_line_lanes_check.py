#!/usr/bin/env python3
"""lab/one_line_lanes.py's partitioned rows are the registry's one-line
layouts: its bits per item for 64- and 128-bit lanes must equal what
agebloom-plan prints for interleaved and interleaved-128 (the same model,
written twice, once in C++ and once here), so the table's other rows (the
shapes not built) rest on a model that was checked.

    one_line_lanes_check.py AGEBLOOM_PLAN LAB_SCRIPT
"""
import re
import subprocess
import sys

plan, script = sys.argv[1], sys.argv[2]
W = 1048576
table = subprocess.run([sys.executable, script, str(W)], capture_output=True, text=True, check=True).stdout
failures = 0
for lane, name in ((64, "interleaved"), (128, "interleaved-128")):
    row = re.search(r"lanes of %d \(r = \d\)\s+([0-9.]+) \(k=(\d+)\)" % lane, table)
    out = subprocess.run([plan, "--window", str(W), "--fpr", "0.01", "--filter", name], capture_output=True,
                         text=True, check=True).stdout
    bits = re.search(r"bits per item\s+([0-9.]+)", out)
    k = re.search(r"parameters\s+r=\d+ k=(\d+)", out)
    if not (row and bits and k):
        print(f"{name}: could not read the table or the plan\n{table}\n{out}")
        failures += 1
        continue
    lab, planned = float(row.group(1)), float(bits.group(1))
    ok = abs(lab - planned) <= 0.01 and row.group(2) == k.group(1)
    print(f"{name}: lab {lab:.3f} (k={row.group(2)}), agebloom-plan {planned:.3f} (k={k.group(1)}): {'ok' if ok else 'DIFFER'}")
    failures += not ok
sys.exit(1 if failures else 0)
