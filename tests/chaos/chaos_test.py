"""Chaos scenarios (docs/architecture.md, Failure handling; issue 4): real processes on loopback,
killed on purpose.

    python3 chaos_test.py BUILD_DIR SCENARIO

Each scenario starts its own cluster, injects one kind of failure, waits (bounded) for the
clients to finish and checks from their --dump-indices that every (epoch, rank) received each
of its planned batches exactly once. Exit 0 = pass.
"""

import json
import os
import random
import signal
import struct
import subprocess
import sys
import time

from chaos_harness import (ChaosError, Cluster, Job, check_delivery, check_exactly_once,
                           free_port, metrics_page, read_token_count, scenario_main, wait_until)

BIN = None


def run_job(job, workers=4, clients=None, action=None, journal=True):
    """Starts a cluster and the job's clients, calls action(cluster), then checks delivery."""
    with Cluster(BIN) as cluster:
        cluster.start_coordinator(journal=journal)
        for i in range(workers):
            cluster.start_worker(f"worker{i}")
        for rank in range(job.world_size):
            cluster.start_client(job, rank=rank)
        if action is not None:
            action(cluster)
        cluster.wait_clients()
        check_delivery(job, cluster.dump_records())
        return cluster


def kill_workers_at(points):
    def action(cluster):
        for delivered, name in points:
            cluster.wait_delivered("client0", delivered)
            cluster.workers[name].send_signal(signal.SIGKILL)
    return action


def worker_kill_one():
    run_job(Job("kill1", num_samples=768), action=kill_workers_at([(20, "worker1")]))


def worker_kill_two():
    run_job(Job("kill2", num_samples=768),
            action=kill_workers_at([(15, "worker1"), (50, "worker3")]))


def restart_coordinator(cluster):
    cluster.kill_coordinator(signal.SIGKILL)
    cluster.start_coordinator()


def coordinator_kill_at(fractions, epochs=1):
    job = Job("coord", num_samples=768, epochs=epochs)
    total = job.batches_per_epoch * epochs

    def action(cluster):
        for fraction in fractions:
            if fraction > 0:
                cluster.wait_delivered("client0", int(total * fraction))
            restart_coordinator(cluster)
    run_job(job, action=action)


def coordinator_kill_before_first_batch():
    coordinator_kill_at([0])


def coordinator_kill_at_10_percent():
    coordinator_kill_at([0.1])


def coordinator_kill_at_50_percent():
    coordinator_kill_at([0.5])


def coordinator_kill_between_epochs():
    coordinator_kill_at([0.5], epochs=2)  # 50% of two epochs: right at the boundary


def coordinator_five_restarts_in_one_epoch():
    coordinator_kill_at([0.1, 0.25, 0.4, 0.55, 0.7])


def make_jpeg_shards(cluster, per_class, width, height):
    """Generated JPEGs (4 classes x per_class, width x height) packed into shards in the
    cluster's folder; the shards' folder (its manifest.json lists them)."""
    images, shards = os.path.join(cluster.dir, "images"), os.path.join(cluster.dir, "shards")
    subprocess.run([os.path.join(BIN, "tools/stoker-gen-images"), f"--output={images}",
                    "--classes=4", f"--per-class={per_class}", f"--width={width}",
                    f"--height={height}", "--threads=1"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([os.path.join(BIN, "tools/stoker-pack"), f"--input={images}",
                    f"--output={shards}", f"--data-root={images}", "--threads=1"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return shards


def coordinator_restart_while_manifest_server_down():
    """Issue 16: replay reads no dataset. The job's shards and manifest are served over HTTP; the
    coordinator is killed and restarted while that server is down. It must recover (not refuse
    to start), tell the job's clients it cannot reach the data, and the job finishes once the
    server is back. The workers are paused meanwhile, so that no sample is read while the data
    is away (that is the bad-sample path, tested elsewhere)."""
    with Cluster(BIN) as cluster:
        shards = make_jpeg_shards(cluster, per_class=32, width=40, height=36)
        port = cluster.start_nginx(shards)
        # Eight epochs of 16 batches: the workers must still owe batches when they are paused
        # (one epoch fits the client's prefetch and could be produced before the pause).
        job = Job("http", num_samples=128, epochs=8,
                  pipeline="decode, resize(height=32, width=32), to_float")
        cluster.start_coordinator()
        for i in range(2):
            cluster.start_worker(f"worker{i}")
        cluster.start_client(job, extra=[f"--manifest=http://127.0.0.1:{port}/manifest.json"])
        cluster.wait_delivered("client0", 4)
        for proc in cluster.workers.values():
            proc.send_signal(signal.SIGSTOP)
        cluster.stop_nginx()
        cluster.kill_coordinator(signal.SIGKILL)
        cluster.start_coordinator()  # must serve with the manifest unreachable
        wait_until(lambda: "its dataset cannot be opened" in coordinator_log(cluster), 20,
                   "the coordinator to report the unreachable dataset")
        wait_until(lambda: "its dataset cannot be opened" in process_log(cluster, "client0"), 20,
                   "the client to be told that the data is unreachable")
        cluster.start_nginx(shards, port)
        wait_until(lambda: "its dataset opens again" in coordinator_log(cluster), 20,
                   "the coordinator to reach the dataset again")
        for proc in cluster.workers.values():
            proc.send_signal(signal.SIGCONT)
        cluster.wait_clients()
        check_delivery(job, cluster.dump_records())




def decoded_cache_stats(port):
    """stoker_worker_decoded_cache_* values of a worker's /metrics page, by short name."""
    stats = {}
    for line in metrics_page(port).splitlines():
        if line.startswith("stoker_worker_decoded_cache_"):
            name, value = line.rsplit(" ", 1)
            stats[name[len("stoker_worker_decoded_cache_"):]] = float(value)
    return stats


def decoded_cache_worker_killed_and_joined():
    """Decode once (docs/decisions/0081-decoded-cache.md): a job with the decoded cache on, two
    epochs over JPEG shards, three workers with a cache; one is killed mid-job and a fresh one
    (empty cache) joins. Every batch is still delivered exactly once, through the caches of the
    workers alive."""
    with Cluster(BIN) as cluster:
        manifest = os.path.join(make_jpeg_shards(cluster, 48, 40, 40), "manifest.json")
        job = Job("decoded", num_samples=192, epochs=2,
                  pipeline="decode, resize(height=32, width=32), "
                           "random_resized_crop(height=24, width=24), horizontal_flip, to_float")
        cluster.start_coordinator()
        ports = {f"worker{i}": free_port() for i in range(4)}

        def flags(name):
            return ["--decoded-cache-bytes=8000000", "--memory-bytes=256000000",
                    f"--metrics-port={ports[name]}", "--metrics-address=127.0.0.1"]
        for i in range(3):
            cluster.start_worker(f"worker{i}", extra=flags(f"worker{i}"))
        cluster.start_client(job, extra=[f"--manifest={manifest}", "--decoded-cache=always"])
        cluster.wait_delivered("client0", 10)
        cluster.workers["worker1"].send_signal(signal.SIGKILL)
        cluster.start_worker("worker3", extra=flags("worker3"))
        cluster.wait_clients()
        check_delivery(job, cluster.dump_records())
        # Which worker makes which batch is the coordinator's choice: hits are printed, not
        # required; that the cache path ran (lookups) and never served a bad entry is.
        alive = {name: decoded_cache_stats(ports[name])
                 for name in ("worker0", "worker2", "worker3")}
        print("decoded caches of the workers alive:", alive)
        if sum(s.get("hits_total", 0) + s.get("misses_total", 0) for s in alive.values()) == 0:
            raise ChaosError("no worker alive looked a sample up in its decoded cache")
        if any(s.get("checksum_failures_total", 0) for s in alive.values()):
            raise ChaosError(f"a decoded cache entry failed its checksum: {alive}")
        for name, stats in alive.items():
            if stats.get("misses_total", 0) and \
                    "stoker_worker_job_decoded_cache_misses_total{job_id=" \
                    not in metrics_page(ports[name]):
                raise ChaosError(f"{name} serves no per-job decoded cache series")


def worker_rss_within_memory_bytes_with_decoded_cache_full():
    """A worker's decoded cache stays within --decoded-cache-bytes and the process within
    --memory-bytes: 400 JPEGs whose prefix output (resized to 512x512, 786 KB) would take 315 MB
    uncached fill a 96 MB cache of a worker with --memory-bytes=192 MB, over two epochs."""
    with Cluster(BIN) as cluster:
        manifest = os.path.join(make_jpeg_shards(cluster, 100, 48, 48), "manifest.json")
        job = Job("decoded-full", num_samples=400, epochs=2, step_ms=0,
                  pipeline="decode, resize(height=512, width=512), "
                           "random_resized_crop(height=32, width=32), to_float")
        cluster.start_coordinator(journal=False)
        port = free_port()
        cluster.start_worker("worker0", extra=["--decoded-cache-bytes=96000000",
                                               "--memory-bytes=192000000",
                                               f"--metrics-port={port}",
                                               "--metrics-address=127.0.0.1"])
        cluster.start_client(job, extra=[f"--manifest={manifest}", "--decoded-cache=always"])
        peak = 0
        while cluster.clients["client0"][0].poll() is None:
            peak = max(peak, cluster.rss_kib("worker0"))
            time.sleep(0.1)
        peak = max(peak, cluster.rss_kib("worker0"))
        cluster.wait_clients()
        check_delivery(job, cluster.dump_records())
        stats = decoded_cache_stats(port)
        print(f"worker peak RSS {peak} KiB; decoded cache {stats}")
        if stats["bytes"] > 96_000_000 or stats["evictions_total"] == 0:
            raise ChaosError(f"the decoded cache was not full and bounded: {stats}")
        if peak * 1024 > 192_000_000:
            raise ChaosError(f"worker RSS {peak} KiB passed --memory-bytes (192,000,000 bytes)")


def worker_memory_flat_over_20_abandoned_jobs():
    """Issue 16: a worker forgets the jobs the coordinator retired. 20 jobs over a 4,000,000-sample
    synthetic dataset (global shuffle: each epoch plan is ~32 MB), each abandoned by its client
    after two batches; once the coordinator retires a job (no client heartbeat for 800 ms) the
    worker drops its context. Its RSS after job 20 must be within 10% of its RSS after job 5
    (before issue 16 it grew ~31 MB a job)."""
    with Cluster(BIN) as cluster:
        cluster.start_coordinator(journal=False, extra=["--job-idle-timeout-ms=800"])
        cluster.start_worker("worker0")
        rss = {}
        for i in range(1, 21):
            job = Job(f"abandoned{i}", num_samples=4_000_000, shuffle="global", step_ms=0)
            tag = f"client{i}"
            cluster.start_client(job, tag=tag, extra=["--max-batches=2"])
            proc = cluster.clients.pop(tag)[0]
            if proc.wait(timeout=60) != 0:
                raise ChaosError(f"{tag} exited with {proc.returncode}")
            # Job i has serial i: the worker logs "dropped job i" once it evicted it.
            wait_until(lambda: f"dropped job {i}," in process_log(cluster, "worker0"), 30,
                       f"the worker to drop job {i}")
            rss[i] = cluster.rss_kib("worker0")
        print("worker RSS (KiB) after each job:", rss)
        if rss[20] > rss[5] * 1.10:
            raise ChaosError(f"worker RSS grew from {rss[5]} KiB after job 5 to {rss[20]} KiB "
                             "after job 20 (more than 10%)")


def journal_records(path):
    """(offset, length) of each record of a stoker journal."""
    with open(path, "rb") as f:
        data = f.read()
    out, pos = [], 8
    while pos + 8 <= len(data):
        (length,) = struct.unpack_from("<I", data, pos)
        out.append((pos, length))
        pos += 8 + length
    return data, out


def finished_journal(cluster):
    """Runs a two-worker job to completion on a journal; stops the coordinator with SIGKILL."""
    job = Job("journal", num_samples=256, step_ms=0)
    for i in range(2):
        cluster.start_worker(f"worker{i}")
    cluster.start_client(job)
    cluster.wait_clients()
    check_delivery(job, cluster.dump_records())
    cluster.kill_coordinator(signal.SIGKILL)
    return job


def process_log(cluster, name):
    with open(os.path.join(cluster.dir, f"{name}.log"), errors="replace") as f:
        return f.read()


def coordinator_log(cluster):
    return process_log(cluster, "coordinator")


# The oneof field of a journal record's StateUpdate (proto/stoker/v1/journal.proto) is its
# payload's first byte, (field << 3) | 2: create_job = 1, complete_tasks = 5.
CREATE_JOB_TAG = (1 << 3) | 2
COMPLETE_TASKS_TAG = (5 << 3) | 2


def journal_truncated_at_random_byte():
    seed = int(os.environ.get("CHAOS_SEED", random.SystemRandom().randrange(1 << 32)))
    print(f"journal_truncated_at_random_byte: CHAOS_SEED={seed} (set it to replay this cut)")
    with Cluster(BIN) as cluster:
        cluster.start_coordinator()
        job = finished_journal(cluster)
        data, records = journal_records(cluster.journal)
        cut = random.Random(seed).randrange(8, len(data))
        with open(cluster.journal, "r+b") as f:
            f.truncate(cut)
        whole = [(off, n) for off, n in records if off + 8 + n <= cut]
        job_kept = any(data[off + 8] == CREATE_JOB_TAG for off, n in whole)
        completions_lost = sum(1 for off, n in records[len(whole):]
                               if off + 8 < len(data) and data[off + 8] == COMPLETE_TASKS_TAG)
        print(f"journal of {len(data)} bytes, {len(records)} records, cut at {cut}: "
              f"{len(whole)} whole records left, job kept: {job_kept}, "
              f"completion records lost: {completions_lost}")
        cluster.start_coordinator()  # must recover
        # The original job again, same name and spec: a forgotten job runs whole again; a kept
        # one delivers exactly the batches whose completions the cut removed, each once.
        cluster.clients.clear()
        cluster.start_client(job, tag="original")
        cluster.wait_clients()
        again = cluster.dump_records(["original"])
        if not job_kept:
            check_delivery(job, again)
        else:
            batches = [rec["batch"] for rec in again]
            if len(batches) != len(set(batches)):
                raise ChaosError(f"original job delivered a batch twice after the cut: {batches}")
            if completions_lost == 0 and batches:
                raise ChaosError(f"no completion was cut, yet batches {batches} came again")
            if completions_lost > 0 and not batches:
                raise ChaosError(f"{completions_lost} completion records were cut, "
                                 "yet no batch came again")
            B = job.batch_size
            for rec in again:
                if rec["samples"] != list(range(rec["batch"] * B, (rec["batch"] + 1) * B)):
                    raise ChaosError(f"batch {rec['batch']} has samples {rec['samples']}")
        print(f"original job after the cut: {len(again)} batches delivered again")
        # A fresh job runs to completion too.
        job2 = Job("after-truncate", num_samples=128, step_ms=0)
        cluster.clients.clear()
        cluster.start_client(job2, tag="after")
        cluster.wait_clients()
        check_delivery(job2, cluster.dump_records(["after"]))


def journal_byte_flipped_mid_file():
    with Cluster(BIN) as cluster:
        cluster.start_coordinator()
        finished_journal(cluster)
        data, records = journal_records(cluster.journal)
        if len(records) < 3:
            raise ChaosError(f"journal has only {len(records)} records")
        offset, length = records[len(records) // 2]
        flipped = bytearray(data)
        flipped[offset + 8 + length // 2] ^= 0x01
        with open(cluster.journal, "wb") as f:
            f.write(flipped)
        rc = cluster.start_coordinator(expect_fail=True)
        want = f"DATA_LOSS: journal {cluster.journal}: corrupt record at offset {offset}"
        if rc == 0 or want not in coordinator_log(cluster):
            raise ChaosError(f"exit {rc}; log lacks {want!r}:\n{coordinator_log(cluster)[-2000:]}")


def journal_garbage():
    with Cluster(BIN) as cluster:
        with open(cluster.journal, "wb") as f:
            f.write(random.Random(7).randbytes(4096))
        rc = cluster.start_coordinator(expect_fail=True)
        want = f"DATA_LOSS: journal {cluster.journal}: corrupt record at offset 0"
        if rc == 0 or want not in coordinator_log(cluster):
            raise ChaosError(f"exit {rc}; log lacks {want!r}")


def worker_sigstop_past_timeout():
    def action(cluster):
        cluster.wait_delivered("client0", 20)
        worker = cluster.workers["worker1"]
        worker.send_signal(signal.SIGSTOP)
        time.sleep(cluster.worker_timeout_ms / 1000 * 2)
        worker.send_signal(signal.SIGCONT)
    run_job(Job("sigstop", num_samples=768), action=action)


def workers_added_mid_epoch():
    # Long enough (288 batches of 15 ms steps, ~4.3 s) that the epoch is still running well after
    # both added workers have registered (each start takes ~0.5 s).
    job = Job("grow", num_samples=2304)
    with Cluster(BIN) as cluster:
        cluster.start_coordinator()
        cluster.start_worker("worker0")
        report = os.path.join(cluster.dir, "report.json")
        cluster.start_client(job, extra=[f"--report-json={report}"])
        cluster.wait_delivered("client0", 15)
        added = []
        for name in ("worker1", "worker2"):
            cluster.start_worker(name)
            with open(os.path.join(cluster.dir, f"{name}.port")) as f:
                added.append(f"127.0.0.1:{int(f.read().strip())}")
        cluster.wait_clients()
        check_delivery(job, cluster.dump_records())
        with open(report) as f:
            workers = {w["address"]: w["batches"] for w in json.load(f)["workers"]}
        for address in added:
            if workers.get(address, 0) == 0:
                raise ChaosError(f"added worker {address} delivered nothing: {workers}")


def worker_sigterm_drains():
    deadline_ms = 3000

    def action(cluster):
        cluster.wait_delivered("client0", 20)
        worker = cluster.workers["worker1"]
        start = time.monotonic()
        worker.send_signal(signal.SIGTERM)
        try:
            rc = worker.wait(timeout=deadline_ms / 1000 + 5)
        except Exception:
            raise ChaosError("worker1 did not exit within its drain deadline + 5 s")
        if rc != 0:
            raise ChaosError(f"worker1 exited with {rc} after SIGTERM")
        with open(os.path.join(cluster.dir, "worker1.log"), errors="replace") as f:
            log = f.read()
        if "drained: handing back" not in log:
            raise ChaosError("worker1 did not drain:\n" + log[-2000:])
        print(f"worker1 exited in {time.monotonic() - start:.1f}s; " + " / ".join(
            line for line in log.splitlines() if "drain" in line))

    with Cluster(BIN) as cluster:
        cluster.start_coordinator()
        for i in range(4):
            cluster.start_worker(f"worker{i}", drain_deadline_ms=deadline_ms)
        # A hungry client (no step time) and a slower pipeline: the worker holds tasks in flight.
        job = Job("drain", num_samples=1536, step_ms=0,
                  pipeline="to_float, gaussian_blur(ksize=11)*4")
        cluster.start_client(job)
        action(cluster)
        cluster.wait_clients()
        check_delivery(job, cluster.dump_records())


def kill_clients(cluster, tags):
    """SIGKILLs the clients and forgets them (their dumps and token files stay)."""
    killed = {}
    for tag in tags:
        proc, dump = cluster.clients.pop(tag)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=20)
        killed[tag] = dump
    return killed


def checkpointed_records(dump, token_file, world, resumed=None):
    """The dump lines a checkpoint covers: the first `count` of a killed run."""
    count = read_token_count(token_file)
    records = []
    with open(dump) as f:
        for line in f:
            if len(records) == count or not line.endswith("\n"):
                break
            records.append(dict(json.loads(line), world=world, resumed=resumed))
    if len(records) != count:
        raise ChaosError(f"{dump} has {len(records)} lines, its checkpoint covers {count}")
    return records


def restart_trainers(old_world, new_world, kill_at=40, ordered=False, fresh_coordinator=False):
    """Both ranks of a 2-epoch job are SIGKILLed once rank 0 returned `kill_at` batches (as a
    crashed data-parallel job: every rank at once), then `new_world` ranks restart from the
    last checkpoint of each old rank. With the same world size each rank resumes from its own
    token under the same job name; with another world size, every rank gets every old token and
    a new job name (the world size is part of the spec). With fresh_coordinator, the coordinator
    is killed too and restarts with an empty journal: the tokens alone carry the progress."""
    old = Job("resume", num_samples=768, epochs=2, world_size=old_world, step_ms=10)
    new = Job("resume" if new_world == old_world else f"resume-{new_world}", num_samples=768,
              epochs=2, world_size=new_world, step_ms=5)
    order = ["--ordered"] if ordered else []
    with Cluster(BIN) as cluster:
        cluster.start_coordinator()
        for i in range(3):
            cluster.start_worker(f"worker{i}")
        tokens = [os.path.join(cluster.dir, f"rank{r}.token") for r in range(old_world)]
        for rank in range(old_world):
            cluster.start_client(old, rank=rank, tag=f"old{rank}",
                                 extra=[f"--token-file={tokens[rank]}"] + order)
        cluster.wait_delivered("old0", kill_at)
        dumps = kill_clients(cluster, [f"old{r}" for r in range(old_world)])
        if fresh_coordinator:
            cluster.kill_coordinator(signal.SIGKILL)
            os.remove(cluster.journal)
            cluster.start_coordinator()
        before = []
        for rank in range(old_world):
            before += checkpointed_records(dumps[f"old{rank}"], tokens[rank], old_world)
        for rank in range(new_world):
            mine = [tokens[rank]] if new_world == old_world else tokens
            cluster.start_client(new, rank=rank, tag=f"new{rank}",
                                 extra=[f"--resume-from={','.join(mine)}"] + order)
        cluster.wait_clients()
        # The epoch the new run resumed at: the one of the old run's last checkpoint.
        resumed_epoch = max(r["epoch"] for r in before) if before else 0
        after = []
        for rank in range(new_world):
            for rec in cluster.dump_records([f"new{rank}"]):
                after.append(dict(rec, world=new_world,
                                  resumed=None if new_world == old_world else resumed_epoch))
        check_exactly_once(old.batches_per_epoch, old.batch_size, old.num_samples, old.epochs,
                           before + after, max_pads=new_world - 1)
        if ordered:
            for rank in range(new_world):
                seq = [(r["epoch"], r["batch"]) for r in before + after if r["rank"] == rank]
                want = [(e, k * new_world + rank) for e in range(old.epochs)
                        for k in range(old.batches_per_epoch // new_world)]
                if seq != want:
                    at = next((i for i, (a, b) in enumerate(zip(seq, want)) if a != b),
                              min(len(seq), len(want)))
                    raise ChaosError(f"rank {rank}: the ordered sequence differs from an "
                                     f"uninterrupted run's at position {at}")
        print(f"killed at {kill_at}: {len(before)} batches before the checkpoint, "
              f"{len(after)} after ({old_world} -> {new_world} ranks)")


def trainer_restart_same_world_size():
    restart_trainers(2, 2, kill_at=60, ordered=True)


def trainer_restart_one_rank():
    """Only rank 1 crashes (an elastic job restarting one rank); rank 0 keeps going."""
    job = Job("resume-one", num_samples=768, epochs=2, world_size=2, step_ms=10)
    with Cluster(BIN) as cluster:
        cluster.start_coordinator()
        for i in range(3):
            cluster.start_worker(f"worker{i}")
        token = os.path.join(cluster.dir, "rank1.token")
        cluster.start_client(job, rank=0, tag="rank0")
        cluster.start_client(job, rank=1, tag="old1", extra=[f"--token-file={token}"])
        cluster.wait_delivered("old1", 40)
        dump = kill_clients(cluster, ["old1"])["old1"]
        before = checkpointed_records(dump, token, 2)
        cluster.start_client(job, rank=1, tag="new1", extra=[f"--resume-from={token}"])
        cluster.wait_clients()
        after = [dict(r, world=2) for r in cluster.dump_records(["rank0", "new1"])]
        check_exactly_once(job.batches_per_epoch, job.batch_size, job.num_samples, job.epochs,
                           before + after)


def trainer_restart_on_a_fresh_coordinator():
    restart_trainers(2, 2, kill_at=30, fresh_coordinator=True)


def trainer_restart_more_ranks():
    restart_trainers(2, 3, kill_at=30)


def trainer_restart_fewer_ranks():
    restart_trainers(2, 1, kill_at=30)


SCENARIOS = {f.__name__: f for f in [
    trainer_restart_same_world_size, trainer_restart_more_ranks, trainer_restart_fewer_ranks,
    trainer_restart_on_a_fresh_coordinator, trainer_restart_one_rank,
    worker_sigterm_drains,
    worker_kill_one, worker_kill_two, coordinator_kill_before_first_batch,
    decoded_cache_worker_killed_and_joined, worker_rss_within_memory_bytes_with_decoded_cache_full,
    coordinator_kill_at_10_percent, coordinator_kill_at_50_percent,
    coordinator_kill_between_epochs, coordinator_five_restarts_in_one_epoch,
    journal_truncated_at_random_byte, journal_byte_flipped_mid_file, journal_garbage,
    worker_sigstop_past_timeout, workers_added_mid_epoch,
    coordinator_restart_while_manifest_server_down, worker_memory_flat_over_20_abandoned_jobs,
]}


def run_scenario(build_dir, name):
    global BIN
    BIN = build_dir
    SCENARIOS[name]()


if __name__ == "__main__":
    sys.exit(scenario_main(run_scenario, SCENARIOS))
