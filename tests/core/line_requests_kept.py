#!/usr/bin/env python3
"""Line requests are still in the machine code: objdump of
line_requests_kept.cpp's object, where each check's wrapper calls (or
inlines) a hot path that requests lines. Each check passes when one function
of its own (the wrapper, or the out-of-line body it calls) holds at least its
number of prefetch instructions, its own or those of the functions it calls
(read from the relocations of its calls: a compiler that keeps a call keeps
the request in it):

- the AVX-512 locate (lane_lines_avx512::locate_and_request): eight per
  group of keys; skipped where the body is not built (no x86 dispatch);
- the guarded epoch filter's bulk test_and_insert (BulkOps): the burst's
  head and the key D ahead;
- APBF's (its blocked form's blocks; apbf.hpp): the same two.

Exit 77 (skip) when no check's code is in the object.

usage: line_requests_kept.py OBJDUMP ARCHIVE"""
import re
import subprocess
import sys

CHECKS = [  # what, names of the functions that may hold its code, requests it needs
    ("AVX-512 locate", ("agebloom_check_locate_and_request", "agebloom::lane_lines_avx512::locate_and_request("), 8),
    ("guarded epoch bulk", ("agebloom_check_guarded_epoch_bulk", "BulkOps<agebloom::GuardedEpochFilter,"), 2),
    ("APBF bulk", ("agebloom_check_apbf_bulk", "BulkOps<agebloom::ApbfFilter,"), 2),
]


def main() -> int:
    objdump, archive = sys.argv[1], sys.argv[2]
    out = subprocess.run([objdump, "-d", "-r", "-C", "--no-show-raw-insn", archive], check=True,
                         capture_output=True, text=True).stdout
    functions = {}  # name -> instruction lines
    calls = {}  # name -> names of the functions its call relocations name
    current = None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            current = m.group(1)
            functions[current] = []
            calls[current] = set()
            continue
        if current is None:
            continue
        r = re.search(r"R_X86_64_(?:PLT32|PC32)\s+(.+?)(?:[-+]0x[0-9a-f]+)?$", line)
        if r:
            calls[current].add(r.group(1).strip())
        elif "\t" in line:
            functions[current].append(line)

    def requests(name, seen=()):
        own = sum(1 for ins in functions.get(name, ()) if re.search(r"\bprefetch\w*\s", ins))
        return own + sum(requests(c, seen + (name,)) for c in calls.get(name, ()) if c not in seen and c != name)
    checked = failed = 0
    for what, names, need in CHECKS:
        found = {name: body for name, body in functions.items() if any(n in name for n in names)}
        if not found:
            print(f"{what}: not in this build")
            continue
        checked += 1
        counts = {name: requests(name) for name in found}
        best = max(counts.values())
        print(f"{what}: " + "; ".join(f"{name}: {n}" for name, n in sorted(counts.items())))
        if best < need:
            print(f"FAIL: {what} requests lines ({need} prefetch instructions in one function and what it calls), "
                  f"{best} left in the machine code")
            failed += 1
    if checked == 0:
        print("no checked code in this build")
        return 77
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
