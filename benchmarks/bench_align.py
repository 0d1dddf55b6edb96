"""Speed of the reference route's alignment (builder/align.py) per language: cold (the encoder's vectors computed)
and warm (read back from the embedding cache a rebuild keeps), wall seconds, median of --rounds, with the machine's
load average recorded beside the figures (docs/given-translations.md quotes this output).

    python benchmarks/bench_align.py --langs de fr es it pt --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from builder.reference import align_reference, alignment_summary, load_reference
from builder.source import load_source
from languages import load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=None, help="English folder (default: as the builder finds it)")
    ap.add_argument("--langs", nargs="+", default=["de", "fr", "es", "it", "pt"])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    source = load_source(args.source)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} cores")
    print("| lang | cold s (median, min-max) | warm s (median, min-max) | corpus aligned |")
    print("|---|---|---|---|")
    for code in args.langs:
        reference = load_reference(source, load(code))
        cold, warm = [], []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                t = time.perf_counter()
                align_reference(source, reference, Path(tmp))
                cold.append(time.perf_counter() - t)
                t = time.perf_counter()
                result = align_reference(source, reference, Path(tmp))
                warm.append(time.perf_counter() - t)
        a = alignment_summary(result)["corpus"]
        fmt = lambda xs: f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"  # noqa: E731
        print(f"| {code} | {fmt(cold)} | {fmt(warm)} | {a['aligned']}/{a['total']} |")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
