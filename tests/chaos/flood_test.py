"""Flood scenario (issue 12, bounded resources; docs/security.md "Limits"): real processes on
loopback.

    python3 flood_test.py BUILD_DIR

A coordinator (--max-jobs=2000) and a worker (--max-streams=256), both mutual TLS, run a real
job; beside it stoker-flood-client sends 10,000 OpenJob calls and then holds 1,000 streams on
the worker at once. Checked: every flood call ends with the code its limit says (OK up to
--max-jobs, INVALID_ARGUMENT for names over --max-job-name-bytes, RESOURCE_EXHAUSTED past
--max-jobs and for requests over --max-request-bytes; streams past --max-streams
RESOURCE_EXHAUSTED); the coordinator's and the worker's RSS stay under RSS_BOUND_MIB; the real
job delivers every batch exactly once. Exit 0 = pass.
"""

import json
import os
import subprocess
import sys
import time

from chaos_harness import ChaosError, Cluster, Job, check_delivery, wait_until

MAX_JOBS = 2000
MAX_STREAMS = 256
OPEN_JOBS = 10_000
STREAMS = 1_000
# Stated bound: neither process may end the flood with more resident memory than this.
RSS_BOUND_MIB = {"coordinator": 128, "worker0": 128}


def expect(counts, want, what):
    if counts != want:
        raise ChaosError(f"{what}: got {counts}, expected {want}")


def flood(bin_dir):
    with Cluster(bin_dir) as cluster:
        cluster.start_coordinator(journal=False, extra=[f"--max-jobs={MAX_JOBS}"])
        cluster.start_worker("worker0", extra=[f"--max-streams={MAX_STREAMS}"])
        job = Job("beside-the-flood", num_samples=2400, step_ms=50)
        cluster.start_client(job)
        wait_until(lambda: cluster.delivered("client0") > 0, 60, "the real job's first batch")
        before = {name: cluster.rss_kib(name) for name in RSS_BOUND_MIB}
        started = time.monotonic()
        out = subprocess.run(
            [os.path.join(bin_dir, "tests/chaos/stoker-flood-client"),
             f"--coordinator={cluster.coordinator_address}",
             f"--worker={cluster.worker_address('worker0')}", f"--hold-job={job.name}",
             f"--open-jobs={OPEN_JOBS}", f"--streams={STREAMS}"] + cluster.tls_flags("trainer"),
            capture_output=True, text=True, timeout=240)
        if out.returncode != 0:
            raise ChaosError(f"flood client exited with {out.returncode}: {out.stderr[-2000:]}")
        after = {name: cluster.rss_kib(name) for name in RSS_BOUND_MIB}
        counts = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"flood took {time.monotonic() - started:.1f}s; real job had delivered "
              f"{cluster.delivered('client0')} of {job.batches_per_epoch} batches by its end")
        print("flood results:", counts)
        print("RSS (KiB) before the flood:", before, "after:", after)

        # Every tenth name is over --max-job-name-bytes; the real job holds one of --max-jobs
        # places; the rest, and every hundredth request (over --max-request-bytes), are refused.
        too_long = OPEN_JOBS // 10
        created = MAX_JOBS - 1
        expect(counts["open_jobs"], {"OK": created, "INVALID_ARGUMENT": too_long,
                                     "RESOURCE_EXHAUSTED": OPEN_JOBS - too_long - created},
               "OpenJob flood")
        streams = counts["streams"]
        # The real client's stream holds one place while it runs; once it finished, its place
        # may go to a flood stream.
        if streams.get("OK") not in (MAX_STREAMS - 1, MAX_STREAMS) or \
                streams.get("OK", 0) + streams.get("RESOURCE_EXHAUSTED", 0) != STREAMS:
            raise ChaosError(f"stream flood: got {streams}, expected {MAX_STREAMS - 1} (or "
                             f"{MAX_STREAMS}) OK and the rest RESOURCE_EXHAUSTED")
        for name, bound in RSS_BOUND_MIB.items():
            if after[name] > bound * 1024:
                raise ChaosError(f"{name} RSS {after[name]} KiB after the flood, over the stated "
                                 f"bound of {bound} MiB")
        cluster.wait_clients(timeout_s=120)
        check_delivery(job, cluster.dump_records())


def main():
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} BUILD_DIR", file=sys.stderr)
        return 2
    start = time.monotonic()
    try:
        flood(sys.argv[1])
    except ChaosError as e:
        print(f"FAIL flood_open_jobs_and_streams: {e}")
        return 1
    print(f"PASS flood_open_jobs_and_streams in {time.monotonic() - start:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
