"""Runs the muselsl command line (`python -m muselsl …`) with bleak held to
one adapter, as on a machine that has one.

muselsl does not pass bleak an adapter, and bleak then takes the first
powered one of a Python set of object paths: in a lab of twelve adapters on
three airs, a different one each run, most of them out of the headband's
air. This pins the adapter through bleak's own argument (`bluez={"adapter":
…}`) for muselsl's scans and connections, and changes nothing else of bleak.

For `record_direct` it also stands in for scikit-learn's
`sklearn.linear_model`, which muselsl imports at the top of its recording
module for `record` (fitting LSL timestamps) and `record_direct` never uses:
importing scikit-learn (and SciPy under it) is most of muselsl's import: in
the lab's idle software-emulated guest muselsl took 38-55 s to import with
it and 15-16 s without (docs/benchmarks.md), and about three times that
under load. The stand-in's `LinearRegression` fails loudly if anything
calls it, so a muselsl that came to need it fails the check instead of
passing it untested.

    python3 ci/checks/muselsl_on_adapter.py ADAPTER COMMAND [ARGS…]
    e.g. python3 ci/checks/muselsl_on_adapter.py hci0 record_direct -n Muse-1A2B -b bleak -d 15 -f out.csv
"""
import sys
import types

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


class LinearRegression:
    """The stand-in for scikit-learn's, which `record_direct` does not use."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "muselsl called sklearn.linear_model.LinearRegression, which ci/checks/muselsl_on_adapter.py "
            "leaves out for record_direct: record_direct needs scikit-learn now, so the stand-in must go"
        )


def leave_out_scikit_learn():
    linear_model = types.ModuleType("sklearn.linear_model")
    linear_model.LinearRegression = LinearRegression
    sklearn = types.ModuleType("sklearn")
    sklearn.linear_model = linear_model
    sys.modules.setdefault("sklearn", sklearn)
    sys.modules.setdefault("sklearn.linear_model", linear_model)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    pin(sys.argv[1])
    if sys.argv[2] == "record_direct":
        leave_out_scikit_learn()
    from muselsl.__main__ import main

    sys.argv = ["muselsl"] + sys.argv[2:]
    main()
