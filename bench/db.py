#!/usr/bin/env python3
"""PostgreSQL as source and sink (issue 13, docs/design.md §10): load and publish rates against
psql's own COPY of the same rows, side by side in each trial.

    bench/db.py [--workers 1,2] [--trials 3] [--data DIR] BUILD_DIR SCALE

A throw-away server (initdb and pg_ctl in a temporary directory, on a Unix socket there, as
`nobody` when run as root; fsync off) holds the Kronecker graph of bench/kernels.py
(`lockstep generate kronecker --scale S --degree 16`) as `edges(src bigint, dst bigint)`, with an
index on src and ANALYZEd. Each trial measures, in this order:
  - local load: `lockstep run pagerank --graph URI --max-iterations 1` (one process, the whole
    table: COPY, parse, sort) against `psql -c "COPY (SELECT src, dst FROM edges) TO STDOUT" >
    /dev/null`, and against `lockstep run` on the same edges as a text file;
  - per-worker load, for each count in --workers: a master and that many workers (`--threads 1`)
    on loopback; each worker's
    load time is the "| X s" of its "loaded its share" line (its COPY of its share, the parse, the
    routing to the owners, the ranking: the whole partitioned load), against psql's COPY of the
    same rows (`WHERE src >= a AND src < b`, the bounds computed as the workers compute them:
    quantiles of a 1% block sample), alone and with every share's COPY side by side, as the
    workers read (on a machine with fewer cores than server and worker processes, the fairer
    ceiling). One worker, whose share is the whole table, is the figure of a worker and its
    server process with a core each (as on a cluster) on a 2-core machine;
  - publish: `lockstep run pagerank --out URI` ("published in X s": one transaction that copies
    the rows into a staging table, keys it and swaps it in for the previous table, and records
    the job) against psql's `\\copy` of the same rows into a fresh table of the same shape
    (id bigint PRIMARY KEY, value double precision).
Rates are edges (or rows) per second; ratios are lockstep's time over psql's, per trial (min /
median / max). Python 3 standard library only.
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

import scale

LOAD_RE = re.compile(r"load ([0-9.]+) s")
PUBLISH_RE = re.compile(r"published in ([0-9.]+) s")
SHARE_RE = re.compile(r"loaded its share: lines (\d+) .*\| ([0-9.]+) s")


def log(msg=""):
    print(msg, flush=True)


class Server:
    """A throw-away PostgreSQL server in a temporary directory."""

    def __init__(self, root):
        self.dir = tempfile.mkdtemp(prefix="lockstep-bench-pg-", dir=root)
        versions = sorted((d for d in os.listdir("/usr/lib/postgresql") if d.isdigit()), key=int)
        if not versions:
            sys.exit("no PostgreSQL server under /usr/lib/postgresql (scripts/setup.sh installs it)")
        self.bin = f"/usr/lib/postgresql/{versions[-1]}/bin"
        self.as_user = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "nobody")
            self.as_user = ["runuser", "-u", "nobody", "--"]
        data = os.path.join(self.dir, "data")
        subprocess.run(self.as_user + [f"{self.bin}/initdb", "-D", data, "-A", "trust", "-U",
                                       "lockstep", "-E", "UTF8", "--locale=C.UTF-8"],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(self.as_user + [f"{self.bin}/pg_ctl", "-D", data, "-w", "-l",
                                       os.path.join(self.dir, "log"), "-o",
                                       f"-k {self.dir} -c listen_addresses='' -p 5432 "
                                       "-c fsync=off -c full_page_writes=off "
                                       "-c shared_buffers=256MB", "start"],
                       check=True, stdout=subprocess.DEVNULL)
        self.uri = "postgresql://lockstep@" + self.dir.replace("/", "%2F") + ":5432/postgres"

    def psql(self, *args, stdout=subprocess.PIPE):
        return subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", self.uri] +
                              list(args), check=True, stdout=stdout, text=True).stdout

    def cpu(self):
        """CPU seconds of the server's exited backends so far (the postmaster's reaped children)."""
        with open(os.path.join(self.dir, "data", "postmaster.pid")) as f:
            pid = int(f.readline())
        time.sleep(0.2)  # backends of connections just closed are reaped
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        subprocess.run(self.as_user + [f"{self.bin}/pg_ctl", "-D",
                                       os.path.join(self.dir, "data"), "-m", "immediate", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


def timed(cmd, **kw):
    start = time.monotonic()
    subprocess.run(cmd, check=True, **kw)
    return time.monotonic() - start


def lockstep_log(cmd):
    """Runs lockstep; returns its stderr (the log)."""
    return subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True).stderr


def share_conditions(server, workers):
    """The condition each worker reads, as db/source.cc's ShareConditions computes it: quantiles
    of src from a 1% block sample (fixed seed), or from every row if the sample is small."""
    cuts = ", ".join(str(r / workers) for r in range(1, workers))
    query = (f"SELECT count(*), percentile_disc(ARRAY[{cuts}]::float8[]) WITHIN GROUP "
             f"(ORDER BY src) FROM edges")
    count, bounds = server.psql("-c", query + " TABLESAMPLE SYSTEM (1) REPEATABLE (7)").split("|")
    if int(count) < 10000:
        count, bounds = server.psql("-c", query).split("|")
    b = bounds.strip().strip("{}").split(",")
    conditions = []
    for rank in range(workers):
        parts = ([f"src >= {b[rank - 1]}"] if rank > 0 else []) + \
                ([f"src < {b[rank]}"] if rank + 1 < workers else [])
        conditions.append(" AND ".join(parts) or "true")
    return conditions


def cluster(binary, uri, workers, out):
    """One PageRank job from the database on a master and `workers` workers; their logs."""
    port_file = out + ".port"
    if os.path.exists(port_file):
        os.remove(port_file)
    shutil.rmtree(out, ignore_errors=True)
    master = subprocess.Popen([binary, "master", "--listen", "127.0.0.1:0", "--port-file",
                               port_file, "--app", "pagerank", "--graph", uri, "--out", out,
                               "--min-workers", str(workers), "--max-iterations", "1"],
                              stderr=subprocess.PIPE, text=True)
    while not os.path.exists(port_file) or not open(port_file).read().strip():
        time.sleep(0.05)
    port = open(port_file).read().strip()
    procs = [subprocess.Popen([binary, "worker", "--master", f"127.0.0.1:{port}", "--max-jobs",
                               "1", "--threads", "1"], stderr=subprocess.PIPE, text=True)
             for _ in range(workers)]
    logs, cpu = [], 0.0
    for p in procs:
        logs.append(p.stderr.read())
        _, _, usage = os.wait4(p.pid, 0)
        p.returncode = 0
        cpu += usage.ru_utime + usage.ru_stime
    master.communicate()
    if master.returncode != 0:
        sys.exit("the distributed job failed")
    return logs, cpu


def per_worker(binary, server, workers, conditions, ratios, rates, psql_rates, together_ratios):
    """One cluster's load: each worker's share against psql's COPY of the same rows, alone and
    with every share's COPY side by side. Returns the CPU seconds of the workers (whole
    processes) and of the server's backends in the job, then of the psqls and their backends side
    by side."""
    server_before = server.cpu()
    logs, workers_cpu = cluster(binary, server.uri, workers, os.path.join(server.dir, "dist"))
    server_cpu = server.cpu() - server_before
    with open(os.devnull, "w") as null:
        start = time.monotonic()
        copies = [subprocess.Popen(
            ["psql", "-X", "-q", server.uri, "-c",
             f"COPY (SELECT src, dst FROM edges WHERE {where}) TO STDOUT"], stdout=null)
            for where in conditions]
        together, psql_cpu = [], 0.0
        for c in copies:
            _, _, usage = os.wait4(c.pid, 0)
            c.returncode = 0
            together.append(time.monotonic() - start)
            psql_cpu += usage.ru_utime + usage.ru_stime
    psql_server_cpu = server.cpu() - server_before - server_cpu
    for rank, wlog in enumerate(logs):
        m = SHARE_RE.search(wlog)
        rows_read, seconds = int(m.group(1)), float(m.group(2))
        with open(os.devnull, "w") as null:
            ceiling = timed(["psql", "-X", "-q", server.uri, "-c",
                             f"COPY (SELECT src, dst FROM edges WHERE {conditions[rank]}) TO "
                             "STDOUT"], stdout=null)
        ratios.append(seconds / ceiling)
        together_ratios.append(seconds / together[rank])
        rates.append(rows_read / seconds)
        psql_rates.append(rows_read / ceiling)
    return workers_cpu, server_cpu, psql_cpu, psql_server_cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("scale", type=int)
    ap.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--data", default=os.environ.get("BENCH_DATA", tempfile.gettempdir()))
    args = ap.parse_args()
    binary = os.path.join(args.build, "lockstep")
    graph = scale.generate(binary, "kronecker", args.scale, 16,
                           os.path.join(args.data, f"kron-{args.scale}.el"), weights=False)
    server = Server(args.data)
    try:
        tsv = os.path.join(server.dir, "edges.tsv")
        with open(graph) as f, open(tsv, "w") as out:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and not line.startswith("#"):
                    out.write(f"{parts[0]}\t{parts[1]}\n")
        os.chmod(tsv, 0o644)
        server.psql("-c", "CREATE TABLE edges (src bigint NOT NULL, dst bigint NOT NULL)",
                    "-c", f"COPY edges FROM '{tsv}'",
                    "-c", "CREATE INDEX ON edges (src)", "-c", "ANALYZE edges")
        edges = int(server.psql("-c", "SELECT count(*) FROM edges"))
        counts = [int(n) for n in args.workers.split(",")]
        conditions = {n: share_conditions(server, n) for n in counts}
        results = os.path.join(server.dir, "results.tsv")
        log(f"scale {args.scale}: {edges} edges in table edges (bigint IDs, index on src); "
            f"{args.workers} workers, {args.trials} trials, {os.cpu_count()} cores")
        local, local_file, local_psql = [], [], []
        worker_ratio = {n: [] for n in counts}
        worker_rate = {n: [] for n in counts}
        worker_psql_rate = {n: [] for n in counts}
        worker_ratio_together = {n: [] for n in counts}
        cpu = {n: [] for n in counts}
        publish, publish_psql, rows = [], [], 0
        for trial in range(args.trials):
            # Local load: the whole table, against psql's COPY of it and the text file.
            with open(os.devnull, "w") as null:
                local_psql.append(timed(["psql", "-X", "-q", server.uri, "-c",
                                         "COPY (SELECT src, dst FROM edges) TO STDOUT"],
                                        stdout=null))
            err = lockstep_log([binary, "run", "pagerank", "--graph", server.uri,
                                "--max-iterations", "1", "--out",
                                os.path.join(server.dir, "local.out")])
            local.append(float(LOAD_RE.search(err).group(1)))
            err = lockstep_log([binary, "run", "pagerank", "--graph", graph, "--max-iterations",
                                "1", "--out", os.path.join(server.dir, "file.out")])
            local_file.append(float(LOAD_RE.search(err).group(1)))
            for n in counts:
                cpu[n].append(per_worker(binary, server, n, conditions[n], worker_ratio[n],
                                         worker_rate[n], worker_psql_rate[n],
                                         worker_ratio_together[n]))
            # Publish: one transaction against a plain COPY FROM into a fresh table.
            err = lockstep_log([binary, "run", "pagerank", "--graph", server.uri,
                                "--max-iterations", "1", "--out", server.uri])
            publish.append(float(PUBLISH_RE.search(err).group(1)))
            with open(results, "w") as out:
                subprocess.run(["psql", "-X", "-q", server.uri, "-c",
                                "COPY (SELECT id, value FROM pagerank) TO STDOUT"], stdout=out,
                               check=True)
            rows = int(server.psql("-c", "SELECT count(*) FROM pagerank"))
            server.psql("-c", "DROP TABLE IF EXISTS plain",
                        "-c", "CREATE TABLE plain (id bigint PRIMARY KEY, value double precision)")
            publish_psql.append(timed(["psql", "-X", "-q", server.uri, "-c",
                                       f"\\copy plain FROM '{results}'"]))
            log(f"trial {trial + 1}: local load {local[-1]:.3f} s (psql COPY {local_psql[-1]:.3f}"
                f" s, text file {local_file[-1]:.3f} s); per worker "
                + "; ".join(", ".join(f"{r:.2f}x" for r in worker_ratio[n][-n:]) for n in counts)
                + f" of psql; publish {publish[-1]:.3f} s (psql \\copy {publish_psql[-1]:.3f} s)")
        ratio = lambda a, b: [x / y for x, y in zip(a, b)]
        rate = lambda n, ts: [n / t / 1e6 for t in ts]
        log()
        log("figure (min/median/max over trials)           lockstep            psql COPY       ratio")
        log(f"local load, M edges/s                         {scale.spread(rate(edges, local))}"
            f"   {scale.spread(rate(edges, local_psql))}   {scale.spread(ratio(local, local_psql))}x")
        log(f"local load from the text file, M edges/s     {scale.spread(rate(edges, local_file))}")
        for n in counts:
            log(f"per-worker load ({n} worker{'s' if n > 1 else ''}), M rows/s            "
                f"{scale.spread([r / 1e6 for r in worker_rate[n]])}   "
                f"{scale.spread([r / 1e6 for r in worker_psql_rate[n]])}   "
                f"{scale.spread(worker_ratio[n])}x")
            if n > 1:
                log(f"  against all {n} shares' psql COPYs side by side                  "
                    f"                  {scale.spread(worker_ratio_together[n])}x")
            # Where the cores went: on a machine with fewer cores than processes, the load cannot
            # take less wall time than its CPU seconds over the cores.
            w, b, p, pb = (statistics.median(c[i] for c in cpu[n]) for i in range(4))
            log(f"  CPU s (median): {n} worker process(es) {w:.2f} + their server backends "
                f"{b:.2f}; {n} psql {p:.2f} + backends {pb:.2f}; {os.cpu_count()} cores")
        log(f"publish ({rows} rows), M rows/s               {scale.spread(rate(rows, publish))}"
            f"   {scale.spread(rate(rows, publish_psql))}   "
            f"{scale.spread(ratio(publish, publish_psql))}x")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
