#!/usr/bin/env bash
# Keeps the repository's documents self-contained (CTest docs_check, label unit):
#   - no tracked file names the design document that lives outside the repository (its design
#     is docs/architecture.md, its choices docs/decisions/);
#   - every relative link of a tracked Markdown file leads to a tracked file or folder
#     (http(s) and other schemes, and pure #anchors, are not checked; an anchor after a file is
#     ignored).
# Prints FILE:LINE: what is wrong, for every finding, and exits 1. Needs git to list the tracked
# files: without git or outside a work tree it exits 2 saying so, never passing unchecked.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v git >/dev/null 2>&1; then
  echo "check-docs.sh: git not found: cannot list the tracked files to check" >&2
  exit 2
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check-docs.sh: $(pwd) is not a git work tree: cannot list the tracked files to check" >&2
  exit 2
fi
exec /usr/bin/python3 - <<'EOF'
import os
import re
import subprocess
import sys
from urllib.parse import unquote

# Spelled in two parts so that this file does not name it; cited by file or by section.
OUTSIDE_DOC = "DESIGN" + ".md"
OUTSIDE_SECTION = "DESIGN" + " \u00a7"

tracked = subprocess.run(["git", "ls-files", "-z"], check=True, capture_output=True,
                         text=True).stdout.split("\0")
tracked = [path for path in tracked if path]
tracked_set = set(tracked)
tracked_dirs = {os.path.dirname(path) for path in tracked}
for folder in list(tracked_dirs):
    while folder:
        folder = os.path.dirname(folder)
        tracked_dirs.add(folder)

findings = []

# git grep reads the working tree's copy of every tracked text file (-I skips binaries).
grep = subprocess.run(["git", "grep", "-n", "-I", "-F", "-e", OUTSIDE_DOC, "-e", OUTSIDE_SECTION],
                      capture_output=True, text=True)
if grep.returncode not in (0, 1):
    sys.exit("check-docs.sh: git grep failed: " + grep.stderr.strip())
for hit in grep.stdout.splitlines():
    path, line, _ = hit.split(":", 2)
    findings.append(f"{path}:{line}: names {OUTSIDE_DOC}, a document outside the repository; cite "
                    "docs/architecture.md or a record of docs/decisions/ instead")

# [text](target) and [text](target "title"), text with at most one level of nested brackets;
# reference definitions `[label]: target`.
INLINE = re.compile(r'\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)')
REFERENCE = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)')
SCHEME = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:')
CODE_SPAN = re.compile(r'(`+).*?\1')

def check(md, number, target):
    target = target.strip("<>")
    if not target or target.startswith("#") or SCHEME.match(target):
        return
    target = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if target.startswith("/"):
        resolved = os.path.normpath(target.lstrip("/"))
    else:
        resolved = os.path.normpath(os.path.join(os.path.dirname(md), target))
    if resolved == ".." or resolved.startswith("../"):
        findings.append(f"{md}:{number}: link to {target} leaves the repository")
    elif not os.path.exists(resolved):
        findings.append(f"{md}:{number}: link to {target}: no such file or folder")
    elif resolved not in tracked_set and resolved not in tracked_dirs and resolved != ".":
        findings.append(f"{md}:{number}: link to {target}: not tracked by git")

for md in tracked:
    if not md.endswith(".md") or not os.path.isfile(md):
        continue
    fence = None
    with open(md, encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            opening = re.match(r'^\s{0,3}(`{3,}|~{3,})', line)
            if opening:
                marker = opening.group(1)
                if fence is None:
                    fence = marker
                elif marker[0] == fence[0] and len(marker) >= len(fence):
                    fence = None
                continue
            if fence is not None:
                continue
            text = CODE_SPAN.sub("", line)
            for match in INLINE.finditer(text):
                check(md, number, match.group(1))
            reference = REFERENCE.match(text)
            if reference:
                check(md, number, reference.group(1))

for finding in findings:
    print(finding)
sys.stdout.flush()  # The findings before the count, also when both go to one terminal.
if findings:
    print(f"check-docs.sh: {len(findings)} finding(s)", file=sys.stderr)
    sys.exit(1)
EOF
