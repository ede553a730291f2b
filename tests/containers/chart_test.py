"""Tests of the Helm chart (helm/stoker) and the Containerfiles (docker/), without a cluster.

  chart_test.py lint                 helm lint --strict, with the defaults and every values file
  chart_test.py template VARIANT     helm template with helm/stoker/tests/values-VARIANT.yaml
                                     ("default": none); every object validated against the
                                     Kubernetes API schemas (tests/validate.js, npm
                                     kubernetes-models + its KEDA and prometheus-operator
                                     packages), then the variant's own checks
  chart_test.py schema               values.schema.json rejects each bad-*.yaml, naming the value,
                                     and values without dataRoots
  chart_test.py containerfiles       dockerfilelint finds nothing in docker/*.Containerfile

Skips (exit 77) naming the tool when helm, node or an npm package is missing.
"""

import glob
import json
import os
import subprocess
import sys

import deploy_tools as dt

FIXTURES = os.path.join(dt.CHART_DIR, "tests")


def values_file(variant):
    return [] if variant == "default" else [os.path.join(FIXTURES, f"values-{variant}.yaml")]


def lint():
    helm = dt.tool("helm", "--deploy")
    variants = ["default"] + sorted(
        os.path.basename(p)[len("values-"):-len(".yaml")]
        for p in glob.glob(os.path.join(FIXTURES, "values-*.yaml")))
    for variant in variants:
        argv = [helm, "lint", "--strict", dt.CHART_DIR]
        for path in [dt.BASE_VALUES] + values_file(variant):
            argv += ["--values", path]
        result = subprocess.run(argv, capture_output=True, text=True)
        print(f"helm lint --strict ({variant}): rc {result.returncode}")
        if result.returncode != 0:
            raise AssertionError(result.stdout + result.stderr)


def validate_schemas(manifest):
    node = dt.node_with("kubernetes-models")
    validator = os.path.join(FIXTURES, "validate.js")
    result = subprocess.run([node, validator, dt.NODE_MODULES], input=manifest,
                            capture_output=True, text=True)
    print(result.stdout, end="")
    if result.returncode != 0:
        raise AssertionError(f"schema validation failed (rc {result.returncode}):\n"
                             f"{result.stdout}{result.stderr}")


def container(pod_spec, name):
    return next(c for c in pod_spec["containers"] if c["name"] == name)


def check_secure(pod_spec):
    """Non-root, read-only root, no capabilities, RuntimeDefault seccomp."""
    pod = pod_spec["securityContext"]
    assert pod["runAsNonRoot"] is True and pod["seccompProfile"]["type"] == "RuntimeDefault", pod
    for c in pod_spec["containers"]:
        sc = c["securityContext"]
        assert sc["readOnlyRootFilesystem"] is True, c["name"]
        assert sc["capabilities"]["drop"] == ["ALL"], c["name"]
        assert sc["allowPrivilegeEscalation"] is False, c["name"]


def flag(args, name):
    """The value of --name=value in a container's args (None when absent)."""
    values = [a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")]
    return values[-1] if values else None


def check_tls(objects):
    """Mutual TLS by default: each pod mounts the CA and its own role's pair from the Secret
    and passes them; probes exec `stoker-ctl health` over mutual TLS (the kubelet's gRPC probe
    cannot present a client certificate); nothing runs --insecure."""
    pods = {"worker": ("Deployment", "-worker"), "coordinator": ("StatefulSet", "-coordinator")}
    for role, (kind, suffix) in pods.items():
        spec = dt.find(objects, kind, suffix)["spec"]["template"]["spec"]
        c = container(spec, role)
        assert "--insecure" not in c["args"], c["args"]
        assert flag(c["args"], "tls-cert") == f"/etc/stoker/tls/{role}.pem", c["args"]
        assert flag(c["args"], "tls-key") == f"/etc/stoker/tls/{role}.key", c["args"]
        assert flag(c["args"], "tls-ca") == "/etc/stoker/tls/ca.pem", c["args"]
        secret = next(v for v in spec["volumes"] if v["name"] == "tls")["secret"]
        assert secret["secretName"] == "stoker-tls", secret
        assert sorted(i["key"] for i in secret["items"]) == \
            sorted(["ca.pem", f"{role}.pem", f"{role}.key"]), secret
        assert {"name": "tls", "mountPath": "/etc/stoker/tls", "readOnly": True} in \
            c["volumeMounts"], c["volumeMounts"]
        for probe in ("readinessProbe", "livenessProbe"):
            command = c[probe]["exec"]["command"]
            assert command[:2] == ["stoker-ctl", "health"], command
            assert flag(command, "tls-cert") == f"/etc/stoker/tls/{role}.pem", command
    test = dt.find(objects, "Pod", "-test-coordinator-serving")["spec"]
    assert "--tls-cert=/etc/stoker/tls/operator.pem" in test["containers"][0]["args"][0]


def check_default(objects):
    worker = dt.find(objects, "Deployment", "-worker")
    spec = worker["spec"]["template"]["spec"]
    args = container(spec, "worker")["args"]
    drain_s = int(flag(args, "drain-deadline-ms")) / 1000
    assert not any(a.startswith("--decoded-cache") for a in args), args  # no cache unless asked
    assert spec["terminationGracePeriodSeconds"] > drain_s, "grace period must exceed the drain"
    assert flag(args, "advertise-address") == "$(POD_IP)", args
    env = container(spec, "worker")["env"]
    assert any(e["name"] == "POD_IP" and
               e["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP" for e in env), env
    assert worker["spec"]["replicas"] == 3
    # The worker sizes itself from its cgroup (docs/deploy.md, "Resources"): a CPU limit to
    # count, and no flag that would disagree with it.
    limits = container(spec, "worker")["resources"]["limits"]
    assert "cpu" in limits and "memory" in limits, limits
    assert flag(args, "threads") == "0" and flag(args, "memory-bytes") is None, args
    check_tls(objects)
    coordinator = dt.find(objects, "StatefulSet", "-coordinator")
    assert coordinator["spec"]["replicas"] == 1
    claim = coordinator["spec"]["volumeClaimTemplates"][0]
    assert claim["metadata"]["name"] == "journal"
    cargs = container(coordinator["spec"]["template"]["spec"], "coordinator")["args"]
    assert flag(cargs, "journal") == "/var/lib/stoker/journal", cargs
    for o in (worker, coordinator):
        check_secure(o["spec"]["template"]["spec"])
        labels = o["metadata"]["labels"]
        for key in ("app.kubernetes.io/name", "app.kubernetes.io/instance", "helm.sh/chart",
                    "app.kubernetes.io/managed-by", "app.kubernetes.io/component"):
            assert key in labels, (o["metadata"]["name"], key)
    dt.find(objects, "PodDisruptionBudget", "-worker")
    assert len([o for o in objects if o["kind"] == "NetworkPolicy"]) == 2
    # dataRoots as --data-root flags of both servers, in order.
    for args_of in (args, cargs):
        roots = [a.split("=", 1)[1] for a in args_of if a.startswith("--data-root=")]
        assert roots == ["s3://datasets/", "/data"], args_of
    dt.find(objects, "ServiceAccount")
    test = dt.find(objects, "Pod", "-test-coordinator-serving")
    assert test["metadata"]["annotations"]["helm.sh/hook"] == "test"
    assert not [o for o in objects if o["kind"] in ("Job", "ScaledObject", "ServiceMonitor",
                                                    "PodMonitor", "HorizontalPodAutoscaler")]


def check_autoscaling_keda(objects):
    scaled = dt.find(objects, "ScaledObject", "-worker")
    trigger = scaled["spec"]["triggers"][0]
    assert trigger["type"] == "prometheus"
    assert 'stoker_job_workers_desired{namespace="stoker",job_name="imagenet"}' in \
        trigger["metadata"]["query"], trigger
    assert scaled["spec"]["scaleTargetRef"]["name"] == "stoker-worker"
    assert (scaled["spec"]["minReplicaCount"], scaled["spec"]["maxReplicaCount"]) == (2, 40)
    assert "replicas" not in dt.find(objects, "Deployment", "-worker")["spec"]


def check_autoscaling_keda_external(objects):
    """KEDA asks the coordinator (external trigger) for pool cpu-a's count over mutual TLS as
    the scaler role; the coordinator gets the prices and scaler flags; KEDA's operator may reach
    the coordinator's gRPC port."""
    scaled = dt.find(objects, "ScaledObject", "-worker")
    trigger = scaled["spec"]["triggers"][0]
    assert trigger["type"] == "external", trigger
    assert trigger["metadata"] == {"scalerAddress": "stoker-coordinator.stoker.svc:7070",
                                   "pool": "cpu-a"}, trigger
    assert scaled["spec"]["minReplicaCount"] == 0
    auth = dt.find(objects, "TriggerAuthentication", "-worker-scaler-tls")
    assert trigger["authenticationRef"]["name"] == auth["metadata"]["name"]
    refs = {r["parameter"]: (r["name"], r["key"]) for r in auth["spec"]["secretTargetRef"]}
    assert refs == {"caCert": ("stoker-tls", "ca.pem"), "tlsClientCert": ("stoker-tls", "scaler.pem"),
                    "tlsClientKey": ("stoker-tls", "scaler.key")}, refs
    cargs = container(dt.find(objects, "StatefulSet", "-coordinator")["spec"]["template"]["spec"],
                      "coordinator")["args"]
    assert flag(cargs, "gpu-node-dollars-per-hour") == "1.408", cargs
    assert flag(cargs, "worker-pool-dollars-per-hour") == "cpu-a=0.816,cpu-b=0.5", cargs
    assert flag(cargs, "scaler-hysteresis-workers") == "2", cargs
    assert flag(cargs, "scaler-cooldown-ms") == "90000", cargs
    wargs = container(dt.find(objects, "Deployment", "-worker")["spec"]["template"]["spec"],
                      "worker")["args"]
    assert flag(wargs, "pool") == "cpu-a", wargs
    peers = dt.find(objects, "NetworkPolicy", "-coordinator")["spec"]["ingress"][0]["from"]
    assert {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "keda"}}} in \
        peers, peers


def check_autoscaling_hpa(objects):
    hpa = dt.find(objects, "HorizontalPodAutoscaler", "-worker")
    metric = hpa["spec"]["metrics"][0]
    assert metric["type"] == "External"
    assert metric["external"]["metric"]["name"] == "stoker_job_workers_desired"
    assert "replicas" not in dt.find(objects, "Deployment", "-worker")["spec"]


def check_monitoring(objects):
    service_monitor = dt.find(objects, "ServiceMonitor", "-coordinator")
    assert service_monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert service_monitor["spec"]["endpoints"][0]["port"] == "metrics"
    pod_monitor = dt.find(objects, "PodMonitor", "-worker")
    assert pod_monitor["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"
    policy = dt.find(objects, "NetworkPolicy", "-worker")
    metrics_rule = policy["spec"]["ingress"][1]
    assert metrics_rule["from"][0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "monitoring"}


def check_pools(objects):
    worker = dt.find(objects, "Deployment", "-worker")["spec"]["template"]["spec"]
    assert worker["nodeSelector"] == {"stoker.io/pool": "cpu"}
    assert worker["tolerations"][0]["key"] == "stoker.io/pool"
    assert "nodeAffinity" in worker["affinity"]
    assert worker["terminationGracePeriodSeconds"] == 55  # 45 s drain + 10
    args = container(worker, "worker")["args"]
    assert flag(args, "decoded-cache-bytes") == "3221225472", args  # not 3.221225472e+09
    assert flag(args, "decoded-cache-compression") == "none", args
    assert "--decoded-cache-pretouch" in args, args
    assert container(worker, "worker")["image"] == "registry.example.com/ml/stoker-worker:0.1.0"
    job = dt.find(objects, "Job", "-trainer")
    assert (job["spec"]["completionMode"], job["spec"]["completions"]) == ("Indexed", 8)
    trainer = job["spec"]["template"]["spec"]
    assert trainer["nodeSelector"]["cloud.google.com/gke-accelerator"] == "nvidia-l4"
    assert trainer["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert container(trainer, "trainer")["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert trainer["imagePullSecrets"] == [{"name": "regcred"}]
    check_secure(trainer)
    claim = dt.find(objects, "StatefulSet", "-coordinator")["spec"]["volumeClaimTemplates"][0]
    assert claim["spec"]["storageClassName"] == "fast-ssd"


def check_insecure(objects):
    """insecure: true (explicit): --insecure, no tls volume, native gRPC probes."""
    pods = {"worker": ("Deployment", "-worker"), "coordinator": ("StatefulSet", "-coordinator"),
            "trainer": ("Job", "-trainer")}
    for role, (kind, suffix) in pods.items():
        spec = dt.find(objects, kind, suffix)["spec"]["template"]["spec"]
        c = container(spec, role)
        assert "--insecure" in c["args"] and flag(c["args"], "tls-cert") is None, c["args"]
        assert all(v["name"] != "tls" for v in spec.get("volumes", [])), spec.get("volumes")
        if role != "trainer":
            assert "grpc" in c["readinessProbe"], c["readinessProbe"]
    test = dt.find(objects, "Pod", "-test-coordinator-serving")["spec"]
    assert "--insecure" in test["containers"][0]["args"][0]
    assert "volumes" not in test


def check_tenants(objects):
    """coordinator.tenants: the policy file in a ConfigMap, mounted and named by --tenant-policy."""
    policy = json.loads(dt.find(objects, "ConfigMap", "-tenants")["data"]["policy.json"])
    assert policy == {"tenants": {"vision": {"weight": 3, "max_jobs": 8},
                                  "nlp": {"max_prefetch_bytes_per_worker": "1073741824"}},
                      "defaults": {"max_jobs": 2}}, policy
    spec = dt.find(objects, "StatefulSet", "-coordinator")["spec"]["template"]["spec"]
    c = container(spec, "coordinator")
    assert flag(c["args"], "tenant-policy") == "/etc/stoker/tenants/policy.json", c["args"]
    mount = [m for m in c["volumeMounts"] if m["name"] == "tenants"]
    assert mount and mount[0]["mountPath"] == "/etc/stoker/tenants", c["volumeMounts"]
    volume = [v for v in spec["volumes"] if v["name"] == "tenants"]
    assert volume[0]["configMap"]["name"].endswith("-tenants"), spec["volumes"]


def check_replicated_coordinators(objects, replicas, state, lease_ttl, anti_affinity):
    """coordinator.stateBackend etcd: a Deployment of `replicas` without a volume or journal,
    --state/--leader-lease-ttl-ms/--advertise-address=$(POD_IP):port; readiness asks health (a
    standby is NOT_SERVING: the Service routes to the leader), liveness and startup the metrics
    page (a standby answers it); anti-affinity across nodes; a PDB of one that lets the standbys
    (never Ready) be evicted; a rollout that waits for no standby's readiness. Returns the pod
    spec."""
    assert not [o for o in objects if o["kind"] == "StatefulSet" and
                o["metadata"]["name"].endswith("-coordinator")]
    deployment = dt.find(objects, "Deployment", "-coordinator")
    assert deployment["spec"]["replicas"] == replicas, deployment["spec"]["replicas"]
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 0,
                                                               "maxUnavailable": "100%"}
    spec = deployment["spec"]["template"]["spec"]
    check_secure(spec)
    c = container(spec, "coordinator")
    args = c["args"]
    assert flag(args, "state") == state, args
    assert flag(args, "leader-lease-ttl-ms") == lease_ttl, args
    assert flag(args, "advertise-address") == "$(POD_IP):7070", args
    assert flag(args, "journal") is None, args
    assert any(e["name"] == "POD_IP" and e["valueFrom"]["fieldRef"]["fieldPath"] ==
               "status.podIP" for e in c["env"]), c["env"]
    assert "volumeClaimTemplates" not in deployment["spec"]
    assert all(v["name"] != "journal" for v in spec.get("volumes", [])), spec["volumes"]
    assert c["readinessProbe"]["exec"]["command"][:2] == ["stoker-ctl", "health"]
    for probe in ("livenessProbe", "startupProbe"):
        assert c[probe]["httpGet"] == {"path": "/metrics", "port": "metrics"}, c[probe]
    check_anti_affinity(spec, "coordinator", anti_affinity)
    budget = dt.find(objects, "PodDisruptionBudget", "-coordinator")["spec"]
    assert budget["maxUnavailable"] == 1 and budget["unhealthyPodEvictionPolicy"] == "AlwaysAllow"
    assert budget["selector"]["matchLabels"]["app.kubernetes.io/component"] == "coordinator"
    service = dt.find(objects, "Service", "-coordinator")["spec"]
    assert service["selector"]["app.kubernetes.io/component"] == "coordinator", service
    return spec


def check_anti_affinity(pod_spec, component, mode):
    """One term keeping `component`'s pods on different nodes, required or preferred."""
    anti = pod_spec["affinity"]["podAntiAffinity"]
    if mode == "required":
        term = anti["requiredDuringSchedulingIgnoredDuringExecution"][0]
    else:
        term = anti["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
    assert term["topologyKey"] == "kubernetes.io/hostname", term
    assert term["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == component


def secret_items(pod_spec, volume):
    secret = next(v for v in pod_spec["volumes"] if v["name"] == volume)["secret"]
    return secret["secretName"], sorted(i["key"] for i in secret["items"])


def check_etcd_bundled(objects):
    """Three coordinators on a bundled three-member etcd, client and peer TLS on."""
    members = [f"stoker-etcd-{i}.stoker-etcd.stoker.svc" for i in range(3)]
    state = "etcd://" + ",".join(f"{m}:2379" for m in members) + "/stoker"
    spec = check_replicated_coordinators(objects, 3, state, "2000", "required")
    args = container(spec, "coordinator")["args"]
    assert (flag(args, "etcd-ca"), flag(args, "etcd-cert"), flag(args, "etcd-key")) == (
        "/etc/stoker/etcd-tls/ca.pem", "/etc/stoker/etcd-tls/client.pem",
        "/etc/stoker/etcd-tls/client.key"), args
    assert secret_items(spec, "etcd-tls") == ("stoker-etcd-client-tls",
                                              ["ca.pem", "client.key", "client.pem"])
    etcd = dt.find(objects, "StatefulSet", "-etcd")
    assert etcd["spec"]["replicas"] == 3 and etcd["spec"]["podManagementPolicy"] == "Parallel"
    assert etcd["spec"]["serviceName"] == "stoker-etcd"
    headless = dt.find(objects, "Service", "-etcd")["spec"]
    assert headless["clusterIP"] == "None" and headless["publishNotReadyAddresses"] is True
    pod = etcd["spec"]["template"]["spec"]
    check_secure(pod)
    check_anti_affinity(pod, "etcd", "required")
    e = container(pod, "etcd")
    eargs = e["args"]
    assert flag(eargs, "initial-cluster") == ",".join(
        f"stoker-etcd-{i}=https://{m}:2380" for i, m in enumerate(members)), eargs
    assert flag(eargs, "advertise-client-urls") == \
        "https://$(POD_NAME).stoker-etcd.stoker.svc:2379", eargs
    assert "--client-cert-auth" in eargs and "--peer-client-cert-auth" in eargs, eargs
    assert flag(eargs, "cert-file") == "/etc/etcd/client-tls/server.pem", eargs
    assert flag(eargs, "peer-cert-file") == "/etc/etcd/peer-tls/peer.pem", eargs
    assert secret_items(pod, "client-tls") == ("stoker-etcd-client-tls",
                                               ["ca.pem", "server.key", "server.pem"])
    assert secret_items(pod, "peer-tls") == ("stoker-etcd-peer-tls",
                                             ["ca.pem", "peer.key", "peer.pem"])
    assert e["readinessProbe"]["httpGet"]["path"] == "/health", e["readinessProbe"]
    assert "limits" in e["resources"] and "requests" in e["resources"], e["resources"]
    claim = etcd["spec"]["volumeClaimTemplates"][0]
    assert claim["metadata"]["name"] == "data" and claim["spec"]["resources"]["requests"][
        "storage"] == "2Gi", claim
    budget = dt.find(objects, "PodDisruptionBudget", "-etcd")["spec"]
    assert budget["maxUnavailable"] == 1, budget
    # etcd's client port admits the coordinators only.
    clients = dt.find(objects, "NetworkPolicy", "-etcd")["spec"]["ingress"][0]
    assert clients["ports"] == [{"port": 2379, "protocol": "TCP"}], clients
    assert clients["from"][0]["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == \
        "coordinator", clients


def check_etcd_external(objects):
    """Two coordinators on an external etcd named by its endpoints: no etcd of the chart's own,
    plaintext to it, preferred anti-affinity, a 3 s lease."""
    state = ("etcd://etcd-0.etcd.db.svc:2379,etcd-1.etcd.db.svc:2379,etcd-2.etcd.db.svc:2379"
             "/stoker/prod")
    spec = check_replicated_coordinators(objects, 2, state, "3000", "preferred")
    args = container(spec, "coordinator")["args"]
    assert flag(args, "etcd-ca") is None and flag(args, "etcd-cert") is None, args
    assert not [o for o in objects if o["metadata"]["name"].endswith("-etcd")]


CHECKS = {
    "default": check_default,
    "insecure": check_insecure,
    "autoscaling-keda": check_autoscaling_keda,
    "autoscaling-keda-external": check_autoscaling_keda_external,
    "autoscaling-hpa": check_autoscaling_hpa,
    "monitoring": check_monitoring,
    "pools": check_pools,
    "tenants": check_tenants,
    "etcd-bundled": check_etcd_bundled,
    "etcd-external": check_etcd_external,
}


def template(variant):
    result = dt.helm_template(values_file(variant))
    validate_schemas(result.stdout)
    CHECKS[variant](dt.rendered_objects(values_file(variant)))
    print(f"{variant}: rendered, valid, checks passed")


def schema():
    cases = sorted(glob.glob(os.path.join(FIXTURES, "bad-*.yaml")))
    assert len(cases) >= 2, cases
    for path in cases:
        with open(path) as f:
            first = f.readline()
        expected = first.split("Must be rejected:", 1)[1].strip().strip("'\"")
        result = dt.helm_template([path], check=False)
        if result.returncode == 0 or expected not in result.stderr:
            raise AssertionError(f"{os.path.basename(path)}: expected rejection with "
                                 f"'{expected}', got rc {result.returncode}:\n{result.stderr}")
        print(f"{os.path.basename(path)}: rejected: {expected}")
    # No dataRoots at all: the chart requires them, as the binaries require --data-root.
    result = dt.helm_template([], check=False, base=False)
    if result.returncode == 0 or "dataRoots is required" not in result.stderr:
        raise AssertionError(f"no dataRoots: expected rejection, got rc {result.returncode}:\n"
                             f"{result.stderr}")
    print("no dataRoots: rejected: dataRoots is required")


def containerfiles():
    node = dt.node_with("dockerfilelint")
    linter = os.path.join(dt.NODE_MODULES, "dockerfilelint", "bin", "dockerfilelint")
    files = sorted(glob.glob(os.path.join(dt.SOURCE_DIR, "docker", "*.Containerfile")))
    assert len(files) == 5, files
    result = subprocess.run([node, linter] + files, capture_output=True, text=True)
    print(result.stdout[-3000:], end="")
    if result.returncode != 0:
        raise AssertionError(f"dockerfilelint: rc {result.returncode}\n{result.stderr}")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "lint":
        lint()
    elif mode == "template" and len(sys.argv) == 3 and sys.argv[2] in CHECKS:
        template(sys.argv[2])
    elif mode == "schema":
        schema()
    elif mode == "containerfiles":
        containerfiles()
    else:
        print(f"usage: chart_test.py lint | template {'|'.join(CHECKS)} | schema | containerfiles")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
