#!/usr/bin/python3
"""A minimal BLE peripheral for ci/lab-selftest, on one adapter, through BlueZ.

Usage: lab-selftest-peripheral.py ADAPTER SERVICE_UUID CHAR_UUID VALUE_HEX
           [--advertise-on-signal] [--lifetime S]

Exports a GATT application (one primary service with one readable
characteristic whose value is VALUE_HEX) and an LE advertisement carrying
SERVICE_UUID, both registered on /org/bluez/ADAPTER only. Prints "GATT READY"
and "ADVERTISING" as BlueZ accepts each, "READ <hex>" for every read it
serves, and exits on SIGTERM/SIGINT or after --lifetime seconds.

SIGUSR1 (re)registers the advertisement, and with --advertise-on-signal it is
registered only then: btvirt's controllers deliver an advertisement to a
scanner only at the moment advertising or scanning is switched on, so the
self-test switches it on once the central is discovering.

Runs on the distribution's python3 (python3-dbus, python3-gi); talks to the
system bus named by DBUS_SYSTEM_BUS_ADDRESS (the lab's).
"""

import argparse
import signal
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPERTIES = "org.freedesktop.DBus.Properties"
GATT_MANAGER = "org.bluez.GattManager1"
ADVERTISING_MANAGER = "org.bluez.LEAdvertisingManager1"
GATT_SERVICE = "org.bluez.GattService1"
GATT_CHARACTERISTIC = "org.bluez.GattCharacteristic1"
ADVERTISEMENT = "org.bluez.LEAdvertisement1"

APP_PATH = "/org/doppel/selftest"


def say(line):
    print(line, flush=True)


class InvalidArguments(dbus.exceptions.DBusException):
    _dbus_error_name = "org.freedesktop.DBus.Error.InvalidArgs"


class PropertyObject(dbus.service.Object):
    """An object that answers Properties.Get/GetAll for one interface."""

    interface = ""

    def properties(self):
        raise NotImplementedError

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        props = self.GetAll(interface)
        if name not in props:
            raise InvalidArguments(f"no property {name}")
        return props[name]

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        if interface != self.interface:
            raise InvalidArguments(f"no interface {interface}")
        return self.properties()


class Characteristic(PropertyObject):
    interface = GATT_CHARACTERISTIC

    def __init__(self, bus, path, uuid, service_path, value):
        super().__init__(bus, path)
        self.path = path
        self.uuid = uuid
        self.service_path = service_path
        self.value = value

    def properties(self):
        return {
            "UUID": dbus.String(self.uuid),
            "Service": dbus.ObjectPath(self.service_path),
            "Flags": dbus.Array(["read"], signature="s"),
        }

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        offset = int(options.get("offset", 0))
        say("READ " + self.value[offset:].hex())
        return dbus.Array(self.value[offset:], signature="y")


class Service(PropertyObject):
    interface = GATT_SERVICE

    def __init__(self, bus, path, uuid):
        super().__init__(bus, path)
        self.path = path
        self.uuid = uuid

    def properties(self):
        return {"UUID": dbus.String(self.uuid), "Primary": dbus.Boolean(True)}


class Application(dbus.service.Object):
    def __init__(self, bus, objects):
        super().__init__(bus, APP_PATH)
        self.objects = objects

    @dbus.service.method(OBJECT_MANAGER, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {
            dbus.ObjectPath(o.path): {o.interface: o.properties()} for o in self.objects
        }


class Advertisement(PropertyObject):
    interface = ADVERTISEMENT

    def __init__(self, bus, path, service_uuid):
        super().__init__(bus, path)
        self.path = path
        self.service_uuid = service_uuid

    def properties(self):
        # Flags (3 bytes) + one 128-bit UUID (18) + "Doppel" (8) fit in the
        # 31 bytes of a legacy advertisement.
        return {
            "Type": dbus.String("peripheral"),
            "ServiceUUIDs": dbus.Array([self.service_uuid], signature="s"),
            "LocalName": dbus.String("Doppel"),
            "Discoverable": dbus.Boolean(True),
        }

    @dbus.service.method(ADVERTISEMENT)
    def Release(self):
        say("ADVERTISEMENT RELEASED")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("adapter")
    parser.add_argument("service_uuid")
    parser.add_argument("char_uuid")
    parser.add_argument("value_hex")
    parser.add_argument("--advertise-on-signal", action="store_true")
    parser.add_argument("--lifetime", type=int, default=120)
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    loop = GLib.MainLoop()
    outcome = {"status": 0}

    def stop(status):
        outcome["status"] = status
        loop.quit()
        return False

    adapter_path = f"/org/bluez/{args.adapter}"
    try:
        adapter = bus.get_object(BLUEZ, adapter_path)
        interfaces = dbus.Interface(adapter, "org.freedesktop.DBus.Introspectable").Introspect()
    except dbus.exceptions.DBusException as error:
        say(f"ERROR no adapter {adapter_path} on org.bluez: {error}")
        return 1
    for needed in (GATT_MANAGER, ADVERTISING_MANAGER):
        if needed not in interfaces:
            say(f"ERROR {adapter_path} has no {needed}")
            return 1

    service = Service(bus, APP_PATH + "/service0", args.service_uuid)
    characteristic = Characteristic(
        bus, service.path + "/char0", args.char_uuid, service.path, bytes.fromhex(args.value_hex)
    )
    app = Application(bus, [service, characteristic])
    advertisement = Advertisement(bus, APP_PATH + "/advertisement0", args.service_uuid)

    def failed(what):
        def done(error):
            say(f"ERROR registering the {what} on {adapter_path}: {error}")
            stop(1)
        return done

    dbus.Interface(adapter, GATT_MANAGER).RegisterApplication(
        app.__dbus_object_path__, {},
        reply_handler=lambda: say("GATT READY"), error_handler=failed("GATT application"))

    manager = dbus.Interface(adapter, ADVERTISING_MANAGER)
    advertising = {"on": False}

    def register_advertisement(*_):
        def done():
            advertising["on"] = True
            say("ADVERTISING")
        manager.RegisterAdvertisement(
            advertisement.path, {}, reply_handler=done, error_handler=failed("advertisement"))

    def advertise():
        if advertising["on"]:
            advertising["on"] = False
            manager.UnregisterAdvertisement(
                advertisement.path,
                reply_handler=register_advertisement, error_handler=register_advertisement)
        else:
            register_advertisement()
        return True

    if not args.advertise_on_signal:
        advertise()

    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGUSR1, advertise)
    for sig in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_HIGH, sig, stop, 0)
    GLib.timeout_add_seconds(args.lifetime, stop, 0)
    loop.run()
    return outcome["status"]


if __name__ == "__main__":
    sys.exit(main())
