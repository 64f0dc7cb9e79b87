#!/usr/bin/env python3
# Runs a command and polls /proc for every process in its tree: each process's peak RSS (VmHWM, the kernel's own
# high-water mark, so a poll only misses growth in the last interval before the process exits) and the largest
# anonymous and shared-memory parts of its RSS seen by a poll (RssAnon, RssShmem: a DGL server keeps its partition
# in /dev/shm, and a trainer that maps it counts the pages it touches again). Standard library only, so both
# /usr/bin/python3 (tessel's ranks under mpirun) and the DGL virtual environment (tools/bench/distdgl_run.py) use it.
# Usage: proc_peak.py --out PEAKS.json [--interval 0.2] -- COMMAND ARGS...   (exits with the command's status)
import argparse
import json
import os
import signal
import subprocess
import sys
import time


def _children(pid):
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return kids


def _status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmHWM", "VmRSS", "RssAnon", "RssShmem"):
                    out[key] = int(value.split()[0]) * 1024
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            out["cmdline"] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None
    return out


def run_watched(cmd, interval=0.2, env=None, timeout=None):
    """Runs cmd (a list) to its end; returns (exit status, [{pid, cmdline, peak_rss_bytes, max_rss_anon_bytes,
    max_rss_shmem_bytes}] for every process of its tree seen by a poll, and always the command's own process, whose
    peak comes from wait4 and so is exact even for a run shorter than a poll). On timeout the process group is
    killed and the status is 124."""
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    try:
        return _watch(proc, cmd, interval, timeout)
    except BaseException:  # stopped (SIGTERM through the caller's handler, Ctrl-C): take the command's tree along
        os.killpg(proc.pid, 9)
        proc.wait()
        raise


def _watch(proc, cmd, interval, timeout):
    seen = {}
    start = time.monotonic()
    while True:
        todo, tree = [proc.pid], []
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo += _children(pid)
        for pid in tree:
            st = _status(pid)
            if not st or "VmHWM" not in st:
                continue
            rec = seen.setdefault(pid, {"pid": pid, "cmdline": st["cmdline"], "peak_rss_bytes": 0,
                                        "max_rss_anon_bytes": 0, "max_rss_shmem_bytes": 0})
            rec["cmdline"] = st["cmdline"]  # after an exec the name changes
            rec["peak_rss_bytes"] = max(rec["peak_rss_bytes"], st["VmHWM"])
            rec["max_rss_anon_bytes"] = max(rec["max_rss_anon_bytes"], st.get("RssAnon", 0))
            rec["max_rss_shmem_bytes"] = max(rec["max_rss_shmem_bytes"], st.get("RssShmem", 0))
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:  # exact for the root process: the kernel's high-water mark at its exit
            rec = seen.setdefault(pid, {"pid": pid, "cmdline": " ".join(cmd), "peak_rss_bytes": 0,
                                        "max_rss_anon_bytes": 0, "max_rss_shmem_bytes": 0})
            rec["peak_rss_bytes"] = max(rec["peak_rss_bytes"], usage.ru_maxrss * 1024)
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        if timeout is not None and time.monotonic() - start > timeout:
            os.killpg(proc.pid, 9)
            proc.wait()
            return 124, list(seen.values())
        time.sleep(interval)
    return proc.returncode, list(seen.values())


def main():
    ap = argparse.ArgumentParser(description="Peak RSS of every process of a command's tree, polled from /proc")
    ap.add_argument("--out", required=True, help="JSON file to write (a list, one object per process)")
    ap.add_argument("--interval", type=float, default=0.2, help="seconds between polls (default 0.2)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        sys.exit("error: no command after --")
    rc, procs = run_watched(cmd, a.interval)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(procs, f)
    os.replace(tmp, a.out)
    sys.exit(rc)


if __name__ == "__main__":
    main()
