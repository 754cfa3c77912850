#!/usr/bin/env python3
"""bumble_central.py - a phone as the central: Google's Bumble (PyPI `bumble`) on its own HCI, for the lab.

Bumble is a whole BLE host in Python (HCI, L2CAP, ATT, GATT, SMP): it opens a controller with the HCI user
channel (`hci-socket:N`; the kernel's own host steps aside, so hciN must be powered off first) and behaves like
a phone's stack, not like BlueZ. What this proves about msgpipe: that its GATT server and its notifying
peripheral work with a host it shares no code with, from a random static address (as phones use), at the ATT
MTU a phone asks for (23, 185, 517), in the seeds' plain formats (docs/PROTOCOL.md section 4).

    bumble_central.py --transport hci-socket:3 --to NAME|ADDRESS --mtu 185
                      --service FFF0 --write FFF2 --notify FFF1 --format legacy|eom|lines
                      (--send FILE | --receive OUT) [--timeout S] [--json]

--send FILE: subscribes to NOTIFY (as a phone app does before it writes), then writes FILE, framed, to WRITE as
Write Commands (write without response) in one burst; the values are ATT_MTU-3 bytes (at most --max-value, 512:
the longest attribute value, which phones keep to), paced only by Bumble's
own ACL flow control (Number of Completed Packets), as a phone's host paces them by its controller's buffers.
--receive OUT: subscribes to NOTIFY and decodes the notified values until one whole message arrived; writes it
to OUT.

Connects from a random static address (own address type random). --to ADDRESS connects to that public
address; --to NAME scans (active) for the advertised name first. --at EPOCH: sends its LE Create Connection
at that wall-clock time (seconds since 1970), after Bumble is up, so two peers connect at the same instant.

Output, one line each (the lab parses it):
    own address ADDRESS (random static)
    found NAME at ADDRESS after S s
    connected to ADDRESS after S s
    ATT_MTU M (asked for N)
    subscribed NOTIFY (notify|indicate)
    wrote V values, B bytes in S s (legacy|eom|lines)
    received V values, message B bytes in S s after subscribing (first value after S s)
    done: MTU M, B bytes, S s
With --json, last, one JSON object (what the lab judges; a field is absent when it did not get that far):
    {"own_address", "connected_to", "mtu", "asked_mtu", "values", "bytes", "seconds"}
Exit status 0 when done, 1 on a timeout or a missing service/characteristic, 2 on a Bumble or HCI error.
"""
import argparse
import asyncio
import json
import socket
import sys
import time

try:
    from bumble import hci
    from bumble.core import UUID, AdvertisingData
    from bumble.device import Device, Peer
    from bumble.transport import open_transport
except ImportError as error:  # the lab skips its Bumble checks then; say why
    print(f"bumble is not importable: {error}", flush=True)
    sys.exit(3)


def say(line: str) -> None:
    print(line, flush=True)


# What happened, for --json (filled in as it happens, so a failed run reports how far it came).
REPORT = {}


def report(**fields) -> None:
    REPORT.update(fields)


def run_main(coroutine, args: argparse.Namespace) -> int:
    """Runs the peer to its exit status; with --json the report goes out last, whatever happened."""
    try:
        status = asyncio.run(coroutine)
    except Exception as error:  # Bumble's and HCI errors: print them for the lab's log
        say(f"error: {type(error).__name__}: {error}")
        status = 2
    if args.json:
        say(json.dumps(REPORT))
    return status


def uuid_of(text: str) -> UUID:
    """16-bit ("FFF0") or 128-bit UUIDs, as msgpipe's --profile custom:... takes them."""
    return UUID.from_16_bits(int(text, 16)) if len(text) == 4 else UUID(text)


# The seeds' plain formats (docs/PROTOCOL.md 4.1-4.3), encoded here apart from Sources/Framing: P = value size.
def legacy_values(data: bytes, p: int) -> list:
    """Start+first chunk (P-5), middle chunks (P), End+rest once it fits in P-3. A middle chunk never begins
    with a marker: a chunk that would end right before "Start"/"End" bytes that begin a middle chunk ends one
    byte earlier."""
    values, pos, first = [], 0, True
    while True:
        rest = len(data) - pos
        if not first and rest <= p - 3:
            values.append(b"End" + data[pos:])
            return values
        take = min(p - 5 if first else p, rest)
        nxt = pos + take
        if len(data) - nxt > p - 3 and (data.startswith(b"Start", nxt) or data.startswith(b"End", nxt)):
            take -= 1
        values.append((b"Start" if first else b"") + data[pos:pos + take])
        pos += take
        first = False


def eom_values(data: bytes, p: int) -> list:
    """Chunks of P, then exactly "EOM"; a chunk that would equal "EOM" goes as "EO" and "M" starts the next."""
    values, pos = [], 0
    while pos < len(data):
        chunk = data[pos:pos + p]
        if chunk == b"EOM":
            chunk = b"EO"
        values.append(chunk)
        pos += len(chunk)
    return values + [b"EOM"]


def lines_values(data: bytes, p: int) -> list:
    """The payload and a newline, cut into values of P bytes (Nordic UART style)."""
    if b"\n" in data:
        raise ValueError("the file contains a newline at byte %d: lines cannot carry it" % data.index(b"\n"))
    framed = data + b"\n"
    return [framed[i:i + p] for i in range(0, len(framed), p)]


ENCODERS = {"legacy": legacy_values, "eom": eom_values, "lines": lines_values}


class Decoder:
    """The receiving side of the three formats; `message` is set once one whole message arrived."""

    def __init__(self, fmt: str):
        self.fmt, self.current, self.message, self.values, self.outside = fmt, None, None, 0, 0
        if fmt != "legacy":
            self.current = bytearray()

    def feed(self, value: bytes) -> None:
        self.values += 1
        if self.message is not None:
            return
        if self.fmt == "legacy":
            if value.startswith(b"Start"):
                self.current = bytearray(value[5:])
            elif self.current is None:
                self.outside += 1
            elif value.startswith(b"End"):
                self.message = bytes(self.current + value[3:])
            else:
                self.current += value
        elif self.fmt == "eom":
            if value == b"EOM":
                self.message = bytes(self.current)
            else:
                self.current += value
        else:
            self.current += value
            if b"\n" in self.current:
                self.message = bytes(self.current[:self.current.index(b"\n")])


def big_receive_buffer(source, size: int = 8 << 20) -> None:
    """Gives the HCI user channel socket an 8 MiB receive buffer. The kernel drops what a full socket cannot take,
    and in the lab the peer's host hands ACL data to the emulated air as fast as btvirt forwards it (no radio
    paces it): with the default ~200 KB a 64 KiB burst of notifications at ATT_MTU 517 lost 53 of 128 values
    before this Python host read them. A phone's controller paces them by connection events."""
    sock = getattr(source, "socket", None)
    if sock is None:
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), size)  # root: past rmem_max
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)


async def find_by_name(device: Device, name: str, timeout: float) -> hci.Address:
    found = asyncio.get_running_loop().create_future()

    def on_advertisement(advertisement):
        names = (advertisement.data.get(AdvertisingData.COMPLETE_LOCAL_NAME),
                 advertisement.data.get(AdvertisingData.SHORTENED_LOCAL_NAME))
        if name in names and advertisement.is_connectable and not found.done():
            found.set_result(advertisement.address)

    device.on("advertisement", on_advertisement)
    await device.start_scanning(active=True, filter_duplicates=False)
    try:
        return await asyncio.wait_for(found, timeout)
    finally:
        device.remove_listener("advertisement", on_advertisement)
        await device.stop_scanning()


async def connect_to(device: Device, args: argparse.Namespace, t0: float):
    """Connects from the random static address to --to: a public address, or a name found by an active scan."""
    if ":" in args.to:
        target = hci.Address(args.to, hci.Address.PUBLIC_DEVICE_ADDRESS)
    else:
        target = await find_by_name(device, args.to, args.scan_timeout)
        say(f"found {args.to} at {target} after {time.monotonic() - t0:.2f} s")
    if getattr(args, "at", None) is not None:  # connect at an agreed wall-clock second (overlapping connects)
        await asyncio.sleep(max(0.0, args.at - time.time()))
    connection = await device.connect(target, own_address_type=hci.OwnAddressType.RANDOM,
                                      timeout=args.connect_timeout)
    say(f"connected to {connection.peer_address} after {time.monotonic() - t0:.2f} s")
    report(connected_to=connection.peer_address.to_string(False))
    return connection


async def pace(device: Device, connection, limit: int) -> None:
    """Waits while more than LIMIT ACL packets are queued or in flight: the host queue itself is unbounded."""
    queue = device.host.get_data_packet_queue(connection.handle)
    while queue is not None and queue.pending > limit:
        flowed = asyncio.Event()
        queue.once("flow", flowed.set)
        try:
            await asyncio.wait_for(flowed.wait(), 0.05)
        except asyncio.TimeoutError:
            pass


async def run(args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    async with await open_transport(args.transport) as (source, sink):
        big_receive_buffer(source)
        # A random static address (top two bits 11), as a phone's own address would be random.
        device = Device.with_hci("bumble-central", hci.Address.generate_static_address(), source, sink)
        await device.power_on()
        say(f"own address {device.random_address} (random static)")
        report(own_address=device.random_address.to_string(False))
        connection = await connect_to(device, args, t0)
        disconnected = asyncio.Event()
        connection.on("disconnection", lambda *_: disconnected.set())
        peer = Peer(connection)
        mtu = await peer.request_mtu(args.mtu)
        say(f"ATT_MTU {mtu} (asked for {args.mtu})")
        report(mtu=mtu, asked_mtu=args.mtu)
        services = await peer.discover_service(uuid_of(args.service))
        if not services:
            say(f"no service {args.service}")
            return 1
        await services[0].discover_characteristics()
        writes = services[0].get_characteristics_by_uuid(uuid_of(args.write))
        notifies = services[0].get_characteristics_by_uuid(uuid_of(args.notify))
        if not writes or not notifies:
            say(f"service {args.service} lacks {args.write} or {args.notify}")
            return 1
        decoder = Decoder(args.format)
        arrived = asyncio.Event()
        t_first = []

        def on_value(value: bytes) -> None:
            if not t_first:
                t_first.append(time.monotonic())
            decoder.feed(bytes(value))
            if decoder.message is not None:
                arrived.set()

        t_subscribed = time.monotonic()  # the CCCD write: the peer may notify before its response is in
        await peer.subscribe(notifies[0], on_value)
        say(f"subscribed {args.notify} (notify)")
        if args.send:
            with open(args.send, "rb") as f:
                data = f.read()
            # A value is ATT_MTU-3 bytes but at most 512, the longest attribute value (Core Vol 3 Part F 3.2.9),
            # which phones keep to (Android refuses longer writes): at ATT_MTU 517 a 514-byte Write Command is
            # beyond the spec and a server drops it (Write Commands get no error back).
            values = ENCODERS[args.format](data, min(mtu - 3, args.max_value))
            t1 = time.monotonic()
            for value in values:
                await writes[0].write_value(value, with_response=False)
                await pace(device, connection, 8)
            queue = device.host.get_data_packet_queue(connection.handle)
            while queue is not None and queue.pending > 0 and not disconnected.is_set():
                await asyncio.sleep(0.01)
            secs = time.monotonic() - t1
            say(f"wrote {len(values)} values, {len(data)} bytes in {secs:.2f} s ({args.format})")
            # The last Write Command is in the peer's controller; give its host a moment before leaving.
            await asyncio.sleep(args.linger)
            say(f"done: MTU {mtu}, {len(data)} bytes, {secs:.2f} s")
            report(values=len(values), bytes=len(data), seconds=round(secs, 3))
        else:
            try:
                await asyncio.wait_for(arrived.wait(), args.timeout)
            except asyncio.TimeoutError:
                say(f"timeout: {decoder.values} values, no whole message after {args.timeout} s")
                return 1
            # From the subscription (the peer may start at once) to the whole message; the first value came
            # `first` s after the subscription.
            secs = time.monotonic() - t_subscribed
            with open(args.receive, "wb") as f:
                f.write(decoder.message)
            say(f"received {decoder.values} values, message {len(decoder.message)} bytes in {secs:.2f} s"
                f" after subscribing (first value after {t_first[0] - t_subscribed:.2f} s)"
                + (f", {decoder.outside} values outside a message" if decoder.outside else ""))
            say(f"done: MTU {mtu}, {len(decoder.message)} bytes, {secs:.2f} s")
            report(values=decoder.values, bytes=len(decoder.message), seconds=round(secs, 3))
        if not disconnected.is_set():
            try:
                await connection.disconnect()
            except Exception as error:  # the peer may have left first
                say(f"disconnect: {error}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--transport", default="hci-socket:1")
    parser.add_argument("--to", required=True, help="advertised name, or a public address")
    parser.add_argument("--mtu", type=int, default=517)
    parser.add_argument("--service", default="FFF0")
    parser.add_argument("--write", default="FFF2")
    parser.add_argument("--notify", default="FFF1")
    parser.add_argument("--format", choices=sorted(ENCODERS), default="legacy")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--send", metavar="FILE")
    what.add_argument("--receive", metavar="OUT")
    parser.add_argument("--timeout", type=float, default=120, help="seconds for --receive's message")
    parser.add_argument("--scan-timeout", type=float, default=30)
    parser.add_argument("--connect-timeout", type=float, default=30)
    parser.add_argument("--max-value", type=int, default=512, help="largest value written (default 512)")
    parser.add_argument("--linger", type=float, default=1.0, help="seconds after the last write")
    parser.add_argument("--at", type=float, help="wall-clock time (epoch seconds) to connect at")
    parser.add_argument("--json", action="store_true", help="end with one JSON line: what happened")
    args = parser.parse_args()
    return run_main(asyncio.wait_for(run(args), args.timeout + 60), args)


if __name__ == "__main__":
    sys.exit(main())
