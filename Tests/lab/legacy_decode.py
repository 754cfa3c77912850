#!/usr/bin/env python3
"""legacy_decode.py - the lab's independent decoder of the legacy (Start/End) format, PROTOCOL 4.1.

    legacy_decode.py GATTTOOL_LOG OUT_FILE [--tiles EXPECTED_FILE]

Reads what `gatttool --listen` printed ("Notification handle = 0x0009 value: 53 74 61 72 74 ...", what
Tests/lab/nus_peripheral.py printed: "write value: 53 74 ...", or Tests/lab/bleak_central.py: "notification 12
537461727420..."), turns each
value from hex back into bytes and reassembles the seeds' framing: a value beginning with ASCII "Start" opens a
message, one beginning with "End" closes it, the bytes after a marker and every other value are data. Writes
the first whole message to OUT_FILE and prints a summary; exit 0 only when exactly one whole message arrived
and nothing was outside a message. Written apart from Sources/Framing on purpose: it is the other side's view.

With --tiles EXPECTED_FILE (random contents) it checks delivery without assuming order: the values, with their
"Start"/"End" markers taken off, must be exactly the pieces of EXPECTED_FILE, each once, together covering it
(found by where each piece occurs in it); it says whether they also came in order, and exits 0 when they tile
the file. For a receiver whose notifications may be reordered by bluetoothd's several ATT bearers (EATT).
"""
import re
import sys

# gatttool's notification lines, or Tests/lab/nus_peripheral.py's "write value: ..." lines.
VALUE = re.compile(r"(?:(?:Notification|Indication) handle = (0x[0-9a-fA-F]+)|write) value: ((?:[0-9a-fA-F]{2} ?)*)")
# Tests/lab/bleak_central.py's lines: "notification LENGTH HEX".
BLEAK = re.compile(r"^notification \d+ ()([0-9a-f]*)\s*$")


def tiles(pieces, expected):
    """True when the pieces, each found at its offset in `expected`, cover it once without gaps; the order."""
    placed = []
    for piece in pieces:
        offset = expected.find(piece) if piece else -1
        if offset < 0:
            return False, False
        placed.append((offset, len(piece)))
    end = 0
    for offset, length in sorted(placed):
        if offset != end:
            return False, False
        end += length
    return end == len(expected), placed == sorted(placed)


def main():
    if len(sys.argv) == 5 and sys.argv[3] == "--tiles":
        with open(sys.argv[4], "rb") as expected_file:
            expected = expected_file.read()
        pieces = []
        with open(sys.argv[1], errors="replace") as log:
            for line in log:
                match = VALUE.search(line) or BLEAK.match(line)
                if match:
                    value = bytes.fromhex(match.group(2).replace(" ", ""))
                    for marker in (b"Start", b"End"):
                        if value.startswith(marker):
                            value = value[len(marker):]
                            break
                    pieces.append(value)
        covered, in_order = tiles(pieces, expected)
        print(f"legacy_decode: {len(pieces)} values {'tile' if covered else 'do NOT tile'} the {len(expected)} bytes"
              f"{', in order' if in_order else (', reordered' if covered else '')}")
        return 0 if covered else 1
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    messages, current, values, outside, interrupted = [], None, 0, 0, 0
    with open(sys.argv[1], errors="replace") as log:
        for line in log:
            match = VALUE.search(line) or BLEAK.match(line)
            if not match:
                continue
            value = bytes.fromhex(match.group(2).replace(" ", ""))
            values += 1
            if value.startswith(b"Start"):
                if current is not None:
                    interrupted += 1
                current = bytearray(value[5:])
            elif current is None:
                outside += 1
            elif value.startswith(b"End"):
                current += value[3:]
                messages.append(bytes(current))
                current = None
            else:
                current += value
    if messages:
        with open(sys.argv[2], "wb") as out:
            out.write(messages[0])
    print(f"legacy_decode: {values} values, {len(messages)} whole messages "
          f"({', '.join(str(len(m)) for m in messages) or 'none'} bytes), {outside} outside a message, "
          f"{interrupted} interrupted, {'one still open' if current is not None else 'none open'}")
    return 0 if len(messages) == 1 and outside == 0 and interrupted == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
