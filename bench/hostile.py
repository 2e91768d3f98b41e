#!/usr/bin/env python3
"""The hostile probe's long campaigns (issue 40), kept out of the suite, which runs one case each.

    bench/hostile.py [--bursts 1024:1100,4096:4300] [--corruptions 8] [--data DIR] BUILD_DIR SCALE

  - --bursts LIMIT:N,...: for each pair, a master whose hard and soft limit of open files is LIMIT
    (`prlimit --nofile=LIMIT:LIMIT`), plain text, is sent N TCP connections that never speak,
    held 3 s, then closed; printed: how long after the close `lockstep health` answers SERVING,
    and whether two workers started then are admitted and the job completes with `lockstep run`'s
    answer (docs/design.md §11, the descriptor budget). The same against a worker's peer port.
  - --corruptions N: N jobs (PageRank, 2 workers, --checkpoint-every 5, 30 iterations), each
    with its master SIGKILLed once the checkpoint before superstep 20 is complete, the newest
    checkpoint then damaged in turn by each of: a flipped byte in a part file, a flipped byte in
    its index, the part truncated, two part files swapped; a master started with only
    --checkpoint-dir must pass it over, resume from an older one (or the start) and publish
    `lockstep run`'s answer, byte for byte (docs/design.md §7.6). Printed: the count that did,
    and the superstep each resumed from.
On the Kronecker graph of bench/kernels.py (`lockstep generate kronecker --scale S --degree 16`,
read with --undirected). Python 3 standard library only.
"""

import argparse
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import time

import recovery
import scale


def log(msg=""):
    print(msg, flush=True)


def local_answer(binary, graph, work, iterations):
    out = os.path.join(work, "local.txt")
    subprocess.run([binary, "run", "pagerank", "--graph", graph, "--undirected", "--tolerance",
                    "0", "--max-iterations", str(iterations), "--out", out],
                   check=True, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    return sorted(open(out, "rb").read().splitlines())


def burst(port, count):
    conns = []
    for _ in range(count):
        s = socket.socket()
        s.connect(("127.0.0.1", port))
        conns.append(s)
    time.sleep(3)
    for s in conns:
        s.close()


def serving_after(binary, port, limit_s=10.0):
    start = time.time()
    while time.time() - start < limit_s:
        r = subprocess.run([binary, "health", f"127.0.0.1:{port}", "--timeout", "500ms"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            return time.time() - start
    return None


def start_master(c, binary, graph, launcher=()):
    """Master of cluster `c` waiting for 2 workers (PageRank, 10 iterations), under `launcher`."""
    port_file = os.path.join(c.dir, "port")
    c.master_log = os.path.join(c.dir, "master.log")
    c.out = os.path.join(c.dir, "out")
    c.master = subprocess.Popen(
        list(launcher) + [binary, "master", "--listen", "127.0.0.1:0", "--port-file", port_file,
                          "--app", "pagerank", "--graph", graph, "--undirected", "--tolerance",
                          "0", "--max-iterations", "10", "--out", c.out, "--min-workers", "2",
                          "--acquire-timeout", "120s"],
        stderr=open(c.master_log, "w"), stdout=subprocess.DEVNULL)
    while not (os.path.exists(port_file) and open(port_file).read().endswith("\n")):
        time.sleep(0.01)
    c.port = int(open(port_file).read())


def burst_trial(binary, graph, work, limit, count, want):
    """The master's port, then a worker's peer port."""
    limited = ["prlimit", f"--nofile={limit}:{limit}"]
    c = recovery.Cluster(binary, work, f"burst-{limit}")
    start_master(c, binary, graph, limited)
    burst(c.port, count)
    serving = serving_after(binary, c.port)
    c.add_worker()
    c.add_worker()
    ok = c.finish() == 0 and c.lines() == want
    log(f"master, limit {limit}, {count} silent connections: SERVING "
        f"{'never' if serving is None else f'{serving:.2f} s'} after they closed; "
        f"job {'completed with the answer' if ok else 'FAILED'}")

    p = recovery.Cluster(binary, work, f"peer-{limit}")
    start_master(p, binary, graph)
    first_log = os.path.join(p.dir, "w0.log")
    p.workers.append(subprocess.Popen(
        limited + [binary, "worker", "--master", f"127.0.0.1:{p.port}", "--threads", "1",
                   "--max-jobs", "1", "--peer-listen", "127.0.0.1:0"],
        stderr=open(first_log, "w"), stdout=subprocess.DEVNULL))
    peer = None
    while peer is None:
        m = re.search(r"serving peers on port (\d+)", open(first_log).read())
        peer = int(m.group(1)) if m else None
        time.sleep(0.01)
    burst(peer, count)
    p.add_worker()
    ok = p.finish() == 0 and p.lines() == want
    log(f"worker's peer port, limit {limit}, {count} silent connections: "
        f"job {'completed with the answer' if ok else 'FAILED'}")


def damage(kind, checkpoint, index_dir):
    parts = sorted(f for f in os.listdir(checkpoint) if f.endswith(".ckpt"))
    first = os.path.join(checkpoint, parts[0])
    if kind == "flipped byte":
        data = bytearray(open(first, "rb").read())
        data[len(data) // 2] ^= 0x20
        open(first, "wb").write(data)
    elif kind == "flipped index byte":
        index = os.path.join(index_dir, parts[0].replace(".ckpt", ".index"))
        data = bytearray(open(index, "rb").read())
        data[len(data) // 2] ^= 0x20
        open(index, "wb").write(data)
    elif kind == "truncated":
        os.truncate(first, os.path.getsize(first) // 2)
    elif kind == "swapped":
        second = os.path.join(checkpoint, parts[1])
        tmp = first + ".swap"
        os.rename(first, tmp)
        os.rename(second, first)
        os.rename(tmp, second)


def corruption_trial(binary, graph, work, kind, trial, want):
    c = recovery.Cluster(binary, work, f"corrupt-{trial}")
    ckpt = os.path.join(c.dir, "checkpoints")
    c.start(graph, 30, 2, ["--checkpoint-dir", ckpt, "--checkpoint-every", "5",
                           "--max-restarts", "2", "--recovery-timeout", "60s"], max_jobs=False)
    if not c.wait_for("checkpoint before superstep 20 is complete"):
        log(f"{kind}: the first job never checkpointed")
        c.master.kill()
        c.stop_workers()
        return False, None
    c.master.kill()
    c.master.wait()
    job = next(d for d in os.listdir(ckpt) if os.path.isdir(os.path.join(ckpt, d)))
    attempt = os.path.join(ckpt, job, "attempt-1")
    complete = sorted((d for d in os.listdir(attempt) if d.startswith("superstep-") and
                       os.path.exists(os.path.join(attempt, d, "MANIFEST"))), reverse=True)
    damage(kind, os.path.join(attempt, complete[0]), attempt)
    c.restart_master(ckpt)
    code = c.master.wait(timeout=600)
    text = c.master_text()
    m = re.search(r"resuming job \S+ from (checkpoint at superstep (\d+)|the start)", text)
    resumed = (m.group(2) or "0") if m else "?"
    ok = code == 0 and c.lines() == want
    c.stop_workers()
    return ok, resumed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("scale", type=int)
    ap.add_argument("--bursts", default="1024:1100,4096:4300")
    ap.add_argument("--corruptions", type=int, default=8)
    ap.add_argument("--data", default="/tmp/lockstep-hostile")
    args = ap.parse_args()
    binary = os.path.abspath(os.path.join(args.build, "lockstep"))
    os.makedirs(args.data, exist_ok=True)
    graph = os.path.join(args.data, f"kronecker-{args.scale}.el")
    if not os.path.exists(graph):
        scale.generate(binary, "kronecker", args.scale, 16, graph, weights=False)
    work = os.path.join(args.data, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 8192), max(hard, 8192)))

    if args.bursts:
        want = local_answer(binary, graph, work, 10)
        for pair in args.bursts.split(","):
            limit, count = (int(x) for x in pair.split(":"))
            burst_trial(binary, graph, work, limit, count, want)
    if args.corruptions:
        want = local_answer(binary, graph, work, 30)
        kinds = ["flipped byte", "flipped index byte", "truncated", "swapped"]
        good = 0
        for t in range(args.corruptions):
            kind = kinds[t % len(kinds)]
            ok, resumed = corruption_trial(binary, graph, work, kind, t, want)
            good += ok
            log(f"corruption {t + 1} ({kind}): resumed from superstep {resumed}; "
                f"{'the answer' if ok else 'FAILED'}")
        log(f"corrupt newest checkpoint: {good} of {args.corruptions} jobs published the answer")


if __name__ == "__main__":
    sys.exit(main())
