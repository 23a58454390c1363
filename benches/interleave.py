#!/usr/bin/env python3
"""Whole-process wall times of several commands, taken in turn.

hyperfine runs all of one command's runs, then all of the next's; on a VM
whose speed drifts over a minute (this project's 2-core machines do, by a
third), that drift lands on one command and not on the other. Here run i
of every command is taken before run i+1 of any, so the commands share the
drift, and each figure is a median over the same stretch of time.

    benches/interleave.py [--runs N] [--warmup N] NAME=COMMAND ...

A COMMAND is split on spaces (no shell); its stdout and stderr go to
/dev/null, and its exit code is ignored (a search that finds nothing exits
1). Prints one line per command: median, 10th and 90th percentile in ms,
and the median's ratio to the last command's.
"""

import argparse
import os
import statistics
import time


DEVNULL = os.open(os.devnull, os.O_WRONLY)


def run(argv):
    t0 = time.perf_counter_ns()
    pid = os.posix_spawnp(
        argv[0],
        argv,
        os.environ,
        file_actions=[
            (os.POSIX_SPAWN_DUP2, DEVNULL, 1),
            (os.POSIX_SPAWN_DUP2, DEVNULL, 2),
        ],
    )
    os.waitpid(pid, 0)
    return (time.perf_counter_ns() - t0) / 1e6


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("commands", nargs="+", metavar="NAME=COMMAND")
    a = p.parse_args()
    cmds = []
    for c in a.commands:
        name, _, line = c.partition("=")
        cmds.append((name, line.split()))
    times = {name: [] for name, _ in cmds}
    for i in range(a.warmup + a.runs):
        for name, argv in cmds:
            t = run(argv)
            if i >= a.warmup:
                times[name].append(t)
    last = statistics.median(times[cmds[-1][0]])
    for name, _ in cmds:
        ts = sorted(times[name])
        med = statistics.median(ts)
        p10 = ts[len(ts) // 10]
        p90 = ts[len(ts) * 9 // 10]
        print(f"{name}: {med:.2f} ms (p10 {p10:.2f}, p90 {p90:.2f}; {med / last:.2f}x)")


if __name__ == "__main__":
    main()
