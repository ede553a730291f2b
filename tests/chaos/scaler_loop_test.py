"""Closed-loop scaling (issue 27 item 3): stoker-keda-loop plays KEDA and the workers'
Deployment against the coordinator's external scaler (KEDA's protocol over mutual TLS, the
scaler role), starting and stopping real worker processes, while a trainer's demand steps
50 -> 10 -> 80 ms per batch (three jobs one after the other), then stops.

Workers simulate a CPU-bound producer (--simulate-batch-mode=burn: 16 ms of CPU per batch of 4,
250 samples per CPU-second: 1 worker for the 50 and 80 ms steps, 2 for the 10 ms one), so the advisor's capacity model holds even when the shared machine
slows them. Passes when, after each step, the loop reaches the count the coordinator then
advises within SETTLE_S; the count rises for the 10 ms step and falls for the 80 ms one; the
reported count never reverses within the cool-down; and the pool scales to zero once no job
runs. Prints the worker-seconds spent and the trainers' wait. Every wait is bounded.

usage: scaler_loop_test.py BUILD_DIR
"""

import json
import os
import signal
import sys
import time

import chaos_harness as ch

BATCH = 4
PHASES = [(50, 10.0), (10, 12.0), (80, 10.0)]  # (step ms, seconds of batches at that step)
COOLDOWN_S = 3.0
INTERVAL_S = 0.3
SETTLE_S = 10.0


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.endswith("\n")]


def check_settled(log, starts, ends):
    """Per phase: the count advised while its job has work (the most frequent count above 0:
    a job's last tasks are handed out before its trainer has consumed them, and then the count
    falls), and how long the loop took to run that many."""
    targets = []
    for start, end in zip(starts, ends):
        advised = [e["metric"] for e in log if start <= e["t"] <= end and e["metric"] > 0]
        assert advised, f"nothing advised between {start:.1f}s and {end:.1f}s"
        target = max(set(advised), key=advised.count)
        reached = next((e["t"] for e in log if e["t"] >= start and e["workers"] == target), None)
        assert reached is not None and reached - start <= SETTLE_S, \
            f"{target} workers not reached within {SETTLE_S}s of {start:.1f}s"
        print(f"step at {start:.1f}s: {target} workers advised, running after "
              f"{reached - start:.1f}s")
        targets.append(target)
    assert targets[1] > targets[0] and targets[2] < targets[1], f"advised counts {targets}"
    return targets


def check_no_reversal(log):
    """A change of the reported count in the other direction than the last one comes at least
    the cool-down after it (less one poll: the loop sees changes at its polls)."""
    changes = []
    for before, after in zip(log, log[1:]):
        if after["metric"] >= 0 and before["metric"] >= 0 and after["metric"] != before["metric"]:
            changes.append((after["t"], 1 if after["metric"] > before["metric"] else -1))
    for (t0, d0), (t1, d1) in zip(changes, changes[1:]):
        if d0 != d1:
            assert t1 - t0 >= COOLDOWN_S - INTERVAL_S, f"reversal within the cool-down: {changes}"
    print(f"{len(changes)} changes of the advised count, no reversal within {COOLDOWN_S}s")


def worker_seconds(log):
    return sum(e["workers"] * (b["t"] - e["t"]) for e, b in zip(log, log[1:]))


def main(build):
    with ch.Cluster(build) as cluster:
        cluster.start_coordinator(journal=False, extra=[
            f"--scaler-cooldown-ms={int(COOLDOWN_S * 1000)}", "--scaler-hysteresis-workers=1"])
        worker = [os.path.join(build, "worker/stoker-worker"),
                  f"--coordinator={cluster.coordinator_address}", "--listen=127.0.0.1:0",
                  "--threads=1", "--rpc-timeout-ms=2000", "--register-attempts=100",
                  "--drain-deadline-ms=500", "--simulate-batch-ms=16",
                  "--simulate-batch-mode=burn", "--data-root=/"] + cluster.tls_flags("worker")
        log_path = os.path.join(cluster.dir, "loop.jsonl")
        origin = time.monotonic()
        loop = cluster._spawn("loop", [
            os.path.join(build, "tests/testing/stoker-keda-loop"),
            f"--coordinator={cluster.coordinator_address}", f"--log={log_path}",
            f"--interval-ms={int(INTERVAL_S * 1000)}", "--max-workers=6", "--duration-s=150"]
            + cluster.tls_flags("scaler") + ["--"] + worker)
        starts, ends, waits = [], [], []
        for i, (step_ms, seconds) in enumerate(PHASES):
            job = ch.Job(f"phase{i}", num_samples=BATCH * int(seconds * 1000 / step_ms),
                         batch_size=BATCH, step_ms=step_ms)
            starts.append(time.monotonic() - origin)
            report = os.path.join(cluster.dir, f"phase{i}.json")
            cluster.start_client(job, tag=f"phase{i}", extra=[f"--report-json={report}"])
            cluster.wait_clients(timeout_s=90)
            ends.append(time.monotonic() - origin)
            with open(report) as f:
                report = json.load(f)
                waits.append((report["data_wait_fraction"], report["wait_seconds"]))
        idle = time.monotonic() - origin
        ch.wait_until(lambda: any(e["t"] > idle and e["workers"] == 0 and not e["active"]
                                  for e in read_log(log_path)),
                      COOLDOWN_S + 15, "the pool to scale to zero")
        print(f"scaled to zero {read_log(log_path)[-1]['t'] - idle:.1f}s after the last job")
        loop.send_signal(signal.SIGTERM)
        loop.wait(timeout=30)
        log = read_log(log_path)
        print("changes (s: advised/running):", " ".join(
            f"{e['t']:.1f}:{e['metric']}/{e['workers']}" for b, e in zip([{}] + log, log)
            if (e["metric"], e["workers"]) != (b.get("metric"), b.get("workers"))))
        check_settled(log, starts, ends)
        check_no_reversal(log)
        print(f"worker-seconds {worker_seconds(log):.1f}, trainer (data wait fraction, wait seconds) per phase {waits}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
