"""000-table1 / 000-real-log: median FPR, live FNR and expired-key positive
rate against the budget in bits per live item, one line per structure.
Usage: 000_table1.py CSV PNG"""
import csv
import statistics
import sys

import png_file

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # exit 3: the tool names the package to install
    print(f"000_table1.py: cannot import matplotlib ({e}): install Debian's python3-matplotlib", file=sys.stderr)
    sys.exit(3)

rows = list(csv.DictReader(open(sys.argv[1])))
series = {}
for r in rows:
    series.setdefault(r["structure"], {}).setdefault(float(r["bits_per_item_budget"]), []).append(r)

fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
for name, by_bpi in series.items():
    xs = sorted(by_bpi)
    for ax, col in zip(axes, ["fpr", "live_fnr", "expired_positive"]):
        ax.plot(xs, [statistics.median(float(r[col]) for r in by_bpi[x]) for x in xs], marker="o", label=name)
for ax, title in zip(axes, ["FPR on fresh keys", "live FNR", "positive rate on expired keys"]):
    ax.set_xlabel("bits per live-window item")
    ax.set_title(title)
    ax.grid(alpha=0.3)
axes[0].set_yscale("log")
axes[0].legend(fontsize=8)
fig.suptitle("Same memory, five structures (Guarded Epoch Bloom Filters, Table 1); medians")
fig.tight_layout()
png_file.save(fig, sys.argv[2])
