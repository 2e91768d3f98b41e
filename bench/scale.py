#!/usr/bin/env python3
"""Distributed PageRank against local mode, and against libgrape-lite (issue 11).

    bench/scale.py [options] BUILD_DIR SCALE

Generates the Kronecker graph bench/run.sh uses (`lockstep generate kronecker --scale S --degree 16
--weights`, read with --undirected) and runs PageRank with --tolerance 0 in these configurations:
local mode at 2 threads (and 1, see --local-threads), and a master with N workers on loopback
(N in --workers; workers --threads 1 --max-jobs 1), once per relay mode of --relay. Each
configuration runs a job of --iterations iterations and a job of 1 iteration, so that the
per-iteration CPU time is (cpu(K) - cpu(1)) / (K - 1), loading excluded. Configurations alternate
within a trial round; timings are compared only as ratios to the local run of the same round
(the machine is shared and noisy), and min / median / max over the rounds are printed.

With --grape BUILD (a libgrape-lite build directory holding run_app, see bench/README.md), each
round also runs libgrape-lite's PageRank with `mpirun -n 2` (one thread per process) next to
lockstep with 2 workers, on the same graph converted to its .v/.e files (outside the timing).

Measurements:
  - peak RSS and CPU time (user + system) of every process, from the rusage that wait4 returns
    for it (ru_maxrss: the process's peak resident set; its floor is this script's own RSS,
    about 10 MB, since the child starts as a copy of it). For mpirun, CPU is summed over the
    ranks it reaps and the RSS is the largest rank's.
  - the compute's CPU time: the process's CPU time (/proc/PID/stat) is read when its log shows
    superstep 0's progress line (the workers log at debug level), and taken from the total; so
    the per-iteration CPU does not carry the loading's run-to-run noise.
  - the median superstep time of the progress lines (`superstep N | ... | T ms`) of the local
    run or the master, supersteps 1 to K-1; and each worker's own superstep time (its engine's
    deliver + compute + relay encode, barrier waits excluded), from its debug log.
  - libgrape-lite: its own "run algorithm" time (the query phase, after loading), per iteration
    as (t(K) - t(1)) / (K - 1).
Python 3 standard library only.
"""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import traceback

STEP_RE = re.compile(r"superstep (\d+) \|.*\| ([0-9.]+) ms")
FIRST_STEP = b"superstep 0 |"
TICK = os.sysconf("SC_CLK_TCK")
SPLIT_RE = re.compile(r"time split: .*")


def log(msg=""):
    print(msg, flush=True)


class Proc:
    """A child process whose rusage is collected by wait4."""

    def __init__(self, argv, stderr_path, env=None, keep_stdout=False):
        self.argv = argv
        self.stderr_path = stderr_path
        with open(stderr_path, "wb") as err:
            out = err if keep_stdout else subprocess.DEVNULL
            self.popen = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        self.pid = self.popen.pid
        self.status = None
        self.rusage = None
        self.cpu_at_first_step = None  # CPU seconds when superstep 0's progress line appeared

    def poll(self):
        if self.status is not None:
            return True
        if self.cpu_at_first_step is None:
            self._watch_first_step()
        pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        if pid == 0:
            return False
        self.status, self.rusage = status, ru
        self.popen.returncode = os.waitstatus_to_exitcode(status)
        return True

    def _watch_first_step(self):
        # Loading ends where superstep 0's progress line is logged: the CPU time spent from there
        # on is the compute's (and the output's). The log is read again only while it grows.
        try:
            size = os.path.getsize(self.stderr_path)
            if size == getattr(self, "_seen", -1):
                return
            self._seen = size
            with open(self.stderr_path, "rb") as f:
                if FIRST_STEP not in f.read():
                    return
            with open(f"/proc/{self.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            self.cpu_at_first_step = (int(fields[11]) + int(fields[12])) / TICK
        except (OSError, ValueError, IndexError):
            pass

    @property
    def compute_cpu(self):
        """CPU seconds after superstep 0's progress line (NaN if it was not seen)."""
        if self.cpu_at_first_step is None:
            return float("nan")
        return self.cpu - self.cpu_at_first_step

    def kill(self):
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    @property
    def exit_code(self):
        return os.waitstatus_to_exitcode(self.status)

    @property
    def cpu(self):
        return self.rusage.ru_utime + self.rusage.ru_stime

    @property
    def rss_mb(self):
        return self.rusage.ru_maxrss / 1024.0  # KiB -> MiB


def wait_all(procs, timeout):
    deadline = time.monotonic() + timeout
    while not all([p.poll() for p in procs]):  # a list: every process is polled each time
        if time.monotonic() > deadline:
            for p in procs:
                p.kill()
            for p in procs:
                while not p.poll():
                    time.sleep(0.01)
            raise RuntimeError("timed out: " + " ".join(procs[0].argv[:3]))
        time.sleep(0.003)
    for p in procs:
        if p.exit_code != 0:
            tail = open(p.stderr_path, errors="replace").read()[-2000:]
            raise RuntimeError(f"{' '.join(p.argv)} exited with {p.exit_code}:\n{tail}")


def run_cluster(binary, master_args, workers, port_file, master_log, worker_log, timeout,
                worker_env=None):
    """Runs `lockstep master --listen 127.0.0.1:0 --port-file PORT_FILE MASTER_ARGS` and, once it
    has written its port, `workers` workers x 1 thread (--max-jobs 1), worker i logging to
    worker_log(i); waits for all of them. Returns (master, [workers]) as finished Procs."""
    if os.path.exists(port_file):
        os.remove(port_file)
    master = Proc([binary, "master", "--listen", "127.0.0.1:0", "--port-file", port_file] +
                  master_args, master_log)
    deadline = time.monotonic() + 30
    while not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
        if master.poll() or time.monotonic() > deadline:
            master.kill()
            wait_all([master], 5)
            raise RuntimeError(f"the master wrote no port file; see {master_log}")
        time.sleep(0.01)
    port = open(port_file).read().strip()
    procs = [Proc([binary, "worker", "--master", f"127.0.0.1:{port}", "--threads", "1",
                   "--max-jobs", "1"], worker_log(i), worker_env) for i in range(workers)]
    wait_all([master] + procs, timeout)
    return master, procs


def step_times(path, last):
    """Superstep times (ms) of a log's progress lines, supersteps 1..last."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            m = STEP_RE.search(line)
            if m and 1 <= int(m.group(1)) <= last:
                out.append(float(m.group(2)))
    return out


def median(xs):
    return statistics.median(xs) if xs else float("nan")


class Lockstep:
    def __init__(self, args):
        self.bin = os.path.join(args.build, "lockstep")
        self.graph = args.graph
        self.data = args.data
        self.timeout = args.timeout
        helptext = subprocess.run([self.bin, "master", "--help"], capture_output=True,
                                  text=True).stdout
        self.knows_relay = "--relay" in helptext

    def relay_flags(self, relay):
        if self.knows_relay:
            return ["--relay", relay]
        if relay == "master":
            return []  # today's binary relays through the master only
        raise SystemExit(f"{self.bin} has no --relay flag: only --relay master can run")

    def local(self, threads, iters, tag):
        out = os.path.join(self.data, f"out-{tag}.txt")
        err = os.path.join(self.data, f"{tag}.log")
        p = Proc([self.bin, "run", "pagerank", "--graph", self.graph, "--undirected",
                  "--threads", str(threads), "--tolerance", "0", "--max-iterations", str(iters),
                  "--out", out], err)
        wait_all([p], self.timeout)
        return {"step_ms": median(step_times(err, iters - 1)), "cpu": p.cpu, "rss": p.rss_mb,
                "compute_cpu": p.compute_cpu, "out": out}

    def distributed(self, workers, relay, iters, tag):
        out = os.path.join(self.data, f"out-{tag}")
        port_file = os.path.join(self.data, f"{tag}.port")
        master_log = os.path.join(self.data, f"{tag}-master.log")
        # Debug level for the workers' own per-superstep lines (one line per superstep).
        env = dict(os.environ, LOCKSTEP_LOG="debug")
        master, ws = run_cluster(
            self.bin, ["--app", "pagerank", "--graph", self.graph, "--undirected", "--tolerance",
                       "0", "--max-iterations", str(iters), "--out", out, "--min-workers",
                       str(workers), "--max-workers", str(workers), "--acquire-timeout", "60s"] +
            self.relay_flags(relay), workers, port_file, master_log,
            lambda i: os.path.join(self.data, f"{tag}-worker{i + 1}.log"), self.timeout, env)
        return {"step_ms": median(step_times(master_log, iters - 1)),
                "worker_step_ms": [median(step_times(w.stderr_path, iters - 1)) for w in ws],
                "cpu": sum(w.cpu for w in ws), "rss": sum(w.rss_mb for w in ws),
                "compute_cpu": sum(w.compute_cpu for w in ws),
                "worker_rss": [w.rss_mb for w in ws], "master_rss": master.rss_mb,
                "master_cpu": master.cpu, "out": out, "logs": [master_log] +
                [w.stderr_path for w in ws]}


class Grape:
    """libgrape-lite's run_app, PageRank over mpirun."""

    TIME_RE = re.compile(r"- (load graph|run algorithm): ([0-9.e+-]+) sec")

    def __init__(self, args):
        self.run_app = os.path.join(args.grape, "run_app")
        if not os.access(self.run_app, os.X_OK):
            raise SystemExit(f"no run_app in {args.grape} (see bench/README.md)")
        self.procs = args.grape_procs
        self.data = args.data
        self.timeout = args.timeout
        base = os.path.join(args.data, f"grape-kronecker-{args.scale}")
        self.efile, self.vfile = base + ".e", base + ".v"
        if not (os.path.exists(self.efile) and os.path.exists(self.vfile)):
            in_child(convert, args.graph, self.efile, self.vfile)
        # Ranks yield when they wait instead of spinning: on a machine with fewer cores than
        # processes, spinning ranks took 2x the CPU and up to 2x the time (lockstep's workers
        # block in their waits).
        self.mpirun = ["mpirun", "-n", str(self.procs), "--oversubscribe", "--bind-to", "none",
                       "--mca", "mpi_yield_when_idle", "1"]
        if os.geteuid() == 0:
            self.mpirun.append("--allow-run-as-root")

    def run(self, iters, tag):
        out = os.path.join(self.data, f"grape-{tag}")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        err = os.path.join(self.data, f"grape-{tag}.log")
        # One thread per process, as lockstep's workers; undirected, as --undirected.
        p = Proc(self.mpirun + [self.run_app, "--application", "pagerank", "--vfile", self.vfile,
                                "--efile", self.efile, "--directed=false", "--pr_d", "0.85",
                                "--pr_mr", str(iters), "--app_concurrency", "1", "--out_prefix",
                                out], err)
        wait_all([p], self.timeout)
        times = dict((m.group(1), float(m.group(2)))
                     for m in self.TIME_RE.finditer(open(err, errors="replace").read()))
        if "run algorithm" not in times:
            raise RuntimeError(f"no timing in {err}")
        return {"run_s": times["run algorithm"], "load_s": times.get("load graph"), "cpu": p.cpu,
                "rss": p.rss_mb, "out": out}


def generate(binary, kind, scale, degree, path, weights=True, extra=()):
    """`lockstep generate` (with `extra` flags) into `path` unless it already holds a graph;
    returns `path`."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        subprocess.run([binary, "generate", kind, "--scale", str(scale), "--degree", str(degree),
                        "--out", path] + (["--weights"] if weights else []) + list(extra),
                       check=True, stderr=subprocess.DEVNULL)
    return path


def offset_ids(graph, offset):
    """The graph with `offset` added to both IDs of every line, beside it (written once)."""
    path = graph[:-len(".el")] + f"-plus{offset}.el"
    if os.path.exists(path) and os.path.getsize(path) > 0:
        return path
    log(f"writing {path}")
    with open(graph) as f, open(path + ".tmp", "w") as out:
        for line in f:
            parts = line.split()
            if len(parts) < 2 or line.startswith("#"):
                out.write(line)
                continue
            parts[0] = str(int(parts[0]) + offset)
            parts[1] = str(int(parts[1]) + offset)
            out.write(" ".join(parts) + "\n")
    os.replace(path + ".tmp", path)
    return path


def in_child(fn, *args, **kwargs):
    """Runs fn(*args, **kwargs) in a forked child. What it allocates then never raises this
    script's RSS, which every process started afterwards inherits as the floor of its ru_maxrss
    (it is forked from the script before it execs): converting scale 18 in the script itself
    raised that floor from about 10 to 33 MB, which every master of the run then reported as its
    peak."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            fn(*args, **kwargs)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 - reported, and the child's exit code says it
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{fn.__name__}{args} failed")


def convert(graph, efile, vfile, weights=False):
    """The edge list as libgrape-lite's input: 'src dst' lines (with the weight as a third column
    if `weights`, else dropped) and the vertices."""
    log(f"converting {graph} to {efile} and {vfile}")
    vertices = set()
    with open(graph) as f, open(efile + ".tmp", "w") as e:
        for line in f:
            parts = line.split()
            if len(parts) < 2 or line.startswith("#"):
                continue
            e.write(f"{parts[0]} {parts[1]} {parts[2]}\n" if weights else
                    f"{parts[0]} {parts[1]}\n")
            vertices.add(int(parts[0]))
            vertices.add(int(parts[1]))
    with open(vfile + ".tmp", "w") as v:
        v.writelines(f"{x}\n" for x in sorted(vertices))
    os.replace(efile + ".tmp", efile)
    os.replace(vfile + ".tmp", vfile)


def spread(xs, fmt="{:.2f}"):
    """min / median / max of a list of figures."""
    xs = [x for x in xs if x == x]
    if not xs:
        return "-"
    return "/".join(fmt.format(v) for v in (min(xs), statistics.median(xs), max(xs)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", help="the build directory holding lockstep")
    ap.add_argument("scale", type=int)
    ap.add_argument("--trials", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--workers", default="1,2,4", help="worker counts (default 1,2,4)")
    ap.add_argument("--relay", default="auto",
                    help="relay modes, comma-separated: direct, master, or auto (direct when the "
                         "binary has --relay, master otherwise)")
    ap.add_argument("--local-threads", default="2,1",
                    help="threads of the local runs; the first is the reference (default 2,1)")
    ap.add_argument("--unweighted", action="store_true",
                    help="the graph without its weight column, as issue 11 states its load "
                         "targets (default: with weights)")
    ap.add_argument("--id-offset", type=int, default=0,
                    help="add this to every vertex ID (a dense ID space far from 0, e.g. 4194304; "
                         "written once beside the graph)")
    ap.add_argument("--grape", help="a libgrape-lite build directory with run_app")
    ap.add_argument("--grape-procs", type=int, default=2)
    ap.add_argument("--data", default=os.environ.get("BENCH_DATA", "bench-data"),
                    help="graphs, outputs and logs (default $BENCH_DATA or bench-data)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per job")
    args = ap.parse_args()

    os.makedirs(args.data, exist_ok=True)
    lockstep_bin = os.path.join(args.build, "lockstep")
    suffix = "-unweighted" if args.unweighted else ""
    args.graph = generate(lockstep_bin, "kronecker", args.scale, 16,
                          os.path.join(args.data, f"kronecker-{args.scale}{suffix}.el"),
                          weights=not args.unweighted)
    if args.id_offset:
        args.graph = offset_ids(args.graph, args.id_offset)
    ls = Lockstep(args)
    relays = []
    for r in args.relay.split(","):
        if r == "auto":
            r = "direct" if ls.knows_relay else "master"
        if r not in ("direct", "master"):
            raise SystemExit(f"--relay: unknown mode {r}")
        relays.append(r)
    workers = [int(w) for w in args.workers.split(",")]
    local_threads = [int(t) for t in args.local_threads.split(",")]
    grape = Grape(args) if args.grape else None
    K = args.iterations

    # Configurations in the order they alternate within a round.
    configs = [("local", t, None) for t in local_threads]
    configs += [("dist", w, r) for r in relays for w in workers]
    if grape:
        configs.append(("grape", args.grape_procs, None))

    def name(c):
        kind, n, relay = c
        if kind == "local":
            return f"local {n}t"
        if kind == "grape":
            return f"grape -n {n}"
        return f"{n} worker{'s' if n > 1 else ''}" + (f" ({relay})" if len(relays) > 1 else "")

    log(f"=== PageRank, Kronecker scale {args.scale} ({args.graph}), undirected, {K} iterations, "
        f"{args.trials} rounds; relay {','.join(relays)}"
        f"{'' if ls.knows_relay else ' (the binary has no --relay flag)'}")
    results = {c: [] for c in configs}
    validated = set()
    for trial in range(args.trials):
        for c in configs:
            kind, n, relay = c
            tag = f"{kind}{n}{relay or ''}"
            row = {}
            for iters in (K, 1):
                t = f"{tag}-it{iters}"
                if kind == "local":
                    row[iters] = ls.local(n, iters, t)
                elif kind == "dist":
                    row[iters] = ls.distributed(n, relay, iters, t)
                else:
                    row[iters] = grape.run(iters, t)
            results[c].append(row)
            if kind == "dist" and c not in validated:
                validated.add(c)
                ref = results[configs[0]][0][K]["out"]
                v = subprocess.run([lockstep_bin, "validate", "--expected", ref, "--actual",
                                    row[K]["out"], "--rule", "epsilon", "--epsilon", "0"],
                                   capture_output=True, text=True)
                last = (v.stdout + v.stderr).strip().splitlines()[-1:]
                log(f"  {name(c)}: validate against local at epsilon 0: "
                    f"{'PASS' if v.returncode == 0 else 'FAIL'} {' '.join(last)}")
            if kind == "grape" and c not in validated:
                validated.add(c)
                merged = os.path.join(args.data, "grape-result.txt")
                with open(merged, "wb") as m:
                    for part in sorted(os.listdir(row[K]["out"])):
                        with open(os.path.join(row[K]["out"], part), "rb") as f:
                            shutil.copyfileobj(f, m)
                ref = results[configs[0]][0][K]["out"]
                v = subprocess.run([lockstep_bin, "validate", "--expected", ref, "--actual", merged,
                                    "--rule", "epsilon", "--epsilon", "1e-12"],
                                   capture_output=True, text=True)
                last = (v.stdout + v.stderr).strip().splitlines()[-1:]
                log(f"  {name(c)}: validate against lockstep local at epsilon 1e-12: "
                    f"{'PASS' if v.returncode == 0 else 'FAIL'} {' '.join(last)}")
            if kind == "grape":
                desc = f"run algorithm {row[K]['run_s']:.3f} s ({K} it.), {row[1]['run_s']:.3f} s (1)"
            else:
                desc = f"median superstep {row[K]['step_ms']:.2f} ms"
                if kind == "dist":
                    desc += " (workers' own " + ", ".join(f"{x:.2f}" for x in
                                                         row[K]["worker_step_ms"]) + " ms)"
            log(f"  round {trial + 1} {name(c)}: {desc}, CPU {row[K]['cpu']:.2f} s, "
                f"peak RSS {row[K]['rss']:.0f} MB")

    ref = configs[0]
    ref_rows = results[ref]

    def per_it_cpu(row):
        return (row[K]["compute_cpu"] - row[1]["compute_cpu"]) / (K - 1) * 1e3

    def per_it_ms(c, row):
        if c[0] == "grape":
            return (row[K]["run_s"] - row[1]["run_s"]) / (K - 1) * 1e3
        return row[K]["step_ms"]

    log("")
    log(f"min/median/max over {args.trials} rounds; ratios are to {name(ref)} of the same round.")
    log("  ms/it.: median superstep (grape: (t(K) - t(1)) / (K - 1) of its query phase)")
    log("  worker step: each worker's own superstep (deliver + compute + relay encode)")
    log("  CPU/it.: all workers' (or the local process's) user + system CPU from superstep 0's "
        "progress line on, (cpu(K) - cpu(1)) / (K - 1)")
    log("  CPU job s: the same, whole K-iteration job (loading included)")
    log("  RSS: peak RSS of the K-iteration job, all workers together (largest rank for grape)")
    hdr = (f"{'':18} {'ms/it.':>17} {'x local':>14} {'worker step ms':>17} {'CPU/it. ms':>17} "
           f"{'x local':>14} {'CPU job s':>14} {'RSS MB':>12} {'x local':>14} {'per worker MB':>14} "
           f"{'master MB':>10}")
    log(hdr)
    for c in configs:
        rows = results[c]
        ms = [per_it_ms(c, r) for r in rows]
        ratio = [per_it_ms(c, r) / per_it_ms(ref, q) for r, q in zip(rows, ref_rows)]
        if c[0] != "grape":
            cpu = [per_it_cpu(r) for r in rows]
            cpu_ratio = [per_it_cpu(r) / per_it_cpu(q) for r, q in zip(rows, ref_rows)]
        job_cpu = [r[K]["cpu"] for r in rows]
        rss = [r[K]["rss"] for r in rows]
        rss_ratio = [r[K]["rss"] / q[K]["rss"] for r, q in zip(rows, ref_rows)]
        wstep = per_worker = master = "-"
        if c[0] == "dist":
            wstep = spread([statistics.mean(r[K]["worker_step_ms"]) for r in rows], "{:.1f}")
            per_worker = spread([max(r[K]["worker_rss"]) for r in rows], "{:.0f}")
            master = spread([r[K]["master_rss"] for r in rows], "{:.0f}")
        cpu_txt = spread(cpu, "{:.1f}") if c[0] != "grape" else "-"
        cpu_r = spread(cpu_ratio) if c[0] != "grape" else "-"
        log(f"{name(c):18} {spread(ms, '{:.1f}'):>17} {spread(ratio):>14} {wstep:>17} "
            f"{cpu_txt:>17} {cpu_r:>14} {spread(job_cpu):>14} {spread(rss, '{:.0f}'):>12} "
            f"{spread(rss_ratio):>14} {per_worker:>14} {master:>10}")

    # Issue 11's load targets: a 1-iteration job (loading is almost all of it), its CPU and the
    # largest worker's peak RSS against local mode's of the same round.
    log("")
    log("1-iteration job: CPU s (all workers, or the local process) and x local; peak RSS MB of "
        "the largest worker (the local process) and x local")
    log(f"{'':18} {'CPU job s':>17} {'x local':>14} {'peak MB':>14} {'x local':>14} "
        f"{'master MB':>10}")
    for c in configs:
        if c[0] == "grape":
            continue
        rows = results[c]
        cpu1 = [r[1]["cpu"] for r in rows]
        cpu1_ratio = [r[1]["cpu"] / q[1]["cpu"] for r, q in zip(rows, ref_rows)]
        peak = [max(r[1]["worker_rss"]) if c[0] == "dist" else r[1]["rss"] for r in rows]
        peak_ratio = [p / q[1]["rss"] for p, q in zip(peak, ref_rows)]
        master = spread([r[1]["master_rss"] for r in rows], "{:.0f}") if c[0] == "dist" else "-"
        log(f"{name(c):18} {spread(cpu1):>17} {spread(cpu1_ratio):>14} "
            f"{spread(peak, '{:.0f}'):>14} {spread(peak_ratio):>14} {master:>10}")

    if grape and args.grape_procs in workers:
        dist = [c for c in configs if c[0] == "dist" and c[1] == args.grape_procs]
        g = results[configs[-1]]
        for c in dist:
            r = [per_it_ms(c, a) / per_it_ms(configs[-1], b) for a, b in zip(results[c], g)]
            log(f"lockstep {name(c)} / libgrape-lite -n {args.grape_procs}, per iteration: "
                f"{spread(r)}")
        log(f"libgrape-lite load graph: {spread([r[K]['load_s'] for r in g])} s")

    # Where the distributed time went, from the last round's logs (see bench/README.md).
    for c in configs:
        if c[0] != "dist":
            continue
        logs = results[c][-1][K]["logs"]
        for i, path in enumerate(logs):
            who = "master" if i == 0 else f"worker {i}"
            for line in open(path, errors="replace"):
                m = SPLIT_RE.search(line)
                if m:
                    log(f"  {name(c)}, {who}: {m.group(0)}")


if __name__ == "__main__":
    main()
