#!/usr/bin/env python3
"""Two builds' graph loads side by side, alternately (issue 41: a refactor of the load must not
slow it).

    bench/load_ab.py [--pairs N] [--workers W] [--parts K] BEFORE AFTER GRAPH

BEFORE and AFTER are `lockstep` binaries; GRAPH an edge list, read `--undirected` (for example
`lockstep generate kronecker --scale 20 --degree 16`). Each pair runs, for each binary in turn
(the order swapped every pair, so that neither always runs on a warmer cache):

  partition  `lockstep partition --graph GRAPH --undirected --out DIR --parts K`: the whole text
             loaded in one process and written in the partitioned form; wall and CPU seconds.
  form       PageRank (1 iteration) by a master and W workers (`--threads 1`) on loopback, from
             the partitioned form the same binary wrote; the slowest worker's load (the seconds
             of its `loaded its share` line) and the workers' CPU seconds.
  text       the same from the text itself (each worker reads its share of the edge list).

and checks that both binaries wrote the same partitioned form (every file byte for byte but the
graph's random identity and the checksums it moves) and the same results. Prints each pair's
figures and, last, the median of AFTER / BEFORE per figure. Python 3 standard library only.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

LOADED_RE = re.compile(rb"loaded its share: .*\| ([0-9.]+) s")


def run_timed(argv, log):
    """Runs argv to completion; returns (wall seconds, CPU seconds)."""
    start = time.monotonic()
    with open(log, "wb") as err:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv[0]} {argv[1]} failed: see {log}")
    return wall, usage.ru_utime + usage.ru_stime


def distributed(binary, graph, workers, work, tag):
    """A master and `workers` workers run PageRank; the slowest load and the workers' CPU."""
    port_file = os.path.join(work, f"{tag}.port")
    out = os.path.join(work, f"{tag}.out")
    master_log = os.path.join(work, f"{tag}-master.log")
    master = subprocess.Popen(
        [binary, "master", "--listen", "127.0.0.1:0", "--port-file", port_file, "--app",
         "pagerank", "--graph", graph, "--undirected", "--tolerance", "0", "--max-iterations",
         "1", "--out", out, "--min-workers", str(workers), "--max-workers", str(workers),
         "--acquire-timeout", "60s"],
        stdout=subprocess.DEVNULL, stderr=open(master_log, "wb"))
    deadline = time.monotonic() + 30
    while not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
        if master.poll() is not None or time.monotonic() > deadline:
            master.kill()
            sys.exit(f"the master wrote no port file: see {master_log}")
        time.sleep(0.01)
    port = open(port_file).read().strip()
    logs = [os.path.join(work, f"{tag}-w{i}.log") for i in range(workers)]
    procs = [subprocess.Popen([binary, "worker", "--master", f"127.0.0.1:{port}", "--threads",
                               "1", "--max-jobs", "1"], stdout=subprocess.DEVNULL,
                              stderr=open(log, "wb")) for log in logs]
    cpu = 0.0
    for p in procs:
        _, status, usage = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            master.kill()
            sys.exit(f"a worker failed: see {work}/{tag}-w*.log")
        cpu += usage.ru_utime + usage.ru_stime
    if master.wait() != 0:
        sys.exit(f"the master failed: see {master_log}")
    loads = []
    for log in logs:
        found = LOADED_RE.findall(open(log, "rb").read())
        if not found:
            sys.exit(f"no 'loaded its share' line in {log}")
        loads.append(float(found[-1]))
    os.remove(port_file)
    return max(loads), cpu, out


def masked(path):
    """A partitioned form's file with the graph's identity and the checksums blanked."""
    data = open(path, "rb").read()
    if path.endswith(".manifest"):
        lines = [ln for ln in data.split(b"\n")
                 if not ln.startswith(b"graph ") and not ln.startswith(b"end ")]
        return b"\n".join(re.sub(rb" [0-9a-f,]+$", b"", ln) for ln in lines)
    return data[:16] + b"\0" * 8 + data[24:]  # the header's graph_id


def contents(path):
    """A result: a file's bytes, or a directory's result files' by name (not _SUCCESS, which
    names the job)."""
    if not os.path.isdir(path):
        return open(path, "rb").read()
    return {n: contents(os.path.join(path, n)) for n in sorted(os.listdir(path))
            if n != "_SUCCESS"}


def same_form(a, b):
    names = sorted(os.listdir(a))
    if names != sorted(os.listdir(b)):
        return False
    return all(masked(os.path.join(a, n)) == masked(os.path.join(b, n)) for n in names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("graph")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--parts", type=int, default=2)
    args = ap.parse_args()
    figures = ["partition wall", "partition cpu", "form load", "form cpu", "text load",
               "text cpu"]
    ratios = {f: [] for f in figures}
    with tempfile.TemporaryDirectory(prefix="load_ab.") as work:
        for pair in range(args.pairs):
            got = {}
            order = [("before", args.before), ("after", args.after)]
            if pair % 2 == 1:
                order.reverse()
            outs = {}
            for name, binary in order:
                form = os.path.join(work, f"{name}.form")
                shutil.rmtree(form, ignore_errors=True)
                wall, cpu = run_timed(
                    [binary, "partition", "--graph", args.graph, "--undirected", "--out", form,
                     "--parts", str(args.parts)], os.path.join(work, f"{name}-partition.log"))
                form_load, form_cpu, form_out = distributed(binary, form, args.workers, work,
                                                            f"{name}-form")
                text_load, text_cpu, text_out = distributed(binary, args.graph, args.workers,
                                                            work, f"{name}-text")
                got[name] = dict(zip(figures, [wall, cpu, form_load, form_cpu, text_load,
                                               text_cpu]))
                outs[name] = (form, form_out, text_out)
            same = same_form(outs["before"][0], outs["after"][0])
            for i in (1, 2):
                same = same and contents(outs["before"][i]) == contents(outs["after"][i])
            if not same:
                sys.exit(f"pair {pair + 1}: the builds wrote different forms or results ({work})")
            print(f"pair {pair + 1} ({order[0][0]} first): " + " | ".join(
                f"{f} {got['before'][f]:.2f}/{got['after'][f]:.2f}" for f in figures), flush=True)
            for f in figures:
                ratios[f].append(got["after"][f] / max(got["before"][f], 1e-9))
    print("after / before, median of the pairs (min-max):")
    for f in figures:
        r = ratios[f]
        print(f"  {f:15} {statistics.median(r):.3f} ({min(r):.3f}-{max(r):.3f})")


if __name__ == "__main__":
    main()
