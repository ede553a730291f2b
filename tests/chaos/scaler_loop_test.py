"""Closed-loop scaling (issue 27 item 3): stoker-keda-loop plays KEDA and the workers'
Deployment against the coordinator's external scaler (KEDA's protocol over mutual TLS, the
scaler role), starting and stopping real worker processes, while a trainer's demand steps
50 -> 10 -> 80 ms per batch (three jobs one after the other), then stops.

Workers simulate a CPU-bound producer (--simulate-batch-mode=burn: 16 ms of CPU per batch of 4,
250 samples per CPU-second: 1 worker for the 50 and 80 ms steps, 2 for the 10 ms one), so the advisor's capacity model holds even when the shared machine
slows them. Passes when, after each step, the loop reaches the count the coordinator then
advises within SETTLE_S; the count rises for the 10 ms step and falls for the 80 ms one; the
reported count never reverses within the cool-down; and the pool scales to zero once no job
runs. Then the same trace under an HPA-like CPU policy (target 80% busy, at least one worker;
the loop's --policy=cpu) for comparison: prints, for both, worker-seconds, the trainers' wait
seconds and dollars at the post's prices, and a RESULT line. Every wait is bounded.

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
# The post's prices: a GPU node (ml.g5.xlarge) and a CPU worker (ml.c5.4xlarge), dollars/hour.
GPU_DOLLARS_PER_HOUR = 1.408
WORKER_DOLLARS_PER_HOUR = 0.816


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


def worker_seconds(log, until):
    """Worker-seconds from the loop's start to `until` (seconds since it)."""
    spans = zip(log, log[1:] + [{"t": until}])
    return sum(e["workers"] * (min(b["t"], until) - e["t"]) for e, b in spans if e["t"] < until)


def run_trace(cluster, build, policy):
    """The demand trace under `policy`'s loop: (log, step starts, step ends, trainer wait
    seconds, seconds from the loop's start to the pool's scale-down horizon)."""
    worker = [os.path.join(build, "worker/stoker-worker"),
              f"--coordinator={cluster.coordinator_address}", "--listen=127.0.0.1:0",
              "--threads=1", "--rpc-timeout-ms=2000", "--register-attempts=100",
              "--drain-deadline-ms=500", "--simulate-batch-ms=16",
              "--simulate-batch-mode=burn", "--data-root=/"] + cluster.tls_flags("worker")
    log_path = os.path.join(cluster.dir, f"{policy}.jsonl")
    origin = time.monotonic()
    loop = cluster._spawn(f"loop-{policy}", [
        os.path.join(build, "tests/testing/stoker-keda-loop"), f"--policy={policy}",
        f"--coordinator={cluster.coordinator_address}", f"--log={log_path}",
        f"--interval-ms={int(INTERVAL_S * 1000)}", "--max-workers=6", "--duration-s=150",
        f"--cooldown-ms={int(COOLDOWN_S * 1000)}"]
        + cluster.tls_flags("scaler") + ["--"] + worker)
    starts, ends, wait_s = [], [], 0.0
    for i, (step_ms, seconds) in enumerate(PHASES):
        job = ch.Job(f"{policy}-step{i}", num_samples=BATCH * int(seconds * 1000 / step_ms),
                     batch_size=BATCH, step_ms=step_ms)
        starts.append(time.monotonic() - origin)
        report = os.path.join(cluster.dir, f"{policy}-step{i}.json")
        cluster.start_client(job, tag=f"{policy}-step{i}", extra=[f"--report-json={report}"])
        cluster.wait_clients(timeout_s=90)
        ends.append(time.monotonic() - origin)
        with open(report) as f:
            wait_s += json.load(f)["wait_seconds"]
    horizon = ends[-1] + COOLDOWN_S + 2  # the KEDA loop scales to zero by then
    if policy == "keda":
        ch.wait_until(lambda: any(e["t"] > ends[-1] and e["workers"] == 0 and not e["active"]
                                  for e in read_log(log_path)),
                      COOLDOWN_S + 15, "the pool to scale to zero")
    time.sleep(max(0.0, horizon - (time.monotonic() - origin)) + INTERVAL_S)
    loop.send_signal(signal.SIGTERM)
    loop.wait(timeout=30)
    log = read_log(log_path)
    print(f"{policy}: changes (s: advised/running):", " ".join(
        f"{e['t']:.1f}:{e['metric']}/{e['workers']}" for b, e in zip([{}] + log, log)
        if (e["metric"], e["workers"]) != (b.get("metric"), b.get("workers"))))
    return log, starts, ends, wait_s, horizon


def figures(policy, log, starts, ends, wait_s, horizon):
    """Worker-seconds, trainer wait seconds and dollars at the post's prices."""
    spent = worker_seconds(log, horizon)
    trainer_s = sum(e - s for s, e in zip(starts, ends))
    dollars = (GPU_DOLLARS_PER_HOUR * trainer_s + WORKER_DOLLARS_PER_HOUR * spent) / 3600
    print(f"{policy}: worker-seconds {spent:.1f}, trainer wait {wait_s:.1f}s of {trainer_s:.1f}s, "
          f"${dollars:.5f}")
    return spent, wait_s, dollars


def main(build):
    with ch.Cluster(build) as cluster:
        cluster.start_coordinator(journal=False, extra=[
            f"--scaler-cooldown-ms={int(COOLDOWN_S * 1000)}", "--scaler-hysteresis-workers=1"])
        keda = run_trace(cluster, build, "keda")
        check_settled(keda[0], keda[1], keda[2])
        check_no_reversal(keda[0])
        cpu = run_trace(cluster, build, "cpu")
        k = figures("keda", *keda)
        c = figures("cpu", *cpu)
        print(f"RESULT name=scaler_loop keda_worker_seconds={k[0]:.1f} keda_wait_seconds={k[1]:.2f} "
              f"keda_dollars={k[2]:.5f} cpu_worker_seconds={c[0]:.1f} cpu_wait_seconds={c[1]:.2f} "
              f"cpu_dollars={c[2]:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
