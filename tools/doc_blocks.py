"""Generated blocks inside hand-written docs: the text between a BEGIN marker line and its END line is rewritten from
a source of truth (the binary's --help for docs/cli.md, the extension's declarations for docs/python.md), the prose
around it is kept. Shared by tools/gen_cli_docs.py and tools/gen_python_docs.py."""
import difflib
import os
import sys


def rewrite(doc_text, begin, end, render, tool):
    """(new text, names): each block opened by a line matching `begin` (a compiled regex whose group 1 names it) and
    closed by the line `end` gets render(name) as its content. Exits naming the line when a block is not closed."""
    lines = doc_text.splitlines(keepends=True)
    out, names, i = [], [], 0
    while i < len(lines):
        m = begin.match(lines[i].rstrip("\n"))
        if not m:
            out.append(lines[i])
            i += 1
            continue
        name = m.group(1).strip()
        j = i + 1
        while j < len(lines) and lines[j].rstrip("\n") != end:
            j += 1
        if j == len(lines):
            sys.exit(f"{tool}: the block for '{name}' (line {i + 1}) has no '{end}' line")
        names.append(name)
        out += [lines[i], render(name), lines[j]]
        i = j + 1
    return "".join(out), names


def check_or_write(path, old, new, check, tool, count, fix):
    """--check: 0 when `new` equals the file's text `old`, else 1 after a diff and the command that fixes it
    (`fix`); otherwise writes `new` (a temporary file renamed into place) when it differs. Returns the exit code."""
    if check:
        if new != old:
            print("\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), path, "generated", lineterm="")))
            print(f"{tool}: {path} is not current; run {fix}", file=sys.stderr)
            return 1
        print(f"{tool}: {count} current")
        return 0
    if new != old:
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(new)
        os.replace(path + ".tmp", path)
    print(f"{tool}: {count} written to {path}")
    return 0
