"""Hostile peers (issue 28; docs/security.md, "Authenticated peers"): real processes on loopback,
every one with mutual TLS.

    python3 hostile_test.py BUILD_DIR ATTACK      ATTACK: open_job, acks, credit or other_tenant

A coordinator and one worker (--memory-bytes=256 MiB) serve a real job; beside it
stoker-hostile-client, holding a trainer certificate like any user, runs one attack:

  open_job  world_size 4,000,000,000 over a 1-sample dataset, alone and with a crafted
            same-world resume token: both INVALID_ARGUMENT, and the coordinator answers after.
  acks      2,000,000 acknowledgements of tasks the worker never sent: every stream carrying
            them ends INVALID_ARGUMENT and the worker counts them as protocol errors.
  credit    one stream grants credit 2^32-1 for 38.5 MB batches and never reads for 20 s.
  other_tenant
            the real job is tenant a's; the attacker holds tenant b's trainer certificate and
            tries every call on the job's id (issue 37): GetStatus, GetJob, ClientHeartbeat
            reporting its first batch with its own and with the victim's client id, StartTrace,
            GetTrace, worker streams with either client id; all NOT_FOUND in the words a job id
            that never existed gets, 0 batches and 0 bytes received, the job absent from its
            status (and from `stoker-ctl status` with its certificate, but not the operator's).
            Then stoker-bench-client with tenant b's certificate resumes from a copy of the
            victim's checkpoint token: NOT_FOUND, no batch.

Checked for every attack: the coordinator still answers; the worker was never removed
(workers_lost 0) and is still live; the real job receives every batch exactly once; the
worker's peak RSS (VmHWM) stays below --memory-bytes + 64 MiB. Exit 0 = pass.
"""

import json
import os
import shutil
import subprocess
import sys
import time

from chaos_harness import (ChaosError, Cluster, Job, check_delivery, free_port, metrics_page,
                           scenario_main, wait_until)

MEMORY_BYTES = 256 << 20
PEAK_RSS_BOUND_KIB = (MEMORY_BYTES + (64 << 20)) // 1024
HOLD_SECONDS = 20



def peak_rss_kib(proc):
    with open(f"/proc/{proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise ChaosError("the worker has no VmHWM")


def metric_sum(port, name):
    """Sum of every sample of metric `name` on a /metrics page (0 when absent)."""
    text = metrics_page(port)
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def ctl_status(cluster, tls):
    """`stoker-ctl status --json` with certificate flags `tls`."""
    out = subprocess.run([os.path.join(cluster.bin_dir, "tools/stoker-ctl"), "status",
                          f"--coordinator={cluster.coordinator_address}", "--json"] + tls,
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise ChaosError(f"stoker-ctl status exited {out.returncode}: {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def attack(cluster, name, extra=(), tenant=None):
    argv = [os.path.join(cluster.bin_dir, "tests/chaos/stoker-hostile-client"),
            f"--attack={name.replace('_', '-')}",
            f"--coordinator={cluster.coordinator_address}",
            f"--worker={cluster.worker_address('worker0')}",
            f"--hold-seconds={HOLD_SECONDS}"] + cluster.tls_flags("trainer", tenant) + list(extra)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=HOLD_SECONDS + 180)
    if out.returncode != 0:
        raise ChaosError(f"hostile client exited with {out.returncode}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def expect(got, want, what):
    if got != want:
        raise ChaosError(f"{what}: got {got!r}, expected {want!r}")


def check_attack(name, result, metrics_port):
    if name == "open_job":
        expect(result["world_size"], "INVALID_ARGUMENT", "OpenJob with world_size 4e9")
        expect(result["world_size_with_token"], "INVALID_ARGUMENT",
               "OpenJob with world_size 4e9 and a crafted resume token")
    elif name == "acks":
        ends = result["ack_streams"]
        if set(ends) != {"INVALID_ARGUMENT"}:
            raise ChaosError(f"streams acking unsent tasks ended {ends}; every one must end "
                             "INVALID_ARGUMENT")
        errors = metric_sum(metrics_port, "stoker_worker_protocol_errors_total")
        if errors < ends["INVALID_ARGUMENT"]:
            raise ChaosError(f"stoker_worker_protocol_errors_total is {errors}, but "
                             f"{ends['INVALID_ARGUMENT']} streams were ended for bad acks")
    elif name == "credit":
        expect(result["credit_written"], True, "the attacker's Open and Credit were written")
    elif name == "other_tenant":
        for call in ("get_job", "heartbeat_own_client", "heartbeat_victim_client", "start_trace",
                     "get_trace", "stream_own_client", "stream_victim_client"):
            expect(result[call], "NOT_FOUND", f"{call} on another tenant's job")
        expect(result["get_job_never"], "NOT_FOUND", "GetJob of a job id never handed out")
        # No oracle: the same words as for a job that never existed, but for the id.
        never = result["get_job_never_message"].split(":", 1)[1]
        expect(result["get_job_message"].split(":", 1)[1], never,
               "GetJob's message for another tenant's job against a job that never existed")
        expect(result["status"], "OK", "GetStatus with another tenant's certificate")
        expect(result["status_victim_mentions"], 0, "the victim's job in the attacker's status")
        expect(result["victim_batches_received"], 0, "batches of the victim's job received")
        expect(result["victim_bytes_received"], 0, "bytes of the victim's job received")
    expect(result["status_after"], "OK", "GetStatus after the attack")
    expect(result["workers_lost"], 0, "workers removed by the coordinator")
    expect(result["workers"], 1, "live workers after the attack")


def other_tenant(cluster, job):
    """The attacks of tenant b on tenant a's job (the victim: client0, running `job`)."""
    operator_view = ctl_status(cluster, cluster.tls_flags("operator"))
    victim = [j for j in operator_view["jobs"] if j["name"] == job.name]
    expect(len(victim), 1, "the victim's job in the operator's status")
    victim = victim[0]
    expect(victim["tenant"], "a", "the victim job's tenant")
    client_id = victim["ranks"][0]["client_id"]
    result = attack(cluster, "other_tenant", tenant="b",
                    extra=[f"--victim-job-id={victim['job_id']}",
                           f"--victim-client-id={client_id}"])
    expect(ctl_status(cluster, cluster.tls_flags("trainer", "b")).get("jobs", []), [],
           "jobs in `stoker-ctl status` with tenant b's certificate")
    own = ctl_status(cluster, cluster.tls_flags("trainer", "a")).get("jobs", [])
    expect([j["name"] for j in own], [job.name], "jobs in `stoker-ctl status` as tenant a")
    # A copied checkpoint: resuming from it as tenant b opens nothing of tenant a's.
    stolen = os.path.join(cluster.dir, "stolen.token")
    wait_until(lambda: os.path.exists(cluster.token_file) and
               os.path.getsize(cluster.token_file) > 0, 60, "the victim's first checkpoint")
    shutil.copyfile(cluster.token_file, stolen)
    thief = Job(job.name, num_samples=job.num_samples, step_ms=job.step_ms)
    proc = cluster.start_client(thief, tag="thief", tenant="b",
                                extra=[f"--resume-from={stolen}"])
    if proc.wait(timeout=120) == 0:
        raise ChaosError("stoker-bench-client resumed from tenant a's token as tenant b")
    with open(os.path.join(cluster.dir, "thief.log"), errors="replace") as f:
        log = f.read()
    if "NOT_FOUND" not in log or "not this tenant's" not in log:
        raise ChaosError(f"the thief's resume did not end NOT_FOUND: {log[-1500:]}")
    if cluster.delivered("thief") != 0:
        raise ChaosError(f"the thief received {cluster.delivered('thief')} batches")
    del cluster.clients["thief"]  # it failed as it must; the checks below are the victim's
    return result


def run(bin_dir, name):
    tenants = ("a", "b") if name == "other_tenant" else ()
    with Cluster(bin_dir, tenants=tenants) as cluster:
        metrics_port = free_port()
        cluster.start_coordinator(journal=False)
        cluster.start_worker("worker0", extra=[f"--memory-bytes={MEMORY_BYTES}",
                                               f"--metrics-port={metrics_port}",
                                               "--metrics-address=127.0.0.1"])
        # Long enough to run beside the whole attack (about 500 batches of 40 ms steps).
        job = Job("beside-the-attack", num_samples=4000, step_ms=40)
        if name == "other_tenant":
            cluster.token_file = os.path.join(cluster.dir, "victim.token")
            cluster.start_client(job, tenant="a", extra=[f"--token-file={cluster.token_file}"])
        else:
            cluster.start_client(job)
        wait_until(lambda: cluster.delivered("client0") > 0, 60, "the real job's first batch")
        started = time.monotonic()
        result = other_tenant(cluster, job) if name == "other_tenant" else attack(cluster, name)
        print(f"{name} attack took {time.monotonic() - started:.1f}s: {result}; the real job "
              f"had {cluster.delivered('client0')} of {job.batches_per_epoch} batches by its end")
        peak = peak_rss_kib(cluster.workers["worker0"])
        print(f"worker peak RSS {peak} KiB (bound {PEAK_RSS_BOUND_KIB} KiB)")
        check_attack(name, result, metrics_port)
        if peak > PEAK_RSS_BOUND_KIB:
            raise ChaosError(f"worker peak RSS {peak} KiB, over --memory-bytes + 64 MiB "
                             f"({PEAK_RSS_BOUND_KIB} KiB)")
        cluster.wait_clients(timeout_s=180)
        check_delivery(job, cluster.dump_records())
        if cluster.workers["worker0"].poll() is not None:
            raise ChaosError("the worker exited")


if __name__ == "__main__":
    sys.exit(scenario_main(run, ("open_job", "acks", "credit", "other_tenant"),
                           label=lambda name: f"hostile_peers_{name}"))
