"""Issue 26, "Done when" (first bullet): `stoker-ctl trace` during a demo-sized job.

Real processes on loopback with mutual TLS (tests/chaos/chaos_harness.py): a coordinator, two
workers and a bench client (rank 0) consuming a blur job with a simulated step; `stoker-ctl
trace` (an operator's certificate) traces it for a few seconds. The JSON must pass
stoker-trace-check (Chrome Trace Event format, no overlap on any track), hold spans of >= 3
processes (the coordinator, a worker, the rank), and every batch the rank received in the
window's settled middle must have its worker stages and its client stages, the stages that run
on a thread (everything but the waits: lease_wait, queue, send, buffer_wait) disjoint within
each thread.

The window's edges are left out: the workers and the rank turn tracing on and off at their own
heartbeats (every 200 ms here), so a batch produced just before a worker heard of the window, or
received just before the rank did, carries one side's spans only.

  trace_timeline_test.py BUILD_DIR
"""

import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "chaos"))
import chaos_harness as harness  # noqa: E402

SECONDS = 4
EDGE_US = 1_500_000  # the window's edges left out (see above)
WAITS = {"lease_wait", "queue", "send", "buffer_wait"}
WORKER_STAGES = {"shard_read", "encode", "queue", "send"}
CLIENT_STAGES = {"buffer_wait", "handoff"}


def fail(message):
    raise harness.ChaosError(message)


def read_trace(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["name"] == "thread_name"}
    spans = [e for e in events if e["ph"] == "X"]
    return processes, threads, spans


def check_stages(processes, threads, spans):
    role = {pid: name.split(" ")[0] for pid, name in processes.items()}
    by_task = collections.defaultdict(lambda: collections.defaultdict(set))
    receipts = {}
    for span in spans:
        task = (span["args"]["epoch"], span["args"]["batch"])
        by_task[task][role[span["pid"]]].add(span["cat"])
        if span["cat"] in ("receive", "decompress") and role[span["pid"]] == "rank":
            receipts[task] = span["ts"]
    if not receipts:
        fail("no batch has a client receive span")
    first, last = min(receipts.values()), max(receipts.values())
    settled = [t for t, ts in receipts.items() if first + EDGE_US <= ts <= last - EDGE_US]
    if len(settled) < 5:
        fail(f"only {len(settled)} batches received in the window's settled middle")
    for task in settled:
        stages = by_task[task]
        missing = (WORKER_STAGES - stages["worker"]) | (CLIENT_STAGES - stages["rank"])
        if not stages["rank"] & {"receive", "decompress"}:
            missing.add("receive|decompress")
        if not stages["worker"] & {"decode", "op", "op_group"}:
            missing.add("decode|op|op_group")
        if missing:
            fail(f"batch {task}: stages missing {sorted(missing)}; has {dict(stages)}")
    # Within each thread (its lanes joined: " +N" is a lane of the same thread), the stages that
    # run on it never overlap.
    on_thread = collections.defaultdict(list)
    for span in spans:
        if span["cat"] in WAITS:
            continue
        thread = re.sub(r" \+\d+$", "", threads[(span["pid"], span["tid"])])
        on_thread[(span["pid"], thread)].append((span["ts"], span["ts"] + span["dur"], span))
    for (pid, thread), intervals in on_thread.items():
        intervals.sort(key=lambda i: i[0])
        for (_, end, before), (start, _, after) in zip(intervals, intervals[1:]):
            if start < end - 0.001:  # the JSON's ns precision
                fail(f"{processes[pid]} / {thread}: {after} overlaps {before}")
    return len(settled)


def main(bin_dir):
    job = harness.Job("traced", num_samples=8 * 4000, batch_size=8, step_ms=10,
                      pipeline="to_float, gaussian_blur(ksize=5)")
    with harness.Cluster(bin_dir) as cluster:
        cluster.start_coordinator(journal=False)
        cluster.start_worker("worker1")
        cluster.start_worker("worker2")
        cluster.start_client(job)
        cluster.wait_delivered("client0", 20)
        out = os.path.join(cluster.dir, "trace.json")
        ctl = subprocess.run(
            [os.path.join(bin_dir, "tools/stoker-ctl"), "trace",
             f"--coordinator={cluster.coordinator_address}", f"--job={job.name}",
             f"--seconds={SECONDS}", "-o", out] + cluster.tls_flags("operator"),
            capture_output=True, text=True, timeout=120)
        if ctl.returncode != 0:
            cluster.dump_logs()
            fail(f"stoker-ctl trace exited {ctl.returncode}: {ctl.stderr}")
        print(ctl.stdout.strip())
        check = subprocess.run([os.path.join(bin_dir, "trace/stoker-trace-check"), out],
                               capture_output=True, text=True, timeout=60)
        if check.returncode != 0:
            fail(f"stoker-trace-check refused the trace: {check.stdout} {check.stderr}")
        processes, threads, spans = read_trace(out)
        names = sorted(processes.values())
        roles = {name.split(" ")[0] for name in names}
        if not {"coordinator", "worker", "rank"} <= roles:
            fail(f"spans of coordinator, worker and rank expected; processes: {names}")
        settled = check_stages(processes, threads, spans)
        print(f"OK: {len(spans)} spans of {names}; {settled} settled batches complete")


if __name__ == "__main__":
    main(sys.argv[1])
