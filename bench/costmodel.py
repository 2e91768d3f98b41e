#!/usr/bin/env python3
"""The cost model of a PageRank superstep in direct mode, checked against the workers' timers.

    bench/costmodel.py [options] BUILD_DIR [SCALE]

docs/design.md §5.8 gives the model. For worker w of W (one thread each), in milliseconds:

    compute_w  = c_e * E_w                                 E_w: in-edges of w's vertices
    exchange_w = x0(W) + (bytes_out,w + bytes_in,w) / B_peer
    barrier    = L(W)
    path       = max_w (compute_w + exchange_w) + barrier  the critical worker's superstep
    CPU        = sum_w (c_e * E_w + bytes_w / B_cpu + o_w(W)) + o_m(W)
    queue      = max(0, CPU / cores - (compute + exchange)) cores: what other processes left
    T_step     = path + queue                              queue: the critical worker's waits

bytes_out,w = 8 bytes per message (a PageRank value, coding ALL) for each of w's vertices and
each other partition holding one of its neighbours, plus 36 bytes per batch (W - 1 batches);
bytes_in,w likewise. Each round first calibrates the constants on runs that are not the ones
predicted:
  - c_e (s per in-edge): `lockstep run pagerank --threads 1` on the same graph, its CPU time per
    superstep (a K-iteration job less a 1-iteration job) over its directed edges, the mean of
    one measure before the round's other runs and one after them;
  - L(W), x0(W), o_w(W), o_m(W): an almost-empty job (Kronecker scale 8) with W workers: the
    critical worker's barrier waits and exchange (its W - 1 sends, and the wait for the last
    answer as the 2-worker job has it), and the CPU time per superstep of a worker and of the
    master (schedstat, all threads); L(W) adds what the barrier's wake-ups cost after a long
    superstep: the barrier of a 1-worker job on the exchange-heavy graph below less the
    almost-empty 1-worker job's;
  - B_peer, B_cpu (bytes/s): a 2-worker job on an exchange-heavy graph (uniform, degree 2): the
    bytes each worker sent and received over its exchange time, and over the CPU time (all
    threads of both workers) beyond their compute and o_w(2).
Then it runs a master and 1, 2, 4 workers (`--threads 1 --max-jobs 1`, direct relay) on the
Kronecker graph of SCALE (degree 16, --undirected) and reads each worker's per-superstep split
(`superstep N split | step ... | drain ... | barriers ... | waiting for a core ... | period`,
debug level). In every superstep the critical worker is the one whose barriers, net of its waits
for a core, were shortest; its terms, each net of the job thread's waits for a core, are

    compute  = step - relay encode - relay decode          (gather, compute, publish)
    exchange = relay encode + relay decode + drain          (batches out and in, answers)
    barrier  = barriers                                     (PRE, POST, POST_KEEP_RUNNING)
    queue    = the job thread's waits for a core in the superstep (its run delay)

and they sum to its period, the superstep. The medians over supersteps 1..K-1 are compared with
the model's terms; a term holds when predicted / measured is within [0.7, 1.3] (median of the
rounds). The cores a job had are the machine's less what the other processes used while it
computed (/proc/stat). The graph's figures (E_w, the messages each worker sends and receives)
come from the edge list itself: vertex UUIDs (v5, the project namespace) and the range
partition, as the engine computes them (cached beside the graph).

At the end, a prediction for a Kronecker graph of --predict-scale (26: about a billion undirected
edges) on --predict-workers workers, from the analytic degree distribution of the Graph500
initiator (checked here against the measured graph) and the stated cluster assumptions.
Python 3 standard library only; reuses bench/scale.py's process helpers.
"""

import argparse
import array
import hashlib
import json
import math
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402  bench/scale.py: Proc, wait_all, Lockstep, median, log, generate

log = scale.log

# bsp/vertex_id.cc: the namespace of name-based vertex UUIDs.
NAMESPACE = bytes([0x3f, 0x1c, 0x2a, 0x58, 0x9d, 0x4e, 0x4b, 0x7a, 0x8c, 0x35, 0x1e, 0x6d, 0x2f,
                   0x0a, 0x9b, 0x47])
# What a batch adds to its messages (header fields), from the master's relayed-bytes figures:
# 1,191,032 bytes for 2 batches of 74,484 and 74,386 8-byte values at scale 18.
BATCH_HEADER = 36
BYTES_PER_MESSAGE = 8  # a PageRank value, coding ALL: no position bytes (design §5.5)
SPLIT_LINE = re.compile(
    r"superstep (\d+) split \| step ([0-9.]+) ms \(relay decode ([0-9.]+), relay encode "
    r"([0-9.]+), of which outbox wait ([0-9.]+)\) \| drain ([0-9.]+) ms \| barriers ([0-9.]+) "
    r"ms \(([0-9.]+), ([0-9.]+), ([0-9.]+)\) \| waiting for a core ([0-9.]+) ms \(step "
    r"([0-9.]+), drain ([0-9.]+), barriers ([0-9.]+)\) \| period ([0-9.]+) ms")
TOLERANCE = 0.30
# Graph500 R-MAT initiator (generate/generate.cc).
KRON_A, KRON_B, KRON_C, KRON_D = 0.57, 0.19, 0.19, 0.05


# --- the graph's figures

def vertex_part(v, workers):
    """The partition of integer vertex v among `workers` (partition::Range over the whole space)."""
    d = bytearray(hashlib.sha1(NAMESPACE + str(v).encode()).digest()[:16])
    d[6] = (d[6] & 0x0F) | 0x50
    d[8] = (d[8] & 0x3F) | 0x80
    uuid = int.from_bytes(d, "big")
    return min(uuid // ((1 << 128) // workers), workers - 1)


def analyse(path, worker_counts):
    """Per worker count: each worker's vertices, in-edges (E_w), messages sent (M_w: its vertices'
    distinct other partitions among their neighbours) and received (R_w); cached beside the graph."""
    cache = path + ".costmodel.json"
    st = os.stat(path)
    key = f"{st.st_size}:{int(st.st_mtime)}"
    data = {}
    if os.path.exists(cache):
        with open(cache) as f:
            data = json.load(f)
        if data.get("key") != key:
            data = {}
    missing = [w for w in worker_counts if str(w) not in data.get("workers", {})]
    if not missing:
        return data
    t = time.monotonic()
    src, dst = array.array("l"), array.array("l")
    with open(path, "rb") as f:
        for line in f:
            p = line.split()
            if len(p) < 2 or line.startswith(b"#"):
                continue
            src.append(int(p[0]))
            dst.append(int(p[1]))
    n = max(max(src), max(dst)) + 1
    deg = array.array("l", bytes(8 * n))
    for a, b in zip(src, dst):
        deg[a] += 1
        deg[b] += 1
    present = [v for v in range(n) if deg[v] > 0]
    data.update({"key": key, "vertices": len(present), "stored_edges": len(src),
                 "directed_edges": 2 * len(src)})
    data.setdefault("workers", {})
    for W in missing:
        part = array.array("l", bytes(8 * n))
        for v in present:
            part[v] = vertex_part(v, W)
        mask = [0] * n
        for a, b in zip(src, dst):
            mask[a] |= 1 << part[b]
            mask[b] |= 1 << part[a]
        V, E, M, R = [0] * W, [0] * W, [0] * W, [0] * W
        for v in present:
            p = part[v]
            m = mask[v] & ~(1 << p)
            V[p] += 1
            E[p] += deg[v]
            M[p] += bin(m).count("1")
            while m:
                low = m & -m
                R[low.bit_length() - 1] += 1
                m ^= low
        data["workers"][str(W)] = {"V": V, "E": E, "M": M, "R": R}
    with open(cache + ".tmp", "w") as f:
        json.dump(data, f)
    os.replace(cache + ".tmp", cache)
    log(f"  analysed {path}: {data['vertices']} vertices, {data['directed_edges']} directed edges "
        f"({time.monotonic() - t:.1f} s)")
    return data


def kronecker(scale_, degree, workers):
    """Expected figures of `lockstep generate kronecker` (Graph500 initiator, undirected keys,
    duplicates and self-loops dropped) under a uniform random partition into `workers` parts.
    Vertex u with k one-bits (before the relabelling) is an endpoint of a drawn edge with
    probability p_k = 2 (a+b)^(S-k) (c+d)^k; its draws are Poisson with mean lam_k = m p_k."""
    m = degree * 2 ** scale_  # draws
    ab, cd = KRON_A + KRON_B, KRON_C + KRON_D
    vertices = sum_d2 = messages = 0.0
    for k in range(scale_ + 1):
        count = math.comb(scale_, k)
        lam = 2 * m * ab ** (scale_ - k) * cd ** k
        vertices += count * -math.expm1(-lam)
        sum_d2 += count * (lam * lam + lam)
        # neighbours' partitions are uniform and independent: a vertex reaches each other part
        # with probability 1 - exp(-lam / W) (duplicate draws land in the same part).
        messages += count * (workers - 1) * -math.expm1(-lam / workers)
    # Distinct undirected edges: cells of the 2^S x 2^S matrix grouped by how many levels fell in
    # each quadrant; the mirror cell has the same probability (b = c), self-loops (no b or c
    # level) are dropped.
    distinct = 0.0
    for nb in range(scale_ + 1):
        for nc in range(scale_ + 1 - nb):
            if nb + nc == 0:
                continue
            for na in range(scale_ + 1 - nb - nc):
                nd = scale_ - na - nb - nc
                cells = (math.factorial(scale_) // (math.factorial(na) * math.factorial(nb) *
                         math.factorial(nc) * math.factorial(nd)))
                p = KRON_A ** na * KRON_B ** nb * KRON_C ** nc * KRON_D ** nd
                distinct += cells * -math.expm1(-2 * m * p) / 2
    return {"vertices": vertices, "directed_edges": 2 * distinct, "draws": m,
            "sum_d2_drawn": sum_d2, "messages": messages}


# --- runs and their logs

def splits(path):
    """superstep -> its split (ms) from a worker's debug log. The terms are net of the job
    thread's waits for a core (its run delay), which are the term `queue`: within the superstep's
    own work they are shared out over compute, encode and decode by their wall time."""
    out = {}
    for line in open(path, errors="replace"):
        m = SPLIT_LINE.search(line)
        if not m:
            continue
        s = int(m.group(1))
        (step, dec, enc, outbox, drain, barriers, pre, post, pkr, queue, q_step, q_drain,
         q_barriers, period) = map(float, m.groups()[1:])
        net = 1 - min(1.0, q_step / step) if step > 0 else 1.0
        out[s] = {"step": step, "decode": dec, "encode": enc, "drain": drain, "pre": pre,
                  "post": post, "pkr": pkr, "period": period,
                  "compute": (step - enc - dec) * net,
                  "exchange": (enc + dec) * net + max(0.0, drain - q_drain),
                  "send": (enc + dec) * net,
                  "answer": max(0.0, drain - q_drain),
                  "barrier": max(0.0, barriers - q_barriers),
                  "queue": queue}
    return out


def critical_terms(worker_logs, last):
    """Medians over supersteps 1..last of the critical worker's terms (the one that waited least
    in the barriers), and every worker's per-superstep splits."""
    per_worker = [splits(p) for p in worker_logs]
    rows = []
    for s in range(1, last + 1):
        if not all(s in w for w in per_worker):
            continue
        rows.append(min((w[s] for w in per_worker), key=lambda r: r["barrier"]))
    if not rows:
        raise RuntimeError(f"no split lines in {worker_logs[0]} (a binary before the cost model?)")
    terms = {k: statistics.median(r[k] for r in rows)
             for k in ("compute", "exchange", "send", "answer", "barrier", "queue", "period")}
    return terms, per_worker


def busy_seconds():
    """CPU seconds the whole machine has been busy (all but idle and iowait), /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / scale.TICK


def schedstat(pid):
    """(CPU seconds, seconds waited for a core) of all threads of a process, from
    /proc/PID/task/*/schedstat (nanoseconds; threads that ended are not counted)."""
    run = wait = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return float("nan"), float("nan")
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                fields = f.read().split()
            run += int(fields[0])
            wait += int(fields[1])
        except (OSError, ValueError, IndexError):
            pass
    return run * 1e-9, wait * 1e-9


class Window:
    """Samples taken while a job runs: what the rest of the machine used (in cores) between the
    first and the last, /proc/stat's busy time less the job's processes' and this script's own
    CPU time; and each of the job's processes' CPU time and waits for a core (all threads)."""

    def __init__(self, pids):
        self.pids = pids
        self.samples = []  # (time, machine busy, ours)
        self.stats = []  # per process (cpu, waited)

    def sample(self):
        t = os.times()
        stats = [schedstat(p) for p in self.pids]
        ours = sum(c for c, _ in stats) + t.user + t.system
        self.samples.append((time.monotonic(), busy_seconds(), ours))
        self.stats.append(stats)

    def others(self):
        if len(self.samples) < 2:
            return float("nan")
        (t0, b0, o0), (t1, b1, o1) = self.samples[0], self.samples[-1]
        return max(0.0, (b1 - b0 - (o1 - o0)) / (t1 - t0)) if t1 > t0 else float("nan")

    def per_process(self, k):
        """Per process: CPU seconds (k = 0) or seconds waited (k = 1) between the first and the
        last sample."""
        if len(self.stats) < 2:
            return [float("nan")] * len(self.pids)
        return [b[k] - a[k] for a, b in zip(self.stats[0], self.stats[-1])]


def distributed(binary, graph, data, workers, iters, tag, timeout):
    """A master and `workers` workers (--threads 1 --max-jobs 1, direct relay, debug logs) on
    127.0.0.1 running PageRank; samples the machine's load over supersteps 2..iters-1 (from the
    master's progress lines of supersteps 1 and iters-1)."""
    out = os.path.join(data, f"out-{tag}")
    port_file = os.path.join(data, f"{tag}.port")
    if os.path.exists(port_file):
        os.remove(port_file)
    master_log = os.path.join(data, f"{tag}-master.log")
    master = scale.Proc([binary, "master", "--listen", "127.0.0.1:0", "--port-file", port_file,
                         "--app", "pagerank", "--graph", graph, "--undirected", "--tolerance", "0",
                         "--max-iterations", str(iters), "--out", out, "--min-workers",
                         str(workers), "--max-workers", str(workers), "--acquire-timeout", "60s",
                         "--relay", "direct"], master_log)
    deadline = time.monotonic() + 30
    while not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
        if master.poll() or time.monotonic() > deadline:
            master.kill()
            scale.wait_all([master], 5)
            raise RuntimeError("the master wrote no port file")
        time.sleep(0.01)
    port = open(port_file).read().strip()
    env = dict(os.environ, LOCKSTEP_LOG="debug")
    procs = [master]
    for i in range(workers):
        procs.append(scale.Proc([binary, "worker", "--master", f"127.0.0.1:{port}", "--threads",
                                 "1", "--max-jobs", "1"],
                                os.path.join(data, f"{tag}-worker{i + 1}.log"), env))
    window = Window([p.pid for p in procs])
    marks = [f"superstep 1 |".encode(), f"superstep {iters - 1} |".encode()]
    seen = 0
    end = time.monotonic() + timeout
    while not all([p.poll() for p in procs]):
        if seen < len(marks):
            with open(master_log, "rb") as f:
                text = f.read()
            while seen < len(marks) and marks[seen] in text:
                window.sample()
                seen += 1
        if time.monotonic() > end:
            break
        time.sleep(0.002)
    scale.wait_all(procs, max(1.0, end - time.monotonic()))
    ws = procs[1:]
    steps = iters - 2  # the window: supersteps 2..iters-1
    cpus, waits = window.per_process(0), window.per_process(1)
    return {"others": window.others(), "master_queue": waits[0] / steps * 1e3,
            "master_step_cpu": cpus[0] / steps * 1e3,
            "workers_step_cpu": [c / steps * 1e3 for c in cpus[1:]],
            "workers_queue": [d / steps * 1e3 for d in waits[1:]],
            "cpu": sum(w.cpu for w in ws), "master_cpu": master.cpu,
            "logs": [master_log] + [w.stderr_path for w in ws]}


def run_dist(binary, graph, data, workers, iters, tag, timeout):
    r = distributed(binary, graph, data, workers, iters, tag, timeout)
    terms, per_worker = critical_terms(r["logs"][1:], iters - 1)
    r.update(terms)
    r["per_worker"] = per_worker
    r["master_ms"] = scale.median(scale.step_times(r["logs"][0], iters - 1))
    return r


def lockstep_on(args, graph):
    ns = argparse.Namespace(build=args.build, graph=graph, data=args.data, timeout=args.timeout)
    return scale.Lockstep(ns)


# --- the model

def cores_for(cores, others):
    """The cores a job had: the machine's less what the other processes kept busy while it
    computed. (Not capped at one per worker: a one-thread worker's gRPC threads and the master
    run on the cores its job thread leaves.)"""
    if not others == others:  # not measured
        others = 0.0
    return max(cores / 8, cores - others)


def batch_bytes(g, W, w):
    """Bytes worker w sends and receives in a superstep's batches."""
    f = g["workers"][str(W)]
    if W == 1:
        return 0, 0
    out = BYTES_PER_MESSAGE * f["M"][w] + BATCH_HEADER * (W - 1)
    inn = BYTES_PER_MESSAGE * f["R"][w] + BATCH_HEADER * (W - 1)
    return out, inn


def predict(g, W, cal, cores):
    """The model's terms (ms) for the critical worker of a W-worker job on graph g, whose
    processes had `cores` cores (what the other processes left)."""
    best = None
    cpu = 0.0  # the job's CPU time per superstep, all processes
    for w in range(W):
        compute = cal["c_e"] * g["workers"][str(W)]["E"][w] * 1e3
        out, inn = batch_bytes(g, W, w)
        # The job thread's work on the bytes, then the wait for the last batch's answer, which
        # nothing overlaps (since the in-place decode made the work short, a maximum of the two
        # predicted half of 4 workers' exchange).
        exchange = 0.0 if W == 1 else cal["x0"][W] + (out + inn) / cal["B_peer"] * 1e3
        cpu += compute + (out + inn) / cal["B_cpu"] * 1e3 + cal["o_w"][W]
        if best is None or compute + exchange > best["compute"] + best["exchange"]:
            best = {"worker": w, "compute": compute, "exchange": exchange}
    cpu += cal["o_m"][W]
    best["barrier"] = cal["L"][W]
    # The cores: the job's threads share them (processor sharing) while the critical worker's job
    # thread works (compute and exchange), which then lasts at least the CPU time they all need
    # over the cores; what that adds, it spends waiting for a core. The barrier is a chain of
    # round trips with every job thread blocked and the cores mostly idle: it does not absorb
    # CPU time, so it is added, not compared (as T_step = max(path, CPU / cores) did, which
    # predicted 0.56-0.63 of the 2-worker waiting).
    path = best["compute"] + best["exchange"] + best["barrier"]
    best["cpu"] = cpu
    best["cpu_bound"] = cpu / cores
    best["queue"] = max(0.0, cpu / cores - best["compute"] - best["exchange"])
    best["total"] = path + best["queue"]
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", help="the build directory holding lockstep")
    ap.add_argument("scale", type=int, nargs="?", default=18, help="Kronecker scale (default 18)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--workers", default="1,2,4", help="worker counts (default 1,2,4)")
    ap.add_argument("--cores", type=float, default=os.cpu_count(),
                    help="cores of this machine the model shares out (default: all)")
    ap.add_argument("--tiny-scale", type=int, default=8,
                    help="the almost-empty job's Kronecker scale (default 8)")
    ap.add_argument("--tiny-iterations", type=int, default=40)
    ap.add_argument("--peer-scale", type=int, default=19,
                    help="the peer-throughput job's uniform graph, degree 2 (default scale 19)")
    ap.add_argument("--predict-scale", type=int, default=26)
    ap.add_argument("--predict-workers", type=int, default=64)
    ap.add_argument("--cores-per-worker", type=int, default=8)
    ap.add_argument("--network-gbps", type=float, default=10.0)
    ap.add_argument("--rtt-us", type=float, default=50.0, help="network round trip (default 50)")
    ap.add_argument("--data", default=os.environ.get("BENCH_DATA", "bench-data"),
                    help="graphs, outputs and logs (default $BENCH_DATA or bench-data)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per job")
    args = ap.parse_args()

    os.makedirs(args.data, exist_ok=True)
    binary = os.path.join(args.build, "lockstep")
    workers = [int(w) for w in args.workers.split(",")]
    # The almost-empty job runs at 1 and 2 workers too: x0 takes the 2-worker answer, L(W) the
    # 1-worker barrier, and the prediction L(1), o_w(1) and the slopes over all of them.
    calibrated = sorted(set(workers) | {1, 2})
    K, KT = args.iterations, args.tiny_iterations
    graph = scale.generate(binary, "kronecker", args.scale, 16,
                           os.path.join(args.data, f"kronecker-{args.scale}.el"))
    tiny = scale.generate(binary, "kronecker", args.tiny_scale, 16,
                          os.path.join(args.data, f"kronecker-{args.tiny_scale}.el"))
    peer = scale.generate(binary, "uniform", args.peer_scale, 2,
                          os.path.join(args.data, f"uniform-{args.peer_scale}-d2.el"))
    log(f"=== cost model, PageRank in direct mode: Kronecker scale {args.scale} (degree 16, "
        f"undirected), {K} iterations, workers {args.workers} (--threads 1), {args.rounds} rounds, "
        f"{args.cores:g} cores")
    g = analyse(graph, sorted(set(workers) | {64}))
    gp = analyse(peer, [2])
    ls = lockstep_on(args, graph)
    with open("/proc/loadavg") as f:
        log(f"  load average before: {' '.join(f.read().split()[:3])}")

    def run(graph_, W, iters, tag):
        return run_dist(binary, graph_, args.data, W, iters, tag, args.timeout)

    rounds = []
    for rnd in range(args.rounds):
        cal = {"x0": {}, "L": {}, "others": {}}

        def local_step(tag):
            """c_e's measure: local mode, one thread, the same graph; CPU time, which waits for a
            core do not inflate: a K-iteration job less a 1-iteration job, over K - 1 (loading
            and output out). Also the median superstep's wall time, and what the other
            processes used meanwhile (cores)."""
            window = Window([])
            window.sample()
            local = ls.local(1, K, f"cm-local-{tag}")
            local1 = ls.local(1, 1, f"cm-local1-{tag}")
            window.sample()
            others = max(0.0, window.others() - (local["cpu"] + local1["cpu"]) / (
                window.samples[-1][0] - window.samples[0][0]))
            per_step = (local["compute_cpu"] - local1["compute_cpu"]) / (K - 1)
            if not per_step > 0:  # superstep 0's line was missed: the median superstep's wall
                per_step = local["step_ms"] / 1e3
            return per_step, local["step_ms"], others

        # c_e is taken before and after the round's other runs, and averaged: on a shared
        # machine local mode's CPU per edge moved 2x between consecutive runs, and a single
        # calibration at a fast or slow moment moved every term that follows from it.
        before = local_step(f"{rnd}a")
        cal["others"]["local"] = before[2]
        cal["local_ms"] = before[1]
        # L(W), x0(W): the almost-empty job (at 1 and 2 workers too, whatever --workers says):
        # its barriers, and its exchange (W - 1 batches of a few values each): the job thread's
        # sends at W workers, then the wait for the last answer as the 2-worker job has it. In a
        # superstep that computes, the critical worker is the last to finish and its peers,
        # blocked in the barrier, answer at once; in the almost-empty job with 4 workers on 2
        # cores every worker sends at once and the answers wait for the peers' threads to get a
        # core (its answer wait was 1.2-1.8 ms where the 4-worker run's critical worker waited
        # 0.15-0.4 ms, and the 2-worker almost-empty job's 0.35-0.5; drains before the job
        # thread's own waits for a core are taken out).
        # o_w(W), o_m(W): its CPU time per superstep, a worker's (all threads) and the master's.
        tiny_runs = {}
        cal["o_w"], cal["o_m"] = {}, {}
        for W in calibrated:
            t = run(tiny, W, KT, f"cm-tiny{W}-{rnd}")
            tiny_runs[W] = t
            cal["o_w"][W] = statistics.mean(t["workers_step_cpu"])
            cal["o_m"][W] = t["master_step_cpu"]
        # The barrier after a long superstep: the threads on its path (the master's, the
        # workers' gRPC threads) have slept through the compute phase, and each of its wake-ups
        # is slower than in the almost-empty job, whose supersteps follow each other every
        # millisecond. What that adds is measured at 1 worker, where nothing else competes: the
        # barrier of a 1-worker job on the exchange-heavy graph (supersteps as long as the
        # predicted ones) less the almost-empty job's.
        long1 = run(peer, 1, K, f"cm-long1-{rnd}")
        cal["wake"] = max(0.0, long1["barrier"] - tiny_runs[1]["barrier"])
        for W in calibrated:
            t = tiny_runs[W]
            cal["L"][W] = t["barrier"] + cal["wake"]
            cal["x0"][W] = 0.0 if W == 1 else t["send"] + tiny_runs[2]["answer"]
        # B_peer: 2 workers on the exchange-heavy graph: the bytes each worker sent and received
        # over its exchange time, both workers, median over the supersteps.
        p = run(peer, 2, K, f"cm-peer-{rnd}")
        moved = sum(sum(batch_bytes(gp, 2, w)) for w in range(2))
        spent = []
        for s in range(1, K):
            xs = [w[s]["exchange"] for w in p["per_worker"] if s in w]
            if len(xs) == 2:
                spent.append(sum(xs))
        cal["others"]["peer"] = p["others"]
        # Net of the wait for the last answer, which follows the work (x0(2), both workers).
        net_spent = statistics.median(spent) - 2 * cal["x0"].get(2, 0.0)
        if net_spent <= 0:
            net_spent = statistics.median(spent)
        cal["B_peer"] = moved / (net_spent / 1e3)
        # B_cpu: the same bytes over the CPU time they cost, all threads of both workers: their
        # CPU per superstep less their compute and less what an almost-empty superstep costs.
        compute = sum(statistics.median(w[s]["compute"] for s in range(1, K) if s in w)
                      for w in p["per_worker"])
        moving = sum(p["workers_step_cpu"]) - compute - 2 * cal["o_w"].get(2, 0.0)
        cal["B_cpu"] = moved / (moving / 1e3) if moving > 0 else cal["B_peer"]
        cal["tiny_master_cpu"] = {W: tiny_runs[W]["master_cpu"] for W in workers}
        cal["tiny_worker_cpu"] = {W: tiny_runs[W]["cpu"] / W for W in workers}
        cal["tiny_supersteps"] = KT + 1
        # The runs the model predicts.
        runs = {}
        for W in workers:
            runs[W] = run(graph, W, K, f"cm-run{W}-{rnd}")
        after = local_step(f"{rnd}b")
        cal["c_e"] = (before[0] + after[0]) / 2 / g["directed_edges"]
        rounds.append((cal, runs))
        log(f"  round {rnd + 1}: c_e {cal['c_e'] * 1e9:.3f} ns/edge (before "
            f"{before[0] / g['directed_edges'] * 1e9:.3f}, after "
            f"{after[0] / g['directed_edges'] * 1e9:.3f}; local 1t {before[1]:.2f} and "
            f"{after[1]:.2f} ms wall), B_peer {cal['B_peer'] / 1e9:.2f} GB/s, B_cpu "
            f"{cal['B_cpu'] / 1e9:.2f} GB/s, wake-ups after a long superstep "
            f"{cal['wake']:.2f} ms, L(W) " +
            ", ".join(f"{W}: {cal['L'][W]:.2f}" for W in calibrated) + " ms, x0(W) " +
            ", ".join(f"{W}: {cal['x0'][W]:.2f}" for W in calibrated if W > 1) + " ms, o_w(W) " +
            ", ".join(f"{W}: {cal['o_w'][W]:.2f}" for W in calibrated) + " ms, o_m(W) " +
            ", ".join(f"{W}: {cal['o_m'][W]:.2f}" for W in calibrated) + " ms; others' "
            f"cores: local {cal['others']['local']:.2f}, peer {p['others']:.2f}, runs " +
            ", ".join(f"{W}: {runs[W]['others']:.2f}" for W in workers) + "; the master's "
            "threads waited for a core " + ", ".join(f"{W}: {runs[W]['master_queue']:.2f}"
                                                     for W in workers) + " ms per superstep")

    # --- predicted against measured
    log("")
    log("Per worker count and term: the model's prediction for the critical worker against the "
        "median over supersteps 1..K-1 of the critical worker's timers (ms); pred/meas per round "
        f"(min/median/max), 'ok' when the median is within +-{TOLERANCE:.0%}. When the model "
        "says a superstep is CPU-bound (CPU / cores > compute + exchange) it predicts the "
        "waiting as a whole (wait = barrier + queue), not how the scheduler splits it: barrier "
        "and queue are then shown, not judged ('split').")
    log(f"{'':4} {'term':9} {'predicted':>10} {'measured':>10} {'pred/meas':>20}")
    for W in workers:
        prs = [predict(g, W, cal, cores_for(args.cores, runs[W]["others"]))
               for cal, runs in rounds]
        cpu_bound = sum(p["queue"] > 0 for p in prs) * 2 > len(prs)
        for term in ("compute", "exchange", "barrier", "queue", "wait", "total"):
            preds, meas, ratios = [], [], []
            for pr, (cal, runs) in zip(prs, rounds):
                r = runs[W]
                pr["wait"] = pr["barrier"] + pr["queue"]
                m = {"total": r["period"], "wait": r["barrier"] + r["queue"]}.get(term)
                m = r[term] if m is None else m
                preds.append(pr[term])
                meas.append(m)
                ratios.append(pr[term] / m if m > 0 and pr[term] > 0 else float("nan"))
            pm, mm = statistics.median(preds), statistics.median(meas)
            valid = [x for x in ratios if x == x]
            if len(valid) * 2 <= len(ratios):
                # the model says 0 in most rounds (no exchange at 1 worker, no queue when the
                # superstep is not CPU-bound): nothing to compare
                ok, rtxt = "-", "-"
            else:
                med = statistics.median(valid)
                ok = "ok" if 1 - TOLERANCE <= med <= 1 + TOLERANCE else "OUT"
                rtxt = scale.spread(valid)
                if cpu_bound and term in ("barrier", "queue"):
                    ok = "split"
            log(f"{W:>4} {term:9} {pm:>10.2f} {mm:>10.2f} {rtxt:>20} {ok:>5}")
        cpu_meas = [sum(runs[W]["workers_step_cpu"]) + runs[W]["master_step_cpu"]
                    for _, runs in rounds]
        master = statistics.median(runs[W]["master_ms"] for _, runs in rounds)
        log(f"{W:>4} {'(master)':9} {'':>10} {master:>10.2f}   the master's superstep")
        log(f"{W:>4} {'(CPU)':9} {statistics.median(p['cpu'] for p in prs):>10.2f} "
            f"{statistics.median(cpu_meas):>10.2f} "
            f"{scale.spread([p['cpu'] / m for p, m in zip(prs, cpu_meas)]):>20}   CPU time per "
            "superstep, all processes; cores left "
            f"{scale.spread([cores_for(args.cores, r[W]['others']) for _, r in rounds])}, "
            f"{'CPU-bound' if cpu_bound else 'path-bound'}")

    # --- the prediction for the big graph
    cal = {k: statistics.median(c[k] for c, _ in rounds) for k in ("c_e", "B_peer", "B_cpu")}
    for k in ("L", "o_w", "o_m", "x0"):
        cal[k] = {W: statistics.median(c[k][W] for c, _ in rounds) for W in calibrated}

    def slope(per_w, offset):
        """Least-squares slope of per_w[W] over W - offset."""
        xs = [W - offset for W in calibrated]
        ys = [per_w[W] for W in calibrated]
        mx, my = statistics.mean(xs), statistics.mean(ys)
        den = sum((x - mx) ** 2 for x in xs)
        return max(0.0, sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den) if den else 0.0

    # What a superstep costs per peer (a worker's CPU, all threads) and per worker (the master's
    # CPU), from the almost-empty jobs: slopes over the worker count. On 2 cores these include the
    # oversubscription's context switches: upper bounds.
    per_peer = slope(cal["o_w"], 1) / 1e3
    per_worker = slope(cal["o_m"], 0) / 1e3
    o_w1 = cal["o_w"][1] / 1e3
    L1 = cal["L"][1] / 1e3
    S, P = args.predict_scale, args.predict_workers
    big = kronecker(S, 16, P)
    check = kronecker(args.scale, 16, 64)
    log("")
    log(f"Analytic Kronecker figures against the measured scale-{args.scale} graph: vertices "
        f"{check['vertices']:,.0f} / {g['vertices']:,}, directed edges "
        f"{check['directed_edges']:,.0f} / {g['directed_edges']:,}, messages at 64 workers "
        f"{check['messages']:,.0f} / {sum(g['workers']['64']['M']):,}")
    E = big["directed_edges"]
    E_w = E / P
    # Imbalance: E_w is a sum of degrees over a uniform random 1/P of the vertices; the largest
    # of P is about 2.4 standard deviations above the mean at P = 64.
    sigma = math.sqrt(big["sum_d2_drawn"] * (E / (2 * big["draws"])) ** 2 * (1 / P) * (1 - 1 / P))
    E_max = E_w + 2.4 * sigma
    M_w = big["messages"] / P
    out = BYTES_PER_MESSAGE * M_w + BATCH_HEADER * (P - 1)
    moved = 2 * out  # as many bytes come in
    nic = args.network_gbps * 1e9 / 8
    cores = args.cores_per_worker
    rtt = args.rtt_us * 1e-6
    compute = cal["c_e"] * E_max / cores  # the gather and compute on every core
    # Encoding and decoding run on the job thread (FlushRemote, DecodeRelayed): one core.
    job_thread = moved / cal["B_peer"]
    network = out / nic  # full duplex: out and in at once
    x0 = rtt + (P - 1) * per_peer
    exchange = x0 + max(job_thread, network)
    barrier = L1 + 3 * rtt + (P - 1) * per_worker
    path = compute + exchange + barrier
    cpu = cal["c_e"] * E_max + moved / cal["B_cpu"] + o_w1 + (P - 1) * per_peer
    queue = max(0.0, cpu / cores - compute - exchange)
    total = path + queue
    log(f"Prediction: Kronecker scale {S} (degree 16: {big['vertices']:,.0f} vertices, "
        f"{E / 2:,.0f} undirected edges, {E:,.0f} directed) on {P} workers with {cores} cores "
        f"each (--threads {cores}), {args.network_gbps:g} Gb/s links, {args.rtt_us:g} us round "
        f"trips, and this machine's constants: c_e {cal['c_e'] * 1e9:.3f} ns/edge, B_peer "
        f"{cal['B_peer'] / 1e9:.2f} GB/s on the job thread, B_cpu {cal['B_cpu'] / 1e9:.2f} GB/s "
        f"of CPU, {per_peer * 1e6:.0f} us of a worker's CPU per peer and {per_worker * 1e6:.0f} "
        f"us of the master's per worker per superstep:")
    log(f"  per worker: E_w {E_w:,.0f} in-edges (largest ~{E_max:,.0f}), {M_w:,.0f} messages "
        f"out ({out / 1e6:.1f} MB, as many in), values array {(E_w / E * big['vertices'] + M_w) * 8 / 1e6:.0f} MB")
    rows = [
        ("compute", f"c_e * E_w / {cores} cores (one core: {cal['c_e'] * E_max * 1e3:.1f} ms)",
         compute),
        ("exchange", f"answers {x0 * 1e3:.1f} + max(job thread {job_thread * 1e3:.1f}, "
                     f"network {network * 1e3:.1f})", exchange),
        ("barrier", f"L(1) + 3 RTT + {P - 1} x {per_worker * 1e6:.0f} us", barrier),
        ("path", "compute + exchange + barrier", path),
        ("CPU bound", f"{cpu * 1e3:.1f} ms of CPU per worker over {cores} cores", cpu / cores),
        ("T_step", f"path + max(0, CPU bound - compute - exchange): {E / total / 1e9:.1f} G "
                   "directed edges/s", total),
    ]
    for name, how, seconds in rows:
        log(f"  {name:9} {how:58} {seconds * 1e3:7.1f} ms")
    with open("/proc/loadavg") as f:
        log(f"load average after: {' '.join(f.read().split()[:3])}")


if __name__ == "__main__":
    main()
