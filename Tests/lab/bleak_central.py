#!/usr/bin/env python3
"""bleak_central.py - an independent BLE central for the lab's stock-box checks (docs/LAB.md).

bleak (PyPI) drives bluetoothd over the system D-Bus, as a Python app on a stock Linux box would: it scans on
ADAPTER for NAME, connects, subscribes to TX, then writes COUNT packets to RX with write-without-response
(WriteValue type "command") and prints every notification it receives, until it has NOTIFICATIONS of them or
TIMEOUT seconds passed. It opens with one Write Request of OPENING (ff 00 03), see run(). msgpipe wrote none of this, so it checks msgpipe's BlueZ peripheral from outside.
With --hold S it writes nothing: it connects, subscribes, holds the link S seconds and disconnects (a second
central that takes the peripheral's turn while another waits).

Each written packet describes itself, so the receiver can tell whether it arrived whole:
    byte 0 = index (0..COUNT-1), bytes 1-2 = total length (big endian), byte 3+k = (index + k) & 0xff
Lengths cycle through 3, 20, 100, min(ATT_MTU-5, 510), min(ATT_MTU-3, 510) (the largest a Write Command
carries; bluetoothd before 5.69 drops values over 510 bytes).

Output, one line each (the caller parses it):
    found ADDRESS after S s
    connect attempt N failed: ERROR   (retried, at most 3 tries)
    connect attempt N: the peer has no characteristics RX / TX (services [...])   (removed, found again, retried)
    connected ATT_MTU M after S s
    subscribed TX
    held S s, connected True|False    (--hold)
    wrote N packets (SIZES) in S s
    notification LENGTH HEX
    done: N notifications
Exit status 0 when NOTIFICATIONS arrived, 1 when not (timeout), 2 on any bleak/BlueZ error (printed).
"""
import argparse
import asyncio
import sys
import time

try:
    from bleak import BleakClient, BleakScanner
except ImportError as error:  # the lab skips its bleak checks then; say why
    print(f"bleak is not importable: {error}", flush=True)
    sys.exit(3)

MSGPIPE_SERVICE = "4d500001-8c5d-4e2b-9f1a-6d7367706970"
MSGPIPE_RX = "4d500002-8c5d-4e2b-9f1a-6d7367706970"
MSGPIPE_TX = "4d500003-8c5d-4e2b-9f1a-6d7367706970"


OPENING = bytes([0xFF, 0x00, 0x03])  # written first, with a Write Request
CONNECT_TRIES = 3


def packet(index: int, length: int) -> bytes:
    head = bytes([index & 0xFF, (length >> 8) & 0xFF, length & 0xFF])
    return head + bytes((index + k) & 0xFF for k in range(length - 3))


def say(line: str) -> None:
    print(line, flush=True)


async def run(args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    device = await BleakScanner.find_device_by_name(args.name, timeout=args.scan_timeout,
                                                    bluez={"adapter": args.adapter})
    if device is None:
        say(f"not found: no advertiser named {args.name} on {args.adapter} within {args.scan_timeout} s")
        return 1
    say(f"found {device.address} after {time.monotonic() - t0:.2f} s")
    received: list[bytes] = []
    enough = asyncio.Event()

    def on_notification(_characteristic, data: bytearray) -> None:
        received.append(bytes(data))
        say(f"notification {len(data)} {bytes(data).hex()}")
        if len(received) >= args.notifications:
            enough.set()

    # bluetoothd 5.66 (EATT on) now and then logs "Received unexpected ATT response" on an EATT channel and drops
    # the link during service discovery ("failed to discover services, device disconnected"), and once (in a CI
    # run) resolved the services of a peer it had met before without msgpipe's characteristics. Retry, as
    # applications on bleak do (bleak-retry-connector), at most CONNECT_TRIES times; before a retry after missing
    # characteristics, remove the device (Adapter1.RemoveDevice, bleak's unpair) so that bluetoothd forgets the
    # database it cached and discovers it again, then scan for the peer again.
    for attempt in range(1, CONNECT_TRIES + 1):
        t1 = time.monotonic()
        client = BleakClient(device, timeout=args.connect_timeout, bluez={"adapter": args.adapter})
        try:
            await client.connect()
        except Exception as error:  # BleakError, asyncio.TimeoutError, D-Bus errors
            say(f"connect attempt {attempt} failed: {type(error).__name__}: {error}")
            if attempt == CONNECT_TRIES:
                raise
            await asyncio.sleep(1.0 * attempt)
            continue
        rx = client.services.get_characteristic(args.rx)
        tx = client.services.get_characteristic(args.tx)
        if rx is not None and tx is not None:
            break
        seen = sorted(service.uuid for service in client.services)
        say(f"connect attempt {attempt}: the peer has no characteristics {args.rx} / {args.tx} (services {seen})")
        await client.disconnect()
        if attempt == CONNECT_TRIES:
            return 2
        await client.unpair()
        device = await BleakScanner.find_device_by_name(args.name, timeout=args.scan_timeout,
                                                        bluez={"adapter": args.adapter})
        if device is None:
            say(f"not found again: no advertiser named {args.name} on {args.adapter} within {args.scan_timeout} s")
            return 1
    try:
        # BlueZ 5.62+ reports the ATT MTU as a characteristic property; older ones only through an acquire.
        mtu = rx.obj[1].get("MTU") if hasattr(rx, "obj") else None
        if not mtu:
            await client._backend._acquire_mtu()  # bleak's documented way (examples/mtu_size.py)
            mtu = client.mtu_size
        say(f"connected ATT_MTU {mtu} after {time.monotonic() - t1:.2f} s")
        await client.start_notify(tx, on_notification, bluez={"use_start_notify": not args.acquire_notify})
        say("subscribed TX")
        if args.hold is not None:
            await asyncio.sleep(args.hold)
            say(f"held {args.hold:.1f} s, connected {client.is_connected}")
            return 0 if client.is_connected else 1
        # ATT_MTU-3 is the most a Write Command carries. BlueZ before 5.69 checks handle + value against the
        # 512-byte attribute limit (src/shared/gatt-server.c write_cb: check_length(length, 0)) and drops a
        # Write Command with a value over 510 bytes without a word: 510 is the most a stock Debian 12 box takes.
        sizes = [3, 20, 100, min(mtu - 5, 510), min(mtu - 3, 510)]
        # The first write is a Write Request: bluetoothd answers it only once our AcquireWrite returned. Write
        # Commands that arrive while AcquireWrite is in flight are queued by bluetoothd 5.66 with a pointer into
        # its ATT receive buffer (src/gatt-database.c pending_write_new) and later delivered with the bytes of
        # whatever PDU came last: right lengths, wrong contents. Opening with a request avoids that.
        await client.write_gatt_char(rx, OPENING, response=True)
        say("opened with a write request")
        t2 = time.monotonic()
        for index in range(args.count):
            await client.write_gatt_char(rx, packet(index, sizes[index % len(sizes)]), response=False)
        say(f"wrote {args.count} packets ({','.join(str(s) for s in sizes)}) in {time.monotonic() - t2:.2f} s")
        try:
            await asyncio.wait_for(enough.wait(), timeout=args.timeout)
        except asyncio.TimeoutError:
            say(f"timeout: {len(received)} of {args.notifications} notifications after {args.timeout} s")
            return 1
        say(f"done: {len(received)} notifications")
    finally:
        await client.disconnect()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--adapter", default="hci1")
    parser.add_argument("--name", required=True)
    parser.add_argument("--rx", default=MSGPIPE_RX)
    parser.add_argument("--tx", default=MSGPIPE_TX)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--notifications", type=int, default=1)
    parser.add_argument("--acquire-notify", action="store_true", help="subscribe with AcquireNotify, not StartNotify")
    parser.add_argument("--hold", type=float, help="write nothing: hold the subscribed link this many seconds")
    parser.add_argument("--scan-timeout", type=float, default=30)
    parser.add_argument("--connect-timeout", type=float, default=30)
    parser.add_argument("--timeout", type=float, default=30, help="seconds to wait for the notifications")
    args = parser.parse_args()
    try:
        return asyncio.run(run(args))
    except Exception as error:  # bleak/BlueZ errors: one line, exit 2
        say(f"error: {type(error).__name__}: {error}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
