"""tessel.Error: every error of the engine (bad data, bad parameters, files) as one Python exception, with the
command line's option names in its message spelled as this package's keyword arguments."""

import functools
import json
import re


class Error(ValueError):
    """An error reported by tessel: the message names the file, the line or the argument, and the fix.

    A subclass of ValueError, since nearly every error is about the input (data, parameters, files), and
    scikit-learn's conventions expect ValueError for bad input.
    """


# The engine's messages name the options of the `tessel` command ("pass --force to replace it"); a Python caller
# gave keyword arguments. Each option of the command that the Python API has, spelled as the API spells it: the
# options come from their one declaration (app/*.h, with their flags); listed here are only the phrases spelled
# differently in Python. An option the Python API does not have keeps its command-line spelling.
_OPTIONS = {
    "--random-split 0.6,0.2,0.2": "random_split=(0.6, 0.2, 0.2)",
    "--random-split": "random_split",
    "--device cuda": 'device="cuda"',
    "--working-set": "working_set",
}


@functools.lru_cache(maxsize=None)
def _spellings():
    """(pattern, {flag: keyword}, switches): every option above and every declared option's flags ("--weight-decay"
    -> weight_decay, "--no-overlap" -> overlap=False), longest first so that "--device cuda" wins over "--device";
    switches: the keywords that are booleans, spelled as the keyword set ("--force" -> "force=True")."""
    from . import _tessel  # imported on first use: this module is loaded while _tessel initialises

    names, switches = {}, set()
    declared = [p for params in (_tessel.gcn_params(), _tessel.predict_gcn_params(), _tessel.partition_params())
                for p in json.loads(params)]
    for p in declared:
        for flag in p["flag"].split(","):
            if flag.startswith("!--"):
                names[flag[1:]] = p["name"] + "=False"
            elif flag.startswith("--"):
                names[flag] = p["name"]
                if isinstance(p["default"], bool):
                    switches.add(p["name"])
    names.update(_OPTIONS)
    alternatives = "|".join(re.escape(f) for f in sorted(names, key=len, reverse=True))
    pattern = r"(?<![\w-])((?:pass|add) )?(" + alternatives + r")( [A-Z][A-Z0-9_]*\b)?(?![\w-])"
    return re.compile(pattern), names, switches


def _spell(match, names, switches):
    verb, flag, placeholder = match.group(1) or "", match.group(2), match.group(3)
    name = names[flag]
    if placeholder:  # "add --batch-size N" -> "add batch_size=N"
        return f"{verb}{name}={placeholder.strip()}"
    if name in switches:  # "pass --force" -> "pass force=True"
        return f"{verb}{name}=True"
    return verb + name


def python_spelling(message):
    """`message` with the command line's option names spelled as this package's keyword arguments
    ("pass --force" -> "pass force=True", "--weight-decay" -> "weight_decay"). The extension module's error
    translator passes every engine message through it."""
    pattern, names, switches = _spellings()
    # A command quoted in backticks (`tessel convert --split 0.6,0.2,0.2`) is the command line's and stays so.
    parts = message.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = pattern.sub(lambda m: _spell(m, names, switches), parts[i])
    return "`".join(parts)
