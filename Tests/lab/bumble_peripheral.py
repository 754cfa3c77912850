#!/usr/bin/env python3
"""bumble_peripheral.py - a phone as the peripheral: Google's Bumble (PyPI `bumble`) notifies or takes a file, for the lab.

The seeds' phones advertise a service and push a file to whoever subscribes, in the legacy Start/End format
(docs/PROTOCOL.md 4.1). This does the same on Bumble's own host (HCI user channel `hci-socket:N`, see
bumble_central.py): it advertises NAME from a random static address (connectable, the name and a 16-bit service
in the advertising data; a 128-bit service goes into the scan response), serves a GATT service with WRITE
(write, write without response) and NOTIFY (notify), waits for a central to subscribe to NOTIFY, then notifies
FILE framed as --format with values of ATT_MTU-3 bytes (at most 512, the longest attribute value), paced by
Bumble's own ACL flow control (Number of Completed Packets), and exits once the central left (or disconnects
--linger seconds after the last value). What this proves
about msgpipe: its central (`listen --to NAME`) finds a phone by name on a random address, subscribes, and takes
a plain-format message from a host that is not BlueZ.

    bumble_peripheral.py --transport hci-socket:3 --name NAME --service FFF0 --write FFF2 --notify FFF1
                         --format legacy (--send FILE | --receive OUT) [--timeout S] [--json]

--receive OUT: a plain-format sink instead (msgpipe `send --to NAME` as the central): it appends every value
written to WRITE to OUT as it arrives, undecoded, and exits once a central that wrote something left (a central
that leaves without writing is answered by advertising again).

Output, one line each (the lab parses it):
    advertising NAME as ADDRESS (random static)
    connected from ADDRESS after S s
    subscribed by ADDRESS (notify|indicate), ATT_MTU M
    notified V values, B bytes in S s (legacy|eom|lines)          (--send)
    received V values, B bytes in S s from ADDRESS, ATT_MTU M     (--receive, once the central left)
    done: MTU M, B bytes, S s
With --json, last, one JSON object (what the lab judges; a field is absent when it did not get that far):
    {"own_address", "connected_from", "subscribed_by", "mtu", "values", "bytes", "seconds"}
Exit status 0 when every value was handed to the controller (--send) or a central wrote and left (--receive),
1 on a timeout, 2 on a Bumble or HCI error.
"""
import argparse
import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from bumble import hci
    from bumble.core import AdvertisingData
    from bumble.device import Device
    from bumble.gatt import Characteristic, CharacteristicValue, Service
    from bumble.transport import open_transport
    from bumble_central import ENCODERS, big_receive_buffer, pace, report, run_main, say, uuid_of
except ImportError as error:  # the lab skips its Bumble checks then; say why
    print(f"bumble is not importable: {error}", flush=True)
    sys.exit(3)


def advertising(name: str, service) -> tuple:
    """(advertising data, scan response): flags, the name, and the service where it fits (31 bytes each)."""
    uuid = bytes(service.to_bytes(force_128=False))
    kind = (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS if len(uuid) == 2
            else AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS)
    flags = (AdvertisingData.FLAGS, bytes([0x06]))  # LE General Discoverable, BR/EDR not supported
    named = (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode())
    listed = (kind, uuid)
    if 3 + 2 + len(name) + 2 + len(uuid) <= 31:
        return bytes(AdvertisingData([flags, named, listed])), b""
    return bytes(AdvertisingData([flags, named])), bytes(AdvertisingData([listed]))


async def receive(args: argparse.Namespace, device: Device, write_times: list, t0: float) -> int:
    """--receive: advertise until a central connected, wrote and left; the values are appended to OUT already."""
    while True:
        left = asyncio.get_running_loop().create_future()
        device.once("connection", lambda connection: connection.on(
            "disconnection", lambda *_: left.done() or left.set_result(connection)))
        adv, scan_response = advertising(args.name, uuid_of(args.service))
        await device.start_advertising(own_address_type=hci.OwnAddressType.RANDOM, advertising_data=adv,
                                       scan_response_data=scan_response or None, auto_restart=False)
        say(f"advertising {args.name} as {device.random_address} (random static)")
        report(own_address=device.random_address.to_string(False))
        remaining = args.timeout - (time.monotonic() - t0)
        try:
            connection = await asyncio.wait_for(left, max(remaining, 0.1))
        except asyncio.TimeoutError:
            say(f"timeout: no central wrote and left within {args.timeout} s ({len(write_times)} values so far)")
            return 1
        if write_times:
            break
        say(f"{connection.peer_address} left without writing: advertising again")
    size = os.path.getsize(args.receive)
    secs = write_times[-1] - write_times[0]
    mtu = connection.att_mtu
    say(f"received {len(write_times)} values, {size} bytes in {secs:.2f} s from {connection.peer_address}, ATT_MTU {mtu}")
    say(f"done: MTU {mtu}, {size} bytes, {secs:.2f} s")
    report(mtu=mtu, values=len(write_times), bytes=size, seconds=round(secs, 3))
    return 0


async def run(args: argparse.Namespace) -> int:
    data = b""
    if args.send:
        with open(args.send, "rb") as f:
            data = f.read()
    out = open(args.receive, "wb") if args.receive else None  # --receive: truncated, then every value appended
    written, write_times = [], []

    def on_write(_connection, value) -> None:
        written.append(len(value))
        if out is not None:
            out.write(bytes(value))
            out.flush()
            write_times.append(time.monotonic())

    t0 = time.monotonic()
    async with await open_transport(args.transport) as (source, sink):
        big_receive_buffer(source)
        device = Device.with_hci(args.name, hci.Address.generate_static_address(), source, sink)
        # The GATT server: WRITE as a phone app declares it, NOTIFY with its CCCD (Bumble adds it).
        write = Characteristic(uuid_of(args.write),
                               Characteristic.Properties.WRITE | Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
                               Characteristic.WRITEABLE, CharacteristicValue(write=on_write))
        notify = Characteristic(uuid_of(args.notify), Characteristic.Properties.NOTIFY, Characteristic.READABLE,
                                b"")
        device.add_services([Service(uuid_of(args.service), [write, notify])])
        subscribed = asyncio.get_running_loop().create_future()

        def on_subscription(connection, notify_enabled, indicate_enabled):
            if (notify_enabled or indicate_enabled) and not subscribed.done():
                subscribed.set_result((connection, "indicate" if indicate_enabled and not notify_enabled else "notify"))

        notify.on("subscription", on_subscription)
        left = asyncio.Event()
        device.on("connection", lambda connection: (
            say(f"connected from {connection.peer_address} after {time.monotonic() - t0:.2f} s"),
            report(connected_from=connection.peer_address.to_string(False)),
            connection.on("disconnection", lambda *_: left.set())))
        await device.power_on()
        if out is not None:
            try:
                return await receive(args, device, write_times, t0)
            finally:
                out.close()
        adv, scan_response = advertising(args.name, uuid_of(args.service))
        await device.start_advertising(own_address_type=hci.OwnAddressType.RANDOM, advertising_data=adv,
                                       scan_response_data=scan_response or None, auto_restart=False)
        say(f"advertising {args.name} as {device.random_address} (random static)")
        report(own_address=device.random_address.to_string(False))
        try:
            connection, how = await asyncio.wait_for(subscribed, args.timeout)
        except asyncio.TimeoutError:
            say(f"timeout: nobody subscribed within {args.timeout} s")
            return 1
        mtu = connection.att_mtu
        say(f"subscribed by {connection.peer_address} ({how}), ATT_MTU {mtu}")
        report(subscribed_by=connection.peer_address.to_string(False), mtu=mtu)
        # ATT_MTU-3 bytes a value, at most --max-value (default 512, the longest attribute value, as phones do)
        values = ENCODERS[args.format](data, min(mtu - 3, args.max_value))
        t1 = time.monotonic()
        for value in values:
            if left.is_set():
                say(f"the central left after {values.index(value)} of {len(values)} values")
                return 1
            if how == "indicate":
                await device.indicate_subscriber(connection, notify, value)
            else:
                await device.notify_subscriber(connection, notify, value)
                await pace(device, connection, 8)
        queue = device.host.get_data_packet_queue(connection.handle)
        while queue is not None and queue.pending > 0 and not left.is_set():
            await asyncio.sleep(0.01)
        secs = time.monotonic() - t1
        say(f"notified {len(values)} values, {len(data)} bytes in {secs:.2f} s ({args.format})")
        say(f"done: MTU {mtu}, {len(data)} bytes, {secs:.2f} s")
        report(values=len(values), bytes=len(data), seconds=round(secs, 3))
        if written:
            say(f"the central wrote {len(written)} values")
        # The central ends the link once it has the message (msgpipe listen --count 1); else we do.
        try:
            await asyncio.wait_for(left.wait(), args.linger)
        except asyncio.TimeoutError:
            say(f"the central still linked {args.linger} s after the last value: disconnecting")
            try:
                await connection.disconnect()
            except Exception as error:
                say(f"disconnect: {error}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--transport", default="hci-socket:1")
    parser.add_argument("--name", required=True)
    parser.add_argument("--service", default="FFF0")
    parser.add_argument("--write", default="FFF2")
    parser.add_argument("--notify", default="FFF1")
    parser.add_argument("--format", choices=sorted(ENCODERS), default="legacy")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--send", metavar="FILE", help="notify FILE to the central that subscribes")
    mode.add_argument("--receive", metavar="OUT", help="append every value written to WRITE to OUT")
    parser.add_argument("--max-value", type=int, default=512, help="largest value notified (default 512)")
    parser.add_argument("--timeout", type=float, default=90,
                        help="seconds to wait for a subscriber (--receive: for a central that wrote and left)")
    parser.add_argument("--linger", type=float, default=10, help="seconds the central may stay after the last value")
    parser.add_argument("--json", action="store_true", help="end with one JSON line: what happened")
    args = parser.parse_args()
    return run_main(asyncio.wait_for(run(args), args.timeout + 300), args)


if __name__ == "__main__":
    sys.exit(main())
