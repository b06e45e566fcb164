#!/usr/bin/env python3
"""How few bits per item a guarded epoch filter in one 64-byte line can take.

The one-line layouts (include/agebloom/filters/interleaved_epoch.hpp) keep
r + 1 segments as lanes of a line; a key's block in each segment is its lane
in the line it hashes to, so the number of keys in a block is Poisson and the
busy blocks set the FPR (Guarded Epoch Bloom Filters, Prop. 2, with each
segment a blocked filter). This script sizes every lane shape that fits a
line, for two in-lane patterns, to see what one access can reach at FPR 1%:

    partitioned   k parts of B/k bits, one bit each, k a power of two (what
                  "interleaved" (B = 64) and "interleaved-128" (B = 128) set;
                  must match agebloom-plan)
    distinct      k distinct uniform bits of the lane (the best a Bloom block
                  can do; needs rejection sampling, as two-line's patterns)

and, for comparison, an aligned pair of lines (128 bytes, lanes twice as
wide) with distinct bits. The two-line layout's overlapping blocks are in
lab/two_line_patterns.py (17.91 bits).

    python3 lab/one_line_lanes.py [W]     (default 1048576)
"""
import math
import sys

from two_line_patterns import chain  # same folder: the set-bit Markov chain


def distinct_g(bits, k, n_max):
    """g(n): chance that k distinct uniform bits of a `bits`-bit lane are all
    set after n keys set k distinct bits each (two_line_patterns.chain, the
    two-line model's Markov chain)."""
    return chain(bits, k, n_max)


def partitioned_g(bits, k, n_max):
    return [(1 - (1 - k / bits) ** n) ** k for n in range(n_max + 1)]


def fpr(blocks, load, g, segments):
    """Prop. 2 over segments of `blocks` blocks each holding Poisson(load/blocks) keys."""
    lam = load / blocks
    top = min(len(g) - 1, int(lam + 14 * math.sqrt(lam) + 20))
    p, seg = math.exp(-lam), 0.0
    for j in range(top + 1):
        seg += p * g[j]
        p *= lam / (j + 1)
    return 1 - (1 - seg) ** segments


def bits_per_item(window, lane_bits, segments, line_bits, g, target=0.01):
    """Fewest whole lines (of line_bits) meeting the target, as bits per item."""
    r = segments - 1
    lo, hi = 1, 64 * window
    while lo < hi:
        mid = (lo + hi) // 2
        if fpr(mid, window / r, g, segments) <= target:
            hi = mid
        else:
            lo = mid + 1
    return lo * line_bits / window


def best(window, lane_bits, segments, line_bits, pattern):
    ks = [k for k in (1, 2, 4, 8, 16, 32, 64) if k <= lane_bits // 2] if pattern == "partitioned" else range(2, 15)
    out = []
    for k in ks:
        g = (partitioned_g if pattern == "partitioned" else distinct_g)(lane_bits, k, 200)
        out.append((bits_per_item(window, lane_bits, segments, line_bits, g), k))
    return min(out)


if __name__ == "__main__":
    try:
        window = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
        if window < 64 or len(sys.argv) > 2:
            raise ValueError
    except ValueError:
        sys.exit("usage: one_line_lanes.py [W]  (a window as an integer >= 64)")
    print(f"W = {window}, FPR 1%: bits per item (best k)")
    print("%-34s %18s %18s" % ("shape", "partitioned", "distinct"))
    shapes = [("one line, 8 lanes of 64 (r = 7)", 64, 8, 512),
              ("one line, 4 lanes of 128 (r = 3)", 128, 4, 512),
              ("one line, 3 lanes of 170 (r = 2)", 170, 3, 512),
              ("one line, 5 lanes of 102 (r = 4)", 102, 5, 512),
              ("aligned pair, 4 lanes of 256 (r = 3)", 256, 4, 1024)]
    for name, lane, segs, line in shapes:
        cols = []
        for pattern in ("partitioned", "distinct"):
            if pattern == "partitioned" and lane & (lane - 1):
                cols.append("%18s" % "-")  # parts need a power-of-two lane
                continue
            b, k = best(window, lane, segs, line, pattern)
            cols.append("%12.2f (k=%d)" % (b, k))
        print("%-34s %s" % (name, " ".join(cols)), flush=True)
