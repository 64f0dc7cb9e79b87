#!/usr/bin/env python3
"""Regenerates the keyword tables of docs/python.md from the built extension's declarations, or checks them.

The keywords of tessel.train_gcn, predict_gcn and partition are the options of `tessel train gcn`, `predict gcn`
and `partition`, declared once in C++ (app/*.h) and read here from the module (tessel.GCN_PARAMS, ...), as the
CLI's --help blocks in docs/cli.md are read from the binary (tools/gen_cli_docs.py). Each table sits between

    <!-- BEGIN params: train_gcn -->
    <!-- END params -->

    PYTHONPATH=build/python tools/gen_python_docs.py            # rewrite docs/python.md
    PYTHONPATH=build/python tools/gen_python_docs.py --check    # exit 1 with a diff when a table is stale (ctest)
"""
import argparse
import os
import re
import sys

from doc_blocks import check_or_write, rewrite

BEGIN = re.compile(r"^<!-- BEGIN params: ([a-z_]+) -->$")
END = "<!-- END params -->"


def table(tessel, function):
    from tessel._errors import python_spelling

    declared = {"train_gcn": tessel.GCN_PARAMS, "predict_gcn": tessel.PREDICT_GCN_PARAMS,
                "partition": tessel.PARTITION_PARAMS}
    if function not in declared:
        sys.exit(f"gen_python_docs: no declaration for '{function}' (one of {', '.join(declared)})")
    rows = ["| keyword | default | command line | what it does |", "|---|---|---|---|"]
    for p in declared[function]:
        flag = ", ".join(f"`{f.lstrip('!')}`" for f in p["flag"].split(","))
        choices = f" (one of {', '.join(p['choices'])})" if p.get("choices") else ""
        text = python_spelling(p["help"]).replace("|", "\\|") + choices
        rows.append(f"| `{p['name']}` | `{p['default']!r}` | {flag} | {text} |")
    return "\n".join(rows) + "\n"


def regenerate(doc_text, tessel):
    return rewrite(doc_text, BEGIN, END, lambda function: table(tessel, function), "gen_python_docs")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--doc", default=os.path.join(os.path.dirname(__file__), "..", "docs", "python.md"))
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 with a diff when a table is stale")
    a = ap.parse_args()
    try:
        import numpy  # noqa: F401  (the package needs it; without it the ctest is skipped, as python_tests is)
    except ImportError:
        print("gen_python_docs: NumPy is not installed; skipped", file=sys.stderr)
        return 77
    import tessel

    with open(a.doc, encoding="utf-8") as f:
        old = f.read()
    new, functions = regenerate(old, tessel)
    missing = {"train_gcn", "predict_gcn", "partition"} - set(functions)
    if missing:
        sys.exit(f"gen_python_docs: {a.doc} has no table for: {', '.join(sorted(missing))}")
    return check_or_write(a.doc, old, new, a.check, "gen_python_docs", f"{len(functions)} tables",
                          "PYTHONPATH=BUILD/python tools/gen_python_docs.py")

if __name__ == "__main__":
    sys.exit(main())
