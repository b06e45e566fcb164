"""003-penalties: penalty ratio (standard / inferential BTBF) and posterior
error (eq. 28) against bits per item, one line per stream and condition.
Usage: 003_penalties.py CSV PNG (redraws without rerunning the experiment)."""
import csv
import sys

import png_file

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # exit 3: the tool names the package to install
    print(f"003_penalties.py: cannot import matplotlib ({e}): install Debian's python3-matplotlib", file=sys.stderr)
    sys.exit(3)

rows = list(csv.DictReader(open(sys.argv[1])))
series = {}
for r in rows:
    key = f"{r['stream']} [{r['condition']}] w={r['w']}"
    series.setdefault(key, []).append((float(r["bits_per_item"]), float(r["ratio"]), float(r["posterior_error"])))

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
for key, pts in series.items():
    pts.sort()
    left.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=key)
    right.plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=key)
left.axhline(1.0, color="grey", lw=0.8)
left.set_xlabel("bits per window item")
left.set_ylabel("penalty ratio standard / inferential")
left.set_title("Total penalty (higher: inference helps more)")
right.axhline(0.05, color="red", lw=0.8, ls="--", label="0.05")
right.axhline(0.025, color="grey", lw=0.8, ls=":", label="bin half-width")
right.set_xlabel("bits per window item")
right.set_ylabel("posterior error (eq. 28)")
right.set_title("Posterior calibration")
for ax in (left, right):
    ax.grid(alpha=0.3)
left.legend(fontsize=8)
right.legend(fontsize=8)
fig.suptitle("Inferential vs standard Block Timing Bloom filter (Dautrich & Ravishankar, Sec. 5)")
fig.tight_layout()
png_file.save(fig, sys.argv[2])
