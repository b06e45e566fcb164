#!/usr/bin/env python3
"""agebloom-lab as a user drives it: --seed draws other keys in every
experiment that hashes its own (APBF's and the time-limited filter's, seed 1
being the published runs'), option errors are exit 2 with one message, and an
output that cannot be written is exit 1 before the experiment runs, leaving
no partial file; a run stopped or cut short leaves the earlier results as
they were. Usage: lab_cli_check.py AGEBLOOM_LAB"""
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

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
    # So are the usage and the version (they exited 0).
    for flag in ("--help", "--version"):
        with open("/dev/full", "w") as full:
            r = subprocess.run([lab, flag], stdout=full, stderr=subprocess.PIPE, text=True)
        expect(r.returncode == 1 and "cannot write to standard output" in r.stderr,
               f"{flag} >/dev/full: exit {r.returncode}, stderr {r.stderr!r}")

    # A closed standard output (`>&-`): the CSV opened next took its
    # descriptor, and the headline lines were written into the data.
    closed = os.path.join(tmp, "closed")
    r = subprocess.run(["sh", "-c", f"exec '{lab}' 001-figure4 --quick --out '{closed}' >&-"], capture_output=True,
                       text=True)
    expect(r.returncode == 1 and "cannot write to standard output" in r.stderr,
           f">&-: exit {r.returncode}, stderr {r.stderr!r}")
    with open(os.path.join(closed, "001-figure4.csv")) as f:
        rows = f.read().splitlines()[1:]
    expect(rows and all(c in "0123456789.,-e+" for row in rows for c in row),
           ">&-: the CSV holds text that is not data (the headline lines?)")

    # The published run's files, kept aside to compare with what each failed
    # run below leaves.
    published = os.path.join(tmp, "published")
    r = run("001-table2", "--quick", "--out", published)
    expect(r.returncode == 0, f"001-table2 --quick: exit {r.returncode}\n{r.stderr}")

    def files_of(folder):
        out = {}
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                out[name] = f.read()
        return out
    before = files_of(published)

    # Stopped by SIGINT once its files are open (a full run takes minutes):
    # the earlier CSV and markdown were left empty or cut; now they stay as
    # they were and the partial files are gone.
    p = subprocess.Popen([lab, "001-table2", "--out", published], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    partial = os.path.join(published, "001-table2.csv.partial")
    for _ in range(600):
        if os.path.exists(partial) or p.poll() is not None:
            break
        time.sleep(0.05)
    expect(os.path.exists(partial), "001-table2: no partial CSV seen while running")
    p.send_signal(signal.SIGINT)
    code = p.wait(timeout=60)
    expect(code == -signal.SIGINT, f"SIGINT: exit {code}, not the signal's")
    expect(files_of(published) == before, f"SIGINT: the earlier results changed: {sorted(files_of(published))}")

    # A write cut short (a file-size limit stands in for a full disk):
    # exit 1 naming the file and the reason, the earlier results as they were.
    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (600, 600))
    r = subprocess.run([lab, "001-table2", "--quick", "--out", published], capture_output=True, text=True,
                       preexec_fn=small_files)
    expect(r.returncode == 1 and "cannot write " + os.path.join(published, "001-table2.csv") + ": File too large"
           in r.stderr, f"file-size limit: exit {r.returncode}, stderr {r.stderr!r}")
    expect(files_of(published) == before, f"file-size limit: the earlier results changed: {sorted(files_of(published))}")

    # A PNG that cannot be drawn (here: a python without matplotlib, exit 3)
    # takes the earlier run's PNG with it: it drew the data just replaced.
    no_plot = os.path.join(tmp, "no-matplotlib")
    with open(no_plot, "w") as f:
        f.write("#!/bin/sh\nexit 3\n")
    os.chmod(no_plot, 0o755)
    r = subprocess.run([lab, "001-table2", "--quick", "--out", published], capture_output=True, text=True,
                       env={**os.environ, "AGEBLOOM_PYTHON": no_plot})
    expect(r.returncode == 1 and "removed the earlier" in r.stderr, f"no matplotlib: exit {r.returncode}, {r.stderr!r}")
    expect(not os.path.exists(os.path.join(published, "001-table2.png")), "no matplotlib: the stale PNG is still there")
    expect(os.path.exists(os.path.join(published, "001-table2.csv")), "no matplotlib: the data is gone too")

    # 000-real-log over a log too short for its window (a quarter of it) or a
    # folder where the log should be: said, not a silent exit 1.
    short = os.path.join(tmp, "short-data", "logs")
    os.makedirs(short)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "logs",
                       "elastic-examples_apache_logs.log")
    with open(src) as f, open(os.path.join(short, "elastic-examples_apache_logs.log"), "w") as g:
        g.writelines(f.readlines()[:2000])
    r = subprocess.run([lab, "000-real-log", "--quick", "--out", os.path.join(tmp, "short-out")], capture_output=True,
                       text=True, env={**os.environ, "AGEBLOOM_DATA": os.path.dirname(short)})
    expect(r.returncode == 1 and "a quarter of the log's 2000 records" in r.stderr,
           f"short log: exit {r.returncode}, stderr {r.stderr!r}")
    folder = os.path.join(tmp, "folder-data", "logs", "elastic-examples_apache_logs.log")
    os.makedirs(folder)
    r = subprocess.run([lab, "000-real-log", "--quick", "--out", os.path.join(tmp, "folder-out")], capture_output=True,
                       text=True, env={**os.environ, "AGEBLOOM_DATA": os.path.join(tmp, "folder-data")})
    expect(r.returncode == 1 and "is a folder, not a log" in r.stderr, f"log folder: exit {r.returncode}, {r.stderr!r}")

for f in failures:
    print("FAIL:", f)
print(f"lab_cli_check: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
