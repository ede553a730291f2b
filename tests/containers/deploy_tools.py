"""What the deployment tests share: the tools (helm, node with the npm packages from
scripts/install-deps.sh --deploy; podman from --containers), rendering the chart, and skipping.

A test whose tool is missing exits 77, which CTest shows as skipped (SKIP_RETURN_CODE), with a
line naming the tool and the install-deps flag that provides it.
"""

import os
import shutil
import subprocess
import sys

import yaml  # Debian's python3-yaml (scripts/install-deps.sh --deploy)

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHART_DIR = os.path.join(SOURCE_DIR, "helm", "stoker")
TOOLS_DIR = os.path.join(SOURCE_DIR, ".cache", "deploy-tools")
NODE_MODULES = os.path.join(TOOLS_DIR, "node_modules")
# The values every install must give (dataRoots: the schema requires it), first in every render.
BASE_VALUES = os.path.join(CHART_DIR, "tests", "base-data-roots.yaml")
SKIP = 77


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(SKIP)


def tool(name, flag):
    """Path of `name`, project-local first; skips the test when it is nowhere."""
    local = os.path.join(TOOLS_DIR, "bin", name)
    found = local if os.access(local, os.X_OK) else shutil.which(name)
    if not found:
        skip(f"{name} not found (scripts/install-deps.sh {flag} installs it)")
    return found


def node_with(package):
    """node, when the npm package is installed under TOOLS_DIR; skips otherwise."""
    node = tool("node", "--deploy")
    if not os.path.isdir(os.path.join(NODE_MODULES, package)):
        skip(f"npm package {package} not found in {NODE_MODULES} "
             "(scripts/install-deps.sh --deploy installs it)")
    return node


def helm_template(values_files=(), set_json=(), release="stoker", namespace="stoker", check=True,
                  base=True):
    """`helm template` of the chart (a CompletedProcess) with BASE_VALUES (unless not `base`),
    then `values_files`; set_json: --set-json assignments."""
    argv = [tool("helm", "--deploy"), "template", release, CHART_DIR, "--namespace", namespace]
    for path in ([BASE_VALUES] if base else []) + list(values_files):
        argv += ["--values", path]
    for assignment in set_json:
        argv += ["--set-json", assignment]
    result = subprocess.run(argv, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"helm template failed:\n{result.stderr}")
    return result


def rendered_objects(values_files=(), set_json=(), **kwargs):
    """The rendered objects, as dicts, in helm's order."""
    out = helm_template(values_files, set_json, **kwargs).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def find(objects, kind, name_suffix=""):
    """The one object of `kind` whose name ends with `name_suffix`."""
    found = [o for o in objects
             if o["kind"] == kind and o["metadata"]["name"].endswith(name_suffix)]
    if len(found) != 1:
        raise AssertionError(f"expected one {kind} *{name_suffix}, found {len(found)}")
    return found[0]
