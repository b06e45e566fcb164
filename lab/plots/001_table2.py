"""001-table2: measured FP against the model (and the paper's column) for
the 25 (k, l) rows of APBF's Table 2. Usage: 001_table2.py CSV PNG"""
import csv
import sys

import png_file

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # exit 3: the tool names the package to install
    print(f"001_table2.py: cannot import matplotlib ({e}): install Debian's python3-matplotlib", file=sys.stderr)
    sys.exit(3)

rows = list(csv.DictReader(open(sys.argv[1])))
fig, ax = plt.subplots(figsize=(6.5, 5.5))
model = [float(r["model_fp"]) for r in rows]
ax.scatter(model, [float(r["measured_fp"]) for r in rows], label="measured (this lab)", zorder=3)
ax.scatter(model, [float(r["paper_fp"]) for r in rows], marker="x", label="paper's Table 2", zorder=3)
lo, hi = min(model) / 2, max(model) * 2
ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, label="y = model")
for r in rows:
    ax.annotate(f"({r['k']},{r['l']})", (float(r["model_fp"]), float(r["measured_fp"])), fontsize=6,
                xytext=(3, -8), textcoords="offset points")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("model FP (recurrence F, Sec. 5.3)")
ax.set_ylabel("FP")
ax.set_title("APBF Table 2: 25 (k, l) rows, w = 1000")
ax.grid(alpha=0.3, which="both")
ax.legend(fontsize=8)
fig.tight_layout()
png_file.save(fig, sys.argv[2])
