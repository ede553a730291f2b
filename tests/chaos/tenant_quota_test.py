"""Tenant quotas (issue 37; docs/decisions/0072-tenant-quotas.md) with real processes under
mutual TLS:

    python3 tenant_quota_test.py BUILD_DIR quota

stoker-coordinator --tenant-policy gives tenant a max_jobs 1 and max_bearer_tokens 1: with two
of tenant a's tokens in --accept-bearer-tokens-file it does not start. Without them, tenant a's
first job runs to its end (a finished job stays open until --job-idle-timeout-ms); its second
job's stoker-bench-client then gets RESOURCE_EXHAUSTED naming max_jobs and tenant a, and
receives nothing, while tenant b opens the same job and receives every batch. The coordinator's
metrics page shows each tenant's open jobs and ranks, tenant a's quota and its one refusal.
Exit 0 = pass.
"""

import json
import os
import sys

from chaos_harness import (ChaosError, Cluster, Job, check_delivery, free_port, metrics_page,
                           scenario_main)



def quota_metrics(port):
    """The stoker_tenant_* samples of the metrics page: {line without its value: value}."""
    text = metrics_page(port)
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines() if line.startswith("stoker_tenant_")}


def expect(metrics, sample, want):
    got = metrics.get(sample)
    if got != want:
        raise ChaosError(f"{sample} is {got}, expected {want}; the page has {metrics}")


def run(bin_dir, _name):
    with Cluster(bin_dir, tenants=("a", "b")) as cluster:
        policy = os.path.join(cluster.dir, "tenants.json")
        with open(policy, "w") as f:
            json.dump({"tenants": {"a": {"max_jobs": 1, "max_bearer_tokens": 1}}}, f)
        # Two of tenant a's tokens against its max_bearer_tokens of 1: the coordinator refuses
        # to start, naming the flag, the tenant and the quota.
        tokens = os.path.join(cluster.dir, "tokens")
        with open(tokens, "w") as f:
            f.write("trainer@a:first-token-of-tenant-a\ntrainer@a:second-token-of-tenant-a\n")
        rc = cluster.start_coordinator(journal=False, expect_fail=True, extra=[
            f"--tenant-policy={policy}", f"--accept-bearer-tokens-file={tokens}"])
        with open(os.path.join(cluster.dir, "coordinator.log"), errors="replace") as f:
            log = f.read()
        if rc == 0 or "tenant a: 2 bearer tokens, over its quota of 1" not in log:
            raise ChaosError(f"a token file over max_bearer_tokens did not stop the coordinator "
                             f"(exit {rc}): {log[-1500:]}")
        metrics_port = free_port()
        cluster.start_coordinator(journal=False, extra=[
            f"--tenant-policy={policy}", f"--metrics-port={metrics_port}",
            "--metrics-address=127.0.0.1"])
        cluster.start_worker("worker0")
        first = Job("first", num_samples=96)
        cluster.start_client(first, tag="a-first", tenant="a")
        cluster.wait_clients(timeout_s=60)
        check_delivery(first, cluster.dump_records(["a-first"]))

        second = Job("second", num_samples=96)
        refused = cluster.start_client(second, tag="a-second", tenant="a")
        if refused.wait(timeout=60) == 0:
            raise ChaosError("tenant a opened a second job over its max_jobs quota of 1")
        with open(os.path.join(cluster.dir, "a-second.log"), errors="replace") as f:
            log = f.read()
        if "RESOURCE_EXHAUSTED" not in log or "tenant a: 1 jobs open" not in log or \
                "max_jobs" not in log:
            raise ChaosError(f"tenant a's second job was not refused by max_jobs: {log[-1500:]}")
        if cluster.delivered("a-second") != 0:
            raise ChaosError(f"the refused client received {cluster.delivered('a-second')} batches")
        del cluster.clients["a-second"]  # it failed as it must

        cluster.start_client(second, tag="b-second", tenant="b")
        cluster.wait_clients(timeout_s=60)
        check_delivery(second, cluster.dump_records(["b-second"]))

        metrics = quota_metrics(metrics_port)
        expect(metrics, 'stoker_tenant_jobs{tenant="a"}', 1)
        expect(metrics, 'stoker_tenant_jobs{tenant="b"}', 1)
        expect(metrics, 'stoker_tenant_ranks{tenant="a"}', 1)
        expect(metrics, 'stoker_tenant_quota{tenant="a",quota="max_jobs"}', 1)
        expect(metrics, 'stoker_tenant_quota{tenant="b",quota="max_jobs"}', 0)
        expect(metrics, 'stoker_tenant_quota_refusals_total{tenant="a",quota="max_jobs"}', 1)
        expect(metrics, 'stoker_tenant_quota_refusals_total{tenant="b",quota="max_jobs"}', 0)
        print(f"tenant metrics: {metrics}")


if __name__ == "__main__":
    sys.exit(scenario_main(run, ("quota",), label=lambda name: "tenant_quota"))
