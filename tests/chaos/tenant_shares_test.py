"""Fair shares between tenants on every worker (issue 37; docs/decisions/0071-tenant-fair-shares.md):
real processes on loopback, every one with mutual TLS.

    python3 tenant_shares_test.py BUILD_DIR [WEIGHT_X:WEIGHT_Y] [--report]

Tenant x runs 8 jobs and tenant y 1, each job one stoker-bench-client with its tenant's trainer
certificate, on 2 workers of one producer thread each whose simulated batches burn CPU (so each
batch costs the same producer time). The weights come from a --tenant-policy file (1:1 unless
given). While every job is backlogged, the share of producer time the workers spent on y
(stoker_worker_tenant_busy_seconds_total over a window) must be within 0.05 of y's configured
share weight_y / (weight_x + weight_y); before the fair queue it was about 1/9 at 1:1.
--report prints the measured and configured shares as JSON (bench/tenant-shares.sh), with y's
share of the batches delivered in the window beside them, and exits 0 whatever they are (also
against a worker without the metric: measured_y null). Exit 0 = pass.
"""

import json
import os
import sys
import time

from chaos_harness import ChaosError, Cluster, Job, free_port, metrics_page, wait_until

X_JOBS = 8
WORKERS = 2
BATCH_MS = 20         # each simulated batch's period: 50 batches/s per worker
BATCH_CPU_MS = 2      # of which it burns this much CPU
WARMUP_S = 6          # every client connected to both workers and backlogged
WINDOW_S = 15
MARGIN = 0.05



def tenant_busy_seconds(port):
    """stoker_worker_tenant_busy_seconds_total by tenant on one worker's /metrics page."""
    text = metrics_page(port)
    busy = {}
    prefix = 'stoker_worker_tenant_busy_seconds_total{tenant="'
    for line in text.splitlines():
        if line.startswith(prefix):
            tenant = line[len(prefix):line.index('"', len(prefix))]
            busy[tenant] = float(line.rsplit(" ", 1)[1])
    return busy


def measure(bin_dir, weight_x, weight_y):
    """Runs the cluster; returns y's share of the workers' producer time over the window."""
    with Cluster(bin_dir, tenants=("x", "y")) as cluster:
        policy = os.path.join(cluster.dir, "tenants.json")
        with open(policy, "w") as f:
            json.dump({"tenants": {"x": {"weight": weight_x}, "y": {"weight": weight_y}}}, f)
        cluster.start_coordinator(extra=[f"--tenant-policy={policy}"])
        ports = []
        for i in range(WORKERS):
            ports.append(free_port())
            cluster.start_worker(f"worker{i}", extra=[
                f"--simulate-batch-ms={BATCH_MS}", "--simulate-batch-mode=burn",
                f"--simulate-batch-cpu-ms={BATCH_CPU_MS}", f"--metrics-port={ports[-1]}",
                "--metrics-address=127.0.0.1"])
        # Enough epochs of 100 batches for every job to stay backlogged past the window, even
        # one getting all of the workers' time (the clients are stopped at the end).
        epochs = 2 * WORKERS * (1000 // BATCH_MS) * (WARMUP_S + WINDOW_S) // 100
        for i in range(X_JOBS):
            cluster.start_client(Job(f"x{i}", num_samples=800, epochs=epochs, step_ms=0),
                                 tag=f"x{i}", tenant="x")
        cluster.start_client(Job("y0", num_samples=800, epochs=epochs, step_ms=0), tag="y0",
                             tenant="y")
        # A worker that starves streams (the one before the fair queue) may never serve some:
        # --report measures it anyway.
        first = any if "--report" in sys.argv else all
        wait_until(lambda: first(cluster.delivered(tag) > 0 for tag in cluster.clients), 60,
                   "every client's first batch")
        time.sleep(WARMUP_S)
        before = [tenant_busy_seconds(port) for port in ports]
        delivered_before = {tag: cluster.delivered(tag) for tag in cluster.clients}
        time.sleep(WINDOW_S)
        after = [tenant_busy_seconds(port) for port in ports]
        delivered = {tag: cluster.delivered(tag) - n for tag, n in delivered_before.items()}
        for tag, (proc, _) in cluster.clients.items():
            if proc.poll() is not None:
                raise ChaosError(f"client {tag} ended (exit {proc.returncode}) within the "
                                 "window: not backlogged throughout")
        # Every batch costs the same: y's share of the batches delivered in the window is a
        # cross-check that needs no worker metric (a worker built before it has none).
        batches_y = delivered["y0"] / max(1, sum(delivered.values()))
        spent = {t: sum(a.get(t, 0) - b.get(t, 0) for a, b in zip(after, before))
                 for t in ("x", "y")}
        total = spent["x"] + spent["y"]
        if total <= 0:
            if "--report" in sys.argv:
                return None, batches_y, 0
            raise ChaosError(f"no producer time measured: {after}")
        return spent["y"] / total, batches_y, total / (WINDOW_S * WORKERS)


def main():
    bin_dir = sys.argv[1]
    weights = sys.argv[2] if len(sys.argv) > 2 and ":" in sys.argv[2] else "1:1"
    weight_x, weight_y = (float(w) for w in weights.split(":"))
    target = weight_y / (weight_x + weight_y)
    share, batches_y, busy = measure(bin_dir, weight_x, weight_y)
    result = {"weights": weights, "y_jobs": 1, "x_jobs": X_JOBS, "configured_y": target,
              "measured_y": share and round(share, 4),
              "deviation": share and round(abs(share - target) / target, 4),
              "batches_y": round(batches_y, 4), "busy_per_worker": round(busy, 3)}
    print(json.dumps(result))
    if "--report" in sys.argv:
        return 0
    if abs(share - target) > MARGIN:
        print(f"FAIL: tenant y got {share:.3f} of the producer time, configured {target:.3f}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
