"""The real binaries refuse to start without --data-root (docs/security.md, "Data roots"), as
they do without TLS files or --insecure: exit code 2 and a message naming the flag. With
--data-root=/ (the explicit "anything") the coordinator serves.

    data_root_required_test.py BUILD_DIR
"""

import os
import subprocess
import sys
import tempfile
import time
import unittest

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else "build"
COORDINATOR = os.path.join(BUILD, "coordinator", "stoker-coordinator")
WORKER = os.path.join(BUILD, "worker", "stoker-worker")
PACK = os.path.join(BUILD, "tools", "stoker-pack")
EXIT_BAD_FLAGS = 2


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)


class DataRootRequiredTest(unittest.TestCase):
    def assert_refused(self, argv, message):
        result = run(argv)
        self.assertEqual(result.returncode, EXIT_BAD_FLAGS, result.stderr)
        self.assertIn(message, result.stderr)

    def test_coordinator_without_data_root_exits_2_naming_the_flag(self):
        self.assert_refused([COORDINATOR, "--insecure", "--listen=127.0.0.1:0"],
                            "--data-root: required")

    def test_worker_without_data_root_exits_2_naming_the_flag(self):
        self.assert_refused([WORKER, "--insecure", "--coordinator=127.0.0.1:1",
                             "--listen=127.0.0.1:0"], "--data-root: required")

    def test_pack_without_data_root_exits_2_naming_the_flag(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assert_refused([PACK, f"--input={tmp}", f"--output={tmp}/out"],
                                "--data-root: required")

    def test_a_root_that_is_no_folder_exits_2_naming_the_flag(self):
        self.assert_refused([COORDINATOR, "--insecure", "--listen=127.0.0.1:0",
                             "--data-root=/no/such/stoker/root"], "--data-root: no such folder")

    def test_the_root_slash_serves(self):
        with tempfile.TemporaryDirectory() as tmp:
            port_file = os.path.join(tmp, "port")
            proc = subprocess.Popen([COORDINATOR, "--insecure", "--listen=127.0.0.1:0",
                                     f"--port-file={port_file}", "--data-root=/"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    stdin=subprocess.DEVNULL, text=True)
            try:
                deadline = time.monotonic() + 30
                while not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
                    self.assertIsNone(proc.poll(), "the coordinator exited")
                    self.assertLess(time.monotonic(), deadline, "no port file in 30 s")
                    time.sleep(0.05)
            finally:
                proc.terminate()
                _, stderr = proc.communicate(timeout=30)
            self.assertIn("--data-root=/: jobs may read datasets from any path", stderr)


if __name__ == "__main__":
    unittest.main()
