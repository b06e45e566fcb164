"""001-figure4: the chance that a key is still reported against its age,
through the window and the slack. Usage: 001_figure4.py CSV PNG"""
import csv
import sys

import png_file

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # exit 3: the tool names the package to install
    print(f"001_figure4.py: cannot import matplotlib ({e}): install Debian's python3-matplotlib", file=sys.stderr)
    sys.exit(3)

series = {}
for r in csv.DictReader(open(sys.argv[1])):
    series.setdefault((r["k"], r["l"]), []).append((int(r["age"]), float(r["reported"])))
fig, ax = plt.subplots(figsize=(8, 4.5))
for (k, l), pts in series.items():
    ax.plot([p[0] for p in pts], [p[1] for p in pts], label=f"k={k}, l={l}")
ax.axvline(1000, color="grey", lw=0.8, ls="--", label="w = 1000")
ax.set_xlabel("key age (insertions since it was inserted)")
ax.set_ylabel("chance the filter reports it")
ax.set_title("APBF: no false negatives in the window, decay through the slack")
ax.grid(alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
png_file.save(fig, sys.argv[2])
