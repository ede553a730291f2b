"""README.md's examples, run as written, so that they cannot go stale.

    /usr/bin/python3 tests/python/readme_examples_test.py BUILD_DIR

Every fenced ```python and ```sh block of README.md is read from the file at run time (never
copied here) and run against a local cluster this test starts: stoker.LocalCluster, a coordinator
and two workers on 127.0.0.1 (port 0, port files) with mutual TLS from scripts/dev-certs.sh's
certificates, stopped at the end, also on failure. The examples get the cluster through the
variables the README documents, STOKER_COORDINATOR and STOKER_CERTS, and BUILD_DIR through
STOKER_BUILD_DIR (the scripts' convention).

- A python block runs as one program, in an empty folder, with the module of BUILD_DIR on
  PYTHONPATH (where a reader would have pip-installed it). Its text is padded with blank lines,
  so a traceback's line numbers are README.md's.
- A sh block runs command by command (a line with its backslash continuations; comment lines are
  not commands) in the source root under bash -o pipefail, without PYTHONPATH (the examples find
  the module themselves). Each command must match a prefix in RUN or in NOT_RUN: a new command
  in neither, a block in another language (but the plain ``` of diagrams), or a list entry that
  matches nothing fails the test, so nothing is skipped silently. What NOT_RUN holds is printed.

A failure names README.md:LINE. Each command and the whole run are bounded in time; every process
a command starts (its process group) is stopped when it ends.
"""

import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BUILD_DIR = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(SOURCE_DIR, "README.md")

# sh commands that run, by their first words (after quotes and comments are resolved).
RUN = [
    "/usr/bin/python3 examples/pytorch/train_tiny.py",
]
# sh commands that do not run here, by their first words, and why (and which test covers them).
NOT_RUN = {
    "scripts/demo.sh": "installs packages, builds and runs benchmark workloads for minutes; its "
                       "pieces are the binaries the integration tests run",
    "scripts/test.sh": "runs the whole suite, this test included: it would recurse (CI runs it)",
    "scripts/build.sh": "a build: CTest runs in a build already made, and ninja from inside the "
                        "suite would race the tests running beside it",
    "pip install --no-build-isolation .": "a CMake build of its own (minutes): "
                                          "python_venv_install_job (label python) runs it",
    "scripts/wheel.sh": "builds a wheel (minutes): containers_wheel_runs_without_compilers "
                        "(label containers) runs it",
    "pip install dist/stoker-*.whl": "installs scripts/wheel.sh's wheel: containers_wheel_"
                                     "runs_without_compilers does, in a bare image",
}
# Fenced blocks without a language are diagrams and output, not commands.
NOT_CODE = {""}

COMMAND_TIMEOUT_S = 90   # one block or command; the examples take seconds
TOTAL_TIMEOUT_S = 240    # everything, below CTest's TIMEOUT (300)
OPEN_FENCE = re.compile(r"^(\s*)```\s*(\S*)")   # the language is the info string's first word
CLOSE_FENCE = re.compile(r"^\s*```\s*$")


def fenced_blocks(path):
    """[(language, line number of the first content line, content lines)] of a Markdown file."""
    blocks, current, indent = [], None, ""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        if current is None:
            fence = OPEN_FENCE.match(line)
            if fence:
                indent, current = fence.group(1), (fence.group(2), number + 1, [])
        elif CLOSE_FENCE.match(line):
            blocks.append(current)
            current = None
        else:
            current[2].append(line[len(indent):] if line.startswith(indent) else line)
    if current is not None:
        raise SystemExit(f"README.md:{current[1] - 1}: a fenced block is never closed")
    return blocks


def sh_commands(first_line, lines):
    """[(README line, text)]: each line with its backslash continuations, comments left out."""
    commands, i = [], 0
    while i < len(lines):
        start, text = i, lines[i]
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text += "\n" + lines[i]
        i += 1
        if text.strip() and not text.lstrip().startswith("#"):
            commands.append((first_line + start, text))
    return commands


def words(text):
    return shlex.split(text.replace("\\\n", " "), comments=True)


def matches(prefix, text):
    want = prefix.split()
    return words(text)[:len(want)] == want


def stop_group(proc):
    """SIGTERM to the process group of `proc`, SIGKILL after 5 s; returns once it is empty."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        end = time.monotonic() + 5
        try:
            os.killpg(proc.pid, sig)
            while time.monotonic() < end:
                proc.poll()  # reaps the leader; the others are reaped by init
                os.killpg(proc.pid, 0)
                time.sleep(0.05)
        except ProcessLookupError:
            return


def run_bounded(argv, cwd, env, deadline):
    """(exit code or None on timeout, output). The command runs in its own process group, which
    is stopped afterwards whatever happened (a command may leave servers behind)."""
    timeout = max(1.0, min(COMMAND_TIMEOUT_S, deadline - time.monotonic()))
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        code = None
    finally:
        stop_group(proc)
    if code is None:
        out, _ = proc.communicate(timeout=5)
        out += f"\n(timed out after {timeout:.1f} s)".encode()
    return code, out.decode(errors="replace")


def require_build():
    """The binaries and the module must be in BUILD_DIR: missing, the test fails (no skip)."""
    missing = [p for p in (os.path.join(BUILD_DIR, "coordinator", "stoker-coordinator"),
                           os.path.join(BUILD_DIR, "worker", "stoker-worker"))
               if not os.access(p, os.X_OK)]
    module = os.path.join(BUILD_DIR, "trainer_client", "python")
    if not glob.glob(os.path.join(module, "stoker", "_stoker*.so")):
        missing.append(os.path.join(module, "stoker", "_stoker*.so"))
    if missing:
        raise SystemExit("readme_examples_test: not built: " + ", ".join(missing))
    return module


def plan(blocks, env, module_dir, work, report):
    """[(README line, argv, cwd, env, label)] to run, in README order; what is not run, and what
    cannot be classified, go to `report` ("not_run", "failures", "used")."""
    steps = []
    for language, first, lines in blocks:
        if language in NOT_CODE:
            continue
        if language == "python":
            # Blank lines in front: the traceback's line numbers are README.md's.
            steps.append((first, [sys.executable, "-c", "\n" * (first - 1) + "\n".join(lines)],
                          tempfile.mkdtemp(dir=work), dict(env, PYTHONPATH=module_dir),
                          "python block"))
            continue
        if language != "sh":
            report["failures"].append(f"README.md:{first - 1}: a ```{language} block: this test "
                                      "runs ```python and ```sh only")
            continue
        for line, text in sh_commands(first, lines):
            skip = [p for p in NOT_RUN if matches(p, text)]
            run = [p for p in RUN if matches(p, text)]
            report["used"].update(skip + run)
            label = " ".join(words(text))
            if skip:
                report["not_run"].append(f"README.md:{line}: {label}\n    {NOT_RUN[skip[0]]}")
            elif run:
                steps.append((line, ["bash", "-o", "pipefail", "-c", text], SOURCE_DIR, env,
                               label))
            else:
                report["failures"].append(f"README.md:{line}: `{label}` is neither in RUN nor in "
                                          f"NOT_RUN of {os.path.basename(__file__)}")
    return steps


def main():
    # CTest's timeout kills this process only: let SIGTERM unwind through the `with` below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    deadline = time.monotonic() + TOTAL_TIMEOUT_S
    module_dir = require_build()
    sys.path.insert(0, module_dir)
    import stoker

    report = {"not_run": [], "failures": [], "used": set()}
    ran = 0
    work = tempfile.mkdtemp(prefix="stoker-readme-")
    try:
        certs = os.path.join(work, "certs")
        subprocess.run([os.path.join(SOURCE_DIR, "scripts", "dev-certs.sh"), certs], check=True,
                       timeout=60)
        with stoker.LocalCluster(BUILD_DIR, workers=2, tls_dir=certs) as cluster:
            # TMPDIR: what a command leaves in temp folders (a local cluster it had to kill
            # at the timeout) goes when `work` does.
            env = dict(os.environ, STOKER_COORDINATOR=cluster.address, STOKER_CERTS=certs,
                       STOKER_BUILD_DIR=BUILD_DIR, TMPDIR=work)
            env.pop("PYTHONPATH", None)
            for line, argv, cwd, step_env, label in plan(fenced_blocks(README), env, module_dir,
                                                         work, report):
                started = time.monotonic()
                code, out = run_bounded(argv, cwd, step_env, deadline)
                ran += 1
                if code == 0:
                    print(f"README.md:{line}: ok ({time.monotonic() - started:.1f} s): {label}")
                else:
                    how = "timed out" if code is None else f"exit {code}"
                    report["failures"].append(f"README.md:{line}: {how}: {label}\n"
                                              + out[-3000:])
            if report["failures"]:
                print("coordinator log, last lines:\n" + cluster.log_tail("coordinator", 1500))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    failures = report["failures"]
    for prefix in sorted(set(RUN) | set(NOT_RUN)):
        if prefix not in report["used"]:
            failures.append(f"{prefix!r}: listed in {os.path.basename(__file__)} but no README "
                            "command starts so (remove it)")
    if ran == 0:
        failures.append("no README block ran")
    print(f"\nNOT RUN ({len(report['not_run'])}):")
    for entry in report["not_run"]:
        print("  " + entry)
    print(f"\nran {ran}, not run {len(report['not_run'])}, failed {len(failures)}")
    for failure in failures:
        print("FAILED " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
