"""Makes a wheel self-contained, as auditwheel's `repair` does: every shared library its
extensions load beyond glibc, libstdc++ and libgcc_s (per ldd) is copied into stoker.libs/ under
a name carrying a hash of its contents (so that another copy of the same library, loaded by torch
or another package, cannot stand in for it), the extensions and the copies have their DT_NEEDED
entries renamed to match and their RUNPATH set to $ORIGIN-relative paths (patchelf), and
RECORD is rewritten.

    python3 scripts/repair_wheel.py WHEEL OUT_DIR      (scripts/wheel.sh calls it)
"""

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

LIBS_DIR = "stoker.libs"
# What every Linux trainer has and must not be duplicated: the C library family, the dynamic
# loader, and the C++ runtime (a second libstdc++ in one process breaks exceptions and RTTI).
SYSTEM_LIBRARY = re.compile(r"^(linux-vdso|ld-linux|lib(c|m|dl|rt|pthread|resolv|util|nsl|"
                            r"anl|stdc\+\+|gcc_s)\.so)")


def linked_libraries(elf):
    """{soname: path} of every library ldd resolves for `elf` (its whole closure), less the
    system ones. A library ldd cannot find is an error: the wheel would not load anywhere."""
    output = subprocess.run(["ldd", elf], check=True, capture_output=True, text=True).stdout
    found = {}
    for line in output.splitlines():
        match = re.match(r"\s*(\S+) => (.*?)\s*(\(0x[0-9a-f]+\))?$", line)
        if not match or SYSTEM_LIBRARY.match(match.group(1)):
            continue
        if match.group(2) == "not found":
            raise RuntimeError(f"{elf}: ldd finds no {match.group(1)}")
        found[match.group(1)] = os.path.realpath(match.group(2))
    return found


def hashed_name(soname, path):
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:8]
    stem, dot_so, rest = soname.partition(".so")
    return f"{stem}-{digest}{dot_so}{rest}"


def patchelf(*args):
    subprocess.run(["patchelf", *args], check=True)


def rename_needed(elf, renamed):
    needed = subprocess.run(["patchelf", "--print-needed", elf], check=True, capture_output=True,
                            text=True).stdout.split()
    replacements = [arg for old in needed if old in renamed for arg in
                    ("--replace-needed", old, renamed[old])]
    if replacements:
        patchelf(*replacements, elf)


def bundle_libraries(root, extensions):
    libraries = {}
    for extension in extensions:
        libraries.update(linked_libraries(extension))
    libs_dir = os.path.join(root, LIBS_DIR)
    os.makedirs(libs_dir, exist_ok=True)
    renamed = {soname: hashed_name(soname, path) for soname, path in libraries.items()}
    for soname, path in libraries.items():
        copy = os.path.join(libs_dir, renamed[soname])
        shutil.copyfile(path, copy)
        os.chmod(copy, 0o755)
        patchelf("--set-soname", renamed[soname], copy)
        rename_needed(copy, renamed)
        patchelf("--set-rpath", "$ORIGIN", copy)
    for extension in extensions:
        rename_needed(extension, renamed)
        depth = os.path.relpath(os.path.dirname(extension), root).count(os.sep) + 1
        patchelf("--set-rpath", "$ORIGIN/" + "../" * depth + LIBS_DIR, extension)
    return sorted(renamed.values())


def record_hash(path):
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def rewrite_record(root):
    dist_info = [name for name in os.listdir(root) if name.endswith(".dist-info")]
    record = os.path.join(dist_info[0], "RECORD")
    lines = []
    for directory, _, files in os.walk(root):
        for name in sorted(files):
            relative = os.path.relpath(os.path.join(directory, name), root)
            if relative != record:
                path = os.path.join(root, relative)
                lines.append(f"{relative},{record_hash(path)},{os.path.getsize(path)}")
    lines.append(f"{record},,")
    with open(os.path.join(root, record), "w") as f:
        f.write("\n".join(sorted(lines)) + "\n")
    return dist_info[0]


def repair(wheel, out_dir):
    with tempfile.TemporaryDirectory() as root:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(root)
        extensions = [os.path.join(directory, name) for directory, _, files in os.walk(root)
                      for name in files if re.match(r"_stoker\..*\.so$", name)]
        if not extensions:
            raise RuntimeError(f"{wheel}: no extension module in it")
        bundled = bundle_libraries(root, extensions)
        dist_info = rewrite_record(root)
        os.makedirs(out_dir, exist_ok=True)
        output = os.path.join(out_dir, os.path.basename(wheel))
        with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as archive:
            # dist-info last, as wheels are written.
            names = sorted((os.path.relpath(os.path.join(d, f), root)
                            for d, _, files in os.walk(root) for f in files),
                           key=lambda name: (name.startswith(dist_info), name))
            for name in names:
                archive.write(os.path.join(root, name), name)
    print(f"repair_wheel: {output} ({len(bundled)} libraries in {LIBS_DIR}/)")
    return output


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: repair_wheel.py WHEEL OUT_DIR")
    repair(sys.argv[1], sys.argv[2])
