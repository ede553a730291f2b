#!/usr/bin/python3
"""`scripts/bench.sh takeover [KILLS]` (issue "No single point of failure"): how long replicated
coordinators take to replace a leader that dies, and what a trainer waits meanwhile.

A real 3-member etcd on loopback, three stoker-coordinator replicas sharing
--state=etcd://.../stoker with the default lease (--leader-lease-ttl-ms=2000), two workers and
one stoker-bench-client with its default prefetch (a training step of 10 ms per batch), all under
mutual TLS as the chart deploys them. KILLS times (20 by default): the leader is SIGKILLed, the
bench records when

  - serving:     the new leader's metrics page first says stoker_coordinator_leader 1 (it won
                 the election, caught up with etcd and serves);
  - first lease: its stoker_coordinator_rpc_seconds_count{method="LeaseTasks"} first counts an
                 answered call (a worker got work from it);

both measured from the SIGKILL, polled every 10 ms; and the trainer's data wait: the longest
time without a new batch at the client within 8 s after the kill (its dump file polled every
10 ms), less the 10 ms step. The killed replica is restarted as a standby before the next kill.
The control: the same longest gap in the 2.7 s before each kill (no takeover). Prints per-kill
figures, then `RESULT name=takeover ...` with p50 and p99 (with 20 kills, p99 is the largest).
"""

import os
import signal
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "chaos"))
from chaos_harness import Cluster, Job, metrics_page, wait_until  # noqa: E402
from etcd_harness import EtcdCluster  # noqa: E402

PREFIX = "/stoker"
POLL_S = 0.01
WINDOW_S = 8.0
STEP_S = 0.010


class DefaultPrefetchJob(Job):
    """The chaos tests' job with the client's default prefetch budget (theirs is 1 MB)."""

    def flags(self):
        return [f for f in super().flags() if not f.startswith("--prefetch-mb")]


def sample(page, name, labels=""):
    for line in page.splitlines():
        if line.startswith(name + labels + " "):
            return float(line.split()[-1])
    return None


def page_or_empty(port):
    try:
        return metrics_page(port)
    except OSError:
        return ""


def leader_index(cluster):
    for i, port in enumerate(cluster.replica_metrics_ports):
        if sample(page_or_empty(port), "stoker_coordinator_leader") == 1:
            return i
    return None


def longest_gap(cluster, start, end):
    """The longest time between consecutive batches seen at the client in [start, end]."""
    arrivals = [t for t in cluster.arrivals if start <= t <= end]
    if not arrivals:
        return end - start
    edges = [start] + arrivals + [end]
    return max(b - a for a, b in zip(edges, edges[1:]))


def watch_client(cluster, until):
    """Polls the client's dump file until `until`, recording when each new batch showed up."""
    while time.monotonic() < until:
        n = cluster.delivered("client0")
        now = time.monotonic()
        cluster.arrivals.extend([now] * (n - cluster.seen))
        cluster.seen = n
        time.sleep(POLL_S)


def one_kill(cluster):
    old = leader_index(cluster)
    killed_at = time.monotonic()
    cluster.replicas[old].send_signal(signal.SIGKILL)
    cluster.replicas[old].wait(timeout=20)
    serving = first_lease = None
    deadline = killed_at + WINDOW_S
    while time.monotonic() < deadline and first_lease is None:
        for i, port in enumerate(cluster.replica_metrics_ports):
            if i == old:
                continue
            page = page_or_empty(port)
            if sample(page, "stoker_coordinator_leader") != 1:
                continue
            now = time.monotonic() - killed_at
            if serving is None:
                serving = now
            leases = sample(page, "stoker_coordinator_rpc_seconds_count", '{method="LeaseTasks"}')
            if leases:
                first_lease = now
        watch_client(cluster, time.monotonic() + POLL_S)
    watch_client(cluster, deadline)
    wait_gap = longest_gap(cluster, killed_at, deadline) - STEP_S
    cluster.start_replica(old)
    return serving, first_lease, wait_gap, killed_at


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main():
    build = sys.argv[1]
    kills = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    job = DefaultPrefetchJob("takeover", num_samples=768, batch_size=8, epochs=1000, step_ms=10)
    with EtcdCluster(members=3) as etcd, Cluster(build) as cluster:
        cluster.start_replicas(3, f"etcd://{','.join(etcd.endpoints())}{PREFIX}")
        wait_until(lambda: leader_index(cluster) is not None, 30, "a coordinator to lead")
        for i in range(2):
            cluster.start_worker(f"worker{i}")
        cluster.start_client(job)
        cluster.arrivals, cluster.seen = [], 0
        cluster.wait_delivered("client0", 200)
        rows = []
        for kill in range(kills):
            before = time.monotonic()
            watch_client(cluster, before + WINDOW_S / 3)
            control = longest_gap(cluster, before, time.monotonic()) - STEP_S
            serving, first_lease, wait_gap, _ = one_kill(cluster)
            rows.append((serving, first_lease, wait_gap, control))
            print(f"kill {kill + 1:2d}: serving {serving:.2f} s, first lease "
                  f"{first_lease if first_lease is None else round(first_lease, 2)} s, "
                  f"trainer's longest wait {wait_gap:.2f} s (control {control:.2f} s)",
                  flush=True)
        load = os.getloadavg()[0]
    serving = [r[0] for r in rows if r[0] is not None]
    leases = [r[1] for r in rows if r[1] is not None]
    waits = [r[2] for r in rows]
    controls = [r[3] for r in rows]
    print(f"RESULT name=takeover kills={kills} lease_ttl_s=2 "
          f"serving_p50_s={statistics.median(serving):.2f} "
          f"serving_p99_s={percentile(serving, 0.99):.2f} "
          f"first_lease_p50_s={statistics.median(leases):.2f} "
          f"first_lease_p99_s={percentile(leases, 0.99):.2f} first_lease_missing="
          f"{kills - len(leases)} data_wait_p50_s={statistics.median(waits):.2f} "
          f"data_wait_p99_s={percentile(waits, 0.99):.2f} "
          f"control_wait_p50_s={statistics.median(controls):.2f} "
          f"control_wait_p99_s={percentile(controls, 0.99):.2f} load_1min={load:.1f}")


if __name__ == "__main__":
    main()
