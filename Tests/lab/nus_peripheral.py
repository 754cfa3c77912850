#!/usr/bin/env python3
"""nus_peripheral.py - a Nordic UART Service peripheral made the ordinary way on Linux, for the lab's stock box.

    nus_peripheral.py --adapter hci0 --name NAME --out FILE

It registers a GATT application with bluetoothd over the system D-Bus (GattManager1.RegisterApplication: the
NUS service 6E400001-..., RX 6E400002 write / write-without-response, TX 6E400003 notify) and an
advertisement (LEAdvertisingManager1: NAME, the NUS UUID), as a Python app on a Raspberry Pi would, with
dbus-fast (the D-Bus library bleak brings). bluetoothd calls RX's WriteValue for every value a central writes
(no AcquireWrite: the characteristic does not offer it): each value is appended to FILE and printed as

    write value: 53 74 61 72 74 ...     (hex, the form Tests/lab/legacy_decode.py reads)

It prints "registered" once bluetoothd took both registrations, and runs until SIGTERM/SIGINT. msgpipe wrote
none of this: it is the other side of `msgpipe send --profile nus --format lines|legacy|eom`.
"""
import argparse
import asyncio
import signal
import sys

try:
    from dbus_fast import BusType, Variant
    from dbus_fast.aio import MessageBus
    from dbus_fast.service import PropertyAccess, ServiceInterface, dbus_property, method
except ImportError as error:
    print(f"dbus-fast is not importable: {error}", flush=True)
    sys.exit(3)

NUS_SERVICE = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
NUS_RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
NUS_TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
ROOT = "/org/nuspy"


class Service(ServiceInterface):
    def __init__(self):
        super().__init__("org.bluez.GattService1")

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return NUS_SERVICE

    @dbus_property(access=PropertyAccess.READ)
    def Primary(self) -> "b":
        return True


class Characteristic(ServiceInterface):
    def __init__(self, uuid, flags, on_write=None):
        super().__init__("org.bluez.GattCharacteristic1")
        self._uuid, self._flags, self._on_write = uuid, flags, on_write

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self._uuid

    @dbus_property(access=PropertyAccess.READ)
    def Service(self) -> "o":
        return ROOT + "/service0"

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> "as":
        return self._flags

    @method()
    def ReadValue(self, options: "a{sv}") -> "ay":
        return b""

    @method()
    def WriteValue(self, value: "ay", options: "a{sv}"):
        if self._on_write:
            self._on_write(bytes(value))

    @method()
    def StartNotify(self):
        pass

    @method()
    def StopNotify(self):
        pass


class Advertisement(ServiceInterface):
    def __init__(self, name):
        super().__init__("org.bluez.LEAdvertisement1")
        self._name = name

    @dbus_property(access=PropertyAccess.READ)
    def Type(self) -> "s":
        return "peripheral"

    @dbus_property(access=PropertyAccess.READ)
    def LocalName(self) -> "s":
        return self._name

    @dbus_property(access=PropertyAccess.READ)
    def ServiceUUIDs(self) -> "as":
        return [NUS_SERVICE]

    @method()
    def Release(self):
        pass


async def run(args) -> int:
    out = open(args.out, "wb")

    def on_write(value: bytes) -> None:
        out.write(value)
        out.flush()
        print("write value: " + " ".join(f"{b:02x}" for b in value), flush=True)

    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    bus.export(ROOT + "/service0", Service())
    bus.export(ROOT + "/service0/char0", Characteristic(NUS_RX, ["write", "write-without-response"], on_write))
    bus.export(ROOT + "/service0/char1", Characteristic(NUS_TX, ["notify"]))
    bus.export(ROOT + "/advertisement0", Advertisement(args.name))
    adapter = "/org/bluez/" + args.adapter
    introspection = await bus.introspect("org.bluez", adapter)
    proxy = bus.get_proxy_object("org.bluez", adapter, introspection)
    # dbus-fast answers GetManagedObjects on ROOT with the objects exported under it (bluetoothd reads the tree).
    await proxy.get_interface("org.bluez.GattManager1").call_register_application(ROOT, {})
    await proxy.get_interface("org.bluez.LEAdvertisingManager1").call_register_advertisement(ROOT + "/advertisement0", {})
    print("registered", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    out.close()
    bus.disconnect()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--adapter", default="hci0")
    parser.add_argument("--name", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    try:
        return asyncio.run(run(args))
    except Exception as error:  # D-Bus / BlueZ errors: one line, exit 2
        print(f"error: {type(error).__name__}: {error}", flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
