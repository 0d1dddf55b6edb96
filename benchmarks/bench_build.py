"""Cold ``python -m builder defaults`` (every params.yaml language, empty cache, scratch output): one process
(``--jobs 1``) against languages in worker processes (``--jobs N``), whole processes in alternating order, in
the same run, with wall and CPU seconds, the machine's load average before and after each, and whether the two
wrote the same bytes (every file under --out compared). ``--stages`` instead says where one cold serial build
spends its time, per language: the alignment (the encoder and the assignment), the MT route's translation and
the post-processing (lexicon, forms, writing). docs/build-speed.md quotes this output.

    python benchmarks/bench_build.py --rounds 2 [--jobs 2] [--source DIR]
    python benchmarks/bench_build.py --stages [--source DIR]

Outputs and caches go to a temporary folder, never to data/ or cache/; the command runs in the repository
root, so corrections/<lang>.jsonl apply as in a real build.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def tree_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def cold_build(jobs: int, source: str | None, scratch: Path) -> dict:
    out, cache = scratch / f"out-jobs{jobs}", scratch / f"cache-jobs{jobs}"
    cmd = [sys.executable, "-m", "builder", "defaults", "--out", str(out), "--cache", str(cache), "--quiet",
           "--jobs", str(jobs)] + (["--source", source] if source else [])
    before_load = load()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    return {"wall": wall, "cpu": cpu, "load": f"{before_load} -> {load()}", "digest": tree_digest(out)}


def compare(rounds: int, jobs: int, source: str | None) -> None:
    print(f"{os.cpu_count()} cores; command: python -m builder defaults --out TMP --cache TMP(empty) --quiet --jobs J"
          + (f" --source {source}" if source else ""))
    print("| round | --jobs | wall s | CPU s (user+sys) | load average before -> after | same bytes as --jobs 1 |")
    print("|---|---|---|---|---|---|")
    walls: dict[int, list[float]] = {1: [], jobs: []}
    for r in range(rounds):
        order = (1, jobs) if r % 2 == 0 else (jobs, 1)  # alternating, so a change of load hits both alike
        with tempfile.TemporaryDirectory(prefix="bench_build-") as tmp:
            results = {j: cold_build(j, source, Path(tmp)) for j in order}
        same = results[jobs]["digest"] == results[1]["digest"]
        for j in order:
            res = results[j]
            walls[j].append(res["wall"])
            print(f"| {r + 1} | {j} | {res['wall']:.1f} | {res['cpu']:.1f} | {res['load']} | "
                  f"{'-' if j == 1 else ('yes' if same else 'NO')} ({len(res['digest'])} files) |")
        if not same:
            differ = sorted(k for k in results[1]["digest"].keys() | results[jobs]["digest"].keys()
                            if results[1]["digest"].get(k) != results[jobs]["digest"].get(k))
            print(f"files that differ: {differ[:20]}")
    serial, parallel = statistics.median(walls[1]), statistics.median(walls[jobs])
    print(f"median wall: --jobs 1 {serial:.1f} s, --jobs {jobs} {parallel:.1f} s; ratio {serial / parallel:.2f}x "
          f"(--jobs 1 / --jobs {jobs}, {rounds} round(s))")


def stages(source: str | None) -> None:
    """One cold serial build in this process, each stage's wall seconds per language (timers wrapped around the
    builder's own functions; the build itself is unchanged)."""
    import builder.build as build
    import builder.reference as reference
    from builder.params import language_for, load_params, route_for, translator_for
    from builder.source import load_source
    from builder.translators import offline_available

    spent: dict[str, dict[str, float]] = {}
    current = {"lang": None}

    def timed(module, name: str, stage: str):
        original = getattr(module, name)

        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                bucket = spent.setdefault(current["lang"], {})
                bucket[stage] = bucket.get(stage, 0.0) + time.perf_counter() - t
        setattr(module, name, wrapper)

    timed(reference, "align_reference", "alignment")
    timed(build, "_translate", "MT translation")
    timed(build, "run_postprocess", "post-processing")
    params = load_params()
    src = load_source(source)
    print(f"{os.cpu_count()} cores; load average before: {load()}")
    total = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_build-") as tmp:
        os.chdir(ROOT)
        for code in params["languages"]:
            lang = language_for(params, code)
            name = translator_for(params, lang)
            name = name if name and offline_available(name, lang.code) else None
            if name is None and route_for(params, lang) != "reference":
                continue
            current["lang"] = code
            t = time.perf_counter()
            build.build_language(src, lang, name, Path(tmp) / "out", None, Path(tmp) / "cache", params, progress=False)
            spent[code]["whole language"] = time.perf_counter() - t
    total = time.perf_counter() - total
    columns = ["alignment", "MT translation", "post-processing", "whole language"]
    print("| language | " + " | ".join(f"{c} s" for c in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for code, bucket in spent.items():
        print(f"| {code} | " + " | ".join(f"{bucket.get(c, 0.0):.1f}" for c in columns) + " |")
    sums = {c: sum(b.get(c, 0.0) for b in spent.values()) for c in columns}
    print("| all | " + " | ".join(f"{sums[c]:.1f}" for c in columns) + " |")
    print(f"whole run {total:.1f} s; load average after: {load()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=None, help="English folder (default: as the builder finds it)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="worker processes of the parallel build (default 2)")
    ap.add_argument("--stages", action="store_true", help="where one cold serial build spends its time")
    args = ap.parse_args()
    if args.stages:
        stages(args.source)
    else:
        compare(args.rounds, args.jobs, args.source)


if __name__ == "__main__":
    main()
