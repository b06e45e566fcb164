"""002-table2: bits per window element over time at each error rate (steady
stream), and bits in use through the rate step. Usage: 002_table2.py CSV PNG"""
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

steady, step = {}, []
for r in csv.DictReader(open(sys.argv[1])):
    if r["phase"] == "steady":
        steady.setdefault(float(r["fpr_target"]), []).append((float(r["seconds"]), float(r["bits_per_window_element"])))
    else:
        step.append((float(r["seconds"]), float(r["bits_per_window_element"]), int(r["slices"]), r["phase"]))
fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5))
for fpr, pts in sorted(steady.items(), reverse=True):
    left.plot([p[0] for p in pts], [p[1] for p in pts], label=f"error rate {fpr:g}")
left.set_xlabel("time (s), T = 1 s")
left.set_ylabel("bits per window element")
left.set_title("Steady rate: memory per element (Table 2)")
left.grid(alpha=0.3)
left.legend(fontsize=8)
right.plot([p[0] for p in step], [p[2] for p in step], color="tab:red")
right.set_xlabel("time (s): planned rate, x10, back")
right.set_ylabel("slices", color="tab:red")
mem = right.twinx()
mem.plot([p[0] for p in step], [p[1] for p in step], color="tab:blue")
mem.set_ylabel("bits in use / keys per second at the phase's rate", color="tab:blue")
right.set_title("Rate step at 1%: slices and memory follow the rate")
right.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
