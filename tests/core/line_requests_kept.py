#!/usr/bin/env python3
"""The AVX-512 locate still requests its lines: objdump of
line_requests_kept.cpp's object, whose wrapper calls (or inlines)
lane_lines_avx512::locate_and_request, must show a prefetch for each of the
eight lines of its loop, in one function's code (the wrapper's, where the
locate is inlined into it, else the locate's own). Exit 77 (skip) where the
body is not built (no x86 intrinsics dispatch) or objdump is missing.

usage: line_requests_kept.py OBJDUMP ARCHIVE"""
import re
import subprocess
import sys

WANTED = ("agebloom_check_locate_and_request", "agebloom::lane_lines_avx512::locate_and_request(")
LINES_PER_GROUP = 8  # the loop locates and requests eight keys' lines


def main() -> int:
    objdump, archive = sys.argv[1], sys.argv[2]
    out = subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", archive], check=True,
                         capture_output=True, text=True).stdout
    functions = {}  # name -> instruction lines
    current = None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            current = m.group(1)
            functions[current] = []
        elif current is not None and "\t" in line:
            functions[current].append(line)
    found = {name: body for name, body in functions.items() if any(w in name for w in WANTED)}
    if not found:
        print("no AVX-512 locate body in this build: nothing to check")
        return 77
    counts = {name: sum(1 for ins in body if re.search(r"\bprefetch\w*\s", ins)) for name, body in found.items()}
    requests = max(counts.values())
    print("line requests in the code of: " + "; ".join(f"{name}: {n}" for name, n in sorted(counts.items())))
    if requests < LINES_PER_GROUP:
        print(f"FAIL: the locate loop requests {LINES_PER_GROUP} lines per group; "
              f"{requests} prefetch instructions left in the machine code")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
