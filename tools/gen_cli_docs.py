#!/usr/bin/env python3
"""Regenerates the `--help` blocks of docs/cli.md from the built `tessel` binary, or checks that they are current.

Each block sits between two marker lines:

    <!-- BEGIN help: train gcn -->
    ```
    (the output of `tessel train gcn --help`, written by this script)
    ```
    <!-- END help -->

so the options, defaults and help texts in the reference are the ones the binary declares (app/'s options structs, registered in tools/commands.cc), and
nothing is written twice by hand. The prose around the blocks stays hand-written.

    tools/gen_cli_docs.py --tessel build/tools/tessel            # rewrite docs/cli.md
    tools/gen_cli_docs.py --tessel build/tools/tessel --check    # exit 1 with a diff when a block is stale (ctest)
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

from doc_blocks import check_or_write, rewrite

BEGIN = re.compile(r"^<!-- BEGIN help: ([a-z ]+) -->$")
END = "<!-- END help -->"


def help_text(tessel, command):
    # Run as plain `tessel` (a link on PATH), so the usage lines do not depend on where the build is.
    link_dir = os.path.join(tempfile.gettempdir(), f"tessel-gen-cli-docs-{os.getpid()}")
    os.makedirs(link_dir, exist_ok=True)
    link = os.path.join(link_dir, "tessel")
    if not os.path.lexists(link):
        os.symlink(os.path.abspath(tessel), link)
    args = ["tessel"] + command.split() + ["--help"]
    env = dict(os.environ, COLUMNS="120", NO_COLOR="1", PATH=link_dir + os.pathsep + os.environ.get("PATH", ""))
    out = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        sys.exit(f"gen_cli_docs: `{' '.join(args)}` exited with {out.returncode}: {out.stderr.strip()}")
    text = "\n".join(line.rstrip() for line in out.stdout.strip("\n").splitlines())
    return text + "\n"


def regenerate(doc_text, tessel):
    return rewrite(doc_text, BEGIN, END, lambda command: "```\n" + help_text(tessel, command) + "```\n",
                   "gen_cli_docs")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", required=True, help="the built tessel binary")
    ap.add_argument("--doc", default=os.path.join(os.path.dirname(__file__), "..", "docs", "cli.md"))
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 with a diff when a block is stale")
    a = ap.parse_args()
    with open(a.doc, encoding="utf-8") as f:
        old = f.read()
    new, commands = regenerate(old, a.tessel)
    if not commands:
        sys.exit(f"gen_cli_docs: {a.doc} has no '<!-- BEGIN help: ... -->' blocks")
    # Every subcommand the binary lists must have its block.
    top = help_text(a.tessel, "")
    listed = []
    in_subcommands = False
    for line in top.splitlines():
        if line.startswith("Subcommands:"):
            in_subcommands = True
            continue
        if in_subcommands:
            m = re.match(r"^  ([a-z]+)\s", line)
            if m:
                listed.append(m.group(1))
            elif line.strip() == "":
                in_subcommands = False
    missing = []
    for sub in listed:
        sub_help = help_text(a.tessel, sub)
        nested = [m.group(1) for m in re.finditer(r"^  ([a-z]+)\s", sub_help.split("Subcommands:")[1], re.M)] \
            if "Subcommands:" in sub_help else []
        for name in ([f"{sub} {n}" for n in nested] or [sub]):
            if name not in commands:
                missing.append(name)
    if missing:
        sys.exit(f"gen_cli_docs: {a.doc} has no help block for: {', '.join(missing)} (add "
                 f"'<!-- BEGIN help: NAME -->' and '{END}' lines in its section)")
    return check_or_write(a.doc, old, new, a.check, "gen_cli_docs", f"{len(commands)} help blocks",
                          "tools/gen_cli_docs.py --tessel BUILD/tools/tessel")

if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(os.path.join(tempfile.gettempdir(), f"tessel-gen-cli-docs-{os.getpid()}"), ignore_errors=True)
