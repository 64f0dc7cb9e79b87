#!/usr/bin/env python3
"""Sizes as habits: reports the longest functions and files of the production code, and fails on one over the limits
that no comment explains.

Production code is every source file of the library folders and front ends of the layer table (docs/design.md §1,
read as tools/check_layers.py reads it), without tools/bench/ and tools/hostile/ (benchmarks and probes) and without
tests/. Limits (docs/design.md, "Sizes"): a function of at most --function-limit lines (150), a file of at most
--file-limit lines (600). A function over the limit is accepted when a comment holding `size:` followed by the reason
stands in the three lines above its first line; a file over the limit, when such a comment stands in its first 40
lines. The report lists the --top longest functions either way, so growth is seen when it happens.

A function is counted from the first line of its declaration (template prefix included) to its closing brace, as the
issue tables count it. The scanner is a brace matcher over the code with comments, strings and preprocessor lines
blanked: it finds function bodies at namespace and class scope (free functions, member functions defined in or out of
their class, constructors with initialiser lists, TEST bodies); lambdas count toward the function that holds them.

Usage: check_sizes.py [--root DIR] [--function-limit N] [--file-limit N] [--top N] [--files FILE ...] [--fixture]
  --files checks only the named files (paths relative to --root); --fixture also compares the functions found in
  them with the `// NAME: LINES` comments on their first lines (every function, no other; ctest source_sizes_fixture
  runs it on tests/tools/data/sizes_fixture.cc).
Exit status 0 when every size over a limit is explained, 1 otherwise (one line per unexplained size).
Python 3 standard library only.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_layers  # noqa: E402  (the layer table: which folders are production code)

SOURCES = (".h", ".cc", ".cu", ".cuh", ".hpp", ".cpp")
SKIPPED = ("tools/bench/", "tools/hostile/")
REASON = re.compile(r"//.*\bsize:\s*\S")
IDENT = re.compile(r"[A-Za-z_~][A-Za-z_0-9]*(?:\s*::\s*~?[A-Za-z_][A-Za-z_0-9]*)*\s*$")
OPERATOR = re.compile(r"operator\s*(?:\(\)|[^\s(]+|\s+[A-Za-z_][\w:<>*& ]*)\s*$")


def blank_code(text):
    """The text with comments, string and character literals and preprocessor lines replaced by spaces (newlines
    kept, so line numbers hold)."""
    out = []
    i = 0
    n = len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # 1'000 is a digit separator
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_template_prefix(head):
    """head without leading `template <...>` clauses (angle brackets balanced)."""
    while True:
        m = re.match(r"\s*template\s*<", head)
        if not m:
            return head
        depth = 0
        for k in range(m.end() - 1, len(head)):
            if head[k] == "<":
                depth += 1
            elif head[k] == ">":
                depth -= 1
                if depth == 0:
                    head = head[k + 1:]
                    break
        else:
            return head


def function_name(head):
    """The name of the function whose definition `head` (the text before its body's brace, at paren depth 0) opens,
    or None when head does not open a function body."""
    h = re.sub(r"__launch_bounds__\s*\([^)]*\)|__attribute__\s*\(\([^)]*\)\)", " ", strip_template_prefix(head)).strip()
    if not h or re.match(r"(namespace|class|struct|union|enum|extern)\b", h):
        return None
    # The parameter list: the first '(' outside angle brackets.
    depth = 0
    for k, c in enumerate(h):
        if c == "<" and not h[:k].rstrip().endswith("operator"):
            depth += 1
        elif c == ">" and depth > 0 and h[k - 1] != "-":
            depth -= 1
        elif c == "(" and depth == 0:
            before = h[:k]
            if re.search(r"(^|[^=!<>])=([^=]|$)", before) and not re.search(r"operator\s*\S*$", before):
                return None  # an initialised variable (a lambda or a braced initialiser)
            m = OPERATOR.search(before) or IDENT.search(before)
            if not m:
                return None
            name = re.sub(r"\s+", "", m.group(0))
            if name in ("if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignas"):
                return None
            return name
        elif c in "=;" and depth == 0 and not re.search(r"operator\s*\S*$", h[:k + 1]):
            return None
    return None


def past_braces(code, i):
    """The index just past the brace that closes the one at code[i]."""
    depth = 0
    for j in range(i, len(code)):
        depth += {"{": 1, "}": -1}.get(code[j], 0)
        if depth == 0:
            return j + 1
    return len(code)


def scan(text):
    """[(name, first_line, last_line)] of the function bodies at namespace and class scope of one file's text."""
    code = blank_code(text)
    functions = []
    # Scope frames: 'ns' (namespace, class, extern, top) or 'fn' / 'other' (skipped content).
    scopes = ["ns"]
    classes = [None]  # per 'ns' frame: the class it is the body of (None for a namespace)
    head_start = 0  # where the current declaration's text begins
    paren = 0
    i = 0
    n = len(code)
    while i < n:
        c = code[i]
        if scopes[-1] != "ns":
            # Inside a function or another non-scope block: only braces matter.
            if c == "{":
                scopes.append("other")
            elif c == "}":
                frame = scopes.pop()
                if isinstance(frame, tuple):
                    name, start = frame
                    functions.append((name, code.count("\n", 0, start) + 1, code.count("\n", 0, i) + 1))
                    head_start = i + 1
                    paren = 0
            i += 1
            continue
        if c == "(":
            paren += 1
        elif c == ")":
            paren = max(0, paren - 1)
        elif c == ";" and paren == 0:
            head_start = i + 1
        elif c == "{":
            head = code[head_start:i]
            if paren > 0:
                # A lambda or braced value inside an argument list (an initialiser list's member call): skip it.
                i = past_braces(code, i)
                continue
            stripped = strip_template_prefix(head).strip()
            if (re.match(r"(inline\s+)?namespace\b", stripped) or re.fullmatch(r"extern\s*", stripped) or
                    (re.match(r"(class|struct|union)\b", stripped) and "(" not in stripped)):
                cls = re.match(r"(?:class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?([A-Za-z_]\w*)", stripped)
                classes.append(cls.group(1) if cls else None)
                scopes.append("ns")
                head_start = i + 1
                i += 1
                continue
            # A constructor's member initialiser `name{...}` or `Base<T>{...}` inside an initialiser list.
            init_list = re.search(r"\)\s*(noexcept\s*)?:(?!:)", head)
            prev = head.rstrip()[-1:] if head.strip() else ""
            if init_list and (prev.isalnum() or prev in "_>"):
                i = past_braces(code, i)
                continue
            name = function_name(head) if "(" in head else None
            if name is None:
                scopes.append("other")  # an enum, an initialiser, a requires-clause body ...
            else:
                access = re.match(r"\s*(?:(?:public|private|protected)\s*:(?!:)\s*)*", head)
                first = head_start + access.end()
                qualifier = "::".join(c for c in classes if c)
                scopes.append((f"{qualifier}::{name}" if qualifier and "::" not in name else name, first))
            i += 1
            continue
        elif c == "}":
            if len(scopes) > 1:
                scopes.pop()
                classes.pop()
            head_start = i + 1
            paren = 0
        i += 1
    return functions


def production_files(root):
    allowed, _ = check_layers.read_table(root)
    for folder in sorted(allowed):
        base = os.path.join(root, folder)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                if name.endswith(SOURCES) and not rel.startswith(SKIPPED) and "/tests/" not in "/" + rel:
                    yield rel


def explained(lines, first_line, window):
    lo = max(0, first_line - 1 - window)
    return any(REASON.search(line) for line in lines[lo:first_line - 1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--function-limit", type=int, default=150)
    parser.add_argument("--file-limit", type=int, default=600)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--files", nargs="+")
    parser.add_argument("--fixture", action="store_true")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    try:
        files = args.files or list(production_files(root))
    except check_layers.Violation as e:
        print(e)
        return 1
    functions = []
    sizes = []
    failures = []
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        lines = text.splitlines()
        sizes.append((len(lines), rel))
        if len(lines) > args.file_limit and not explained(lines, 41, 40):
            failures.append(f"{rel}: {len(lines)} lines (limit {args.file_limit}): split it, or say why in a "
                            f"'// size: ...' comment in its first 40 lines")
        found = scan(text)
        if args.fixture:
            expected = {m.group(1): int(m.group(2)) for m in re.finditer(r"//\s*([\w:~]+): (\d+)\b", text)}
            got = {name: last - first + 1 for name, first, last in found}
            if got != expected:
                failures.append(f"{rel}: found {sorted(got.items())}, the comments say {sorted(expected.items())}")
        for name, first, last in found:
            length = last - first + 1
            functions.append((length, rel, first, name))
            if length > args.function_limit and not explained(lines, first, 3):
                failures.append(f"{rel}:{first}: {name} is {length} lines (limit {args.function_limit}): cut it "
                                f"along its steps, or say why in a '// size: ...' comment just above it")
    functions.sort(key=lambda f: (-f[0], f[1], f[2]))
    sizes.sort(key=lambda s: (-s[0], s[1]))
    over_functions = sum(1 for f in functions if f[0] > args.function_limit)
    over_files = sum(1 for s in sizes if s[0] > args.file_limit)
    print(f"{len(files)} production files, {len(functions)} functions; over the limits: {over_functions} functions "
          f"(> {args.function_limit} lines), {over_files} files (> {args.file_limit} lines)")
    print(f"longest functions:")
    for length, rel, first, name in functions[:args.top]:
        print(f"  {length:5d}  {rel}:{first}  {name}")
    print(f"longest files:")
    for length, rel in sizes[:args.top]:
        print(f"  {length:5d}  {rel}")
    for line in failures:
        print(f"UNEXPLAINED {line}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
