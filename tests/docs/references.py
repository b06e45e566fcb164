#!/usr/bin/env python3
"""The repository's documents point at what exists.

* LICENSE holds the licence meson.build declares (Apache-2.0);
* every relative Markdown link resolves to a file or folder of the checkout;
* every repository path a document or comment names (docs/..., tools/...,
  include/..., ...) exists, so a moved file cannot leave stale references.

Usage: references.py SOURCE_ROOT. Exit 0 when all hold, 1 with the list.
"""
import os
import re
import subprocess
import sys

root = sys.argv[1]
os.chdir(root)
problems = []

declared = re.search(r"license\s*:\s*'([^']+)'", open("meson.build").read())
if not declared or declared.group(1) != "Apache-2.0":
    problems.append("meson.build: expected license : 'Apache-2.0'")
if not os.path.exists("LICENSE"):
    problems.append("LICENSE is missing")
else:
    head = open("LICENSE").read(400)
    if "Apache License" not in head or "Version 2.0" not in head:
        problems.append("LICENSE is not the Apache License 2.0 that meson.build declares")

try:
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split()
except (OSError, subprocess.CalledProcessError):
    files = [os.path.relpath(os.path.join(d, f)) for d, _, fs in os.walk(".") if "/build" not in d and "/.git" not in d
             for f in fs]

# Names a reader would take for a path but that are not one of ours:
# placeholders, DPDK's own tree, prose that happens to contain a slash.
NOT_PATHS = {"lab/plots/NAME.py", "examples/skeleton", "data/len"}
link = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
path = re.compile(r"(?<![\w/.-])((?:docs|dpdk_app|tools|include|lib|tests|scripts|data|lab|perf|examples|gpu)/"
                  r"[\w./+-]*[\w+-])")
for f in files:
    if f.startswith("data/") and not f.endswith(".md"):
        continue
    if not f.endswith((".md", ".cpp", ".hpp", ".h", ".c", ".cu", ".py", ".sh", ".build", ".txt")):
        continue
    try:
        text = open(f, errors="replace").read()
    except OSError:
        continue
    if f.endswith(".md"):
        for m in link.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(f), target))):
                problems.append(f"{f}: link to {target}, which does not exist")
    for m in path.finditer(text):
        target = m.group(1).rstrip(".")
        if target in NOT_PATHS or any(c in target for c in "*{}$<>"):
            continue
        if not os.path.exists(target):
            problems.append(f"{f}: names {target}, which does not exist")

for p in problems:
    print(p)
print(f"{len(problems)} stale references" if problems else "all references resolve")
sys.exit(1 if problems else 0)
