"""agebloom-replay --plot: suppressions, false suppressions (with --truth) and
the filter's fill per interval of packet time, from the CSV the replay writes.
Usage: replay.py CSV PNG [TITLE]. Exits 3 when matplotlib cannot be imported
(agebloom-replay names the package to install)."""
import csv
import sys

import png_file

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:
    print(f"replay.py: cannot import matplotlib ({e}): install Debian's python3-matplotlib", file=sys.stderr)
    sys.exit(3)

rows = list(csv.DictReader(open(sys.argv[1])))
title = sys.argv[3] if len(sys.argv) > 3 else sys.argv[1]
truth = bool(rows) and "false_positives" in rows[0]
mid = [(float(r["start_s"]) + float(r["end_s"])) / 2 for r in rows]
width = float(rows[0]["end_s"]) - float(rows[0]["start_s"]) if rows else 0.0


def col(name):
    return [int(r[name]) for r in rows]


panels = 3 if truth else 2
fig, axes = plt.subplots(panels, 1, figsize=(10, 2.6 * panels + 0.6), sharex=True)
top = axes[0]
top.step(mid, col("packets"), where="mid", color="tab:gray", lw=1, label="packets")
top.step(mid, col("suppressed"), where="mid", color="tab:blue", lw=1.2, label="suppressed")
top.set_ylabel(f"packets per {width:.3g} s")
top.set_title(title, fontsize=10)
top.legend(fontsize=8, loc="best")
if truth:
    wrong = axes[1]
    wrong.step(mid, col("false_positives"), where="mid", color="tab:red", lw=1.2,
               label="false positives (new keys, and expired ones past the guarantee)")
    wrong.step(mid, col("slack_suppressed"), where="mid", color="tab:orange", lw=1.2,
               label="slack (expired keys remembered, within the guarantee)")
    wrong.set_ylabel(f"false suppressions per {width:.3g} s")
    wrong.set_ylim(bottom=0)
    wrong.legend(fontsize=8, loc="best")
fill = axes[-1]
fills = [float(r["fill"]) for r in rows]
fill.step(mid, fills, where="mid", color="tab:green", lw=1.2)
fill.set_ylabel("filter fill ratio")
# Up to 1 at most, but a lightly loaded filter's few percent stay readable.
fill.set_ylim(0, min(1.0, max(fills) * 1.15) if fills and max(fills) > 0 else 1.0)
fill.set_xlabel("packet time (s from the first packet)")
if not rows:
    top.text(0.5, 0.5, "no packets", transform=top.transAxes, ha="center")
for ax in axes:
    ax.grid(alpha=0.3)
fig.tight_layout()
png_file.save(fig, sys.argv[2], format="png")
