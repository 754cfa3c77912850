#!/usr/bin/env python3
"""bumble_coc.py - a phone app's L2CAP channel: Google's Bumble (PyPI `bumble`) as the central, for the lab.

What a phone app does with a peripheral that offers an LE credit-based channel (iOS
`CBPeripheral.openL2CAPChannel`, Android `BluetoothDevice.createInsecureL2capChannel`): connect, find the
PSM characteristic ABDD3056-28FA-441D-A470-55A75A52553A in any service, read the PSM (2 bytes, little-endian),
open the channel, and then read and write a byte stream. No msgpipe code is shared: the stream carries the
lines format (docs/PROTOCOL.md), the message followed by one newline.

    bumble_coc.py --transport hci-socket:3 --to NAME|ADDRESS (--send FILE | --receive OUT)
                  [--mtu 2048] [--mps 247] [--timeout S] [--hold S] [--json]

Output, one line each (the lab parses it):
    own address ADDRESS (random static)
    connected to ADDRESS after S s
    psm P (characteristic in service UUID)
    holding S s before opening the channel           (with --hold)
    channel open: MTU M, MPS S (peer MTU M, MPS S)
    sent B bytes in S s
    received B bytes in S s
    done: PSM P, B bytes, S s
With --json, last, one JSON object (what the lab judges; a field is absent when it did not get that far):
    {"own_address", "connected_to", "psm", "channel_mtu", "channel_mps", "bytes", "seconds"}
Exit status 0 when done, 1 on a timeout or no PSM characteristic, 2 on a Bumble or HCI error.
"""
import argparse
import asyncio
import struct
import sys
import time

try:
    from bumble import hci, l2cap
    from bumble.core import UUID
    from bumble.device import Device, Peer
    from bumble.transport import open_transport
except ImportError as error:  # the lab skips its Bumble checks then; say why
    print(f"bumble is not importable: {error}", flush=True)
    sys.exit(3)

from bumble_central import big_receive_buffer, connect_to, report, run_main, say

PSM_CHARACTERISTIC = UUID("ABDD3056-28FA-441D-A470-55A75A52553A")


async def read_psm(peer: Peer):
    """The PSM from the first service that holds the characteristic, or None."""
    await peer.discover_services()
    for service in peer.services:
        await service.discover_characteristics()
        for characteristic in service.characteristics:
            if characteristic.uuid == PSM_CHARACTERISTIC:
                value = bytes(await characteristic.read_value())
                if len(value) != 2:
                    say(f"PSM characteristic holds {len(value)} bytes, not 2")
                    return None, service
                return struct.unpack("<H", value)[0], service
    return None, None


async def run(args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    async with await open_transport(args.transport) as (source, sink):
        big_receive_buffer(source)
        device = Device.with_hci("bumble-coc", hci.Address.generate_static_address(), source, sink)
        await device.power_on()
        say(f"own address {device.random_address} (random static)")
        report(own_address=device.random_address.to_string(False))
        connection = await connect_to(device, args, t0)
        peer = Peer(connection)
        await peer.request_mtu(247)
        psm, service = await read_psm(peer)
        if psm is None:
            say("no PSM characteristic")
            return 1
        say(f"psm {psm} (characteristic in service {service.uuid})")
        report(psm=psm)
        if args.hold > 0:  # the lab stops the peripheral's process meanwhile
            say(f"holding {args.hold} s before opening the channel")
            await asyncio.sleep(args.hold)
        channel = await connection.create_l2cap_channel(
            spec=l2cap.LeCreditBasedChannelSpec(psm=psm, mtu=args.mtu, mps=args.mps, max_credits=args.credits))
        say(f"channel open: MTU {channel.mtu}, MPS {channel.mps} (peer MTU {channel.peer_mtu}, MPS {channel.peer_mps})")
        report(channel_mtu=channel.peer_mtu, channel_mps=channel.peer_mps)
        received = bytearray()
        whole = asyncio.Event()

        def on_sdu(sdu: bytes) -> None:
            received.extend(sdu)
            if b"\n" in received:
                whole.set()

        channel.sink = on_sdu
        t1 = time.monotonic()
        if args.send:
            with open(args.send, "rb") as f:
                data = f.read()
            if b"\n" in data:
                say("the file contains a newline: the lines format cannot carry it")
                return 1
            # The stream is cut where the app's writes end, as on a phone: a few KiB per write.
            framed = data + b"\n"
            for start in range(0, len(framed), args.chunk):
                channel.write(framed[start:start + args.chunk])
                await channel.drain()
            secs = time.monotonic() - t1
            say(f"sent {len(data)} bytes in {secs:.2f} s")
            await asyncio.sleep(args.linger)  # the last SDU is in the controller: give the peer's host a moment
            count = len(data)
        else:
            try:
                await asyncio.wait_for(whole.wait(), args.timeout)
            except asyncio.TimeoutError:
                say(f"timeout: {len(received)} bytes, no newline after {args.timeout} s")
                return 1
            secs = time.monotonic() - t1
            message = bytes(received[:received.index(b"\n")])
            with open(args.receive, "wb") as f:
                f.write(message)
            say(f"received {len(message)} bytes in {secs:.2f} s")
            count = len(message)
        say(f"done: PSM {psm}, {count} bytes, {secs:.2f} s")
        report(bytes=count, seconds=round(secs, 3))
        try:
            await channel.disconnect()
            await connection.disconnect()
        except Exception as error:  # the peer may have left first
            say(f"disconnect: {error}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--transport", default="hci-socket:1")
    parser.add_argument("--to", required=True, help="advertised name, or a public address")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--send", metavar="FILE")
    what.add_argument("--receive", metavar="OUT")
    parser.add_argument("--mtu", type=int, default=2048, help="the channel's receive MTU (SDU size)")
    parser.add_argument("--mps", type=int, default=247, help="the channel's receive MPS (K-frame payload)")
    parser.add_argument("--credits", type=int, default=64, help="initial credits given to the peer")
    parser.add_argument("--chunk", type=int, default=4096, help="bytes per write to the channel")
    parser.add_argument("--timeout", type=float, default=120, help="seconds for --receive's message")
    parser.add_argument("--scan-timeout", type=float, default=30)
    parser.add_argument("--connect-timeout", type=float, default=30)
    parser.add_argument("--hold", type=float, default=0, help="seconds between reading the PSM and opening the channel")
    parser.add_argument("--linger", type=float, default=1.0, help="seconds after the last write")
    parser.add_argument("--json", action="store_true", help="end with one JSON line: what happened")
    args = parser.parse_args()
    return run_main(asyncio.wait_for(run(args), args.timeout + 60), args)


if __name__ == "__main__":
    sys.exit(main())
