#!/usr/bin/env python3
"""The Graphalytics kernels against the GAP Benchmark Suite's hand-written ones (issue 15).

    bench/kernels.py [--gapbs DIR] [--grape DIR] [--kernels bfs,wcc,sssp,pagerank,lcc,cdlp,coloring]
                     [--kinds kronecker,permuted,uniform] [--graph FILE] [--threads 2]
                     [--workers N] BUILD_DIR SCALE

For each graph kind of --kinds (issue 42), generates the graph (`lockstep generate KIND --scale S
--degree 16`, without weights, read with --undirected; with `--weights` for SSSP, whose integer
weights gapbs reads from the same file through a `.wel` link):
  - kronecker: lockstep's own Kronecker graph, the one bench/run.sh uses;
  - permuted: the same with `--permute`, its vertices relabelled once more by a seeded permutation,
    as the GAP suite and Graphalytics publish their synthetic graphs;
  - uniform: a uniform random graph;
and, with --graph FILE, an edge list the GAP converter wrote (`converter -g S -k 16 -e FILE.el`,
or `-u S`): it holds every edge in both directions, so lockstep reads it as it is (no
--undirected, which would double every edge) and gapbs with -s; SSSP runs on FILE's `.wel`
sibling (`converter ... -w -e FILE.wel`) if there is one, else it is left out; libgrape-lite is
not run on it. Prints one table per graph, timing each kernel both ways on it, alternately:
  - lockstep: `lockstep run APP --undirected --threads T` (BFS and SSSP from vertex 0); the figure is
    the `compute X s` of its summary line (everything after the graph every program gets is built),
    best of --trials runs; its peak RSS from wait4. PageRank runs 5 iterations (`--max-iterations 5
    --tolerance 0`) and its figure is one iteration: the median superstep time of the progress lines
    after superstep 0;
  - gapbs (DIR from --gapbs or $GAPBS_DIR, built with `make`; see bench/README.md): the same graph
    symmetrised (`-s`), OMP_NUM_THREADS=T, best `Trial Time` of `-n 5` (BFS `-r 0`, SSSP `-r 0 -d 2`;
    LCC against `tc`; PageRank against `pr_spmv -i 5 -t 0`, its trial time / 5); its peak RSS.
    CDLP and colouring have no gapbs kernel: their supersteps and times are printed alone;
  - libgrape-lite (DIR from --grape or $GRAPE_DIR, a build directory holding run_app; see
    bench/README.md), for the six Graphalytics kernels: `mpirun -n 1 run_app --application APP
    --directed=false --app_concurrency T` on the same graph as its .v/.e files (SSSP's with the
    weights), BFS and SSSP from vertex 0, CDLP 10 rounds; its figure is its own "run algorithm"
    time, best of --trials (PageRank: `--pr_mr 5`, divided by 5); its peak RSS.
With --binary, both sides read their binary forms instead of the text (issue 42's memory target):
lockstep the partitioned form (`lockstep partition GRAPH [--undirected] --out GRAPH.parts`), gapbs
its serialized graph (`converter -f GRAPH -s -b GRAPH.sg`, `-wb GRAPH.wsg` for SSSP's `.wel`),
each written once beside the graph; the peak RSS columns then compare the two binary reads.
With --workers N, each trial also runs the kernel on a master with N workers x 1 thread on
loopback (`lockstep master --app APP ... --min-workers N`, `lockstep worker --threads 1`); its
figure is the master's compute less the workers' start (its "time split" line: loading
excluded, as local mode's compute excludes it), or for PageRank the median superstep of its
progress lines after superstep 0, and is printed with its ratio to local mode's, best of --trials.
Prints each kernel's times side by side and the ratios lockstep / gapbs and lockstep /
libgrape-lite, or "-" and "reference missing" without the reference. Outputs are not compared here (the suite checks lockstep against its oracles).
Python 3 standard library only.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402  (the graph generator)

COMPUTE_RE = re.compile(rb"compute ([0-9.]+) s")
SUPERSTEPS_RE = re.compile(rb"([0-9]+) supersteps")
STEP_RE = re.compile(rb"superstep ([0-9]+) \|.*\| ([0-9.]+) ms")
TRIAL_RE = re.compile(rb"Trial Time:\s+([0-9.]+)")
SPLIT_RE = re.compile(rb"time split: compute ([0-9.]+) s = workers' start ([0-9.]+) s")
PR_ITERATIONS = 5
# lockstep app -> (gapbs binary, its extra flags)
GAPBS = {"bfs": ("bfs", ["-r", "0"]), "wcc": ("cc", []), "sssp": ("sssp", ["-r", "0", "-d", "2"]),
         "pagerank": ("pr_spmv", ["-i", str(PR_ITERATIONS), "-t", "0"]), "lcc": ("tc", [])}
# lockstep app -> (libgrape-lite application, its extra flags)
GRAPE = {"bfs": ("bfs", ["--bfs_source", "0"]), "sssp": ("sssp", ["--sssp_source", "0"]),
         "wcc": ("wcc", []), "cdlp": ("cdlp", ["--cdlp_mr", "10"]), "lcc": ("lcc", []),
         "pagerank": ("pagerank", ["--pr_d", "0.85", "--pr_mr", str(PR_ITERATIONS)])}
GRAPE_TIME_RE = re.compile(rb"- run algorithm: ([0-9.e+-]+) sec")
# lockstep app -> its extra flags
FLAGS = {"bfs": ["--source", "0"], "sssp": ["--source", "0"],
         "pagerank": ["--max-iterations", str(PR_ITERATIONS), "--tolerance", "0"]}


def figure(kernel, text):
    """lockstep's time from its output: compute, or for PageRank the median iteration."""
    if kernel == "pagerank":
        steps = sorted(float(t) / 1e3 for n, t in STEP_RE.findall(text) if int(n) > 0)
        if steps:
            return steps[len(steps) // 2]
        sys.exit(f"no superstep lines in lockstep's output:\n{text.decode()[-2000:]}")
    m = COMPUTE_RE.search(text)
    if not m:
        sys.exit(f"no compute time in lockstep's output:\n{text.decode()[-2000:]}")
    return float(m.group(1))


def time_distributed(args, binary, kernel, graph, read_flags, log):
    """The kernel on a master with --workers workers x 1 thread on loopback: its compute without
    the workers' start (the master's "time split" line), or for PageRank the median iteration of
    the master's progress lines, as local mode's figure is taken."""
    out = os.path.join(args.data, "kernels-dist-out")
    shutil.rmtree(out, ignore_errors=True)
    scale.run_cluster(binary, ["--app", kernel, "--graph", graph] + read_flags +
                      ["--out", out, "--min-workers", str(args.workers), "--max-workers",
                       str(args.workers), "--acquire-timeout", "60s"] + FLAGS.get(kernel, []),
                      args.workers, log + ".port", log, lambda i: f"{log}.worker{i + 1}", 3600)
    with open(log, "rb") as f:
        text = f.read()
    if kernel == "pagerank":
        return figure(kernel, text)
    m = SPLIT_RE.search(text)
    if not m:
        sys.exit(f"no time split in the master's log:\n{text.decode()[-2000:]}")
    return float(m.group(1)) - float(m.group(2))


def run(argv, log, env=None):
    """Runs argv to completion (scale.Proc: rusage from wait4); returns (its output, peak RSS MB)."""
    p = scale.Proc(argv, log, env, keep_stdout=True)
    scale.wait_all([p], 3600)
    with open(log, "rb") as f:
        return f.read(), p.rss_mb


# graph kind -> (`lockstep generate` kind, its extra flags)
KINDS = {"kronecker": ("kronecker", []), "permuted": ("kronecker", ["--permute"]),
         "uniform": ("uniform", [])}


def graphs(args, binary, kind):
    """(title, plain graph, weighted graph or None, lockstep's reading flags) for one kind."""
    if kind == "file":
        wel = os.path.splitext(args.graph)[0] + ".wel"
        how, flags = (("read as given", []) if args.as_given else
                      ("read --symmetric (each pair once)", ["--symmetric"]))
        return (f"GAP converter's edge list {args.graph}, both directions {how}",
                args.graph, wel if os.path.exists(wel) else None, flags)
    if kind not in KINDS:
        sys.exit(f"--kinds: unknown graph kind {kind!r}; the kinds are {', '.join(KINDS)}")
    gen, extra = KINDS[kind]
    base = os.path.join(args.data, f"{kind}-{args.scale}")
    plain = scale.generate(binary, gen, args.scale, 16, base + "-unweighted.el", weights=False,
                           extra=extra)
    weighted = scale.generate(binary, gen, args.scale, 16, base + ".el", weights=True,
                              extra=extra)
    wel = os.path.splitext(weighted)[0] + ".wel"
    if not os.path.exists(wel):
        os.symlink(os.path.basename(weighted), wel)
    title = f"{kind} scale {args.scale}, degree 16, undirected ({plain})"
    return title, plain, wel, ["--undirected"]


def grape_inputs(args, kind, plain, wel):
    """libgrape-lite's .v/.e files for the kind's graphs, converted once; {} without run_app."""
    run_app = os.path.join(args.grape, "run_app") if args.grape else ""
    if kind == "file" or not (run_app and os.access(run_app, os.X_OK)):
        return {}
    files = {}
    for name, source, weights in (("plain", plain, False), ("weighted", wel, True)):
        base = os.path.join(args.data, f"grape-{kind}-{args.scale}-{name}")
        if not (os.path.exists(base + ".e") and os.path.exists(base + ".v")):
            scale.in_child(scale.convert, source, base + ".e", base + ".v", weights=weights)
        files[name] = (base + ".v", base + ".e")
    return files


def binary_forms(args, binary, graph, read_flags):
    """(lockstep's partitioned form, gapbs's .sg or .wsg) of `graph`, each written once beside it;
    gapbs's is None without its converter."""
    parts = graph + (".sym" if "--symmetric" in read_flags else "") + ".parts"
    if not os.path.exists(os.path.join(parts, "lockstep-parts.manifest")):
        subprocess.run([binary, "partition", "--graph", graph, "--out", parts] + read_flags,
                             check=True, stderr=subprocess.DEVNULL)
    converter = os.path.join(args.gapbs, "converter") if args.gapbs else ""
    if not (converter and os.access(converter, os.X_OK)):
        return parts, None
    weighted = graph.endswith(".wel")
    sg = os.path.splitext(graph)[0] + (".wsg" if weighted else ".sg")
    if not os.path.exists(sg):
        subprocess.run([converter, "-f", graph, "-s"] + (["-w"] if weighted else []) +
                             ["-b", sg], check=True, stdout=subprocess.DEVNULL)
    return parts, sg


def time_gapbs(args, kernel, graph, env, log):
    """gapbs's best trial for the kernel (PageRank: one iteration) and its peak RSS, or None."""
    ref = GAPBS.get(kernel)
    ref_bin = os.path.join(args.gapbs, ref[0]) if ref and args.gapbs else ""
    if not (ref_bin and os.access(ref_bin, os.X_OK)) or graph is None:
        return None
    # A serialized graph is symmetric already.
    symmetrize = [] if graph.endswith((".sg", ".wsg")) else ["-s"]
    text, rss = run([ref_bin, "-f", graph] + symmetrize + ["-n", "5"] + ref[1], log, env)
    trial = min(float(t) for t in TRIAL_RE.findall(text))
    return (trial / PR_ITERATIONS if kernel == "pagerank" else trial), rss


def time_grape(args, kernel, files, log):
    """libgrape-lite's run time for the kernel (PageRank: one iteration) and its peak RSS."""
    vfile, efile = files["weighted" if kernel == "sssp" else "plain"]
    app, flags = GRAPE[kernel]
    prefix = os.path.join(args.data, "grape-out")
    os.makedirs(prefix, exist_ok=True)
    mpirun = ["mpirun", "-n", "1", "--bind-to", "none"] + (
        ["--allow-run-as-root"] if os.geteuid() == 0 else [])
    text, rss = run(mpirun + [os.path.join(args.grape, "run_app"), "--application", app,
                              "--vfile", vfile, "--efile", efile, "--directed=false",
                              "--app_concurrency", str(args.threads), "--out_prefix", prefix]
                    + flags, log)
    m = GRAPE_TIME_RE.search(text)
    if not m:
        sys.exit(f"no run time in libgrape-lite's output:\n{text.decode()[-2000:]}")
    t = float(m.group(1))
    return (t / PR_ITERATIONS if kernel == "pagerank" else t), rss


def row(args, binary, kernel, graph, read_flags, grape_files):
    """One kernel on one graph: lockstep and the references alternately; its table line."""
    out = os.path.join(args.data, "kernels-out.txt")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    mine, theirs, grapes, mine_rss, their_rss, grape_rss = [], [], [], 0.0, 0.0, 0.0
    dist = []
    supersteps = ""
    ref_graph = graph
    if args.binary:
        graph, ref_graph = binary_forms(args, binary, graph, read_flags)
        read_flags = []
    for _ in range(args.trials):
        argv = [binary, "run", kernel, "--graph", graph] + read_flags + [
            "--threads", str(args.threads), "--out", out] + FLAGS.get(kernel, [])
        text, rss = run(argv, out + ".log")
        mine.append(figure(kernel, text))
        m = SUPERSTEPS_RE.search(text)
        supersteps = f"{int(m.group(1))} supersteps" if m else ""
        mine_rss = max(mine_rss, rss)
        if (ref := time_gapbs(args, kernel, ref_graph, env, out + ".gapbs.log")) is not None:
            theirs.append(ref[0])
            their_rss = max(their_rss, ref[1])
        if kernel in GRAPE and grape_files:
            t, rss = time_grape(args, kernel, grape_files, out + ".grape.log")
            grapes.append(t)
            grape_rss = max(grape_rss, rss)
        if args.workers and "--symmetric" not in read_flags:  # a master reads it partitioned
            dist.append(time_distributed(args, binary, kernel, graph, read_flags,
                                         out + ".master.log"))
    best = min(mine)

    def cell(refs, width):
        return (f"{min(refs):{width}.4f} {best / min(refs):7.2f}" if refs
                else f"{'-':>{width}} {'-':>7}")

    def mb(refs, rss):
        return f"{rss:9.0f}" if refs else f"{'-':>9}"

    why = ("" if theirs else
           (", no gapbs kernel" if kernel not in GAPBS else ", gapbs: reference missing"))
    if kernel in GRAPE and not grapes:
        why += ", libgrape-lite: reference missing"
    if dist:
        ratio = f"{min(dist) / best:.2f}x" if best > 0 else "- x"
        why += f"; {args.workers} workers: {min(dist):.4f} s, {ratio} local"
    return (f"{kernel:8} {best:11.4f} {cell(theirs, 9)} {cell(grapes, 9)} {mine_rss:12.0f} "
            f"{mb(theirs, their_rss)} {mb(grapes, grape_rss)}   {supersteps}{why}")


def table(args, binary, kind):
    """Prints one graph kind's table, a line per kernel as it is measured."""
    title, plain, wel, read_flags = graphs(args, binary, kind)
    grape_files = grape_inputs(args, kind, plain, wel)
    print(f"{title}, {args.threads} threads")
    print(f"{'kernel':8} {'lockstep s':>11} {'gapbs s':>9} {'ratio':>7} {'grape s':>9} {'ratio':>7} "
          f"{'lockstep MB':>12} {'gapbs MB':>9} {'grape MB':>9}", flush=True)
    for kernel in args.kernels.split(","):
        if kernel == "sssp" and wel is None:
            print(f"{kernel:8} left out: no weighted .wel beside the graph", flush=True)
            continue
        graph = wel if kernel == "sssp" else plain
        print(row(args, binary, kernel, graph, read_flags, grape_files), flush=True)
    print(flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("scale", type=int)
    ap.add_argument("--gapbs", default=os.environ.get("GAPBS_DIR", ""))
    ap.add_argument("--grape", default=os.environ.get("GRAPE_DIR", ""))
    ap.add_argument("--kernels", default="bfs,wcc")
    ap.add_argument("--kinds", default="kronecker,permuted,uniform",
                    help="graph kinds, one table each: " + ", ".join(KINDS))
    ap.add_argument("--graph", default="",
                    help="also an edge list the GAP converter wrote (every edge both ways), "
                         "read --symmetric")
    ap.add_argument("--as-given", action="store_true",
                    help="read --graph as a directed graph that lists both directions (the "
                         "figures before --symmetric existed)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--workers", type=int, default=0,
                    help="also run each kernel on a master with this many workers x 1 thread on "
                         "loopback (issue 42: 2), and print its figure and its ratio to local "
                         "mode's")
    ap.add_argument("--binary", action="store_true",
                    help="both sides read their binary forms: lockstep its partitioned form, "
                         "gapbs its .sg (written once beside each graph)")
    ap.add_argument("--data", default="bench-data")
    args = ap.parse_args()
    binary = os.path.join(args.build, "lockstep")
    os.makedirs(args.data, exist_ok=True)
    kinds = [k for k in args.kinds.split(",") if k]
    for kind in kinds:  # Every kind named before any is measured: no table lost to a typo.
        if kind not in KINDS:
            sys.exit(f"--kinds: unknown graph kind {kind!r}; the kinds are {', '.join(KINDS)}")
    if args.graph and not os.path.isfile(args.graph):
        sys.exit(f"--graph: no such file {args.graph}")
    for kind in kinds + (["file"] if args.graph else []):
        table(args, binary, kind)


if __name__ == "__main__":
    main()
