#!/usr/bin/python3
"""agebloom-cluster as a user runs it, on a local Dask cluster of 2 workers.

* with a time window the merged ground truth equals one agebloom-replay's
  over the same traces, exactly, live FNR 0; with a count window each shard
  keeps its own window (the sum of --shard I/N replays), live FNR 0;
* nothing is left in the work folder; the progress bar is drawn on a
  terminal only, never into --json's output;
* a cluster of its own (dask-scheduler and dask-worker processes) through
  --scheduler, and the same scheduler without workers (a bounded wait);
* bad input: --shards 0, an unreadable trace, a file that is no capture (a
  failed task, named), traces of different link types, options
  agebloom-replay refuses, a scheduler that cannot be reached (a bounded
  wait), a task that fails in stage 2 (named), one that kills every worker
  that runs it (named);
* a worker killed in each stage: Dask reruns its task, the result is
  unchanged.

Usage: cluster_test.py AGEBLOOM_CLUSTER AGEBLOOM_REPLAY SOURCE_ROOT. Exits 77
(skipped) without python3-distributed.
"""
import contextlib
import glob
import json
import os
import pty
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

CLUSTER, REPLAY = sys.argv[1], os.path.abspath(sys.argv[2])
ROOT = os.path.abspath(sys.argv[3])  # agebloom-cluster hands the workers absolute paths
TRACES = [os.path.join(ROOT, "data", "traces", n)
          for n in ("pcapplusplus_example.pcap", "pcapplusplus_4KHttpRequests.pcap")]
# Larger captures in time order, used when the shared data set is beside the
# checkout; the tests hold without them.
SHARED = os.path.join(ROOT, "..", "shared", "data", "pcap")
for name in ("ddos/amp.UDP.isakmp.pcap", "malware_c2/slips_test-cc-capture-1.pcap"):
    if os.path.exists(os.path.join(SHARED, name)):
        TRACES.append(os.path.abspath(os.path.join(SHARED, name)))

LOCAL = ["--workers", "2"]


def cluster(*args, **kw):
    return subprocess.run([CLUSTER, "replay", *args], capture_output=True, text=True, timeout=240, **kw)


def replay(*args):
    r = subprocess.run([REPLAY, *args, "--json", "--no-progress"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def report(r):
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return json.loads(r.stdout)


def write_raw_ip_capture(path):
    """One IPv4 packet in a pcap of link type RAW (101): not Ethernet."""
    ip = bytes([0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2])
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 101))
        f.write(struct.pack("<IIII", 1, 0, len(ip), len(ip)) + ip)


def wrapper(folder, body):
    """A stand-in for agebloom-replay (--replay) that runs `body` (sh), then the real one."""
    path = os.path.join(folder, "replay-wrapper")
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\n{body}\nexec {REPLAY} \"$@\"\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


class Cluster(unittest.TestCase):
    tmp = None
    ttl_run = None  # the time-window run, shared with the killed-worker test

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="agebloom-cluster-test-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def ttl(self):
        if Cluster.ttl_run is None:
            work = os.path.join(self.tmp, "work")
            os.makedirs(work)
            Cluster.ttl_run = report(cluster(*TRACES, "--shards", "4", "--key", "flow", "--ttl", "10s", "--truth",
                                             "--json", "--seed", "5", "--workdir", work, *LOCAL))
            # Nothing left behind on success.
            self.assertEqual(os.listdir(work), [])
        return Cluster.ttl_run

    def test_time_window_truth_equals_one_machine(self):
        one = replay(*TRACES, "--key", "flow", "--ttl", "10s", "--truth", "--seed", "5")
        merged = self.ttl()
        for k in ("packets", "keyed", "unparsed", "truth_duplicates", "first_occurrences", "expired_occurrences",
                  "distinct_keys", "time_regressions", "snapped"):
            self.assertEqual(merged[k], one[k], k)
        self.assertEqual(merged["live_fnr"], 0.0)
        self.assertEqual(merged["window_scope"], "time window")
        self.assertEqual(len(merged["per_shard"]), 4)
        self.assertEqual(sum(s["packets"] for s in merged["per_shard"]), one["packets"])
        self.assertEqual(merged["cluster"]["workers"], 2)
        self.assertEqual(merged["split"]["tasks"], len(TRACES))
        # The rates come from the summed counts.
        self.assertEqual(merged["fpr"], merged["first_positives"] / merged["first_occurrences"])
        # Another key mode, in text: one summary line.
        r = cluster(*TRACES[:2], "--shards", "3", "--key", "src-ip", "--ttl", "100ms", "--truth", "--seed", "2",
                    *LOCAL)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stdout)
        one = replay(*TRACES[:2], "--key", "src-ip", "--ttl", "100ms", "--truth", "--seed", "2")
        self.assertIn(f"{one['truth_duplicates']} repeats within the window, live FNR 0,", lines[0])
        self.assertIn(f"{one['packets']} packets from 2 traces in 3 shards on 2 workers", lines[0])
        # Each stage with its own rate, and the whole run's said as such.
        self.assertRegex(lines[0], r"; split [0-9.e+-]+ s \([0-9]+ packets/s\), replay [0-9.e+-]+ s "
                                   r"\([0-9]+ packets/s\), [0-9]+ packets/s in all; --seed ")

    def test_count_window_is_per_shard(self):
        merged = report(cluster(*TRACES[:2], "--shards", "3", "--key", "src-ip", "--window", "100", "--truth",
                                "--json", "--seed", "3", *LOCAL))
        self.assertEqual(merged["window_scope"], "per-shard count window")
        self.assertIn("per-shard count window", merged["guarantee"])
        self.assertEqual(merged["live_fnr"], 0.0)
        # Each shard counts its own insertions: the sum of the --shard I/N
        # replays over the whole traces, not one machine's count window.
        shards = [replay(*TRACES[:2], "--key", "src-ip", "--window", "100", "--truth", "--seed", "3", "--shard",
                         f"{i}/3") for i in range(3)]
        for k in ("packets", "truth_duplicates", "expired_occurrences", "suppressed"):
            self.assertEqual(merged[k], sum(s[k] for s in shards), k)

    def test_progress_on_a_terminal_only(self):
        master, slave = pty.openpty()
        drawn = []
        reader = threading.Thread(target=lambda: drawn.append(self._drain(master)))
        reader.start()
        r = subprocess.run([CLUSTER, "replay", TRACES[1], "--shards", "2", "--key", "flow", "--ttl", "1s",
                            "--json", *LOCAL], stdout=subprocess.PIPE, stderr=slave, text=True, timeout=240)
        os.close(slave)
        reader.join()
        os.close(master)
        self.assertEqual(r.returncode, 0)
        json.loads(r.stdout)  # the report alone on stdout
        self.assertIn("% Completed", drawn[0])
        self.assertIn("stage 2 (replay)", drawn[0])
        piped = cluster(TRACES[1], "--shards", "2", "--key", "flow", "--ttl", "1s", "--json", *LOCAL)
        self.assertEqual(piped.returncode, 0)
        self.assertNotIn("Completed", piped.stderr)

    @staticmethod
    def _drain(fd):
        out = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        return out.decode(errors="replace")

    def test_bad_options_exit_two_before_any_cluster(self):
        for args, says in ((["--shards", "0"], "--shards must be between 1 and 512"),
                           (["--shards", "2", "--fpr", "2"], "--fpr"),
                           (["--shards", "2", "--filter", "bogus"], "unknown filter"),
                           (["--shards", "2", "--scheduler", "tcp://127.0.0.1:1"], "needs --workdir"),
                           (["--shards", "2", "--verdicts", "x"], "unrecognized arguments"),
                           (["--shards", "2", "--bpf", "bogus(("], "can't parse filter expression"),
                           (["--shards", "2", "--timeout", "nan"], "--timeout must be a positive number"),
                           (["--shards", "2", "--workers", "100000"], "more than 4 per core"),
                           # Given twice with two values (argparse let the last win without a word).
                           (["--shards", "2", "--shards", "3"], "--shards given twice ('2', then '3')"),
                           (["--shards", "2", "--ttl", "2s"], "--ttl given twice ('1s', then '2s')"),
                           (["--shards", "2", "--bpf", "tcp", "--bpf", "udp"], "'(tcp) and (udp)'"),
                           # No abbreviations: --shard is agebloom-replay's I/N, not --shards.
                           (["--shards", "2", "--shard", "0/2"], "unrecognized arguments: --shard 0/2")):
            start = time.monotonic()
            r = cluster(TRACES[0], "--key", "flow", "--ttl", "1s", *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(says, r.stderr)
            self.assertLess(time.monotonic() - start, 5, args)  # refused before a cluster starts
        # The same value twice agrees with itself: past the options (no trace of that name).
        r = cluster("/no/such.pcap", "--key", "flow", "--ttl", "1s", "--ttl", "1s", "--shards", "2")
        self.assertNotIn("given twice", r.stderr)
        self.assertIn("/no/such.pcap", r.stderr)
        r = subprocess.run([CLUSTER, "--version"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^agebloom-cluster \d+\.\d+\.\d+\n$")
        # A standard output that cannot take --version or --help: said, exit 1, no traceback.
        for args in (["--version"], ["replay", "--help"]):
            with open("/dev/full", "w") as full:
                r = subprocess.run([CLUSTER, *args], stdout=full, stderr=subprocess.PIPE, text=True)
            self.assertEqual(r.returncode, 1, (args, r.stderr))
            self.assertIn("cannot write to standard output", r.stderr)
            self.assertNotIn("Traceback", r.stderr)
        # --window and --ttl exclude each other; one is needed.
        self.assertEqual(cluster(TRACES[0], "--key", "flow", "--shards", "2").returncode, 2)
        # A --workdir that is a file.
        afile = os.path.join(self.tmp, "afile")
        open(afile, "w").close()
        r = cluster(TRACES[0], "--key", "flow", "--ttl", "1s", "--shards", "2", "--workdir", afile)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("is not a folder", r.stderr)
        # Standard input cannot be split and handed to workers.
        r = cluster("-", "--key", "flow", "--ttl", "1s", "--shards", "2")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("'-' (standard input) cannot be split", r.stderr)

    def test_unreadable_traces(self):
        missing = os.path.join(self.tmp, "missing.pcap")
        r = cluster(TRACES[0], missing, "--shards", "2", "--key", "flow", "--ttl", "1s", *LOCAL)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"trace {missing}: cannot read it", r.stderr)
        # Readable but no capture: refused before any cluster starts, naming it.
        text = os.path.join(self.tmp, "text.pcap")
        with open(text, "w") as f:
            f.write("not a capture\n")
        work = os.path.join(self.tmp, "work-bad")
        os.makedirs(work)
        r = cluster(TRACES[0], text, "--shards", "2", "--key", "flow", "--ttl", "1s", "--workdir", work, *LOCAL)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"cannot open capture '{text}'", r.stderr)
        self.assertEqual(os.listdir(work), [])
        # A split task that fails (here a --replay that refuses --split but
        # passes the checks): the error names the task's trace.
        failing = wrapper(self.tmp, 'for a in "$@"; do [ "$a" = --check ] && exec ' + REPLAY + ' "$@"; done\n'
                                    'echo "split refused" >&2; exit 1')
        r = cluster(TRACES[0], "--shards", "2", "--key", "flow", "--ttl", "1s", "--workdir", work, "--replay",
                    failing, *LOCAL)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"stage 1 (split) failed: trace {TRACES[0]}: agebloom-replay exited 1: split refused", r.stderr)
        self.assertEqual(os.listdir(work), [])
        # A --workdir that did not exist is made, and removed with the run's
        # own folder, failed or not: nothing is left behind.
        new = os.path.join(self.tmp, "work-new")
        for trace, code in ((text, 1), (TRACES[0], 0)):
            r = cluster(trace, "--shards", "2", "--key", "flow", "--ttl", "1s", "--workdir",
                        os.path.join(new, "a", "b"), *LOCAL)
            self.assertEqual(r.returncode, code, r.stderr)
            self.assertFalse(os.path.exists(new), trace)

    def test_mixed_link_types(self):
        raw = os.path.join(self.tmp, "raw.pcap")
        write_raw_ip_capture(raw)
        r = cluster(TRACES[0], raw, "--shards", "2", "--key", "src-ip", "--ttl", "1s", *LOCAL)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("different link types", r.stderr)
        self.assertIn(f"{raw} has 12 (RAW)", r.stderr)  # agebloom-replay's check, before any cluster starts

    def test_stopped_runs_leave_nothing_running(self):
        # A split task that runs until stopped (a --replay wrapper that marks
        # its start, then sleeps as the replay would work), stopped by SIGTERM
        # and by SIGINT to the command alone: exit 143 / 130 saying so, no
        # task process left, the run folder removed. The signal is sent again
        # every 50 ms until the command exits, as an impatient user or a
        # supervisor would: those that land in the cleanup (closing the
        # cluster takes a second) are held until it is done, not raised in
        # the middle of it (which left the run folder behind).
        mark = os.path.join(self.tmp, "split-started")
        sleeper = wrapper(self.tmp, 'for a in "$@"; do [ "$a" = --check ] && exec ' + REPLAY + ' "$@"; done\n'
                                    f'touch {mark}; exec sleep 47.25')
        for sig, code, says in ((15, 143, "terminated (SIGTERM)"), (2, 130, "interrupted (SIGINT)")):
            work = os.path.join(self.tmp, f"work-stop-{sig}")
            os.makedirs(work)
            with contextlib.suppress(FileNotFoundError):
                os.remove(mark)
            p = subprocess.Popen([CLUSTER, "replay", TRACES[0], "--shards", "2", "--key", "flow", "--ttl", "1s",
                                  "--workdir", work, "--replay", sleeper, *LOCAL],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 60
            while not os.path.exists(mark) and time.monotonic() < deadline and p.poll() is None:
                time.sleep(0.1)
            self.assertTrue(os.path.exists(mark), "the split task did not start")
            deadline = time.monotonic() + 60
            while p.poll() is None and time.monotonic() < deadline:
                p.send_signal(sig)
                time.sleep(0.05)
            out, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, code, err)
            self.assertIn(says, err)
            self.assertNotIn("Traceback", err)
            time.sleep(1)
            left = subprocess.run(["pgrep", "-f", "sleep 47.25"], capture_output=True, text=True).stdout.split()
            self.assertEqual(left, [], "a task's process outlived the run")
            self.assertEqual(os.listdir(work), [])

    def test_a_stop_while_the_cluster_starts_stops_the_run(self):
        # A Ctrl-C or SIGTERM while the local cluster starts (its workers'
        # folder has appeared, the start is not done) is held, not lost: the
        # run stops as soon as the start ends, exit 130 / 143 saying so,
        # before any task runs (the split task would mark its start, then
        # sleep as the replay would work), and nothing is left behind. (A
        # SIGTERM raised inside the start left the cluster unclosed: its
        # workers wrote their folder again after the cleanup removed it.)
        for sig, code, says in ((signal.SIGINT, 130, "interrupted (SIGINT)"),
                                (signal.SIGTERM, 143, "terminated (SIGTERM)")):
            mark = os.path.join(self.tmp, f"split-started-early-{sig}")
            sleeper = wrapper(self.tmp, 'for a in "$@"; do [ "$a" = --check ] && exec ' + REPLAY + ' "$@"; done\n'
                                        f'touch {mark}; exec sleep 47.75')
            work = os.path.join(self.tmp, f"work-stop-early-{sig}")
            os.makedirs(work)
            p = subprocess.Popen([CLUSTER, "replay", TRACES[0], "--shards", "2", "--key", "flow", "--ttl", "1s",
                                  "--workdir", work, "--replay", sleeper, *LOCAL],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and p.poll() is None and not glob.glob(os.path.join(work, "*", "dask")):
                time.sleep(0.005)
            self.assertIsNone(p.poll(), "the run ended before its cluster started")
            p.send_signal(sig)
            try:
                out, err = p.communicate(timeout=40)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
                self.fail(f"the {says} during the cluster's start was lost: the run went on")
            self.assertEqual(p.returncode, code, err)
            self.assertIn(says, err)
            self.assertNotIn("Traceback", err)
            self.assertFalse(os.path.exists(mark), f"a task ran after the {says}")
            time.sleep(3)
            left = subprocess.run(["pgrep", "-f", "sleep 47.75"], capture_output=True, text=True).stdout.split()
            self.assertEqual(left, [], "a task's process outlived the run")
            self.assertEqual(os.listdir(work), [], f"{says}: the run folder is back or was left")

    def test_time_regressions_are_the_traces_own(self):
        # A capture whose timestamps step back 3 times, keys spread over the
        # shards: the report counts the steps as one agebloom-replay does
        # (stage 1 reads the trace in order), the shards' own count beside it.
        path = os.path.join(self.tmp, "steps.pcap")
        eth = bytes(12) + b"\x08\x00"
        with open(path, "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
            for i, t in enumerate((10, 20, 15, 30, 25, 40, 5, 50)):
                ip = bytes([0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1 + i, 10, 0, 0, 2])
                f.write(struct.pack("<IIII", t, 0, len(eth + ip), len(eth + ip)) + eth + ip)
        one = replay(path, "--key", "src-ip", "--ttl", "1s", "--seed", "3")
        self.assertEqual(one["time_regressions"], 3)
        r = cluster(path, "--shards", "4", "--key", "src-ip", "--ttl", "1s", "--seed", "3", "--json", *LOCAL)
        merged = report(r)
        self.assertEqual(merged["time_regressions"], 3)
        self.assertIn("shard_time_regressions", merged)
        self.assertIn("3 packets stepped back in time in the traces", r.stderr)

    def test_replay_warnings_reach_the_user(self):
        # Records whose timestamps are out of range are skipped in stage 1,
        # as one agebloom-replay skips them, and said: the cluster dropped the
        # tasks' standard error on success, so a trace could vanish with exit 0.
        path = os.path.join(self.tmp, "bad-usec.pcap")
        eth = bytes(12) + b"\x08\x00"
        with open(path, "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
            for i in range(10):
                ip = bytes([0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1 + i, 10, 0, 0, 2])
                usec = 2_000_000 if i == 5 else 0
                f.write(struct.pack("<IIII", 10 + i, usec, len(eth + ip), len(eth + ip)) + eth + ip)
        r = cluster(path, "--shards", "2", "--key", "src-ip", "--ttl", "1s", "--json", *LOCAL)
        merged = report(r)
        self.assertEqual((merged["packets"], merged["bad_timestamps"]), (9, 1))
        self.assertIn(f"agebloom-cluster: warning: splitting {path}: {path}: 1 records skipped, "
                      "their timestamps out of range", r.stderr)
        # A warning every shard's replay prints is said once, for every shard.
        noisy = wrapper(self.tmp, 'case " $* " in *" --shard "*) echo "agebloom-replay: warning: a note" >&2;; esac')
        r = cluster(TRACES[0], "--shards", "2", "--key", "flow", "--ttl", "1s", "--replay", noisy, *LOCAL)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.count("a note"), 1, r.stderr)
        self.assertIn("agebloom-cluster: warning: every shard: a note", r.stderr)

    def test_a_replay_that_is_not_agebloom_replay_is_said(self):
        r = cluster(TRACES[0], "--shards", "2", "--key", "flow", "--ttl", "1s", "--replay", "/bin/true", *LOCAL)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("/bin/true printed no JSON report (it printed 'nothing'): --replay must name agebloom-replay",
                      r.stderr)
        self.assertNotIn("Expecting value", r.stderr)

    def test_unwritable_report_fails(self):
        # The report is the result: a closed or full standard output is exit 1, said on stderr.
        r = subprocess.run([CLUSTER, "replay", TRACES[0], "--shards", "2", "--key", "flow", "--ttl", "1s", "--json",
                            *LOCAL], stdout=open("/dev/full", "w"),
                           stderr=subprocess.PIPE, text=True, timeout=240)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("cannot write the report", r.stderr)

    def test_a_closed_report_is_said_before_the_run(self):
        # Standard output closed (`>&-`): it ended in an AttributeError
        # traceback after the whole run; now one line at once, exit 1.
        start = time.monotonic()
        r = subprocess.run(["sh", "-c", f"exec '{CLUSTER}' replay '{TRACES[0]}' --shards 2 --key flow --ttl 1s "
                            f"{' '.join(LOCAL)} >&-"], capture_output=True, text=True, timeout=240)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("agebloom-cluster: cannot write the report: standard output is closed", r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertLess(time.monotonic() - start, 30, "the cluster was started first")

    def test_a_value_that_begins_with_a_dash_is_checked_as_a_value(self):
        # argparse took "-1s" for an option: "expected one argument".
        for option, value, says in (("--ttl", "-1s", "--ttl needs a duration like 500ms, 60s or 10m, not '-1s'"),
                                    ("--seed", "-5", "--seed needs a hexadecimal number, not '-5'")):
            window = [] if option == "--ttl" else ["--ttl", "1s"]
            r = cluster(TRACES[0], "--shards", "2", "--key", "flow", *window, option, value, *LOCAL)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(says, r.stderr)
            self.assertNotIn("expected one argument", r.stderr)
        # An option after one that wants a value is still an option, said as missing its value.
        r = cluster(TRACES[0], "--shards", "2", "--key", "flow", "--ttl", "--json", *LOCAL)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("argument --ttl: expected one argument", r.stderr)

    def test_an_empty_scheduler_is_refused(self):
        # An unset $SCHED gave --scheduler "", which ran a local cluster.
        r = cluster(TRACES[0], "--shards", "2", "--key", "flow", "--ttl", "1s", "--scheduler", "",
                    "--workdir", self.tmp)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--scheduler needs an address (tcp://HOST:8786), not an empty one", r.stderr)

    def test_unreachable_scheduler_fails_in_bounded_time(self):
        start = time.monotonic()
        r = cluster(TRACES[0], "--shards", "2", "--key", "flow", "--ttl", "1s", "--scheduler", "tcp://127.0.0.1:1",
                    "--workdir", self.tmp, "--timeout", "2")
        elapsed = time.monotonic() - start
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("cannot reach the Dask scheduler at tcp://127.0.0.1:1", r.stderr)
        self.assertLess(elapsed, 15)
        self.assertEqual([n for n in os.listdir(self.tmp) if n.startswith("agebloom-cluster-")], [])

    def test_a_scheduler_of_its_own(self):
        # A cluster started apart, as on real machines: `dask scheduler` and
        # `dask worker` processes, the pieces in a --workdir they all see.
        if not shutil.which("dask-scheduler") or not shutil.which("dask-worker"):
            self.skipTest("dask-scheduler or dask-worker not on PATH")
        folder = tempfile.mkdtemp(dir=self.tmp)
        address_file = os.path.join(folder, "scheduler.json")
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        started = [subprocess.Popen(["dask-scheduler", "--scheduler-file", address_file, "--port", "0",
                                     "--no-dashboard"], **quiet)]
        try:
            deadline = time.monotonic() + 60
            while not os.path.exists(address_file) and time.monotonic() < deadline:
                time.sleep(0.1)
            with open(address_file) as f:
                address = json.load(f)["address"]
            work = os.path.join(folder, "work")
            args = [TRACES[1], "--shards", "2", "--key", "flow", "--ttl", "10s", "--truth", "--json", "--seed", "7",
                    "--scheduler", address, "--workdir", work]
            # No worker yet: an error after --timeout, not a wait for ever.
            start = time.monotonic()
            r = cluster(*args, "--timeout", "2")
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(f"the Dask scheduler at {address} has no worker after 2 s", r.stderr)
            self.assertLess(time.monotonic() - start, 15)
            started.append(subprocess.Popen(["dask-worker", "--scheduler-file", address_file, "--nworkers", "2",
                                             "--nthreads", "1", "--no-dashboard"], **quiet))
            merged = report(cluster(*args, "--timeout", "60"))
            one = replay(TRACES[1], "--key", "flow", "--ttl", "10s", "--truth", "--seed", "7")
            self.assertEqual(merged["truth_duplicates"], one["truth_duplicates"])
            self.assertEqual(merged["cluster"]["scheduler"], address)
            self.assertFalse(os.path.exists(work))  # made for the run, removed with it
        finally:
            for p in reversed(started):
                p.terminate()
                p.wait(timeout=30)

    def test_failed_shard_is_named(self):
        fail = wrapper(self.tmp, 'case " $* " in *" --shard 1/2 "*) echo "agebloom-replay: boom" >&2; exit 1;; esac')
        r = cluster(TRACES[1], "--shards", "2", "--key", "flow", "--ttl", "1s", "--replay", fail, *LOCAL)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("stage 2 (replay) failed: shard 1/2: agebloom-replay exited 1: agebloom-replay: boom", r.stderr)
        # A task that kills every worker that runs it: Dask gives up on it
        # (allowed-failures), and the error names it.
        deadly = wrapper(self.tmp, 'case " $* " in *" --shard 1/2 "*) kill -9 $PPID; exit 1;; esac')
        r = cluster(TRACES[1], "--shards", "2", "--key", "flow", "--ttl", "1s", "--replay", deadly, *LOCAL)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("stage 2 (replay) failed: shard 1/2: every worker that ran it died", r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_killed_worker_changes_nothing(self):
        # The stand-in kills the worker process that ran it (its parent) the
        # first time it splits the first trace and the first time it replays
        # shard 1; the markers (mkdir is atomic) make each happen once.
        marks = os.path.join(self.tmp, "marks")
        os.makedirs(marks)
        kill = wrapper(self.tmp, f"""case " $* " in
  *" {TRACES[0]} --split "*) mkdir {marks}/split 2>/dev/null && {{ kill -9 $PPID; exit 1; }};;
  *" --shard 1/4 "*) mkdir {marks}/replay 2>/dev/null && {{ kill -9 $PPID; exit 1; }};;
esac""")
        r = cluster(*TRACES, "--shards", "4", "--key", "flow", "--ttl", "10s", "--truth", "--json", "--seed", "5",
                    "--replay", kill, *LOCAL)
        merged = report(r)
        self.assertEqual(sorted(os.listdir(marks)), ["replay", "split"])  # both workers were killed
        self.assertNotIn("Traceback", r.stderr)
        unharmed = self.ttl()
        for k in ("packets", "keyed", "suppressed", "truth_duplicates", "first_positives", "false_positives",
                  "expired_positives", "live_fnr", "fpr"):
            self.assertEqual(merged[k], unharmed[k], k)
        self.assertEqual([s["suppressed"] for s in merged["per_shard"]],
                         [s["suppressed"] for s in unharmed["per_shard"]])


if __name__ == "__main__":
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("SKIP: python3-distributed is not installed (scripts/setup.sh installs it)")
        sys.exit(77)
    # Test names after the three paths run those alone (Cluster.test_...).
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[4:]])
