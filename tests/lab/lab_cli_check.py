#!/usr/bin/env python3
"""agebloom-lab as a user drives it: --seed draws other keys in every
experiment that hashes its own (APBF's and the time-limited filter's, seed 1
being the published runs'), option errors are exit 2 with one message, and an
output that cannot be written is exit 1 before the experiment runs, leaving
no partial file. Usage: lab_cli_check.py AGEBLOOM_LAB"""
import os
import subprocess
import sys
import tempfile

lab = os.path.abspath(sys.argv[1])
failures = []


def run(*args):
    return subprocess.run([lab, *args], capture_output=True, text=True)


def expect(cond, what):
    if not cond:
        failures.append(what)


with tempfile.TemporaryDirectory() as tmp:
    # --seed reaches the keys: another seed, another CSV; the same seed, the same CSV.
    for exp in ("001-figure4", "001-figure6"):
        outs = {}
        for tag, seed in (("a", "1"), ("b", "1"), ("c", "7")):
            r = run(exp, "--quick", "--seed", seed, "--out", os.path.join(tmp, tag))
            expect(r.returncode == 0, f"{exp} --seed {seed}: exit {r.returncode}\n{r.stderr}")
            with open(os.path.join(tmp, tag, exp + ".csv")) as f:
                outs[tag] = f.read()
        expect(outs["a"] == outs["b"], f"{exp}: the same seed gave another CSV")
        expect(outs["a"] != outs["c"], f"{exp}: --seed 7 gave seed 1's CSV (the seed is not used)")

    # Options: exit 2, one message naming the problem.
    for args, says in ((["000-table1", "--quick", "--filter", "interleaved"], "--filter chooses the rows of structures only"),
                       (["--list", "extra"], "--list takes no EXPERIMENT"),
                       (["001-figure4", "--seed", "+5"], "--seed needs a whole number"),
                       (["001-figure4", "--seed", "99999999999999999999999"], "past 2^64 - 1"),
                       # Given twice with two values (the last won without a word).
                       (["001-figure4", "--seed", "1", "--seed", "2"], "--seed given twice ('1', then '2')"),
                       (["001-figure4", "--out", "a", "--out", "b"], "--out given twice ('a', then 'b')")):
        r = run(*args)
        expect(r.returncode == 2 and says in r.stderr, f"{args}: exit {r.returncode}, stderr {r.stderr!r}")
    r = run("-h")
    expect(r.returncode == 0 and r.stdout.startswith("usage:"), f"-h: exit {r.returncode}")
    r = run("--version")
    expect(r.returncode == 0 and r.stdout.startswith("agebloom-lab ") and r.stdout.count("\n") == 1,
           f"--version: exit {r.returncode}, stdout {r.stdout!r}")
    # --filter adds structures: it may be given again.
    r = run("structures", "--quick", "--filter", "apbf", "--filter", "interleaved", "--out", os.path.join(tmp, "two"))
    expect(r.returncode == 0, f"--filter twice: exit {r.returncode}\n{r.stderr}")

    # --quick without --out writes beside the full run's reports, not over them:
    # lab-out/quick/, lab-out's own 001-figure4.* left as they were.
    cwd = os.path.join(tmp, "cwd")
    os.makedirs(os.path.join(cwd, "lab-out"))
    full_csv = os.path.join(cwd, "lab-out", "001-figure4.csv")
    with open(full_csv, "w") as f:
        f.write("the full run's\n")
    r = subprocess.run([lab, "001-figure4", "--quick"], capture_output=True, text=True, cwd=cwd)
    expect(r.returncode == 0, f"--quick, no --out: exit {r.returncode}\n{r.stderr}")
    expect(os.path.getsize(os.path.join(cwd, "lab-out", "quick", "001-figure4.csv")) > 0,
           "--quick, no --out: no lab-out/quick/001-figure4.csv")
    with open(full_csv) as f:
        expect(f.read() == "the full run's\n", "--quick, no --out: the full run's CSV was overwritten")

    # An output that is a folder: exit 1 before running, saying which, and no CSV left behind.
    out = os.path.join(tmp, "blocked")
    os.makedirs(os.path.join(out, "001-figure4.md"))
    r = run("001-figure4", "--quick", "--out", out)
    expect(r.returncode == 1 and "001-figure4.md exists and is not a file" in r.stderr,
           f"md folder: exit {r.returncode}, stderr {r.stderr!r}")
    expect(not os.path.exists(os.path.join(out, "001-figure4.csv")), "md folder: a CSV was left behind")
    expect("001-figure4:" not in r.stdout and "reported at" not in r.stdout, "md folder: the experiment ran first")
    os.rmdir(os.path.join(out, "001-figure4.md"))
    os.makedirs(os.path.join(out, "001-figure4.png"))
    r = run("001-figure4", "--quick", "--out", out)
    expect(r.returncode == 1 and "001-figure4.png exists and is not a file" in r.stderr and "Traceback" not in r.stderr,
           f"png folder: exit {r.returncode}, stderr {r.stderr!r}")
    # structures also writes structures-bits.*: checked too.
    os.makedirs(os.path.join(out, "structures-bits.csv"))
    r = run("structures", "--quick", "--out", out)
    expect(r.returncode == 1 and "structures-bits.csv exists and is not a file" in r.stderr,
           f"structures-bits folder: exit {r.returncode}, stderr {r.stderr!r}")

    # An --out that is a file: said as such (not "File exists"), exit 1.
    not_a_folder = os.path.join(tmp, "a-file")
    open(not_a_folder, "w").close()
    r = run("001-figure4", "--quick", "--out", not_a_folder)
    expect(r.returncode == 1 and f"cannot create {not_a_folder}: it exists and is not a folder" in r.stderr,
           f"--out a file: exit {r.returncode}, stderr {r.stderr!r}")

    # A stdout that cannot take the headline numbers is a failure.
    with open("/dev/full", "w") as full:
        r = subprocess.run([lab, "001-figure4", "--quick", "--out", os.path.join(tmp, "full")], stdout=full,
                           stderr=subprocess.PIPE, text=True)
    expect(r.returncode == 1, f">/dev/full: exit {r.returncode}")

for f in failures:
    print("FAIL:", f)
print(f"lab_cli_check: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
