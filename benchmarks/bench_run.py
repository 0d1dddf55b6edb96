"""The whole `eval run` against its floor (benchmarks/floor_eval.py), as whole processes, alternating.

    .venv/bin/python benchmarks/bench_run.py --data DIR [--cells 1x1,10x10] [--scale-lang pt] [--rounds 5] [--work /tmp/bench-run]
        [--before TREE [--before-may-differ]]

Cell 1x1 is the test sets under DIR as they are (every language, the default sets); a cell CxQ (as in
benchmarks/bench_scale.py) is --scale-lang's set with its corpus copied C times and its queries Q times. Per
cell, ``python -m eval run --model tfidf-char --force --quiet`` and the floor run in turn for --rounds rounds
(eval, floor, eval, floor, ...), each a fresh process writing a fresh folder; the figures are the median wall
time of each, the median of the per-round ratios eval / floor with their spread, the peak RSS of each process,
and the machine's load average before and after. After every round the output folders are compared file by file:
a difference stops the benchmark (the floor must compute the same values and files).

--before TREE adds a third side to every round: ``eval run`` of another checkout (e.g. ``git worktree add TREE
main`` before a change), run from TREE, whose files must be the same bytes too; the table then gives the time
before and the ratio before / now. With --before-may-differ TREE's files may differ (a change that moved values,
such as exact scores): the differing files are counted and printed instead of stopping the benchmark, so the ratio
before / now is the time of the change, not of the same work.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))

from bench_scale import run_measured  # noqa: E402


def load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def differing_files(a: Path, b: Path) -> list[str]:
    """Files present in one folder and not the other, or with other bytes (recursively)."""
    out = []
    cmp = filecmp.dircmp(a, b)
    out += [f"only in {a}: {n}" for n in cmp.left_only] + [f"only in {b}: {n}" for n in cmp.right_only]
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    out += [f"differs: {n}" for n in mismatch + errors]
    for sub in cmp.common_dirs:
        out += differing_files(a / sub, b / sub)
    return out


def eval_command(data: Path, out: Path, params: Path, cache: Path) -> list[str]:
    return [sys.executable, "-m", "eval", "run", "--data", str(data), "--model", "tfidf-char", "--out", str(out),
            "--params", str(params), "--cache", str(cache), "--quiet", "--force"]


def sides(data: Path, out: Path, params: Path, cache: Path, before: Path | None) -> dict[str, tuple[list[str], Path, Path]]:
    """Each side's command, the folder it runs in and the folder it writes."""
    out_of = {"eval run": out / "eval", "floor": out / "floor", "eval run before": out / "before"}
    commands = {
        "eval run": (eval_command(data, out_of["eval run"], params, cache), REPO),
        "floor": ([sys.executable, str(REPO / "benchmarks" / "floor_eval.py"), "--data", str(data), "--out", str(out_of["floor"]),
                   "--params", str(params)], REPO),
    }
    if before is not None:
        commands["eval run before"] = (eval_command(data, out_of["eval run before"], params, cache), before)
    return {side: (cmd, cwd, out_of[side]) for side, (cmd, cwd) in commands.items()}


def bench_cell(name: str, data: Path, work: Path, params: Path, rounds: int, before: Path | None,
               before_may_differ: bool = False) -> dict:
    times: dict[str, list[float]] = {}
    before_differs: set[str] = set()
    peaks: dict[str, list[float]] = {}
    load_before = load()
    for _ in range(rounds):
        out = work / f"out-{name}"
        shutil.rmtree(out, ignore_errors=True)
        runs = sides(data, out, params, work / "cache", before)
        for side, (cmd, cwd, _) in runs.items():
            wall, peak, _ = run_measured(cmd, cwd)
            times.setdefault(side, []).append(wall)
            peaks.setdefault(side, []).append(peak)
        for side, (_, _, folder) in runs.items():
            differ = differing_files(runs["eval run"][2], folder)
            if differ and side == "eval run before" and before_may_differ:
                before_differs.update(differ)
            elif differ:
                raise SystemExit(f"error: cell {name}: eval run and {side} wrote different files: {differ[:5]}; the floor "
                                 "must compute what eval does (benchmarks/floor_eval.py), and a change must keep the bytes")

    def ratio(a: str, b: str) -> tuple[float, float, float]:
        r = sorted(x / y for x, y in zip(times[a], times[b]))
        return statistics.median(r), r[0], r[-1]

    return {"cell": name, "median": {side: statistics.median(t) for side, t in times.items()},
            "peak": {side: max(p) for side, p in peaks.items()}, "eval/floor": ratio("eval run", "floor"),
            "before/now": ratio("eval run before", "eval run") if before is not None else None, "load": (load_before, load()),
            "before_differs": sorted(before_differs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a built test-set root (every language under it: cell 1x1)")
    parser.add_argument("--cells", default="1x1,10x10")
    parser.add_argument("--scale-lang", default="pt", help="the language copied for the cells other than 1x1")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--work", type=Path, help="scaled sets and outputs (default: a temporary folder)")
    parser.add_argument("--before", type=Path, help="another checkout whose eval run is timed beside (its files must match)")
    parser.add_argument("--before-may-differ", action="store_true",
                        help="--before's files may differ from eval run's (counted and printed, not refused)")
    args = parser.parse_args()
    if args.before_may_differ and args.before is None:
        raise SystemExit("error: --before-may-differ needs --before TREE (the checkout whose files may differ)")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-run-"))
    work.mkdir(parents=True, exist_ok=True)
    params = REPO / "params.yaml"
    print(f"$ {' '.join([Path(sys.executable).name, *sys.argv])}  ({os.cpu_count()} CPUs, load {load()}, "
          f"eval from {REPO}, params {params})", flush=True)
    rows = []
    for cell in args.cells.split(","):
        corpus_x, query_x = (int(x) for x in cell.split("x"))
        if (corpus_x, query_x) == (1, 1):
            data, what = args.data, "every language under " + str(args.data)
        else:
            data = work / f"c{corpus_x}-q{query_x}"
            # built in a process of its own: Linux carries a process's peak RSS over fork and exec into the
            # processes timed here
            subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_scale.py"), "--build", f"{cell}:{data}",
                            "--data", str(args.data), "--lang", args.scale_lang], check=True)
            what = f"{args.scale_lang} x{corpus_x} corpus, x{query_x} queries"
        r = bench_cell(cell, data, work, params, args.rounds, args.before, args.before_may_differ)
        rows.append((what, r))
        t, p, (ratio, lo, hi) = r["median"], r["peak"], r["eval/floor"]
        before = (f"; eval run before {t['eval run before']:.2f} s, before / now {r['before/now'][0]:.2f}x "
                  f"(spread {r['before/now'][1]:.2f}-{r['before/now'][2]:.2f})" if r["before/now"] else "")
        print(f"[{cell}] {what}: eval run {t['eval run']:.2f} s, floor {t['floor']:.2f} s: eval / floor {ratio:.2f}x "
              f"(spread {lo:.2f}-{hi:.2f}, {args.rounds} rounds){before}; peak RSS eval {p['eval run']:.0f} MB, "
              f"floor {p['floor']:.0f} MB; load {r['load'][0]} before, {r['load'][1]} after; outputs identical"
              + (f" but eval run before's ({len(r['before_differs'])}: {', '.join(r['before_differs'])})"
                 if r["before_differs"] else ""), flush=True)
    print()
    extra = " eval run before s | before / now (spread) |" if args.before else ""
    print(f"| cell | sets | eval run s | floor s | eval / floor (spread) |{extra} peak RSS eval / floor MB | load before → after |")
    print("|---|---|---|---|---|" + ("---|---|" if args.before else "") + "---|---|")
    for what, r in rows:
        t, (ratio, lo, hi) = r["median"], r["eval/floor"]
        cells = f" {t['eval run before']:.2f} | {r['before/now'][0]:.2f}× ({r['before/now'][1]:.2f}–{r['before/now'][2]:.2f}) |" if args.before else ""
        print(f"| {r['cell']} | {what} | {t['eval run']:.2f} | {t['floor']:.2f} | {ratio:.2f}× ({lo:.2f}–{hi:.2f}) |{cells} "
              f"{r['peak']['eval run']:.0f} / {r['peak']['floor']:.0f} | {r['load'][0]} → {r['load'][1]} |")

if __name__ == "__main__":
    main()
