"""Runs the muselsl command line (`python -m muselsl …`) with bleak held to
one adapter, as on a machine that has one.

muselsl does not pass bleak an adapter, and bleak then takes the first
powered one of a Python set of object paths: in a lab of twelve adapters on
three airs, a different one each run, most of them out of the headband's
air. This pins the adapter through bleak's own argument (`bluez={"adapter":
…}`) for muselsl's scans and connections, and changes nothing else.

    python3 ci/checks/muselsl_on_adapter.py ADAPTER COMMAND [ARGS…]
    e.g. python3 ci/checks/muselsl_on_adapter.py hci0 record_direct -n Muse-1A2B -b bleak -d 15 -f out.csv
"""
import sys

import bleak


def pin(adapter):
    discover = bleak.BleakScanner.discover.__func__
    client_init = bleak.BleakClient.__init__

    async def discover_on_adapter(cls, timeout=5.0, **kwargs):
        kwargs.setdefault("bluez", {"adapter": adapter})
        return await discover(cls, timeout, **kwargs)

    def client_on_adapter(self, *args, **kwargs):
        kwargs.setdefault("bluez", {"adapter": adapter})
        client_init(self, *args, **kwargs)

    bleak.BleakScanner.discover = classmethod(discover_on_adapter)
    bleak.BleakClient.__init__ = client_on_adapter


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    pin(sys.argv[1])
    from muselsl.__main__ import main

    sys.argv = ["muselsl"] + sys.argv[2:]
    main()
