"""structures-bits: bits per item against the target FPR for each registered
structure, as the planner sizes it. Usage: structures_bits.py CSV PNG [TITLE]
(agebloom-lab structures: W = 10^6; agebloom-plan --plot: the user's window)."""
import csv
import sys

import png_file

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # exit 3: the tool names the package to install
    print(f"structures_bits.py: cannot import matplotlib ({e}): install Debian's python3-matplotlib", file=sys.stderr)
    sys.exit(3)

series = {}
for r in csv.DictReader(open(sys.argv[1])):
    series.setdefault(r["structure"], []).append((float(r["target_fpr"]), float(r["bits_per_item"])))
fig, ax = plt.subplots(figsize=(8, 5.5))
# More structures than the colour cycle has colours: each line gets a colour
# and a marker/dash pair of its own, so no two lines look alike.
colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
styles = [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-.")]
for i, (name, pts) in enumerate(series.items()):
    pts.sort()
    marker, dash = styles[(i // len(colours)) % len(styles)]
    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, ls=dash, ms=3, color=colours[i % len(colours)],
            label=name)
ax.set_xscale("log")
ax.set_yscale("log")
ax.invert_xaxis()
ax.set_xlabel("target false-positive rate")
ax.set_ylabel("bits per window item")
ax.set_title(sys.argv[3] if len(sys.argv) > 3 else "What each structure costs per item (planner, W = 10^6)")
ax.grid(alpha=0.3, which="both")
ax.legend(fontsize=7, ncol=2)
fig.tight_layout()
png_file.save(fig, sys.argv[2])
