"""002-table2: settled bits per window element at each error rate (every
filter's samples after 5 spans, beside the paper's Table 2 range), and the
rate step: slices and bits in use. Usage: 002_table2.py CSV PNG"""
import csv
import sys

import png_file

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # exit 3: the tool names the package to install
    print(f"002_table2.py: cannot import matplotlib ({e}): install Debian's python3-matplotlib", file=sys.stderr)
    sys.exit(3)

# Time-limited Bloom Filter, Table 2 (min, max bits per element), for the bars.
PAPER = {0.1: (10, 13), 0.01: (19, 24), 0.001: (26, 35), 0.0001: (32, 45), 0.00001: (41, 56)}

settled, step = {}, []
for r in csv.DictReader(open(sys.argv[1])):
    if r["phase"] == "steady":
        if float(r["seconds"]) >= 6.0:
            settled.setdefault(float(r["fpr_target"]), []).append(float(r["bits_per_window_element"]))
    else:
        step.append((float(r["seconds"]), int(r["bits_in_use"]), int(r["slices"])))
fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
for i, (fpr, vals) in enumerate(sorted(settled.items(), reverse=True)):
    left.scatter([i] * len(vals), vals, s=6, alpha=0.4, color="tab:blue", label="this lab" if i == 0 else None)
    lo, hi = PAPER.get(fpr, (None, None))
    if lo is not None:
        left.plot([i + 0.25, i + 0.25], [lo, hi], color="tab:red", lw=4, label="paper's range" if i == 0 else None)
left.set_xticks(range(len(settled)))
left.set_xticklabels([f"{f:g}" for f in sorted(settled, reverse=True)])
left.set_xlabel("error rate")
left.set_ylabel("bits per window element (settled)")
left.set_title("Table 2: memory per element")
left.grid(alpha=0.3)
left.legend(fontsize=8)
right.plot([p[0] for p in step], [p[1] / 1e6 for p in step], color="tab:blue")
right.set_ylabel("Mbit in use", color="tab:blue")
right.set_xlabel("time (s): planned rate, x10 from 3 s, back from 5 s")
sl = right.twinx()
sl.plot([p[0] for p in step], [p[2] for p in step], color="tab:red")
sl.set_ylabel("slices", color="tab:red")
right.set_title("Rate step at 1%: memory follows the rate")
right.grid(alpha=0.3)
fig.tight_layout()
png_file.save(fig, sys.argv[2])
