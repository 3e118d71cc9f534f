"""Compares what `muselsl record_direct` recorded with the recording the
emulated headband replayed: every recorded sample of each channel must be
the source's sample at one fixed offset in the (looped) source, within half
a 12-bit step (0.48828125 / 2 uV) plus the 3 decimals muse-lsl writes.

    python3 ci/checks/muselsl_compare.py RECORDED.csv SOURCE.csv
"""
import csv
import sys

STEP = 0.48828125
CHANNELS = ["TP9", "AF7", "AF8", "TP10"]


def columns(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {name: [float(row[name]) for row in rows] for name in CHANNELS}


def main(recorded_path, source_path):
    recorded, source = columns(recorded_path), columns(source_path)
    period = len(source["AF7"])
    count = len(recorded["AF7"])
    if count < 256:
        print(f"FAIL muselsl recorded {count} samples, fewer than a second")
        return 1
    tolerance = STEP / 2 + 0.0006
    offsets = [
        offset for offset in range(period)
        if all(abs(recorded["AF7"][n] - source["AF7"][(offset + n) % period]) <= tolerance for n in range(64))
    ]
    if not offsets:
        print(f"FAIL no offset in the source matches the first 64 recorded AF7 samples: {recorded['AF7'][:6]}")
        return 1
    offset = offsets[0]
    status = 0
    for name in CHANNELS:
        worst = max(abs(value - source[name][(offset + n) % period]) for n, value in enumerate(recorded[name]))
        verdict = "PASS" if worst <= tolerance else "FAIL"
        status |= verdict == "FAIL"
        print(f"{verdict} {name}: {count} samples equal the source from its sample {offset}, worst {worst:.4f} uV")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
