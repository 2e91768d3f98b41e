#!/usr/bin/env python3
"""What --trace-vertex costs (issue 14): nothing measurable when unused.

    bench/trace.py BUILD --reference REF_BUILD SCALE [--kernels pagerank,sssp,bfs,wcc,coloring]
                   [--trials 7] [--threads 2] [--data DIR]

REF_BUILD is a build of lockstep without vertex tracing (e.g. `git worktree add /tmp/ref 1ac4d89`
built Release, as BUILD is). On the Kronecker graph bench/kernels.py uses (scale SCALE, degree 16,
read with --undirected; weighted for SSSP), each trial runs, in an order that rotates from trial
to trial:
  - reference: REF_BUILD's `lockstep run KERNEL` as bench/kernels.py runs it;
  - unused:    BUILD's, the same command (no vertex traced);
  - traced:    BUILD's with `--trace-vertex 0` (a vertex of the graph).
The figure is the sum of the superstep times of run's progress lines (0.1 ms each; the summary
line's `compute X s` has 1 ms), and for PageRank its median superstep after superstep 0 (one
iteration), as bench/kernels.py takes it. Prints min/median of each and the ratios unused / reference (the
claim: within the noise, about 1.00) and traced / reference, side by side.
Python 3 standard library only.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402  (figures and flags of the kernels bench)
import scale  # noqa: E402  (the graph generator)


def figure(kernel, text):
    """The compute time of a run's output: its supersteps' sum (PageRank: one iteration)."""
    if kernel == "pagerank":
        return kernels.figure(kernel, text)
    steps = [float(t) / 1e3 for _, t in kernels.STEP_RE.findall(text)]
    if not steps:
        sys.exit(f"no superstep lines in lockstep's output:\n{text.decode()[-2000:]}")
    return sum(steps)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("scale", type=int)
    ap.add_argument("--reference", required=True, help="a build without vertex tracing")
    ap.add_argument("--kernels", default="pagerank,sssp,bfs,wcc,coloring")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--data", default="bench-data")
    args = ap.parse_args()
    binaries = {"reference": os.path.join(args.reference, "lockstep"),
                "unused": os.path.join(args.build, "lockstep"),
                "traced": os.path.join(args.build, "lockstep")}
    os.makedirs(args.data, exist_ok=True)
    graph = scale.generate(binaries["unused"], "kronecker", args.scale, 16,
                           os.path.join(args.data, f"kronecker-{args.scale}-unweighted.el"),
                           weights=False)
    weighted = scale.generate(binaries["unused"], "kronecker", args.scale, 16,
                              os.path.join(args.data, f"kronecker-{args.scale}.el"), weights=True)
    out = os.path.join(args.data, "trace-out.txt")
    print(f"Kronecker scale {args.scale}, degree 16, undirected, {args.threads} threads, "
          f"{args.trials} trials; seconds min/median")
    print(f"{'kernel':8} {'reference':>17} {'unused':>17} {'traced':>17} "
          f"{'unused/ref':>11} {'traced/ref':>11}")
    order = list(binaries)
    for kernel in args.kernels.split(","):
        figures = {k: [] for k in binaries}
        for trial in range(args.trials):
            for k in order[trial % 3:] + order[:trial % 3]:
                argv = [binaries[k], "run", kernel, "--graph",
                        weighted if kernel == "sssp" else graph, "--undirected", "--threads",
                        str(args.threads), "--out", out] + kernels.FLAGS.get(kernel, [])
                if k == "traced":
                    argv += ["--trace-vertex", "0"]
                text, _ = kernels.run(argv, out + ".log")
                figures[k].append(figure(kernel, text))

        def cell(k):
            return f"{min(figures[k]):8.4f}/{statistics.median(figures[k]):.4f}"

        def ratio(k):
            best = min(figures[k]) / min(figures["reference"])
            mid = statistics.median(figures[k]) / statistics.median(figures["reference"])
            return f"{best:5.3f}/{mid:5.3f}"

        print(f"{kernel:8} {cell('reference'):>17} {cell('unused'):>17} {cell('traced'):>17} "
              f"{ratio('unused'):>11} {ratio('traced'):>11}")


if __name__ == "__main__":
    main()
