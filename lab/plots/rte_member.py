"""rte-member: DPDK's rte_member beside ours: live FNR, FPR and expired
positives per subject and workload. Usage: rte_member.py CSV PNG"""
import csv
import sys

import png_file

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # exit 3: the tool names the package to install
    print(f"rte_member.py: cannot import matplotlib ({e}): install Debian's python3-matplotlib", file=sys.stderr)
    sys.exit(3)

rows = list(csv.DictReader(open(sys.argv[1])))
streams = list(dict.fromkeys(r["stream"] for r in rows))
subjects = list(dict.fromkeys(r["subject"] for r in rows))
fig, axes = plt.subplots(1, 3, figsize=(16, 5))
width = 0.8 / len(streams)
for i, s in enumerate(streams):
    pts = {r["subject"]: r for r in rows if r["stream"] == s}
    xs = [j + i * width for j in range(len(subjects))]
    for ax, col in zip(axes, ["live_fnr", "fpr", "expired_positive"]):
        ax.bar(xs, [float(pts[t][col]) for t in subjects], width, label=s)
for ax, title in zip(axes, ["live FNR (live keys forgotten)", "FPR on fresh keys", "positive rate on expired keys"]):
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(subjects))])
    ax.set_xticklabels(subjects, rotation=50, ha="right", fontsize=8)
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
axes[0].legend(fontsize=8)
fig.suptitle("DPDK rte_member beside agebloom on the same streams")
fig.tight_layout()
png_file.save(fig, sys.argv[2])
