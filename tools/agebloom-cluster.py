#!@PYTHON@
"""agebloom-cluster: agebloom-replay over a Dask cluster, sharded by key.

    agebloom-cluster replay TRACE... --shards N --key MODE (--ttl D | --window N)
        [agebloom-replay's filter and keying options] [--truth] [--json]
        [--scheduler tcp://HOST:8786 --workdir DIR] [--workers K] [--timeout S] [--replay PATH]

Dedup is per key, so a replay shards by key: every packet of a key goes to the
same shard, and a shard's verdicts involve only its own keys. Stage 1 (map):
one task per trace runs `agebloom-replay TRACE --split N`, writing the trace's
packets into N pieces by key. Stage 2 (reduce): one task per shard replays its
pieces of every trace, merged by time, with `agebloom-replay --shard I/N`. The
shards' reports are merged into one. With a time window the ground truth is
exactly one machine's; with a count window each shard keeps its own window of
N insertions (a per-shard count window). docs/SCALING.md has the details.

Without --scheduler a local cluster runs on this machine (one worker process
per core). With one, the workers must see the traces and the --workdir at
the same paths as this machine, and run the same agebloom-replay.

Exit codes: 0 done, 1 a task failed or the cluster could not be used,
2 bad options (those agebloom-replay refuses included, checked before any
cluster starts; traces of different link types are one).
"""

import argparse
import contextlib
import json
import logging
import math
import multiprocessing.resource_tracker
import os
import secrets
import signal
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

# agebloom-replay's options that this command passes through to it, with
# whether each takes a value. Its outputs (--verdicts, --write, --plot) are
# per process and have no merged form, so they are not among them.
PASSED_WITH_VALUE = ["--filter", "--fpr", "--capacity", "--mem", "--policy", "--seed", "--on-flood",
                     "--max-npws", "--max-bits-per-item", "--max-accesses", "--block-bits",
                     "--click-param", "--click-ports", "--packet-bytes", "--bpf",
                     "--decide", "--penalty-fp", "--penalty-fn", "--prior", "--penalty-param", "--backend"]
PASSED_FLAGS = ["--click-host", "--vlan-in-key", "--ignore-vlan", "--ignore-l2"]

# Counts that add up over shards (the keys of different shards are disjoint,
# so distinct keys add up too).
COUNTS = ["packets", "keyed", "unparsed", "suppressed", "passed", "time_regressions", "snapped"]
TRUTH_COUNTS = ["truth_duplicates", "live_misses", "first_occurrences", "first_positives",
                "expired_occurrences", "expired_positives", "uninserted_occurrences", "uninserted_positives",
                "slack_suppressed", "stale_positives", "false_positives", "distinct_keys"]
# Each rate, from the counts above it is a share of: recomputed from the sums,
# never averaged over shards.
TRUTH_RATES = {"live_fnr": ("live_misses", "truth_duplicates"),
               "fpr": ("first_positives", "first_occurrences"),
               "expired_positive_rate": ("expired_positives", "expired_occurrences"),
               "uninserted_positive_rate": ("uninserted_positives", "uninserted_occurrences")}
PENALTY_SUMS = ["expected_penalty", "standard_suppressed", "fn_from_param", "realised_penalty",
                "realised_penalty_standard"]


class Failure(Exception):
    """A run that cannot go on: the message, and the exit code."""

    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


def cores():
    """The cores this process may run on (all of them where that is not known)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def default_replay():
    """The agebloom-replay installed (or built) beside this script, else PATH's."""
    beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agebloom-replay")
    return beside if os.access(beside, os.X_OK) else "agebloom-replay"


class Once(argparse.Action):
    """An option with a value, refused when given twice with two values (--window 10 ... --window 20: which
    was meant?), as the C++ tools refuse it; argparse's own store lets the last win without a word."""

    def __call__(self, parser, namespace, values, option_string=None):
        first = getattr(self, "given", None)
        if first is not None and first[1] != values:
            fix = (f"give one expression, e.g. '({first[1]}) and ({values})'" if option_string == "--bpf"
                   else "give it once")
            parser.error(f"{option_string} given twice ('{first[1]}', then '{values}'): {fix}")
        self.given = (option_string, values)
        setattr(namespace, self.dest, values)


def joined_values(argv, parser):
    """argv with each value that begins with '-' joined to its option
    (`--ttl -1s` as `--ttl=-1s`): argparse takes such a value for an option
    and says "expected one argument", where the value's own check says what
    is wrong with it. A word that is one of the parser's options stays one."""
    options = {o for a in parser._actions for o in a.option_strings}
    # One value each (nargs None); flags, --help and --version take none (nargs 0).
    takes_value = {o for a in parser._actions if a.nargs is None for o in a.option_strings}
    out, i = [], 0
    while i < len(argv):
        if (argv[i] in takes_value and i + 1 < len(argv) and argv[i + 1].startswith("-") and argv[i + 1] != "--"
                and argv[i + 1].split("=")[0] not in options):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def parse(argv):
    # No abbreviations: --shard would stand for --shards, where agebloom-replay's
    # --shard I/N is another option.
    top = argparse.ArgumentParser(prog="agebloom-cluster", allow_abbrev=False,
                                  description="agebloom-replay sharded by key over a Dask cluster.")
    top.add_argument("--version", action="version", version="agebloom-cluster @VERSION@")
    commands = top.add_subparsers(dest="command", required=True, metavar="replay")
    p = commands.add_parser(
        "replay", help="replay traces sharded by key", allow_abbrev=False,
        description="Replays TRACEs as one stream merged by time, split into N shards by key: stage 1 splits "
                    "each trace (one task per trace), stage 2 replays each shard (one task per shard). With "
                    "--ttl the merged ground truth equals one agebloom-replay's; with --window each shard "
                    "keeps its own window of N insertions (per-shard count window).",
        epilog="Exit codes: 0 done, 1 a task failed or the cluster could not be used, 2 bad options.")
    p.add_argument("traces", nargs="+", metavar="TRACE", help="pcap or pcapng files, one link type")
    p.add_argument("--shards", type=int, action=Once, required=True, metavar="N",
                   help="key shards, one replay task each (1 to 512)")
    p.add_argument("--key", required=True, action=Once, metavar="MODE", help="as agebloom-replay --key")
    window = p.add_mutually_exclusive_group(required=True)
    window.add_argument("--ttl", action=Once, metavar="D", help="time window, as agebloom-replay --ttl")
    window.add_argument("--window", action=Once, metavar="N", help="count window of N insertions, per shard")
    p.add_argument("--truth", action="store_true", help="exact ground truth over all shards")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--scheduler", action=Once, metavar="ADDRESS",
                   help="a running Dask scheduler (tcp://HOST:8786); default: a local cluster")
    p.add_argument("--workdir", action=Once, metavar="DIR",
                   help="where the pieces go, in a folder removed at the end (made if missing, and then removed too; "
                        "default: the temporary folder; "
                        "with --scheduler required, a folder every worker sees at the same path)")
    p.add_argument("--workers", type=int, action=Once, metavar="K",
                   help="local cluster only: worker processes (default: one per core)")
    p.add_argument("--timeout", type=float, default=10.0, action=Once, metavar="SECONDS",
                   help="how long to wait for the scheduler and a first worker (default 10)")
    p.add_argument("--replay", default=default_replay(), action=Once, metavar="PATH",
                   help="agebloom-replay on the workers (default: the one beside this command, else "
                        "PATH's: %(default)s)")
    passed = p.add_argument_group("agebloom-replay options, passed to every task (agebloom-replay --help)")
    for name in PASSED_WITH_VALUE:
        passed.add_argument(name, dest="pass_" + name[2:].replace("-", "_"), action=Once, metavar="X")
    for name in PASSED_FLAGS:
        passed.add_argument(name, dest="pass_" + name[2:].replace("-", "_"), action="store_true")
    args = top.parse_args(joined_values(argv, p))

    if not 1 <= args.shards <= 512:
        p.error(f"--shards must be between 1 and 512, not {args.shards}")
    # An empty address ("$SCHED" unset) ran a local cluster without a word.
    if args.scheduler is not None and not args.scheduler.strip():
        p.error("--scheduler needs an address (tcp://HOST:8786), not an empty one; without --scheduler a local "
                "cluster runs")
    if args.workers is not None and args.scheduler:
        p.error("--workers is for the local cluster: the scheduler's cluster has its own")
    if args.workers is not None and args.workers < 1:
        p.error(f"--workers needs at least 1, not {args.workers}")
    # Each worker is a Python process of ~60 MB running one agebloom-replay at
    # a time: past a few per core they only add memory and switching.
    most = 4 * cores()
    if args.workers is not None and args.workers > most:
        p.error(f"--workers {args.workers} is more than 4 per core ({most} here): each is a process of its own")
    if args.scheduler and not args.workdir:
        p.error("--scheduler needs --workdir, a folder that every worker and this machine see at the same path")
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        p.error(f"--timeout must be a positive number of seconds, not {args.timeout}")
    # One seed for every shard, drawn here unless given, so that the report's
    # --seed repeats the whole run.
    if args.pass_seed is None:
        args.pass_seed = format(secrets.randbits(64), "x")
    args.options = ["--key", args.key] + (["--ttl", args.ttl] if args.ttl else ["--window", args.window])
    for name in PASSED_WITH_VALUE + PASSED_FLAGS:
        value = getattr(args, "pass_" + name[2:].replace("-", "_"))
        if value is True:
            args.options.append(name)
        elif value not in (None, False):
            args.options += [name, value]
    if "-" in args.traces:
        p.error("a TRACE of '-' (standard input) cannot be split on a cluster: save it to a file every worker sees")
    # Workers may run elsewhere: every path they are given is absolute.
    args.traces = [os.path.abspath(t) for t in args.traces]
    if args.workdir:
        args.workdir = os.path.abspath(args.workdir)
    return args


def check_options(args):
    """agebloom-replay's own checks of the options, before any cluster starts."""
    try:
        # --split wants a prefix, and --check checks that it could be written:
        # one in the temporary folder, never written.
        unused = os.path.join(tempfile.gettempdir(), "agebloom-cluster-check-")
        # The traces too, where this machine reads them (it must see them at
        # the workers' paths): a --bpf expression compiles for their link
        # type, so a bad one is refused here, not in stage 1.
        # (Regular files only: a FIFO read here would be gone for stage 1.)
        readable = [t for t in args.traces if os.path.isfile(t) and os.access(t, os.R_OK)]
        r = subprocess.run([args.replay] + readable + ["--check", "--split", str(args.shards), "--split-prefix",
                                                       unused] + args.options, capture_output=True, text=True)
    except OSError as e:
        raise Failure(f"cannot run {args.replay}: {e.strerror} (--replay names agebloom-replay)", 2)
    if r.returncode != 0:
        # agebloom-replay's own codes: 1 a trace it cannot read (missing, no
        # capture), 2 bad options (traces of different link types included).
        raise Failure(r.stderr.strip().splitlines()[0] if r.stderr.strip() else f"{args.replay} --check failed",
                      1 if r.returncode == 1 else 2)
    if not args.scheduler:
        for t in args.traces:
            if not os.access(t, os.R_OK):
                why = "no such file" if not os.path.exists(t) else "permission denied"
                raise Failure(f"trace {t}: cannot read it ({why})")


def parent_death_signal():
    """A function for subprocess's preexec_fn that makes the child get SIGTERM
    when the worker thread that started it goes away (a run stopped, a
    worker killed), so no replay outlives its run: Linux's prctl
    PR_SET_PDEATHSIG (1), looked up here, in the worker, so that the forked
    child of a multi-threaded process makes one foreign call and nothing
    else before exec. None where there is no prctl. (Looked up per task, not
    kept in a global: the tasks are pickled with the globals they use, and a
    ctypes function cannot be.)"""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGTERM, 0, 0, 0)


# The tasks: each runs agebloom-replay on a worker and returns its report, or
# raises its message (gather names the task).
def run_replay(replay, argv):
    # Dask sets MALLOC_TRIM_THRESHOLD_ for its workers' own heaps; inherited,
    # it made agebloom-replay's planning of tlbf ten times slower (every free
    # of a large buffer given back to the kernel and faulted in again).
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    r = subprocess.run([replay] + argv + ["--json", "--no-progress"], capture_output=True, text=True, env=env,
                       preexec_fn=parent_death_signal())
    if r.returncode != 0:
        # Its message, less the hint to its own --help (the task's options are this run's, not the user's).
        lines = [line for line in r.stderr.strip().splitlines() if not line.startswith("try 'agebloom-replay")]
        message = "\n".join(lines).strip() or r.stdout.strip() or "no message"
        raise RuntimeError(f"agebloom-replay exited {r.returncode}: {message}")
    try:
        report = json.loads(r.stdout)
    except ValueError:
        first = r.stdout.strip().splitlines()[0][:80] if r.stdout.strip() else "nothing"
        raise RuntimeError(f"{replay} printed no JSON report (it printed {first!r}): --replay must name "
                           "agebloom-replay") from None
    if not isinstance(report, dict):
        raise RuntimeError(f"{replay} printed no JSON report: --replay must name agebloom-replay")
    # What it warned of (records it skipped, times it could not keep, keys it
    # could not find) is the user's to hear: the client says it (say_warnings).
    report["warnings"] = [line[len(WARNING):] for line in r.stderr.splitlines() if line.startswith(WARNING)]
    return report


WARNING = "agebloom-replay: warning: "


def say_warnings(reports, names, every):
    """Each distinct warning the tasks' agebloom-replay printed, once, with
    the tasks that printed it (every shard's copy of one machine's note is
    one line)."""
    said = {}
    for report, name in zip(reports, names):
        for text in report.get("warnings", []):
            said.setdefault(text, []).append(name)
    for text, who in said.items():
        where = every if len(who) == len(names) and len(names) > 1 else ", ".join(who)
        print(f"agebloom-cluster: warning: {where}: {text}", file=sys.stderr)


def split_trace(replay, trace, shards, prefix, options):
    return run_replay(replay, [trace, "--split", str(shards), "--split-prefix", prefix] + options)


def replay_shard(replay, shard, shards, pieces, options):
    return run_replay(replay, pieces + ["--shard", f"{shard}/{shards}"] + options)


@contextlib.contextmanager
def signals_held():
    """Ctrl-C and SIGTERM held while a cleanup runs to its end, then acted on
    as they would have been. By handler, not by signal mask: the kernel hands
    a process's signal to any thread that does not block it (Dask's threads
    block SIGINT, not SIGTERM), and CPython then runs the handler in this
    thread all the same (measured: SIGTERM raised in cluster.close() with
    this thread masked)."""
    held = []
    previous = {s: signal.signal(s, lambda signum, frame: held.append(signum))
                for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if held:
            signal.raise_signal(held[0])  # its own handler now: KeyboardInterrupt, Stopped


def connect(args, run_dir):
    """A client of the --scheduler's cluster, or of a local one (also returned, to close)."""
    from distributed import Client, LocalCluster
    if args.scheduler:
        # No local worker to keep a Ctrl-C from: this thread's handler takes
        # it wherever the kernel delivers it (a held one is raised now).
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        try:
            client = Client(args.scheduler, timeout=args.timeout)
        except Exception as e:  # OSError, TimeoutError, a protocol Dask cannot use here (tls://, ucx://): say why
            raise Failure(f"cannot reach the Dask scheduler at {args.scheduler}: {type(e).__name__}: {e}")
        try:
            # A scheduler without workers would take the tasks and never run them.
            client.wait_for_workers(1, timeout=args.timeout)
        except (TimeoutError, OSError):
            client.close()
            raise Failure(f"the Dask scheduler at {args.scheduler} has no worker after {args.timeout:g} s")
        return client, None
    workers = args.workers or cores()
    # silence_logs reaches the first workers only; a worker the nanny starts
    # after one died reads its log level from the environment. Critical
    # only: after a worker dies, or as the cluster closes, a worker whose
    # heartbeat finds the scheduler gone logs that at ERROR with a traceback
    # (seen about one run in three of a killed-worker run); the run reports
    # what failed itself (gather), and the cluster's start raises its own.
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "critical")
    # When a worker dies, a write to it still pending in some process (the
    # scheduler's here, a peer's, a nanny's) fails with CommClosedError in a
    # task nobody awaits, and asyncio's own logger prints that exception's
    # traceback. The run reports the death itself (gather: the task that
    # every worker died running), so that logger is kept to its criticals:
    # here, and in every Dask process through the same configuration.
    os.environ.setdefault("DASK_LOGGING__ASYNCIO", "critical")
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    # Processes, not threads: a task whose worker dies takes only its own
    # process down, and the scheduler reruns it on another.
    cluster = None
    terms = []  # SIGTERMs recorded while the cluster starts (below)
    try:
        # No worker extensions: the tasks use none, and Debian's Dask 2022.12
        # closes the shuffle extension twice in a worker that replaced a dead
        # one, printing an AssertionError's traceback at every such exit.
        # The workers start with SIGINT ignored (kept across their exec): a
        # Ctrl-C reaches the whole process group, and this process alone
        # stops the run (closing the cluster ends the workers, and
        # parent_death_signal their replays) instead of every worker printing
        # its traceback.
        # Ignored, not blocked: an ignored signal is the one disposition a
        # process keeps across exec, so the nannies (and the workers they
        # start, restarts included) keep it; a blocked mask did not reach
        # them (measured: every worker printed its traceback again).
        # Ignored here too, but still blocked in every thread (replay()), so
        # a Ctrl-C in the second or two of the start is held, not lost: the
        # kernel discards a signal as ignored only where no thread blocks
        # it. Setting SIG_IGN discards one already held, so that one is
        # taken first.
        # SIGTERM, sent to this process alone, is recorded meanwhile and
        # raised once the start is done: raised inside it, it left a cluster
        # half made, never closed, whose workers wrote their folder again
        # after the cleanup had removed it.
        if signal.SIGINT in signal.sigpending():
            signal.sigwait({signal.SIGINT})
            raise KeyboardInterrupt
        previous_term = signal.signal(signal.SIGTERM, lambda signum, frame: terms.append(signum))
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            # The scheduler's HTTP server (health and metrics, no dashboard)
            # falls back to another port when 8787 is taken, as by another
            # Dask cluster, and warns of that on stderr: nothing this run uses.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=r"Port \d+ is already in use", category=UserWarning)
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, local_directory=os.path.join(run_dir, "dask"),
                                       silence_logs=logging.CRITICAL, extensions={})
        finally:
            signal.signal(signal.SIGINT, previous)
            signal.signal(signal.SIGTERM, previous_term)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # a held Ctrl-C is raised here
        if terms:
            signal.raise_signal(signal.SIGTERM)  # Stopped, with the cluster there to close
        return Client(cluster), cluster
    except BaseException as e:
        # The cluster, if it started, is not returned, so it is closed here
        # (with both signals held until it is done, as in the run's cleanup).
        if cluster is not None:
            with signals_held():
                close_cluster(cluster)
        if terms:  # a SIGTERM recorded before the start failed: the run was stopped first
            raise Stopped()
        if isinstance(e, Exception):  # whatever Dask raises, the run cannot go on; say why
            raise Failure(f"cannot start a local Dask cluster of {workers} workers: {e}")
        raise  # Ctrl-C, SIGTERM: the run stops as it would later


def gather(futures, names, stage):
    """The tasks' results in order; the first failure, named, ends the run."""
    from distributed import as_completed, progress
    if sys.stderr.isatty():
        # Dask's bar draws on stdout, which --json keeps for the report.
        print(f"{stage}:", file=sys.stderr)
        with contextlib.redirect_stdout(sys.stderr):
            progress(futures)
        print(file=sys.stderr)
    name_of = {f.key: n for f, n in zip(futures, names)}
    for f in as_completed(futures):
        if f.status == "error":
            e = f.exception()
            for other in futures:
                other.cancel()
            if type(e).__name__ == "KilledWorker":
                e = "every worker that ran it died (distributed.scheduler.allowed-failures)"
            raise Failure(f"{stage} failed: {name_of[f.key]}: {e}")
    return [f.result() for f in futures]


def merge(args, splits, shards, split_seconds, replay_seconds):
    """One report from the shards' reports: counts summed, rates recomputed."""
    first = shards[0]
    out = {"traces": args.traces, "shards": args.shards, "key": first["key"], "policy": first["policy"],
           "seed": first["seed"]}
    for k in COUNTS:
        out[k] = sum(s[k] for s in shards)
    # Steps back in time: the traces' own, as one agebloom-replay counts them
    # (stage 1 reads each trace in order); each shard's replay, holding a
    # clock of its own over its keys, sees only some of them.
    out["shard_time_regressions"] = out["time_regressions"]
    out["time_regressions"] = sum(s.get("time_regressions", 0) for s in splits)
    out["bad_timestamps"] = sum(s["bad_timestamps"] for s in splits)
    reasons = {}
    for s in shards:
        for reason, n in s["unparsed_reasons"].items():
            reasons[reason] = reasons.get(reason, 0) + n
    out["unparsed_reasons"] = reasons
    f = first["filter"]
    out["filter"] = {k: f[k] for k in ("name", "parameters", "window", "window_kind", "slack", "model_fpr",
                                       "bits_per_item")}
    out["filter"]["bytes_per_shard"] = f["bytes"]
    out["filter"]["bytes"] = sum(s["filter"]["bytes"] for s in shards)
    count_window = f["window_kind"] == "count"
    out["window_scope"] = "per-shard count window" if count_window else "time window"
    out["guarantee"] = first["guarantee"] + (" (in each shard: a per-shard count window of its own insertions)"
                                             if count_window else "")
    if args.truth:
        for k in TRUTH_COUNTS:
            out[k] = sum(s[k] for s in shards)
        for rate, (num, den) in TRUTH_RATES.items():
            out[rate] = out[num] / out[den] if out[den] else 0.0
        out["oldest_remembered"] = max(s["oldest_remembered"] for s in shards)
    if "penalties" in first:
        pen = {k: sum(s["penalties"].get(k, 0) for s in shards) for k in PENALTY_SUMS if k in first["penalties"]}
        if pen.get("realised_penalty"):
            pen["penalty_ratio_standard_to_inferential"] = pen["realised_penalty_standard"] / pen["realised_penalty"]
        out["penalties"] = pen
    out["per_shard"] = []
    for i, s in enumerate(shards):
        row = {"shard": i, "packets": s["packets"], "keyed": s["keyed"], "suppressed": s["suppressed"],
               "seconds": s["seconds"], "packets_per_second": s["packets_per_second"], "backend": s["backend"],
               "filter_bytes": s["filter"]["bytes"]}
        if args.truth:
            for k in ("truth_duplicates", "live_fnr", "fpr", "false_positives", "distinct_keys"):
                row[k] = s[k]
        out["per_shard"].append(row)
    out["split"] = {"seconds": split_seconds, "tasks": len(splits),
                    "task_seconds": sum(s["seconds"] for s in splits),
                    "packets_per_second": out["packets"] / split_seconds if split_seconds > 0 else 0.0,
                    "per_trace": [{"trace": s["traces"][0], "packets": s["packets"], "seconds": s["seconds"]}
                                  for s in splits]}
    out["replay"] = {"seconds": replay_seconds, "tasks": len(shards),
                     "task_seconds": sum(s["seconds"] for s in shards),
                     "packets_per_second": out["packets"] / replay_seconds if replay_seconds > 0 else 0.0}
    total = split_seconds + replay_seconds
    out["seconds"] = total
    out["packets_per_second"] = out["packets"] / total if total > 0 else 0.0
    return out


def counted(n, thing):
    """'1 trace', '2 traces'."""
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def summary(r):
    """The report in one line."""
    line = (f"agebloom-cluster: {counted(r['packets'], 'packet')} from {counted(len(r['traces']), 'trace')} in "
            f"{counted(r['shards'], 'shard')} on {counted(r['cluster']['workers'], 'worker')}: "
            f"{r['keyed']} keyed by {r['key']}, {r['suppressed']} suppressed, "
            f"{r['passed']} passed; {r['filter']['name']} of {r['filter']['bytes_per_shard']} bytes per shard")
    if "live_fnr" in r:
        line += (f"; truth: {r['truth_duplicates']} repeats within the window, live FNR {r['live_fnr']:.4g}, "
                 f"FPR {r['fpr']:.4g} ({r['first_positives']} of {r['first_occurrences']} first sightings), "
                 f"{r['expired_positives']} expired positives of {r['expired_occurrences']}")
    # Each stage's own rate, as the JSON has them; the run's overall rate last.
    line += (f"; split {r['split']['seconds']:.3g} s ({r['split']['packets_per_second']:.0f} packets/s), "
             f"replay {r['replay']['seconds']:.3g} s ({r['replay']['packets_per_second']:.0f} packets/s), "
             f"{r['packets_per_second']:.0f} packets/s in all; --seed {r['seed']} repeats it")
    return line


run_folder_left = None  # why the run folder is still there after cleanup(), if it is
pending_cleanup = None  # the run's cleanup, until it has run (finish_cleanup)


def finish_cleanup():
    """Runs the run's cleanup if it has not run: replay()'s own, or main()'s
    for a signal that landed in replay()'s finally before its handlers held
    signals."""
    global pending_cleanup
    task, pending_cleanup = pending_cleanup, None
    if task is not None:
        task()


def close_cluster(cluster):
    """Closes a local cluster whatever state it is in. The run's outcome is
    decided by now: closing a cluster whose nanny is still restarting a
    worker that died races in Debian's Dask 2022.12 (the nanny asserts on a
    process not yet started, and logs that AssertionError's traceback), so
    Dask's handlers keep only criticals while it shuts down, and what the
    close raises does not stop the cleanup."""
    for handler in logging.getLogger("distributed").handlers:
        handler.setLevel(logging.CRITICAL)
    with contextlib.suppress(Exception):
        cluster.close()


def cleanup(client, cluster, submitted, run_dir, made):
    """The end of every run, whatever its outcome: its tasks cancelled, the
    client and a local cluster closed, the run folder and the --workdir
    folders it made removed."""
    global run_folder_left
    if client is not None:
        # Stopped early (a failure, Ctrl-C, SIGTERM): no task of this run
        # goes on in the scheduler's cluster.
        with contextlib.suppress(Exception):
            client.cancel(submitted)
        with contextlib.suppress(Exception):  # the run's outcome is decided: the cleanup goes on
            client.close()
    if cluster is not None:
        close_cluster(cluster)
    # A task's agebloom-replay ends on its worker's death (parent_death_signal)
    # a moment after the cluster closes, and may write a piece meanwhile.
    # (rmtree also raises FileNotFoundError for an entry that vanished under
    # it, Dask's worker folders say: whether the folder is gone decides.)
    deadline = time.monotonic() + 5
    while True:
        error = None
        try:
            shutil.rmtree(run_dir)
        except OSError as e:
            error = e
        if not os.path.lexists(run_dir):
            break
        if time.monotonic() > deadline:
            why = error.strerror if error is not None else "it came back"
            run_folder_left = f"{run_dir} could not be removed: {why}"
            break
        time.sleep(0.1)
    for folder in made:  # deepest first; one that now holds something else stays
        try:
            os.rmdir(folder)
        except OSError:
            break


def replay(args):
    check_options(args)
    # A thread starts with the signal mask of the thread that makes it, and
    # the kernel hands a process's SIGINT to any thread that does not block
    # it. SIGINT is blocked in this thread from before Dask's import (which
    # starts numpy's native BLAS threads) until connect() has started the
    # cluster, so every thread made meanwhile blocks it for good and this
    # thread alone takes a Ctrl-C; one pressed meanwhile is held for it.
    # multiprocessing's resource tracker, though, unblocks it in the thread
    # that first starts a process (to start the tracker with it blocked), so
    # it is started here first and later starts find it running.
    if not args.scheduler:
        multiprocessing.resource_tracker.ensure_running()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        import distributed  # noqa: F401 (here, so that --help and the checks work without it)
    except ImportError:
        raise Failure("needs Dask distributed: apt-get install python3-distributed (Debian), "
                      f"for {sys.executable}")
    made = []  # the folders of --workdir this run made, removed with its own at the end
    if args.workdir:
        if os.path.exists(args.workdir) and not os.path.isdir(args.workdir):
            raise Failure(f"--workdir {args.workdir}: is not a folder", 2)
        missing = args.workdir
        while not os.path.exists(missing):
            made.append(missing)
            missing = os.path.dirname(missing)
        try:
            os.makedirs(args.workdir, exist_ok=True)
        except OSError as e:
            raise Failure(f"--workdir {args.workdir}: cannot make it: {e.strerror}", 2)
    try:
        run_dir = tempfile.mkdtemp(prefix="agebloom-cluster-", dir=args.workdir)
    except OSError as e:
        for folder in made:
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        raise Failure(f"cannot make the run folder in {args.workdir or tempfile.gettempdir()}: {e.strerror}", 2)
    client = cluster = None
    submitted = []  # every task of the run, cancelled if it stops early
    global pending_cleanup
    pending_cleanup = lambda: cleanup(client, cluster, submitted, run_dir, made)  # noqa: E731 (reads them when run)
    try:
        started = time.monotonic()
        client, cluster = connect(args, run_dir)
        workers = len(client.scheduler_info()["workers"])
        cluster_seconds = time.monotonic() - started

        start = time.monotonic()
        prefixes = [os.path.join(run_dir, f"t{j}-") for j in range(len(args.traces))]
        submitted += [client.submit(split_trace, args.replay, t, args.shards, prefix, args.options, pure=False)
                      for t, prefix in zip(args.traces, prefixes)]
        splits = gather(submitted[:],
                        [f"trace {t}" for t in args.traces], "stage 1 (split)")
        say_warnings(splits, [f"splitting {t}" for t in args.traces], "splitting every trace")
        # Stage 1's results are on disk and in hand. A future still held
        # would be recomputed if the worker keeping its result died in stage
        # 2, splitting its trace again (truncating its pieces) while the
        # replays read them: a killed worker then failed the run with
        # "truncated dump file" (seen once in tests/cluster's killed-worker case).
        for f in submitted:
            f.release()
        submitted.clear()
        split_seconds = time.monotonic() - start
        kinds = {(s["linktype"], s["linktype_name"]) for s in splits}
        if len(kinds) > 1:
            which = ", ".join(f"{s['traces'][0]} is {s['linktype_name'] or s['linktype']}" for s in splits)
            raise Failure(f"traces of different link types cannot be replayed as one stream: {which}", 2)

        start = time.monotonic()
        truth = ["--truth"] if args.truth else []
        stage2 = [client.submit(replay_shard, args.replay, i, args.shards, [p + f"{i}.pcap" for p in prefixes],
                                args.options + truth, pure=False) for i in range(args.shards)]
        submitted += stage2
        shard_names = [f"shard {i}/{args.shards}" for i in range(args.shards)]
        shards = gather(stage2, shard_names, "stage 2 (replay)")
        say_warnings(shards, shard_names, "every shard")
        replay_seconds = time.monotonic() - start
    finally:
        # The cleanup runs to its end: a second Ctrl-C or SIGTERM now is held
        # until it is done (and then ends the run as the first did).
        with signals_held():
            finish_cleanup()

    # A piece holds only its shard's keys, so a replay that drops packets was
    # split under other keying options: a bug, not a result.
    for i, s in enumerate(shards):
        if s["shard"]["packets_outside"]:
            raise Failure(f"shard {i}: {s['shard']['packets_outside']} packets of its pieces are other shards'")
    report = merge(args, splits, shards, split_seconds, replay_seconds)
    report["cluster"] = {"scheduler": args.scheduler or "local", "workers": workers,
                         "start_seconds": cluster_seconds}
    if report["time_regressions"] or report["shard_time_regressions"]:
        print(f"agebloom-cluster: warning: {report['time_regressions']} packets stepped back in time in the traces "
              f"({report['shard_time_regressions']} within the shards' streams); each shard held its own clock, so "
              "its truth may differ from one machine's", file=sys.stderr)
    # The report is the run's result: one that cannot be written is a failure
    # (a closed standard output was refused in main(), before the run).
    try:
        print(json.dumps(report) if args.json else summary(report))
        sys.stdout.flush()
    except OSError as e:
        raise Failure(f"cannot write the report: {e.strerror}")


class Stopped(BaseException):
    """SIGTERM (timeout, a supervisor): the run stops as on Ctrl-C, cleaning
    up. A BaseException, as KeyboardInterrupt is, so that no `except
    Exception` on the way (Dask's, ours) takes it for an error."""


def on_sigterm(signum, frame):
    raise Stopped()


def main(argv):
    # Started with standard output closed (`>&-`), the run had no place for
    # its report and ended in a traceback after all its work: said at once.
    # A closed descriptor 0-2 is filled with /dev/null, read-only, first, so
    # that no file this process opens (nor a child's) takes its number.
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDONLY)  # the lowest free number: this one
    if sys.stdout is None:
        print("agebloom-cluster: cannot write the report: standard output is closed", file=sys.stderr)
        return 1
    try:
        args = parse(argv)  # --help and --version print, and exit 0, from here
        sys.stdout.flush()
    except OSError as e:  # a full or closed standard output: said, exit 1, as for the report
        print(f"agebloom-cluster: cannot write to standard output: {e.strerror}", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        try:
            replay(args)
        finally:
            # The run's outcome is decided (and its cleanup done): a Ctrl-C or
            # SIGTERM from now on (a user's second, a supervisor's repeat)
            # would only cut its last words short, or kill the interpreter
            # as it exits (CPython restores default handlers then, but not
            # an ignored signal's).
            for s in (signal.SIGTERM, signal.SIGINT):
                signal.signal(s, signal.SIG_IGN)
            finish_cleanup()
    except Failure as e:
        print(f"agebloom-cluster: {e}", file=sys.stderr)
        if run_folder_left:
            print(f"agebloom-cluster: the run folder {run_folder_left}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print(f"agebloom-cluster: interrupted (SIGINT): the run is stopped{folder_fate()}", file=sys.stderr)
        return 130
    except Stopped:
        print(f"agebloom-cluster: terminated (SIGTERM): the run is stopped{folder_fate()}", file=sys.stderr)
        return 143
    if run_folder_left:
        print(f"agebloom-cluster: warning: the run folder {run_folder_left}", file=sys.stderr)
    return 0


def folder_fate():
    return f"; its folder {run_folder_left}" if run_folder_left else " and its folder removed"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
