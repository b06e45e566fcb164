"""001-figure6: FP on fresh keys as 10^4 distinct keys enter an empty APBF of
w = 10^3, one line per precision. Usage: 001_figure6.py CSV PNG"""
import csv
import sys

import png_file

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # exit 3: the tool names the package to install
    print(f"001_figure6.py: cannot import matplotlib ({e}): install Debian's python3-matplotlib", file=sys.stderr)
    sys.exit(3)

series = {}
for r in csv.DictReader(open(sys.argv[1])):
    series.setdefault((r["k"], r["l"], float(r["target_fp"])), []).append(
        (int(r["insertions"]), float(r["measured_fp"])))
fig, ax = plt.subplots(figsize=(8, 5))
for (k, l, target), pts in series.items():
    line, = ax.plot([p[0] for p in pts], [max(p[1], target / 100) for p in pts], label=f"k={k}, l={l} (target {target:g})")
    ax.axhline(target, color=line.get_color(), lw=0.7, ls=":")
ax.set_yscale("log")
ax.set_xlabel("distinct insertions")
ax.set_ylabel("false-positive rate")
ax.set_title("APBF Figure 6: FP as the filter fills (w = 1000)")
ax.grid(alpha=0.3, which="both")
ax.legend(fontsize=8)
fig.tight_layout()
png_file.save(fig, sys.argv[2])
