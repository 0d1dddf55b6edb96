"""Start-up of the four command lines: ``python -X importtime -m <package> --help`` per package, the import time
it reports (the sum of its top-level imports) and which heavy libraries were imported just to print the help; and
the wall time of a plain ``python -m <package> --help`` against ``python -c pass`` (the interpreter's own start-up
with this environment's site-packages, the floor), timed alternately in the same rounds, as a ratio. All figures
are medians of --rounds. --tree runs another checkout of the repository (e.g. a ``git worktree`` of an older
commit) in the same run, alternating with this one, for a before/after. docs/build-speed.md quotes this output.

    python benchmarks/bench_startup.py --rounds 7 [--tree /tmp/before]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("builder", "eval", "releases", "annotation")
HEAVY = ("polars", "numpy", "torch", "spacy", "pandas", "sklearn", "scipy", "pyarrow", "httpx", "huggingface_hub",
         "argilla")
TOP_LEVEL = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| (\S+)$")  # one space of indent: imported by the command


def once(tree: Path, package: str) -> tuple[float, set[str]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", package, "--help"], cwd=tree, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{tree}: python -m {package} --help failed: {done.stderr[-2000:]}")
    imported, total_us = set(), 0
    for line in done.stderr.splitlines():
        m = TOP_LEVEL.match(line)
        if m:
            total_us += int(m.group(1))
        name = line.rsplit("|", 1)[-1].strip()
        if "import time:" in line and name in HEAVY:
            imported.add(name)
    return total_us / 1000, imported


def wall_ms(tree: Path, args: list[str]) -> float:
    """The wall time of ``python ARGS`` (no -X importtime, whose report costs time of its own)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    t = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True)
    wall = time.perf_counter() - t
    if done.returncode != 0:
        sys.exit(f"{tree}: python {' '.join(args)} failed: {done.stderr[-2000:]!r}")
    return wall * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--tree", type=Path, help="another checkout measured alternately, as 'before'")
    args = ap.parse_args()
    trees = ([("before", args.tree.resolve())] if args.tree else []) + [("this tree", ROOT)]
    print(f"{os.cpu_count()} cores; load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"commands: python -X importtime -m <package> --help (imports), python -m <package> --help and python -c pass "
          f"(wall), median of {args.rounds}")
    print("| package | tree | imports ms (importtime) | wall ms | `python -c pass` ms | ratio | heavy libraries imported |")
    print("|---|---|---|---|---|---|---|")
    for package in PACKAGES:
        runs: dict[str, list] = {label: [] for label, _ in trees}
        walls: dict[str, list] = {label: [] for label, _ in trees}
        floors: dict[str, list] = {label: [] for label, _ in trees}
        for _ in range(args.rounds):
            for label, tree in trees:
                runs[label].append(once(tree, package))
                floors[label].append(wall_ms(tree, ["-c", "pass"]))
                walls[label].append(wall_ms(tree, ["-m", package, "--help"]))
        for label, _ in trees:
            imports = statistics.median(r[0] for r in runs[label])
            wall, floor = statistics.median(walls[label]), statistics.median(floors[label])
            heavy = sorted(set().union(*(r[1] for r in runs[label])))
            print(f"| {package} | {label} | {imports:.0f} | {wall:.0f} | {floor:.0f} | {wall / floor:.2f}x | "
                  f"{', '.join(heavy) or 'none'} |")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
