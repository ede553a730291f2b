"""The chart's bundled etcd forms a cluster as rendered (helm/stoker/tests/values-etcd-bundled.yaml:
three members, client and peer TLS): each member a podman container started from the rendered
StatefulSet pod (tests/containers/podman_cluster.py), named by its stable DNS name on one
network as the headless Service names it, its claim a host directory, the TLS Secrets
projected. Then: the three members agree on one cluster; a client without a certificate is
refused; with one member stopped (what the PDB allows) the other two still take a write, and
the stopped member, started again on its data, rejoins and sees it.

Builds localhost/stoker-etcd (scripts/images.sh etcd: no binaries, seconds when cached) when it
is missing. Skips (77) where podman, helm or openssl cannot run; etcdctl (scripts/install-deps.sh
--etcd) missing fails.
"""

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import deploy_tools as dt
from cluster_test import pod_spec, require_podman
from podman_cluster import PodmanCluster, podman_env

VALUES = os.path.join(dt.CHART_DIR, "tests", "values-etcd-bundled.yaml")
NAMESPACE = "stoker"


def etcd_make_certs(directory, members):
    """One CA and one key pair for server, client and peer use, naming every member (a
    throwaway: production issues each from its own CA, docs/deploy.md)."""
    openssl = shutil.which("openssl") or dt.skip("openssl not found")
    os.makedirs(directory)
    names = ",".join(f"DNS:{m}" for m in members) + ",DNS:localhost,IP:127.0.0.1"

    def run(*argv):
        subprocess.run([openssl, *argv], check=True, capture_output=True, cwd=directory)

    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=etcd-test-ca")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
        "member.key", "-out", "member.csr", "-subj", "/CN=etcd-member")
    with open(os.path.join(directory, "ext"), "w") as f:
        f.write(f"subjectAltName={names}\nextendedKeyUsage=serverAuth,clientAuth\n")
    run("x509", "-req", "-in", "member.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "member.pem", "-days", "1", "-extfile", "ext")
    for name in ("server", "client", "peer"):
        for ext in ("pem", "key"):
            shutil.copyfile(os.path.join(directory, f"member.{ext}"),
                            os.path.join(directory, f"{name}.{ext}"))


def etcd_healthy(ip, port):
    try:
        with urllib.request.urlopen(f"http://{ip}:{port}/health", timeout=2) as response:
            return json.loads(response.read()).get("health") == "true"
    except OSError:
        return False


def etcd_wait_healthy(ip, port, what):
    for _ in range(120):  # 60 s at most
        if etcd_healthy(ip, port):
            return
        time.sleep(0.5)
    raise AssertionError(f"{what}: /health not true after 60 s")


def main():
    podman = require_podman()
    etcdctl = shutil.which("etcdctl")
    if not etcdctl:
        raise AssertionError("etcdctl not found: scripts/install-deps.sh --etcd installs it")
    objects = dt.rendered_objects([VALUES], namespace=NAMESPACE)
    statefulset = dt.find(objects, "StatefulSet", "-etcd")
    spec = pod_spec(objects, "StatefulSet", "-etcd")
    service = statefulset["spec"]["serviceName"]
    replicas = statefulset["spec"]["replicas"]
    ports = {p["name"]: p["containerPort"] for p in spec["containers"][0]["ports"]}
    names = [f"{statefulset['metadata']['name']}-{i}" for i in range(replicas)]
    domains = [f"{n}.{service}.{NAMESPACE}.svc" for n in names]
    image = spec["containers"][0]["image"]
    with PodmanCluster(podman, "stoker-etcd-chart") as cluster:
        if cluster.run("image", "exists", image, check=False).returncode != 0:
            subprocess.run([os.path.join(dt.SOURCE_DIR, "scripts", "images.sh"), "etcd"],
                           check=True, env=podman_env(), timeout=600)
        certs = os.path.join(cluster.dir, "etcd-certs")
        etcd_make_certs(certs, domains)
        for volume in spec["volumes"]:
            cluster.secrets[volume["secret"]["secretName"]] = certs
        ips = [cluster.start(n, spec, "etcd", aliases=[d], field_values={"metadata.name": n})
               for n, d in zip(names, domains)]
        for name, ip in zip(names, ips):
            etcd_wait_healthy(ip, ports["metrics"], name)
        tls = [f"--cacert={certs}/ca.pem", f"--cert={certs}/client.pem",
               f"--key={certs}/client.key", "--insecure-skip-tls-verify"]

        def ctl(ip, *argv, cert=True, check=True):
            endpoint = f"--endpoints=https://{ip}:{ports['client']}"
            result = subprocess.run([etcdctl, endpoint, "--command-timeout=5s",
                                     *(tls if cert else [f"--cacert={certs}/ca.pem",
                                                         "--insecure-skip-tls-verify"]),
                                     *argv], capture_output=True, text=True, timeout=30,
                                    env={**os.environ, "ETCDCTL_API": "3"})
            if check and result.returncode != 0:
                raise AssertionError(f"etcdctl {' '.join(argv)}: {result.stderr}")
            return result

        members = json.loads(ctl(ips[0], "member", "list", "-w", "json").stdout)["members"]
        assert sorted(m["name"] for m in members) == names, members
        assert sorted(u for m in members for u in m["peerURLs"]) == sorted(
            f"https://{d}:{ports['peer']}" for d in domains), members
        print(f"{replicas} members, one cluster: {names}")
        refused = ctl(ips[1], "get", "/stoker/", "--prefix", cert=False, check=False)
        assert refused.returncode != 0, refused.stdout
        print("a client without a certificate: refused")
        cluster.stop(names[2], 10)
        ctl(ips[0], "put", "/stoker/probe", "written with one member down")
        assert ctl(ips[1], "get", "/stoker/probe", "--print-value-only").stdout.strip() == \
            "written with one member down"
        print("one member stopped: the other two take a write")
        cluster.run("start", f"{cluster.prefix}-{names[2]}")
        etcd_wait_healthy(ips[2], ports["metrics"], names[2] + " restarted")
        got = ctl(ips[2], "get", "/stoker/probe", "--print-value-only").stdout.strip()
        assert got == "written with one member down", got
        print("the stopped member rejoined on its data and has the write")
    return 0


if __name__ == "__main__":
    sys.exit(main())
