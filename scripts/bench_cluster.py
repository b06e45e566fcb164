#!/usr/bin/python3
"""The replay scale-out figures of docs/SCALING.md: one agebloom-replay
against agebloom-cluster on a local cluster of 1 and 2 workers, over the
same trace set, and what the split costs.

    scripts/bench_cluster.py [--traces T] [--copies K] [--shards N] [--rounds R] [--build DIR]

The trace set is made from data/traces/pcapplusplus_example.pcap: T traces
("hours"), each K copies of the capture one after the other in time, every
copy's IPv4 source addresses changed (second byte XOR the copy's number) so
that each copy brings keys of its own, as a new hour would. Each run is
repeated R times; the median is printed, as a markdown table, with the
machine it ran on.
"""
import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_pcap(path):
    """(header, [(sec, usec, caplen, wirelen, bytes)]) of a little-endian microsecond pcap."""
    data = open(path, "rb").read()
    if data[:4] != b"\xd4\xc3\xb2\xa1":
        sys.exit(f"{path}: not a little-endian microsecond pcap")
    records, at = [], 24
    while at + 16 <= len(data):
        sec, usec, cap, wire = struct.unpack_from("<IIII", data, at)
        records.append((sec, usec, cap, wire, data[at + 16:at + 16 + cap]))
        at += 16 + cap
    return data[:24], records


def make_traces(folder, traces, copies):
    header, records = read_pcap(os.path.join(ROOT, "data", "traces", "pcapplusplus_example.pcap"))
    span = records[-1][0] - records[0][0] + 1  # seconds a copy lasts, rounded up
    paths = []
    for t in range(traces):
        path = os.path.join(folder, f"hour{t:02d}.pcap")
        with open(path, "wb") as f:
            f.write(header)
            for c in range(copies):
                copy = t * copies + c
                for sec, usec, cap, wire, frame in records:
                    # Ethernet + IPv4: the source address's second byte.
                    if cap >= 34 and frame[12:14] == b"\x08\x00":
                        frame = frame[:27] + bytes([frame[27] ^ (copy & 0xFF)]) + frame[28:]
                    f.write(struct.pack("<IIII", sec + copy * span, usec, cap, wire) + frame)
        paths.append(path)
    return paths


def timed(argv):
    start = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True)
    wall = time.monotonic() - start
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr}")
    return wall, json.loads(r.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--traces", type=int, default=8, help="traces in the set (hours)")
    p.add_argument("--copies", type=int, default=25, help="copies of the capture in each trace")
    p.add_argument("--shards", type=int, default=4, help="agebloom-cluster --shards")
    p.add_argument("--rounds", type=int, default=3, help="runs of each row; the median is printed")
    p.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build folder")
    p.add_argument("--key", default="flow", help="agebloom-replay --key")
    p.add_argument("--ttl", default="10s", help="agebloom-replay --ttl")
    args = p.parse_args()
    # Counts of at least one: --rounds 0 ended in an IndexError, --copies 0
    # printed a table of empty traces with exit 0.
    for name in ("traces", "copies", "shards", "rounds"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1, not {getattr(args, name)}")
    replay = os.path.join(args.build, "tools", "agebloom-replay")
    cluster = os.path.join(args.build, "tools", "agebloom-cluster")
    for tool in (replay, cluster):
        if not os.access(tool, os.X_OK):
            p.error(f"{tool} was not built (--build is {args.build})")
    folder = tempfile.mkdtemp(prefix="agebloom-bench-cluster-")
    try:
        traces = make_traces(folder, args.traces, args.copies)
        size = sum(os.path.getsize(t) for t in traces)
        common = ["--key", args.key, "--ttl", args.ttl, "--seed", "1", "--json"]
        rows = []  # (run, wall s all in, split s or None, replay s, packets)
        for truth in ([], ["--truth"]):
            label = " --truth" if truth else ""
            one = [timed([replay, *traces, *common, *truth, "--no-progress"]) for _ in range(args.rounds)]
            packets = one[0][1]["packets"]
            wall = statistics.median(w for w, _ in one)
            rows.append((f"agebloom-replay, one process{label}", wall, None, wall, packets))
            for workers in (1, 2):
                runs = [timed([cluster, "replay", *traces, "--shards", str(args.shards), *common, *truth,
                               "--workers", str(workers), "--workdir", folder]) for _ in range(args.rounds)]
                rows.append((f"agebloom-cluster, {workers} worker{'s' if workers > 1 else ''}, {args.shards} shards"
                             f"{label}", statistics.median(w for w, _ in runs),
                             statistics.median(j["split"]["seconds"] for _, j in runs),
                             statistics.median(j["replay"]["seconds"] for _, j in runs), packets))
        cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                   "unknown")
        print(f"{len(traces)} traces, {packets} packets, {size / 2**20:.0f} MiB; --key {args.key} --ttl {args.ttl}; "
              f"median of {args.rounds}; {os.cpu_count()} CPUs ({cpu}); load average {os.getloadavg()[0]:.2f}\n")
        print("| run | wall s, all in | split s | replay s | packets/s, all in | packets/s, split + replay |")
        print("|---|---|---|---|---|---|")
        for name, wall, split, rep, n in rows:
            work = rep + (split or 0)
            print(f"| {name} | {wall:.2f} | {'' if split is None else f'{split:.2f}'} | {rep:.2f} | "
                  f"{n / wall:,.0f} | {n / work:,.0f} |")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
