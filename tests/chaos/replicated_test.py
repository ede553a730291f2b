#!/usr/bin/python3
"""Chaos tests of replicated coordinators (issue "No single point of failure"): a real 3-member
etcd on loopback, three stoker-coordinator processes sharing --state=etcd://.../stoker, two
workers and the two ranks' trainer clients given every coordinator's address, all under mutual
TLS. Each
scenario hurts the control plane while the job runs, then checks that every batch reached the
client exactly once per epoch.

    replicated_test.py BUILD_DIR leader_killed_repeatedly|leader_paused_past_its_lease|
                                 etcd_members_killed

  leader_killed_repeatedly      the leading coordinator is SIGKILLed four times (each time
                                restarted as a standby); prints the takeover times (SIGKILL to
                                the new leader's key in etcd), which are figures, not asserts.
  leader_paused_past_its_lease  the leader is SIGSTOPped until another one leads, then resumed:
                                it must step down on waking (its lease lapsed on its own clock)
                                and come back as a standby in the same process (re-executed).
  etcd_members_killed           an etcd follower is SIGKILLed and restarted, then etcd's own
                                leader.
  etcd_lost_while_leading       every etcd member is SIGSTOPped: the leader steps down and,
                                run again in the same process, waits for etcd; once etcd is
                                back a replica leads and the job goes on, nothing lost.
"""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chaos_harness import (ChaosError, Cluster, Job, check_delivery, metrics_page, scenario_main,
                           wait_until)
from etcd_harness import ETCDCTL, EtcdCluster

PREFIX = "/stoker"
REPLICAS = 3


def leader_address(etcd):
    """The address in the leader key (empty when no replica leads), asked of any live member."""
    for i in range(len(etcd.names)):
        if etcd.procs[i].poll() is not None or etcd.paused[i]:
            continue
        out = subprocess.run([ETCDCTL, f"--endpoints={etcd.endpoint(i)}", "--command-timeout=1s",
                              "get", f"{PREFIX}/leader", "--print-value-only"],
                             env=dict(os.environ, ETCDCTL_API="3"), capture_output=True,
                             timeout=5, text=True)
        if out.returncode == 0:
            return out.stdout.strip()
    return ""


def current_leader(etcd, timeout_s=30):
    """The leader's address, waiting (bounded) while an election is under way."""
    found = {}

    def someone_leads():
        found["address"] = leader_address(etcd)
        return found["address"] != ""
    wait_until(someone_leads, timeout_s, "a coordinator to lead")
    return found["address"]


def await_new_leader(etcd, old, timeout_s=30):
    """Waits until a replica other than `old` leads; returns its address."""
    found = {}

    def other_leads():
        found["address"] = leader_address(etcd)
        return found["address"] not in ("", old)
    wait_until(other_leads, timeout_s, f"a leader other than {old}")
    return found["address"]


def replica_log(cluster, i):
    with open(os.path.join(cluster.dir, f"coordinator-{i}.log"), errors="replace") as f:
        return f.read()


def run_replicated(build_dir, action):
    job = Job("replicated", num_samples=8192, batch_size=8, epochs=2, world_size=2, step_ms=10)
    with EtcdCluster(members=3) as etcd, Cluster(build_dir) as cluster:
        # The default lease (2 s): a shorter one loses the lead spuriously on a loaded machine.
        cluster.start_replicas(REPLICAS, f"etcd://{','.join(etcd.endpoints())}{PREFIX}")
        current_leader(etcd)
        for i in range(2):
            cluster.start_worker(f"worker{i}")
        for rank in range(job.world_size):
            cluster.start_client(job, rank=rank)
        total = job.batches_per_epoch * job.epochs // job.world_size  # client0's share
        action(cluster, etcd, total)
        cluster.wait_clients(timeout_s=300)
        check_delivery(job, cluster.dump_records())


def gauge(page, name):
    """The value of an unlabelled sample `name` on a metrics page (None when absent)."""
    for line in page.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def check_replica_metrics(cluster, etcd):
    """The leader's page says it leads, under a nonzero epoch, with the job's figures; a
    standby's says it does not and carries no job figure (a sum over pods counts each once)."""
    leader = cluster.replica_index(current_leader(etcd))
    for i, port in enumerate(cluster.replica_metrics_ports):
        page = metrics_page(port)
        leads = gauge(page, "stoker_coordinator_leader") == 1
        if leads != (i == leader):
            raise ChaosError(f"coordinator-{i} (leader: coordinator-{leader}) says "
                             f"{'it leads' if leads else 'it stands by'}:\n{page[:1500]}")
        has_jobs = "stoker_coordinator_tasks{" in page
        if has_jobs != (i == leader):
            raise ChaosError(f"coordinator-{i}: job figures {'present' if has_jobs else 'absent'}"
                             f" (leader: coordinator-{leader})")
        if i == leader and not gauge(page, "stoker_coordinator_epoch"):
            raise ChaosError(f"the leader coordinator-{i} exports epoch 0")


def leader_killed_repeatedly(cluster, etcd, total):
    takeovers = []
    for kill in range(4):
        cluster.wait_delivered("client0", total * (kill + 1) // 6, timeout_s=120)
        old = current_leader(etcd)
        i = cluster.replica_index(old)
        killed_at = time.monotonic()
        cluster.replicas[i].send_signal(signal.SIGKILL)
        cluster.replicas[i].wait(timeout=20)
        await_new_leader(etcd, old)
        takeovers.append(time.monotonic() - killed_at)
        cluster.start_replica(i)
        if kill == 0:
            wait_until(lambda: gauge(metrics_page(
                cluster.replica_metrics_ports[cluster.replica_index(current_leader(etcd))]),
                "stoker_coordinator_leader") == 1, 30, "the new leader to export that it leads")
            check_replica_metrics(cluster, etcd)
    print("takeover seconds (SIGKILL to the new leader's key): " +
          ", ".join(f"{t:.2f}" for t in takeovers))


def leader_paused_past_its_lease(cluster, etcd, total):
    cluster.wait_delivered("client0", total // 4, timeout_s=120)
    old = current_leader(etcd)
    i = cluster.replica_index(old)
    paused = cluster.replicas[i]
    paused.send_signal(signal.SIGSTOP)
    await_new_leader(etcd, old)
    cluster.wait_delivered("client0", total // 2, timeout_s=120)  # served by the new leader
    paused.send_signal(signal.SIGCONT)
    wait_until(lambda: "re-executing to stand by again" in replica_log(cluster, i), 30,
               f"coordinator-{i} to step down after its pause")
    # Its own clock tells it first; a write it had in flight would be refused by the fence.
    log = replica_log(cluster, i)
    if ("steps down: UNAVAILABLE: the leader's lease in etcd expired or was lost" not in log and
            "steps down: FAILED_PRECONDITION: etcd store: no longer the leader" not in log):
        raise ChaosError(f"coordinator-{i} stepped down for another reason:\n{log[-3000:]}")
    # Re-executed in the same process, it loads the state again and stands by.
    wait_until(lambda: replica_log(cluster, i).count("coordinator serving on") >= 2, 30,
               f"coordinator-{i} to serve again as a standby")
    if paused.poll() is not None:
        raise ChaosError(f"coordinator-{i} exited with {paused.returncode} instead of standing by")


def etcd_members_killed(cluster, etcd, total):
    cluster.wait_delivered("client0", total // 5, timeout_s=120)
    leader = etcd.leader_index()
    follower = (leader + 1) % 3
    etcd.kill(follower)
    cluster.wait_delivered("client0", total * 2 // 5, timeout_s=120)
    etcd.restart(follower)
    cluster.wait_delivered("client0", total * 3 // 5, timeout_s=120)
    etcd.kill(etcd.leader_index())


def etcd_lost_while_leading(cluster, etcd, total):
    cluster.wait_delivered("client0", total // 4, timeout_s=120)
    i = cluster.replica_index(current_leader(etcd))
    stepped_down = cluster.replicas[i]
    for member in range(3):
        etcd.stop(member)
    wait_until(lambda: "re-executing to stand by again" in replica_log(cluster, i), 30,
               f"coordinator-{i} to step down without etcd")
    wait_until(lambda: "waiting for etcd to load the coordinators' state" in
               replica_log(cluster, i), 30, f"coordinator-{i} to wait for etcd")
    for member in range(3):
        etcd.resume(member)
    wait_until(lambda: leader_address(etcd) != "", 30, "a coordinator to lead again")
    if stepped_down.poll() is not None:
        raise ChaosError(f"coordinator-{i} exited with {stepped_down.returncode} while etcd "
                         "was away instead of waiting for it")


SCENARIOS = {
    "leader_killed_repeatedly": leader_killed_repeatedly,
    "leader_paused_past_its_lease": leader_paused_past_its_lease,
    "etcd_members_killed": etcd_members_killed,
    "etcd_lost_while_leading": etcd_lost_while_leading,
}


if __name__ == "__main__":
    sys.exit(scenario_main(lambda build, name: run_replicated(build, SCENARIOS[name]),
                           list(SCENARIOS), label=lambda name: f"replicated_{name}"))
