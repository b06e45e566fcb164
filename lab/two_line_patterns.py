#!/usr/bin/env python3
"""Bits per item at FPR 1% of the two-line layout under other key patterns.

The two-line guarded epoch filter (include/agebloom/filters/two_line_epoch.hpp)
sets `half` = 4 distinct bits, drawn uniformly, in a 128-bit lane of each of
two adjacent lines; a draw that repeats is drawn again (~9% of keys take that
rare path). Its model, straddled_fpr(), mixes Poisson line loads with g(n), the
chance that a query's bits are all set in a lane holding n keys. This script
runs the same recursion with g(n) for patterns that need no rejection, to see
what each would cost in memory before building one:

    distinct      4 distinct of 128 (today's pattern; must match agebloom-plan)
    replacement   4 draws of 128 with repeats allowed (no check, no rare path)
    sector32      one bit in each 32-bit quarter of the lane
    sector64x2    2 distinct bits in each 64-bit half of the lane

    python3 lab/two_line_patterns.py [W ...]     (default 1048576 67108864)

Guarded epoch semantics as in the filter: r = 3, r + 1 segments, each taking
W / r insertions; FP = 1 - (1 - fp_segment)^(r+1) (Guarded Epoch Bloom Filters,
Prop. 2). The search finds the fewest 64-byte lines meeting 1%.
"""
import math
import sys
from math import comb

LANE = 128


def chain(bits, half, n_max):
    """g(n) for `half` distinct uniform bits of a `bits`-bit lane: the set-bit
    count after n keys is a Markov chain with hypergeometric steps."""
    total = comb(bits, half)
    dist = [0.0] * (bits + 1)
    dist[0] = 1.0
    g = []
    for _ in range(n_max + 1):
        g.append(sum(dist[s] * comb(s, half) / total for s in range(half, bits + 1)))
        nxt = [0.0] * (bits + 1)
        for s, p in enumerate(dist):
            if p > 1e-300:
                for t in range(half + 1):
                    if s + t <= bits:
                        nxt[s + t] += p * comb(bits - s, t) * comb(s, half - t) / total
        dist = nxt
    return g


def replacement(n_max, draws=4):
    """g(n) for `draws` independent uniform positions (repeats allowed)."""
    step = []
    for s in range(LANE + 1):
        new = [1.0] + [0.0] * draws  # distribution of new bits so far
        for _ in range(draws):
            nxt = [0.0] * (draws + 1)
            for u, p in enumerate(new):
                hit = min(1.0, (s + u) / LANE)
                nxt[u] += p * hit
                if u < draws:
                    nxt[u + 1] += p * (1 - hit)
            new = nxt
        step.append(new)
    dist = [0.0] * (LANE + 1)
    dist[0] = 1.0
    g = []
    for _ in range(n_max + 1):
        g.append(sum(p * (s / LANE) ** draws for s, p in enumerate(dist)))
        nxt = [0.0] * (LANE + 1)
        for s, p in enumerate(dist):
            if p > 1e-300:
                for t in range(draws + 1):
                    if s + t <= LANE:
                        nxt[s + t] += p * step[s][t]
        dist = nxt
    return g


PATTERNS = {
    "distinct": lambda n: chain(LANE, 4, n),
    "replacement": replacement,
    "sector32": lambda n: [(1 - (31 / 32) ** k) ** 4 for k in range(n + 1)],
    "sector64x2": lambda n: [x * x for x in chain(64, 2, n)],
}


def segment_fp(lines, load, g_of):
    """straddled_fpr's mixture: line x's lane holds the keys starting at x-1
    and x, line x+1's those at x and x+1 (Poisson, mean load/lines)."""
    lam = load / lines
    top = int(lam + 12 * math.sqrt(lam) + 16)
    pois = [math.exp(-lam)]
    for j in range(1, top + 1):
        pois.append(pois[-1] * lam / j)
    g = g_of(2 * top)
    return sum(pois[b] * sum(pois[a] * g[a + b] for a in range(top + 1)) ** 2 for b in range(top + 1))


def bits_per_item(window, g_of, fpr=0.01, r=3):
    lo, hi = 2, window
    while lo < hi:
        mid = (lo + hi) // 2
        if 1 - (1 - segment_fp(mid, window / r, g_of)) ** (r + 1) <= fpr:
            hi = mid
        else:
            lo = mid + 1
    return lo * 512 / window


if __name__ == "__main__":
    try:
        windows = [int(w) for w in sys.argv[1:]] or [1 << 20, 1 << 26]
        if any(w < 16 for w in windows):
            raise ValueError
    except ValueError:
        sys.exit("usage: two_line_patterns.py [W ...]  (windows as integers >= 16)")
    print("%-12s" % "pattern" + "".join("%14s" % ("W=%d" % w) for w in windows))
    for name, g_of in PATTERNS.items():
        print("%-12s" % name + "".join("%14.3f" % bits_per_item(w, g_of) for w in windows))
