#!/usr/bin/env python3
"""Checkpoints and recovery (issue 12): what checkpoints cost a failure-free job, how fast a job
recovers from a killed worker, and a campaign of random kills.

    bench/recovery.py [--workers 2] [--every 5] [--iterations 30] [--trials 3] [--kills 0]
                      [--master-kills 0] [--data DIR] BUILD_DIR SCALE

On the Kronecker graph of bench/kernels.py (`lockstep generate kronecker --scale S --degree 16`,
read with --undirected), PageRank with --tolerance 0 on a master and --workers workers on
loopback (`--threads 1 --max-jobs 1`), checkpoints under --data:
  - overhead: --trials rounds, each running the job without checkpoints and with
    `--checkpoint-every E` alternately; the figure is the master's compute time (its "time split:
    compute X s" line: from the job's start to its last superstep, the workers' load included,
    every checkpoint barrier included) minus its "workers' start" (the load), and the ratio with /
    without of each round; also the checkpoints' bytes per vertex and the master's time per
    checkpoint (from its "checkpoint before superstep" lines);
  - recovery: one job with `--max-restarts 1`; one worker is SIGKILLed when the master logs the
    checkpoint before superstep 2E complete, and a spare is started at once; the figure is
    _SUCCESS's recovery time (the failure to the first resumed superstep) against the job's load
    time (the same job's "workers' start");
  - --kills N: a campaign of N jobs of at least 30 supersteps, each killing a random worker at a
    random moment (a uniform delay within 0.9 x the fastest failure-free supersteps' time after
    superstep 0), with a spare started right after the kill in every other job; each result is
    compared with `lockstep run`'s, byte for byte, and the count that completed with it is
    printed;
  - --master-kills N: a campaign of N such jobs whose master is SIGKILLed at a random moment and a
    new master started on the same port with only --checkpoint-dir (docs/design.md §7.7), which
    finishes the job on the workers that redial; each result is compared the same way.
Timings are compared only as ratios within a round (the machine is shared and noisy).
Python 3 standard library only.
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

import scale

COMPUTE_RE = re.compile(r"time split: compute ([0-9.]+) s = workers' start ([0-9.]+) s")
CHECKPOINT_RE = re.compile(
    r"checkpoint before superstep (\d+) taken: (\d+) bytes in \d+ files, ([0-9.]+) ms")
VERTICES_RE = re.compile(r"completed: (\d+) vertices")
INDEX_RE = re.compile(r"the attempt's index: (\d+) bytes")


def log(msg=""):
    print(msg, flush=True)


class Cluster:
    """A master and its workers on loopback, for one job."""

    def __init__(self, binary, work, name):
        self.binary = binary
        self.dir = os.path.join(work, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.workers = []
        self.master = None
        self.port = None

    def start(self, graph, iterations, workers, extra, max_jobs=True):
        port_file = os.path.join(self.dir, "port")
        self.master_log = os.path.join(self.dir, "master.log")
        self.out = os.path.join(self.dir, "out")
        argv = [self.binary, "master", "--listen", "127.0.0.1:0", "--port-file", port_file,
                "--app", "pagerank", "--graph", graph, "--undirected", "--tolerance", "0",
                "--max-iterations", str(iterations), "--out", self.out,
                "--min-workers", str(workers), "--max-workers", str(workers)] + extra
        self.master = subprocess.Popen(argv, stderr=open(self.master_log, "w"),
                                       stdout=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline:
            if os.path.exists(port_file):
                text = open(port_file).read()
                if text.endswith("\n"):
                    self.port = int(text)
                    break
            time.sleep(0.01)
        for _ in range(workers):
            self.add_worker(max_jobs)

    def add_worker(self, max_jobs=True):
        i = len(self.workers)
        w = subprocess.Popen([self.binary, "worker", "--master", f"127.0.0.1:{self.port}",
                              "--threads", "1"] + (["--max-jobs", "1"] if max_jobs else []),
                             stderr=open(os.path.join(self.dir, f"w{i}.log"), "w"),
                             stdout=subprocess.DEVNULL)
        self.workers.append(w)
        return w

    def restart_master(self, checkpoint_dir):
        """A new master on the same port, given only the checkpoint directory."""
        self.master_log = os.path.join(self.dir, "master-next.log")
        self.master = subprocess.Popen(
            [self.binary, "master", "--listen", f"127.0.0.1:{self.port}", "--checkpoint-dir",
             checkpoint_dir], stderr=open(self.master_log, "w"), stdout=subprocess.DEVNULL)

    def stop_workers(self):
        for w in self.workers:
            if w.poll() is None:
                w.send_signal(signal.SIGTERM)
        self.reap_workers()

    def reap_workers(self):
        for w in self.workers:
            try:
                w.wait(timeout=30)
            except subprocess.TimeoutExpired:
                w.kill()
                w.wait()

    def master_text(self):
        return open(self.master_log).read()

    def wait_for(self, text, timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if text in self.master_text():
                return True
            if self.master.poll() is not None:
                return False
            time.sleep(0.002)
        return False

    def finish(self, timeout=600):
        code = self.master.wait(timeout=timeout)
        self.reap_workers()
        return code

    def lines(self):
        out = []
        link = os.path.realpath(self.out)
        for name in sorted(os.listdir(link)):
            if name.startswith("part-"):
                out.extend(open(os.path.join(link, name), "rb").read().splitlines())
        return sorted(out)

    def success(self):
        return json.load(open(os.path.join(os.path.realpath(self.out), "_SUCCESS")))


def summary(values, unit="", fmt="{:.3f}"):
    if not values:
        return "-"
    s = sorted(values)
    return "/".join(fmt.format(v) for v in (s[0], statistics.median(s), s[-1])) + unit


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("scale", type=int)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--kills", type=int, default=0)
    ap.add_argument("--master-kills", type=int, default=0)
    ap.add_argument("--data", default="bench-data")
    args = ap.parse_args()
    binary = os.path.join(args.build, "lockstep")
    os.makedirs(args.data, exist_ok=True)
    graph = scale.generate(binary, "kronecker", args.scale, 16,
                           os.path.join(args.data, f"kronecker-{args.scale}-unweighted.el"),
                           weights=False)
    work = os.path.join(args.data, "recovery")
    checkpoints = os.path.join(work, "checkpoints")
    os.makedirs(checkpoints, exist_ok=True)
    log(f"Kronecker scale {args.scale}, degree 16, undirected ({graph}); PageRank "
        f"{args.iterations} iterations on {args.workers} workers (--threads 1)")

    # --- overhead
    without, with_, ratios, per_vertex, ckpt_ms, index_per_vertex = [], [], [], [], [], []
    for trial in range(args.trials):
        row = {}
        for mode in ("without", "with"):
            c = Cluster(binary, work, mode)
            extra = []
            if mode == "with":
                extra = ["--checkpoint-dir", checkpoints, "--checkpoint-every", str(args.every)]
            c.start(graph, args.iterations, args.workers, extra)
            if c.finish() != 0:
                sys.exit(f"the {mode} job failed: see {c.master_log}")
            text = c.master_text()
            m = COMPUTE_RE.search(text)
            row[mode] = float(m.group(1)) - float(m.group(2))
            if mode == "with":
                vertices = int(VERTICES_RE.search(text).group(1))
                for s, b, ms in CHECKPOINT_RE.findall(text):
                    per_vertex.append(int(b) / vertices)
                    ckpt_ms.append(float(ms))
                index_per_vertex += [int(b) / vertices for b in INDEX_RE.findall(text)[:1]]
        without.append(row["without"])
        with_.append(row["with"])
        ratios.append(row["with"] / row["without"])
        log(f"  round {trial + 1}: supersteps without checkpoints {row['without']:.3f} s, with "
            f"--checkpoint-every {args.every} {row['with']:.3f} s: x{ratios[-1]:.3f}")
    log(f"failure-free supersteps (min/median/max): without {summary(without, ' s')}, "
        f"with {summary(with_, ' s')}; ratio {summary(ratios)} (bound 1.10); ratio of the "
        f"fastest runs {min(with_) / min(without):.3f}")
    log(f"checkpoint: {summary(per_vertex, ' bytes/vertex', '{:.1f}')} per checkpoint, and an "
        f"index of {summary(index_per_vertex, ' bytes/vertex', '{:.1f}')} once per attempt; "
        f"master's time {summary(ckpt_ms, ' ms', '{:.1f}')}")

    # --- recovery time with a spare
    reference = None
    c = Cluster(binary, work, "recover")
    c.start(graph, args.iterations, args.workers,
            ["--checkpoint-dir", checkpoints, "--checkpoint-every", str(args.every),
             "--max-restarts", "1"])
    if c.wait_for(f"checkpoint before superstep {2 * args.every} is complete"):
        os.kill(c.workers[0].pid, signal.SIGKILL)
    c.add_worker()  # the spare, started once the job has its workers
    if c.finish() != 0:
        sys.exit(f"the recovering job failed: see {c.master_log}")
    success = c.success()
    load = float(COMPUTE_RE.search(c.master_text()).group(2))
    restarts = success.get("restarts", [])
    if restarts:
        r = restarts[0]
        log(f"recovery with a spare: {r['recovery_seconds']:.3f} s from the kill's notice to the "
            f"first resumed superstep (restored superstep {r['restored_superstep']}, "
            f"{r['workers_before']} -> {r['workers']} workers); the job's load took {load:.3f} s; "
            f"bound: load + 5 s = {load + 5:.3f} s")
    else:
        log("recovery: the kill came too late (the job ended first)")

    # --- recovery time without a spare: the job waits --recovery-timeout for one, then goes on
    c = Cluster(binary, work, "recover-alone")
    c.start(graph, args.iterations, args.workers,
            ["--checkpoint-dir", checkpoints, "--checkpoint-every", str(args.every),
             "--max-restarts", "1", "--recovery-timeout", "2s"])
    if c.wait_for(f"checkpoint before superstep {2 * args.every} is complete"):
        os.kill(c.workers[0].pid, signal.SIGKILL)
    if c.finish() != 0:
        sys.exit(f"the recovering job failed: see {c.master_log}")
    restarts = c.success().get("restarts", [])
    load = float(COMPUTE_RE.search(c.master_text()).group(2))
    if restarts:
        r = restarts[0]
        log(f"recovery without a spare (--recovery-timeout 2s): {r['recovery_seconds']:.3f} s "
            f"({r['workers_before']} -> {r['workers']} workers); bound: load + 5 s + 2 s = "
            f"{load + 7:.3f} s")

    # --- the campaigns
    if args.kills > 0 or args.master_kills > 0:
        local = os.path.join(work, "local.txt")
        subprocess.run([binary, "run", "pagerank", "--graph", graph, "--undirected", "--tolerance",
                        "0", "--max-iterations", str(max(30, args.iterations)), "--out", local,
                        "--threads", "2"], check=True, stderr=subprocess.DEVNULL)
        reference = sorted(open(local, "rb").read().splitlines())
    if args.kills > 0:
        rng = random.Random(12)
        ok = 0
        span = 0.9 * min(with_) if with_ else 1.0  # within the supersteps of the fastest run
        for k in range(args.kills):
            spare = k % 2 == 0
            c = Cluster(binary, work, "campaign")
            c.start(graph, max(30, args.iterations), args.workers,
                    ["--checkpoint-dir", checkpoints, "--checkpoint-every", str(args.every),
                     "--max-restarts", "3", "--recovery-timeout", "2s"])
            c.wait_for("superstep 0 |")
            time.sleep(rng.uniform(0, span))
            victim = rng.randrange(args.workers)
            os.kill(c.workers[victim].pid, signal.SIGKILL)
            if spare:
                c.add_worker()
            code = c.finish()
            same = code == 0 and c.lines() == reference
            ok += 1 if same else 0
            attempts = c.success().get("attempts", 1) if code == 0 else "-"
            log(f"  kill {k + 1}: worker {victim}, {'with' if spare else 'without'} a spare: "
                f"{'the failure-free answer' if same else 'FAILED'} (attempts {attempts})")
        log(f"campaign: {ok}/{args.kills} completed with the failure-free answer")
    if args.master_kills > 0:
        rng = random.Random(13)
        ok = 0
        span = 0.9 * min(with_) if with_ else 1.0  # within the supersteps of the fastest run
        for k in range(args.master_kills):
            c = Cluster(binary, work, "master-campaign")
            # Workers serve any number of jobs: the killed master's job aborts on them, and they
            # redial the next master.
            c.start(graph, max(30, args.iterations), args.workers,
                    ["--checkpoint-dir", checkpoints, "--checkpoint-every", str(args.every),
                     "--max-restarts", "3", "--recovery-timeout", "2s"], max_jobs=False)
            c.wait_for("superstep 0 |")
            time.sleep(rng.uniform(0, span))
            ended = c.master.poll() is not None
            c.master.kill()
            c.master.wait()
            killed_at = c.master_text().count(" | active ")
            c.restart_master(checkpoints)
            code = c.master.wait(timeout=600)
            c.stop_workers()
            # A kill after the job was published leaves nothing to resume (the next master says so).
            ended = ended or (code == 2 and "holds no unfinished job" in c.master_text())
            same = (code == 0 or ended) and c.lines() == reference
            ok += 1 if same else 0
            text = c.master_text()
            resumed = re.search(r"resuming job \S+ from (checkpoint at superstep \d+|the start)",
                                text)
            log(f"  master kill {k + 1} after superstep {killed_at - 1}: "
                f"{resumed.group(0) if resumed else 'not resumed'}; "
                f"{'the failure-free answer' if same else 'FAILED (exit %s)' % code}")
        log(f"master campaign: {ok}/{args.master_kills} completed with the failure-free answer")


if __name__ == "__main__":
    main()
