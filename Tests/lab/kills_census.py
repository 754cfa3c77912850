#!/usr/bin/env python3
"""kills_census.py - the data behind the verdicts of Scripts/lab-kills.sh (kills over Bluetooth).

    kills_census.py make DIR COUNT SEED           # writes the batch DIR/in00 ... (COUNT files, distinct contents)
    kills_census.py count INPUTS OUT_DIR [--send-json FILE]... [--link gatt|l2cap] [--spool DIR]

`make`: message 0 is 1 byte, message 1 is 7 bytes, two are 256 KiB and the others log-uniform from 1 byte to
256 KiB (sizes from SEED); the contents are random, and no two messages are alike. Prints the total bytes.

`count`: which of the messages in INPUTS (sha256 of each file) OUT_DIR holds, and how often. Names starting with
'.' are listen's own (its journal, lock, .part files), not messages. Prints one fact a line for the check's
patterns: "messages N", "lost N", "duplicated N", "foreign N", then with --send-json (send's --json lines, of one
run or several) "acknowledged N of M" (the `index` of listen-kill runs' lines, each once) or, with --spool, "left in
spool N" (its *.msg) and, to read, not to judge, "spool ids printed N of M" (the `spool_id`s of every run: a send
killed after a message left the spool and before it printed the line never prints it); with --link,
"link L on N of M lines". A line cut short by a kill is counted apart ("unreadable json lines N"), not judged.
Then the details of anything lost, duplicated or foreign. Exit status 0 always: the patterns judge.
"""
import hashlib
import json
import math
import os
import random
import sys


def make(directory, count, seed):
    rng = random.Random(seed)
    largest = 256 * 1024
    others = [round(math.exp(rng.uniform(0, math.log(largest)))) for _ in range(count - 4)] + [largest, largest]
    rng.shuffle(others)
    sizes = [1, 7] + others
    os.makedirs(directory, exist_ok=True)
    seen = set()
    for index, size in enumerate(sizes):
        while True:
            data = os.urandom(size)
            digest = hashlib.sha256(data).hexdigest()
            if digest not in seen:
                break
        seen.add(digest)
        with open(os.path.join(directory, "in%02d" % index), "wb") as f:
            f.write(data)
    print(sum(sizes))


def digest_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def count(arguments):
    inputs, out = arguments[0], arguments[1]
    send_json, link, spool = [], None, None
    rest = arguments[2:]
    while rest:
        option, value, rest = rest[0], rest[1], rest[2:]
        if option == "--send-json":
            send_json.append(value)
        elif option == "--link":
            link = value
        elif option == "--spool":
            spool = value
    names = sorted(n for n in os.listdir(inputs) if n.startswith("in"))
    wanted = {digest_of(os.path.join(inputs, n)): n for n in names}
    copies = {n: 0 for n in names}
    foreign = []
    for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        if name.startswith("."):
            continue
        path = os.path.join(out, name)
        digest = digest_of(path)
        if digest in wanted:
            copies[wanted[digest]] += 1
        else:
            foreign.append("%s (%d B)" % (name, os.path.getsize(path)))
    lost = [n for n in names if copies[n] == 0]
    duplicated = ["%s x%d" % (n, copies[n]) for n in names if copies[n] > 1]
    print("messages %d" % len(names))
    print("lost %d" % len(lost))
    print("duplicated %d" % len(duplicated))
    print("foreign %d" % len(foreign))
    if send_json:
        lines, unreadable = [], 0
        for path in send_json:
            with open(path, errors="replace") as f:
                for text in f:
                    if not text.strip():
                        continue
                    try:
                        lines.append(json.loads(text))
                    except ValueError:
                        unreadable += 1
        if spool is None:
            indexes = [line.get("index") for line in lines]
            once = sorted(i for i in set(indexes) if indexes.count(i) == 1 and i in range(1, len(names) + 1))
            print("acknowledged %d of %d" % (len(once), len(names)) +
                  ("" if len(indexes) == len(once) else " (%d lines)" % len(indexes)))
        else:
            ids = {line.get("spool_id") for line in lines}
            left = [n for n in os.listdir(spool) if n.endswith(".msg")] if os.path.isdir(spool) else []
            print("left in spool %d" % len(left))
            print("spool ids printed %d of %d" % (len([i for i in ids if i is not None]), len(names)))
        if link is not None:
            print("link %s on %d of %d lines" % (link, sum(1 for line in lines if line.get("link") == link), len(lines)))
        if unreadable:
            print("unreadable json lines %d" % unreadable)
    for label, items in (("lost", lost), ("duplicated", duplicated), ("foreign", foreign)):
        if items:
            print("  %s: %s" % (label, ", ".join(items)))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "count":
        count(sys.argv[2:])
    else:
        sys.exit(__doc__)
