#!/usr/bin/env python3
"""The benchmark's peer: the same timestamp peripheral as Doppel's, written the
way BlueZ's test/example-gatt-server does it (dbus-python, GLib main loop,
notifications as PropertiesChanged on Value). Notifies CLOCK_MONOTONIC
microseconds as decimal text every INTERVAL_US while subscribed.

usage: python_timestamp_peripheral.py ADAPTER INTERVAL_US SECONDS
"""
import signal
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

SERVICE = "0000b0b0-0000-1000-8000-00805f9b34fb"
STAMP = "0000b0b1-0000-1000-8000-00805f9b34fb"
ROOT = "/org/doppel/pybench"
PROPS = "org.freedesktop.DBus.Properties"


class Application(dbus.service.Object):
    def __init__(self, bus):
        dbus.service.Object.__init__(self, bus, ROOT)
        self.objects = {}

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {path: obj.properties() for path, obj in self.objects.items()}


class Service(dbus.service.Object):
    path = ROOT + "/service0"

    def __init__(self, bus):
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        return {"org.bluez.GattService1": {"UUID": SERVICE, "Primary": True}}


class Stamp(dbus.service.Object):
    path = ROOT + "/service0/char0"

    def __init__(self, bus, interval_us):
        dbus.service.Object.__init__(self, bus, self.path)
        self.interval_ms = max(1, interval_us // 1000)
        self.notifying = False
        self.sent = 0

    def properties(self):
        return {"org.bluez.GattCharacteristic1": {
            "UUID": STAMP, "Service": dbus.ObjectPath(Service.path), "Flags": ["notify"]}}

    @dbus.service.method("org.bluez.GattCharacteristic1")
    def StartNotify(self):
        if not self.notifying:
            self.notifying = True
            GLib.timeout_add(self.interval_ms, self.tick)

    @dbus.service.method("org.bluez.GattCharacteristic1")
    def StopNotify(self):
        self.notifying = False

    def tick(self):
        if not self.notifying:
            return False
        text = str(time.monotonic_ns() // 1000).encode()
        self.PropertiesChanged("org.bluez.GattCharacteristic1",
                               {"Value": dbus.Array(text, signature="y")}, [])
        self.sent += 1
        return True

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class Advertisement(dbus.service.Object):
    path = ROOT + "/advertisement"

    def __init__(self, bus):
        dbus.service.Object.__init__(self, bus, self.path)

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Type": "peripheral", "ServiceUUIDs": [SERVICE], "LocalName": "PyBench"}

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        pass


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    adapter, interval_us, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    app = Application(bus)
    app.objects[Service.path] = Service(bus)
    stamp = Stamp(bus, interval_us)
    app.objects[Stamp.path] = stamp
    advertisement = Advertisement(bus)
    adapter_object = bus.get_object("org.bluez", "/org/bluez/" + adapter)
    loop = GLib.MainLoop()
    failures = []

    def failed(error):
        failures.append(error)
        print("registration failed:", error, file=sys.stderr)
        loop.quit()

    dbus.Interface(adapter_object, "org.bluez.GattManager1").RegisterApplication(
        ROOT, {}, reply_handler=lambda: print("serving on", adapter, flush=True), error_handler=failed)
    dbus.Interface(adapter_object, "org.bluez.LEAdvertisingManager1").RegisterAdvertisement(
        Advertisement.path, {}, reply_handler=lambda: None, error_handler=failed)
    GLib.timeout_add(int(seconds * 1000), loop.quit)
    # Ctrl-C (SIGINT) ends the loop at once, so the count below is printed.
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT, loop.quit)
    loop.run()
    print("sent", stamp.sent)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
