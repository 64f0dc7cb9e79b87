#!/usr/bin/env python3
"""Dependencies only downward: checks every #include of the table's folders (libraries and front ends) against it.

The table is docs/design.md §1 ("| folder | what lives there | may include |"); this script reads it from there,
so the page and the check cannot drift. Rules (docs/design.md states them under the table):

  1. A file in folder X includes only X and the folders X's row allows.
  2. A `cuda/` folder is private to its library: X/.../cuda/... is included only by files of X, and by files inside
     another library's `cuda/` folder (the CUDA halves, compiled only in CUDA builds, build on each other).
  3. CUDA headers (the toolkit's, and every project header that includes one) are included only by .cu/.cuh files,
     files inside a `cuda/` folder, and the CUDA-only headers the page names.
  4. Every tessel_<folder> that a folder's CMakeLists.txt links is allowed by its row, and every include arrow is
     backed by a link path.
  5. Every arrow the table draws is an include that exists.

Usage: check_layers.py [--root DIR] [--inject FILE:HEADER ...]
  --inject pretends FILE has one more line `#include "HEADER"` (the ctest include_layers_detects uses it to show
  that a forbidden include fails). Exit status 0 when everything holds, 1 with one line per violation otherwise.
Python 3 standard library only.
"""

import argparse
import os
import re
import sys

SOURCE_EXTENSIONS = (".h", ".cc", ".cu", ".cuh", ".hpp", ".cpp")
CUDA_SOURCE_EXTENSIONS = (".cu", ".cuh")
# Toolkit headers: CUDA runtime and libraries, Thrust, CUB, NCCL, NVTX.
TOOLKIT_HEADER = re.compile(
    r"^(cuda|cublas|cusparse|curand|cufft|cusolver|nccl|nvtx|nvToolsExt|cooperative_groups|thrust/|cub/|"
    r"device_launch_parameters|crt/)")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
DESIGN = os.path.join("docs", "design.md")


class Violation(Exception):
    pass


def read_table(root):
    """Returns ({folder: set of allowed folders}, [CUDA-only headers outside cuda/]) parsed from docs/design.md."""
    path = os.path.join(root, DESIGN)
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    allowed = {}
    cuda_headers = []
    header = None
    column = None
    for number, line in enumerate(lines, 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else None
        if cells is None:
            if header is not None and allowed:
                header = None  # the table ended; later tables are not the layer table
            m = re.search(r"CUDA-only headers? outside a `cuda/` folder:(.*)", line)
            if m:
                cuda_headers += re.findall(r"`([^`]+)`", m.group(1))
            continue
        if header is None:
            if any("may include" in c for c in cells) and cells[0] == "folder" and not allowed:
                header = cells
                column = next(i for i, c in enumerate(cells) if "may include" in c)
            continue
        if set(cells[0]) <= set("-: "):
            continue  # the |---| rule
        folder = cells[0].strip("`").rstrip("/")
        if not re.fullmatch(r"[a-z_]+", folder) or column >= len(cells):
            raise Violation(f"{DESIGN}:{number}: cannot read the layer table row {line.strip()!r}")
        allowed[folder] = {name.rstrip("/") for name in re.findall(r"`([^`]+)`", cells[column])}
    if not allowed:
        raise Violation(f"{DESIGN}: no layer table (a '| folder | ... | may include |' table in §1)")
    for folder, deps in allowed.items():
        for dep in deps:
            if dep not in allowed:
                raise Violation(f"{DESIGN}: the row of {folder}/ allows {dep}/, which is not a row of the table")
    return allowed, cuda_headers


def source_files(root, folders):
    for folder in folders:
        base = os.path.join(root, folder)
        if not os.path.isdir(base):
            raise Violation(f"{DESIGN}: the table names {folder}/, which does not exist")
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCE_EXTENSIONS):
                    yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def includes_of(root, rel, injected):
    """[(line, kind, target)] with kind '"' or '<'; quoted targets are repository paths."""
    out = []
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                out.append((number, m.group(1), m.group(2)))
    for target in injected.get(rel, []):
        out.append((0, '"', target))
    return out


def in_cuda_folder(path):
    return "cuda" in path.split("/")[:-1]


def is_cuda_source(path):
    return path.endswith(CUDA_SOURCE_EXTENSIONS)


def link_arrows(root, folders):
    """{folder: {linked folder: 'file:line'}} from target_link_libraries in each folder's CMakeLists.txt files."""
    arrows = {f: {} for f in folders}
    call = re.compile(r"target_link_libraries\s*\(([^)]*)\)", re.S)
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames.sort()
            if "CMakeLists.txt" not in filenames:
                continue
            path = os.path.join(dirpath, "CMakeLists.txt")
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path, encoding="utf-8") as f:
                text = f.read()
            text = re.sub(r"#[^\n]*", "", text)  # comments (no '#' inside the link lines)
            for m in call.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                for dep in re.findall(r"\btessel_([a-z_]+)\b", m.group(1)):
                    if dep in folders:
                        arrows[folder].setdefault(dep, f"{rel}:{line}")
    return arrows


def reachable(arrows, start):
    seen = set()
    stack = [start]
    while stack:
        f = stack.pop()
        for dep in arrows.get(f, {}):
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return seen


def check(root, injected):
    allowed, cuda_only = read_table(root)
    folders = list(allowed)
    files = list(source_files(root, folders))
    for rel in injected:
        if rel not in files:
            raise Violation(f"--inject: {rel} is not a source file of the library folders")
    includes = {rel: includes_of(root, rel, injected) for rel in files}
    errors = []
    for header in cuda_only:
        if header not in includes:
            errors.append(f"{DESIGN}: names the CUDA-only header {header}, which does not exist")

    def may_use_cuda(rel):
        return is_cuda_source(rel) or in_cuda_folder(rel) or rel in cuda_only

    # CUDA headers: toolkit headers and, to a fixed point, project headers that include one. Only files allowed
    # to be CUDA spread it, so a forbidden include is reported where it is, not again at every includer.
    cuda = set()
    changed = True
    while changed:
        changed = False
        for rel, incs in includes.items():
            if rel in cuda or not may_use_cuda(rel):
                continue
            if any((k == "<" and TOOLKIT_HEADER.match(t)) or (k == '"' and t in cuda) for _, k, t in incs):
                cuda.add(rel)
                changed = True

    used = {f: {} for f in folders}  # include arrows: folder -> {folder: first file:line}
    for rel in files:
        src = rel.split("/")[0]
        cuda_ok = may_use_cuda(rel)
        for number, kind, target in includes[rel]:
            where = f"{rel}:{number}" if number else f"{rel} (injected)"
            shown = f'"{target}"' if kind == '"' else f"<{target}>"
            if kind == "<":
                if TOOLKIT_HEADER.match(target) and not cuda_ok:
                    errors.append(f"{where}: includes the CUDA header {shown} outside a cuda/ folder (rule 3)")
                continue
            dst = target.split("/")[0]
            if dst not in allowed:
                if not os.path.exists(os.path.join(root, os.path.dirname(rel), target)):
                    errors.append(f"{where}: includes {shown}, which is in no folder of the layer table")
                continue
            if dst != src:
                used[src].setdefault(dst, where)
                if dst not in allowed[src]:
                    errors.append(f"{where}: {src} -> {dst} ({shown}): {src}/ may include only "
                                  f"{', '.join(sorted(allowed[src])) or 'itself'} (docs/design.md §1)")
            if in_cuda_folder(target) and dst != src and not in_cuda_folder(rel):
                errors.append(f"{where}: {src} -> {'/'.join(target.split('/')[:-1])}/ ({shown}): a cuda/ folder is "
                              f"private to its library; only files inside a cuda/ folder may use another library's "
                              f"(rule 2)")
            if target in cuda and not cuda_ok:
                errors.append(f"{where}: includes {shown}, a CUDA header (it includes the toolkit's), outside a "
                              f"cuda/ folder (rule 3)")

    links = link_arrows(root, folders)
    for src, deps in links.items():
        for dst, where in sorted(deps.items()):
            if dst != src and dst not in allowed[src]:
                errors.append(f"{where}: links tessel_{dst}: {src} -> {dst} is not in the layer table (rule 4)")
    for src in folders:
        reach = reachable(links, src)
        for dst, where in sorted(used[src].items()):
            if dst not in reach and dst in allowed[src]:
                errors.append(f"{where}: {src} -> {dst} is included but {src}/CMakeLists.txt links no path to "
                              f"tessel_{dst} (rule 4)")
        for dst in sorted(allowed[src] - set(used[src])):
            errors.append(f"{DESIGN}: the table lets {src}/ include {dst}/, but no file of {src}/ does: drop the "
                          f"arrow (rule 5)")
    return errors, files, used


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--inject", action="append", default=[], metavar="FILE:HEADER")
    args = parser.parse_args()
    injected = {}
    for item in args.inject:
        rel, _, header = item.partition(":")
        injected.setdefault(rel, []).append(header)
    try:
        errors, files, used = check(args.root, injected)
    except Violation as e:
        print(f"include_layers: {e}")
        return 1
    for line in errors:
        print(line)
    arrows = ", ".join(f"{s}->{d}" for s in used for d in sorted(used[s]))
    if errors:
        print(f"include_layers: {len(errors)} violation(s) in {len(files)} files")
        return 1
    print(f"include_layers: {len(files)} files, every include allowed by docs/design.md §1 ({arrows})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
