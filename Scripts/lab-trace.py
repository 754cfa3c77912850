#!/usr/bin/env python3
"""lab-trace.py TRACE [N]: where a lab run's seconds went, from LAB_TRACE=1's OUT/trace.txt.

Each line of the trace is `+ EPOCH PID FILE:LINE FUNCTION COMMAND`. The suite's own shell (the first line with one `+`)
spends the time until its next line on the line before it, or, inside a helper function (wait_for, no_links...),
on the script line that called it. This prints the N (default 25) lines that took the most seconds in total,
with how often they ran, then the total. Background subshells' lines are left out: their time overlaps the
suite's.
"""
import collections
import re
import sys

line_re = re.compile(r"^\++ (\d+\.\d+) (\d+) (\S+) (\S+) ?(.*)$")
path = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
main_pid = None
previous = None  # (time, site, command)
caller = "?"  # the script line that called the helper running now
seconds = collections.Counter()
runs = collections.Counter()
example = {}
first = last = None
with open(path, errors="replace") as trace:
    for raw in trace:
        m = line_re.match(raw.rstrip("\n"))
        if not m:
            continue
        t, pid, site, function, command = float(m.group(1)), m.group(2), m.group(3), m.group(4), m.group(5)
        if main_pid is None and raw.startswith("+ "):  # "++": a command substitution's subshell
            main_pid, first = pid, t
        if pid != main_pid:
            continue
        if function in ("main", "source"):
            caller = site
        else:
            site, command = f"{caller} {function}", command
        if previous is not None:
            seconds[previous[1]] += t - previous[0]
            runs[previous[1]] += 1
            example.setdefault(previous[1], previous[2])
        previous = (t, site, command)
        last = t
if first is None:
    sys.exit(f"{path}: no trace lines")
for site, secs in seconds.most_common(top):
    print(f"{secs:8.1f} s {runs[site]:5d}x  {site:22s} {example[site][:90]}")
print(f"{last - first:8.1f} s in all")
