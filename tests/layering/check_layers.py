#!/usr/bin/env python3
"""Every include in core/ stays inside the layers its library declares.

    check_layers.py BUILD_DIR SOURCE_DIR

A core header outside the SDK is included by its path under core/
("store/run_store.h"). Its library is the one that lists it among its sources
(a header-only interface library does), else the one compiled from the .cpp of
the same name, else the libraries of its folder. A file may include it when its
own library is that library or links it, directly or through others
(target_link_libraries, read from BUILD_DIR/core_layers.tsv, which
core/CMakeLists.txt writes at configure time). Two more rules:
  - a header whose first lines say "Private to core/<folder>" is included
    only from that folder;
  - a core header is never included by its bare name, even from its own
    folder (the SDK's installed parts excepted: their headers travel as
    orchestrate/<part>/<header>).
Every breach is one line, file:line: what, and which link is missing. Exit 1
on any breach, 2 on a usage or input problem.

Written by hand: include-what-you-use and clang-tidy check which headers a
file needs, not which folders it may reach; CMake checks links, not includes.
"""
import collections
import os
import re
import sys

# The SDK's installed parts and its own headers: included as
# orchestrate/<part>/<header>, their own files by bare name.
SDK_FOLDERS = {"include", "sdk", "pch", "image", "tfrecord", "tf_example", "presets", "dataset_support", "fused_ops"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
PRIVATE = re.compile(r"Private to core/([\w/]+)")


def read_layers(build_dir):
    path = os.path.join(build_dir, "core_layers.tsv")
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as error:
        sys.exit(f"check_layers: cannot read {path} ({error.strerror}): configure the build first (scripts/setup)")
    targets = {}
    for line in lines:
        name, kind, folder, sources, links = (line.split("\t") + [""] * 5)[:5]
        files = [os.path.normpath(os.path.join(folder, s)) for s in sources.split(";") if s]
        targets[name] = {"kind": kind, "folder": folder, "files": files, "links": [l for l in links.split(";") if l]}
    return targets


def closure(targets, name):
    seen, todo = set(), [name]
    while todo:
        for link in targets.get(todo.pop(), {}).get("links", []):
            if link not in seen:
                seen.add(link)
                todo.append(link)
    return seen


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    build_dir, source_dir = sys.argv[1], os.path.abspath(sys.argv[2])
    core = os.path.join(source_dir, "core")
    targets = read_layers(build_dir)
    # The layers file names the build's own source tree; a copy of it (the
    # planted test) is checked against the same declarations.
    declared_core = os.path.commonpath([t["folder"] for t in targets.values()])
    owners = collections.defaultdict(set)  # core-relative path -> targets compiling it
    libraries_of_folder = collections.defaultdict(set)
    for name, target in targets.items():
        for path in target["files"]:
            relative = os.path.relpath(path, declared_core)
            owners[relative].add(name)
            if target["kind"] in ("STATIC_LIBRARY", "SHARED_LIBRARY", "OBJECT_LIBRARY"):
                libraries_of_folder[os.path.dirname(relative)].add(name)

    def libraries_of(relative):
        """The libraries a core file belongs to, by the rules above."""
        if relative in owners or relative.endswith(".cpp"):
            return owners.get(relative, set())
        same_stem = owners.get(relative[:-2] + ".cpp", set())
        return same_stem or libraries_of_folder.get(os.path.dirname(relative), set())

    breaches = []
    checked = 0
    for folder, _, names in os.walk(core):
        relative_folder = os.path.relpath(folder, core)
        if relative_folder.split(os.sep)[0] in SDK_FOLDERS:
            continue
        for file_name in sorted(names):
            if not file_name.endswith((".h", ".cpp")):
                continue
            relative = os.path.normpath(os.path.join(relative_folder, file_name))
            mine = libraries_of(relative)
            reach = set(mine).union(*(closure(targets, m) for m in mine)) if mine else set()
            text = open(os.path.join(folder, file_name), encoding="utf-8", errors="replace").read()
            for match in INCLUDE.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                where = f"core/{relative}:{line}"
                included = match.group(1)
                checked += 1
                if "/" not in included:
                    if os.path.exists(os.path.join(folder, included)):
                        breaches.append(f'{where}: "{included}" by its bare name; '
                                        f'include it as "{relative_folder}/{included}"')
                    continue
                header = os.path.join(core, included)
                if not os.path.isfile(header) or included.startswith("orchestrate/"):
                    continue
                private = PRIVATE.search("".join(open(header, encoding="utf-8").readlines()[:8]))
                if private and not relative.startswith(private.group(1) + "/"):
                    breaches.append(f'{where}: "{included}" is private to core/{private.group(1)}')
                    continue
                theirs = libraries_of(included)
                if not mine or not theirs or theirs & reach:
                    continue
                breaches.append(f'{where}: "{included}" belongs to {" or ".join(sorted(theirs))}, which '
                                f'{" or ".join(sorted(mine))} does not link (add it to target_link_libraries, '
                                f"or move the code to the layer that owns it)")
    for breach in breaches:
        print(breach)
    print(f"check_layers: {checked} includes in core/, {len(breaches)} across the declared layers")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
