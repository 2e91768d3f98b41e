#!/usr/bin/env python3
"""Where the CPU of a distributed job goes, phase by phase, against local mode (issue 11).

    bench/profile_load.py [--workers N] [--rounds R] [--iterations K] BUILD_DIR GRAPH [-- RUN_FLAGS]

Runs `lockstep run pagerank` (2 threads) and a master with N workers (`--threads 1 --max-jobs 1`)
on loopback, alternately, R rounds, every process of interest under `perf record -F 1000` (CPU
clock samples: 1 sample = 1 ms of CPU). Prints, per round, the samples of local mode and of all
workers together, grouped by phase from the sampled function's name (the groups below), and their
ratio. A ratio of sample counts is a ratio of CPU times, so this splits bench/scale.py's "CPU job"
ratio by phase; the machine's noise moves whole rounds, so compare groups within a round.

RUN_FLAGS (default: --undirected --tolerance 0) go to both; GRAPH is an edge list (for example
bench/scale.py's kronecker-20-unweighted.el). Needs `perf` (Debian: linux-perf) and
kernel.perf_event_paranoid <= 1 (or root). Python 3 standard library only.
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

# (group, pattern on the function's name), first match wins; kernel functions form one group.
GROUPS = [
    ("parse", r"ParseChunk|ShareReader|ParseRound|RecordLines"),
    ("route+encode (sender)", r"LoadEdgeFile"),
    ("meet ids (hash)", r"MeetIds|VertexIdFromExternal|SHA1|PartitionFor"),
    ("take edges (receiver)", r"TakeEdges|Intern"),
    ("ranks, ask remotes", r"Rank|AskRemotes|Resolve"),
    ("assemble, orient", r"Assemble|SortPartEdges|OrientEdges"),
    ("csr bucket", r"StableBucket"),
    ("build, other", r"Topology::|SortByLeadingBits|MapEdges|Dictionary|LoadGraph"),
    ("engine, relay set-up", r"ConnectPeers|FindBoundary|Engine<.*>::Engine|HaveVertices"),
    ("superstep", r"Deliver|Compute|Relay|Decode|Encode"),
    ("output", r"printf|hack_digit|mpn|Crc32c|Output|Write"),
    ("memmove, memset", r"memmove|memset|memcpy"),
    ("malloc", r"malloc|free|_int_"),
    ("grpc, protobuf", r"grpc|protobuf|absl"),
]
KERNEL = "kernel"
LINE_RE = re.compile(r"\s+(\d+)\s+(\[.\])\s+(.*)")


def group_of(kind, sym):
    if kind == "[k]":
        return KERNEL
    for name, pattern in GROUPS:
        if re.search(pattern, sym):
            return name
    return "other"


def samples(path):
    """Samples of one perf.data file per group."""
    out = subprocess.run(["perf", "report", "-i", path, "--no-children", "--sort", "sym", "-g",
                          "none", "-F", "sample,sym"], capture_output=True, text=True).stdout
    counts = collections.Counter()
    for line in out.splitlines():
        m = LINE_RE.match(line)
        if m:
            counts[group_of(m.group(2), m.group(3))] += int(m.group(1))
    return counts


def perf(argv, data, log):
    return subprocess.Popen(["perf", "record", "-q", "-F", "1000", "-o", data, "--"] + argv,
                            stdout=subprocess.DEVNULL, stderr=open(log, "wb"))


def run_local(binary, graph, flags, iterations, work):
    data = os.path.join(work, "local.data")
    p = perf([binary, "run", "pagerank", "--graph", graph, "--threads", "2", "--max-iterations",
              str(iterations), "--out", os.path.join(work, "local.out")] + flags, data,
             os.path.join(work, "local.log"))
    if p.wait() != 0:
        sys.exit("local run failed:\n" + open(os.path.join(work, "local.log")).read()[-2000:])
    return samples(data)


def run_workers(binary, graph, flags, iterations, workers, work):
    port_file = os.path.join(work, "port")
    if os.path.exists(port_file):
        os.remove(port_file)
    master = subprocess.Popen(
        [binary, "master", "--listen", "127.0.0.1:0", "--port-file", port_file, "--app",
         "pagerank", "--graph", graph, "--max-iterations", str(iterations), "--out",
         os.path.join(work, "dist.out"), "--min-workers", str(workers), "--max-workers",
         str(workers), "--acquire-timeout", "60s"] + flags,
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "master.log"), "wb"))
    deadline = time.monotonic() + 30
    while not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
        if master.poll() is not None or time.monotonic() > deadline:
            master.kill()
            sys.exit(f"the master wrote no port file: see {work}/master.log")
        time.sleep(0.01)
    port = open(port_file).read().strip()
    procs = [perf([binary, "worker", "--master", f"127.0.0.1:{port}", "--threads", "1",
                   "--max-jobs", "1"], os.path.join(work, f"w{i}.data"),
                  os.path.join(work, f"w{i}.log")) for i in range(workers)]
    bad = [i for i, p in enumerate(procs) if p.wait() != 0]
    if master.wait() != 0 or bad:
        sys.exit(f"the distributed job failed: see {work}/master.log and w*.log")
    total = collections.Counter()
    for i in range(workers):
        total.update(samples(os.path.join(work, f"w{i}.data")))
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build")
    parser.add_argument("graph")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=1)
    argv = sys.argv[1:]
    flags = ["--undirected", "--tolerance", "0"]
    if "--" in argv:
        at = argv.index("--")
        argv, flags = argv[:at], argv[at + 1:]
    args = parser.parse_args(argv)
    binary = os.path.join(args.build, "lockstep")
    with tempfile.TemporaryDirectory(prefix="profile_load.") as work:
        for r in range(args.rounds):
            local = run_local(binary, args.graph, flags, args.iterations, work)
            dist = run_workers(binary, args.graph, flags, args.iterations, args.workers, work)
            print(f"round {r + 1}: samples at 1 kHz (ms of CPU), local mode (2 threads) and "
                  f"{args.workers} workers together")
            print(f"  {'group':24} {'local':>7} {'workers':>8} {'excess':>7}")
            names = sorted(set(local) | set(dist), key=lambda g: -dist[g])
            for g in names:
                print(f"  {g:24} {local[g]:7d} {dist[g]:8d} {dist[g] - local[g]:7d}")
            lt, dt = sum(local.values()), sum(dist.values())
            print(f"  {'total':24} {lt:7d} {dt:8d} {dt - lt:7d}   ratio {dt / max(lt, 1):.2f}")


if __name__ == "__main__":
    main()
