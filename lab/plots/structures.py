"""structures: every registered structure at FPR 1%: bits per item against
measured FPR and expired-key positives, per stream. Usage: structures.py CSV PNG"""
import csv
import sys

import png_file

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # exit 3: the tool names the package to install
    print(f"structures.py: cannot import matplotlib ({e}): install Debian's python3-matplotlib", file=sys.stderr)
    sys.exit(3)

rows = list(csv.DictReader(open(sys.argv[1])))
streams = list(dict.fromkeys(r["stream"] for r in rows))
structs = list(dict.fromkeys(r["structure"] for r in rows))
fig, axes = plt.subplots(1, 3, figsize=(16, 5))
width = 0.8 / len(streams)
for i, s in enumerate(streams):
    pts = {r["structure"]: r for r in rows if r["stream"] == s}
    xs = [j + i * width for j in range(len(structs))]
    axes[0].bar(xs, [float(pts[t]["fpr"]) if t in pts else 0 for t in structs], width, label=s)
    axes[1].bar(xs, [float(pts[t]["expired_positive"]) if t in pts else 0 for t in structs], width, label=s)
first = {r["structure"]: r for r in rows if r["stream"] == streams[0]}
axes[2].bar(range(len(structs)), [float(first[t]["bits_per_item"]) for t in structs], color="tab:gray")
for ax, title in zip(axes, ["FPR on fresh keys (target 1%)", "positive rate on expired keys", f"bits per item ({streams[0]})"]):
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(structs))] if ax is not axes[2] else range(len(structs)))
    ax.set_xticklabels(structs, rotation=60, ha="right", fontsize=8)
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
axes[0].axhline(0.01, color="red", lw=0.8, ls="--")
axes[0].legend(fontsize=7)
fig.suptitle("Every registered structure at FPR 1% (count windows)")
fig.tight_layout()
png_file.save(fig, sys.argv[2])
