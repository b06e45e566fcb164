#!/usr/bin/env python3
"""The two filter tables of docs/PERFORMANCE.md ("test_and_insert, bulk, 0%
repeats" and "All operations at W = 1M"), in Markdown, from the JSON of a
`scripts/bench.sh` run, so that the page is rewritten from a run rather than
by hand.

usage: scripts/bench_tables.py BENCH.json

Rows: every subject of the run in the order below (registry structures, their
forced-ISA twins, the memory floors, the rte_member peers); a subject the run
did not measure is left out. Ratios are CPU cycles against rte_member HT
cache's bulk call in the same run, as bench.sh prints them."""
import json
import signal
import sys

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # | head ends the output, not in a traceback

ORDER = [
    "interleaved", "interleaved-swept", "interleaved-128", "two-line", "interleaved-apbf", "pocket-epoch", "queue-epoch",
    "guarded-epoch", "guarded-epoch-blocked", "apbf", "apbbf", "ring", "tlbf",
    "counting", "stable", "tbf", "btbf", "clock4",
]
PEERS = ["rte_member_vbf_pair", "rte_member_ht_cache"]


def main() -> int:
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(next(l for l in __doc__.splitlines() if l.startswith("usage:")), file=sys.stderr)
        return 2
    # Anything but a Google Benchmark JSON with runs is one line and exit 1,
    # checked whole before the first row is printed (a redirect would keep a
    # table cut at the first bad run). A case that reported an error has no
    # counters: it is named on stderr and left out.
    try:
        runs = json.load(open(sys.argv[1]))["benchmarks"]
        by = {}
        for r in runs:
            if r.get("run_type", "iteration") != "iteration":
                continue
            if r.get("error_occurred"):
                print(f"bench_tables.py: skipped {r['name']}: {r.get('error_message', 'an error')}", file=sys.stderr)
                continue
            by[r["name"].removesuffix("/real_time")] = r
        windows = set()
        for n, r in by.items():
            if n.startswith("test_and_insert/"):
                if "/W:" not in n:
                    raise ValueError(f"{n!r} names no window (/W:)")
                windows.add(int(n.split("/W:")[1].split("/")[0]))
                # The first table's rows: every field they print.
                if n.split("/")[2] == "bulk" and n.endswith("/hit:0"):
                    for field in ("cpu_cycles_per_op", "bits_per_item", "fpr", "live_fnr", "items_per_second"):
                        if not isinstance(r.get(field), (int, float)):
                            raise ValueError(f"{n}: {field} is {r.get(field)!r}, not a number")
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        print(f"bench_tables.py: {sys.argv[1]}: not an agebloom-bench JSON ({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    if not any(n.startswith("test_and_insert/") for n in by):
        print(f"bench_tables.py: {sys.argv[1]}: no test_and_insert runs to tabulate", file=sys.stderr)
        return 1
    subjects = {n.split("/")[1] for n in by if n.startswith("test_and_insert/")}
    known = ORDER + PEERS
    twins = sorted(s for s in subjects if s not in known and not s.startswith("floor-"))
    floors = sorted(s for s in subjects if s.startswith("floor-"))
    rows = [s for s in ORDER if s in subjects] + twins + floors + [s for s in PEERS if s in subjects]
    windows = sorted(windows)

    def get(op, s, form, w, hit, counter="cpu_cycles_per_op"):
        r = by.get(f"{op}/{s}/{form}/W:{w}/hit:{hit}")
        return r.get(counter) if r else None

    def num(x, fmt="{:.0f}"):
        return "–" if x is None else fmt.format(x)

    print("| W | subject | bits/item | FPR (measured) | model FPR | live FNR | t&i bulk cyc/key | ratio "
          "| t&i bulk_hashed cyc/key | ratio | Mkeys/s (bulk) |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for w in windows:
        ht = get("test_and_insert", "rte_member_ht_cache", "bulk", w, 0)
        for s in rows:
            r = by.get(f"test_and_insert/{s}/bulk/W:{w}/hit:0")
            if not r:
                continue
            c = r["cpu_cycles_per_op"]
            h = get("test_and_insert", s, "bulk_hashed", w, 0)
            model = r.get("model_fpr")
            print(f"| {w} | {s} | {r['bits_per_item']:.1f} | {r['fpr']:.4f} | {num(model, '{:.4f}')} "
                  f"| {r['live_fnr']:.3f} | {c:.0f} | {num(c / ht if ht else None, '{:.2f}')} "
                  f"| {num(h)} | {num(h / ht if ht and h else None, '{:.2f}')} "
                  f"| {r['items_per_second'] / 1e6:.1f} |")

    w = 1 << 20
    if w not in windows:
        return 0
    print()
    print("| subject | insert scalar | insert bulk | contains hit scalar | contains hit bulk | contains miss scalar "
          "| contains miss bulk | t&i scalar | t&i bulk | t&i bulk 50% hits | t&i bulk hashed |")
    print("|---|" + "---:|" * 10)
    for s in rows:
        cells = [get("insert", s, "scalar", w, 0), get("insert", s, "bulk", w, 0),
                 get("contains", s, "scalar", w, 100), get("contains", s, "bulk", w, 100),
                 get("contains", s, "scalar", w, 0), get("contains", s, "bulk", w, 0),
                 get("test_and_insert", s, "scalar", w, 0), get("test_and_insert", s, "bulk", w, 0),
                 get("test_and_insert", s, "bulk", w, 50), get("test_and_insert", s, "bulk_hashed", w, 0)]
        if all(c is None for c in cells):
            continue
        print(f"| {s} | " + " | ".join(num(c) for c in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
