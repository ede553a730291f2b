"""The etcd harness itself (tests/chaos/etcd_harness.py) on a real 3-member cluster: it starts,
names a leader, survives killing it (a new leader among the two left), restarts the killed member
on its data, pauses and resumes one, and leaves no process behind."""

import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from etcd_harness import ETCDCTL, EtcdCluster  # noqa: E402


def etcdctl(endpoints, *args):
    return subprocess.run([ETCDCTL, f"--endpoints={','.join(endpoints)}",
                           "--command-timeout=3s", *args],
                          env=dict(os.environ, ETCDCTL_API="3"), capture_output=True,
                          text=True, timeout=20)


class EtcdHarnessTest(unittest.TestCase):
    def test_kill_restart_pause(self):
        with EtcdCluster(members=3) as etcd:
            procs = list(etcd.procs)
            self.assertEqual(etcdctl(etcd.endpoints(), "put", "/t/k", "1").returncode, 0)
            leader = etcd.leader_index()
            etcd.kill(leader)
            new_leader = etcd.leader_index()
            self.assertNotEqual(new_leader, leader)
            self.assertEqual(etcdctl(etcd.endpoints(), "put", "/t/k", "2").returncode, 0)
            etcd.restart(leader)
            got = etcdctl([etcd.endpoint(leader)], "get", "/t/k", "--print-value-only")
            self.assertEqual(got.stdout.strip(), "2")
            etcd.stop(new_leader)
            self.assertNotEqual(etcd.leader_index(), new_leader)
            etcd.resume(new_leader)
            procs += etcd.procs
        for proc in procs:
            self.assertIsNotNone(proc.poll())


if __name__ == "__main__":
    unittest.main()
