"""How eval grows with the catalogue and the query set, and how far it is from the hardware floor.

    .venv/bin/python benchmarks/bench_scale.py --data DIR [--lang pt] [--work /tmp/scale] [--cells 1x1,3x1,10x1,1x10,10x10]
        [--without-forms]

DIR is a built test-set root (``python -m builder build --lang pt --out DIR``). Each cell ``CxQ`` copies the
corpus C times and the queries Q times (copy k keeps the source ids, gets new item and pair ids and the text
"<title> k", since a test set never repeats a text; copies are relevant wherever the original is), writes that set
under --work and measures, each in a fresh process:

- ``eval run --model tfidf-char`` as a user runs it: wall time and peak RSS of the whole process;
- in one process: reading the set (its peak RSS), then ``evaluate_language`` (encode, then the rest) with the
  peak RSS during it alone (the peak is reset after reading), and the floor on the same
  sizes in the same process: one float32 product (the model's sparse product, and a dense 512-d one as for
  m-use) plus one row-wise ``argsort`` of the (queries, docs) score matrix, per corpus variant.

The table gives each figure, the growth exponent against the 1x1 cell (log time ratio / log size ratio,
size = queries x documents) and eval's time outside encoding as a multiple of the floor.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The tree this script sits in, not whatever the virtual environment's editable install points at (the child
# process imports eval from here too).
sys.path.insert(0, str(REPO))


def scaled_testset(data: Path, lang: str, corpus_x: int, query_x: int, root: Path, without_forms: bool = False) -> Path:
    """``without_forms``: the masculine, feminine and neutral queries only, as the test sets were before the extra
    query forms (doublets, neomorphemes) joined them, and as the issue's 1,710 x 41,080 measurement had them."""
    import polars as pl

    from eval.testset import INCLUSIVE, TestSet, read_testset, write_testset

    if (root / lang / "qrels.tsv").is_file():
        return root
    ts = read_testset(data, lang)
    if without_forms:
        queries = ts.queries.filter(pl.col("gender") != INCLUSIVE)
        ts = TestSet(lang, queries, ts.corpus, ts.qrels.filter(pl.col("query_id").cast(pl.String).is_in(queries["id"].implode())), ts.stats)

    def copies(frame: pl.DataFrame, times: int) -> pl.DataFrame:
        return pl.concat([frame] + [
            frame.with_columns(id=pl.col("id") + f"~{k}", pair_id=pl.col("pair_id") + f"~{k}", text=pl.col("text") + f" {k}")
            for k in range(1, times)
        ])

    suffix = lambda times: pl.DataFrame({"k": [""] + [f"~{k}" for k in range(1, times)]})  # noqa: E731
    qrels = (ts.qrels.join(suffix(query_x).rename({"k": "qk"}), how="cross").join(suffix(corpus_x).rename({"k": "dk"}), how="cross")
             .select(query_id=pl.col("query_id") + pl.col("qk"), doc_id=pl.col("doc_id") + pl.col("dk"), relevance="relevance"))
    stats = {"lang": lang, "version": f"scale-c{corpus_x}-q{query_x}"}
    write_testset(TestSet(lang, copies(ts.queries, query_x), copies(ts.corpus, corpus_x), qrels, stats), root)
    return root


# A process forked from this one starts with this one's peak RSS (Linux copies the memory map's high-water mark at
# fork and keeps it across exec), so once this benchmark had built a 10x100 set (2.5 GB) every child reported that
# as its own peak, and ``child``'s reading peak with it. The command is started by a small launcher instead, whose
# fork carries only the launcher's few MB; it times the command and writes its wall seconds and peak RSS (KiB,
# wait4's rusage) to the file named first.
LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as exc:
        print(f"cannot run {sys.argv[2]}: {exc}", file=sys.stderr)
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as fh:
    fh.write(f"{wall!r} {usage.ru_maxrss}")
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_measured(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) of the command's own process (started by ``LAUNCHER``), its stdout."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r", suffix=".measured") as figures:
        proc = subprocess.run([sys.executable, "-c", LAUNCHER, figures.name, *cmd], cwd=cwd, stdout=out, stderr=err, text=True)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"error: {' '.join(cmd)} failed ({proc.returncode}): {err.read().strip()[-500:]}")
        wall, peak_kib = figures.read().split()
        return float(wall), int(peak_kib) / 1024, out.read()


def child(data: Path, lang: str, budget: float) -> None:
    """In-process figures for one cell, printed as one JSON line."""
    import resource

    import numpy as np
    import polars as pl

    from eval.evaluate import EvalSettings, evaluate_language
    from eval.memory import fix_mmap_threshold, mmap_threshold
    from eval.models import CharTfidf, EmbeddingCache
    from eval.testset import read_testset

    fix_mmap_threshold(mmap_threshold(CharTfidf.sparse))  # as `eval run` does for this model
    ts = read_testset(data, lang, qrels="stream")  # as `eval run` reads it: the qrels stay on disk
    peak_read = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rss_read = _status_mb("VmRSS")
    # Reset the process's peak RSS (Linux: clear_refs 5), so VmHWM then is the peak during evaluation alone.
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    model = CharTfidf()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result, timing = evaluate_language(ts, model, EmbeddingCache(tmp), EvalSettings(memory_budget_mb=budget), progress=False)
        total = time.perf_counter() - start
    peak_eval = _status_mb("VmHWM")
    # The floor on the same sizes: the product and one row-wise argsort of each corpus variant's full matrix
    # (skipped past 2 x 10^8 cells: the whole matrix is what eval no longer holds).
    q = model.encode_sparse(ts.queries["text"].to_list(), "query")
    rng = np.random.default_rng(0)
    floor = {"sparse product": 0.0, "dense 512-d product": 0.0, "argsort": 0.0}
    sort_blocks = {}
    whole_matrix = ts.queries.height * ts.corpus.height <= 2 * 10**8
    for gender in ("masculine", "feminine") if whole_matrix else ():
        rows = ts.corpus.with_row_index("row").filter(pl.col("gender").is_in([gender, "neutral"]))["row"].to_numpy()
        d = model.encode_sparse(ts.corpus["text"].to_list(), "passage")[rows]
        t = time.perf_counter()
        scores = np.ascontiguousarray((d @ q.T.toarray()).T, dtype=np.float32)
        floor["sparse product"] += time.perf_counter() - t
        qd = rng.standard_normal((q.shape[0], 512), dtype=np.float32)
        dd = rng.standard_normal((len(rows), 512), dtype=np.float32)
        t = time.perf_counter()
        dense = qd @ dd.T
        floor["dense 512-d product"] += time.perf_counter() - t
        del dense, qd, dd
        t = time.perf_counter()
        np.argsort(scores, axis=1)
        floor["argsort"] += time.perf_counter() - t
        if gender == "masculine":
            sort_blocks = compare_sort_blocks(scores)
        del scores
    print(json.dumps({
        "queries": ts.queries.height, "documents": ts.corpus.height, "qrels": _lines(ts.qrels_file), "eval_s": total, "encode_s": timing.encode_s,
        "blocks": timing.extra, "peak_eval_mb": peak_eval, "peak_read_mb": peak_read, "rss_read_mb": rss_read,
        "inputs_mb": sum(f.estimated_size() for f in (ts.queries, ts.corpus)) / 2**20, "floor": floor if whole_matrix else None, "sort_blocks": sort_blocks,
        "symmetry_AO": result["corpora"]["masculine"]["symmetry"]["AO"]["value"],
    }))


def load() -> str:
    """The 1-, 5- and 15-minute load averages: on a shared machine they say how far a figure can be trusted."""
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))


def _status_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status, in MiB."""
    for line in open("/proc/self/status", encoding="ascii"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise SystemExit(f"error: /proc/self/status has no {field} (Linux only)")


def compare_sort_blocks(scores, rounds: int = 3) -> dict:
    """The one-key sort by row blocks (eval's default) against one sort over the whole matrix, alternating."""
    import numpy as np

    from eval import ranking

    default = ranking._SORT_BLOCK_CELLS
    times = {"row blocks": [], "whole matrix": []}
    orders = {}
    try:
        for _ in range(rounds):
            for name, cells in (("row blocks", default), ("whole matrix", scores.size)):
                ranking._SORT_BLOCK_CELLS = cells
                t = time.perf_counter()
                orders[name] = ranking.rank_rows(scores, None)
                times[name].append(time.perf_counter() - t)
    finally:
        ranking._SORT_BLOCK_CELLS = default
    ratios = sorted(w / b for b, w in zip(times["row blocks"], times["whole matrix"]))
    return {"row_blocks_s": float(np.median(times["row blocks"])), "whole_s": float(np.median(times["whole matrix"])),
            "speedup": ratios[len(ratios) // 2], "spread": [ratios[0], ratios[-1]],
            "identical": bool(np.array_equal(orders["row blocks"], orders["whole matrix"]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a built test-set root")
    parser.add_argument("--lang", default="pt")
    parser.add_argument("--work", type=Path, help="where the scaled sets go (default: a temporary folder)")
    parser.add_argument("--cells", default="1x1,3x1,10x1,1x10,10x10", help="corpus x queries copies, comma-separated")
    parser.add_argument("--budget", type=float, default=256, help="eval.memory_budget_mb for the runs")
    parser.add_argument("--without-forms", action="store_true",
                        help="leave out the extra query forms (doublets, neomorphemes): the set as it was before them")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--build", metavar="CxQ:ROOT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.data, args.lang, args.budget)
        return
    if args.build:
        cell, root = args.build.split(":", 1)
        corpus_x, query_x = (int(x) for x in cell.split("x"))
        scaled_testset(args.data, args.lang, corpus_x, query_x, Path(root), args.without_forms)
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    params = work / "params.yaml"
    work.mkdir(parents=True, exist_ok=True)
    params.write_text(f"eval:\n  memory_budget_mb: {args.budget:g}\n", encoding="utf-8")
    print(f"$ {' '.join([Path(sys.executable).name, *sys.argv])}  ({os.cpu_count()} CPUs, load {load()})", flush=True)
    rows = []
    for cell in args.cells.split(","):
        load_before = load()
        corpus_x, query_x = (int(x) for x in cell.split("x"))
        root = work / f"c{corpus_x}-q{query_x}{'-without-forms' if args.without_forms else ''}"
        # Built in a process of its own: Linux carries a process's peak RSS over fork and exec, so a set built here
        # (10x100: about 2.4 GB) would become the peak of every process this one starts.
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--build", f"{cell}:{root}", "--data", str(args.data),
                        "--lang", args.lang, *(["--without-forms"] if args.without_forms else [])], check=True)
        wall, peak, _ = run_measured([sys.executable, "-m", "eval", "run", "--data", str(root), "--lang", args.lang, "--model",
                                      "tfidf-char", "--out", str(work / f"out-c{corpus_x}-q{query_x}"), "--params", str(params),
                                      "--cache", str(work / "cache"), "--quiet", "--force"], REPO)
        _, _, out = run_measured([sys.executable, str(Path(__file__).resolve()), "--child", "--data", str(root), "--lang",
                                  args.lang, "--budget", str(args.budget)], REPO)
        inner = json.loads(out.strip().splitlines()[-1])
        f = inner["floor"]
        floor = f["sparse product"] + f["argsort"] if f else float("nan")
        rows.append({"cell": cell, "wall": wall, "peak": peak, **inner, "floor_s": floor})
        floor_text = (f"floor: sparse product {f['sparse product']:.2f} s + argsort {f['argsort']:.2f} s "
                      f"(dense 512-d product {f['dense 512-d product']:.2f} s)" if f else "floor: not measured (matrix > 2 x 10^8 cells)")
        sb = inner["sort_blocks"]
        sort_text = (f"; one-key sort by row blocks {sb['row_blocks_s']:.2f} s vs whole matrix {sb['whole_s']:.2f} s: "
                     f"{sb['speedup']:.2f}x (spread {sb['spread'][0]:.2f}-{sb['spread'][1]:.2f}), same order: {sb['identical']}" if sb else "")
        print(f"[{cell}] {inner['queries']} queries x {inner['documents']} titles: eval run {wall:.1f} s, peak RSS {peak:.0f} MB; "
              f"reading the set: peak {inner['peak_read_mb']:.0f} MB, then {inner['rss_read_mb']:.0f} MB held "
              f"(queries and corpus frames {inner['inputs_mb']:.0f} MB; the qrels stay on disk); "
              f"evaluate_language {inner['eval_s']:.2f} s ({inner['encode_s']:.2f} s encoding), peak during it {inner['peak_eval_mb']:.0f} MB, "
              f"blocks {inner['blocks']}; {floor_text}{sort_text}; load {load_before} before, {load()} after", flush=True)
    base = rows[0]
    print()
    print("| cell | queries x titles | qrels lines | eval run s | peak RSS MB | exponent (run) | test set held MB (queries+corpus frames) "
          "| peak during evaluate_language MB | eval outside encoding s | floor s | x floor | exponent (outside) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        size = math.log((r["queries"] * r["documents"]) / (base["queries"] * base["documents"]))
        outside, base_outside = r["eval_s"] - r["encode_s"], base["eval_s"] - base["encode_s"]
        exp_run = f"{math.log(r['wall'] / base['wall']) / size:.2f}" if size else "–"
        exp_out = f"{math.log(outside / base_outside) / size:.2f}" if size else "–"
        print(f"| {r['cell']} | {r['queries']} x {r['documents']} | {r['qrels']} | {r['wall']:.1f} | {r['peak']:.0f} | {exp_run} | "
              f"{r['rss_read_mb']:.0f} ({r['inputs_mb']:.0f}) | {r['peak_eval_mb']:.0f} | "
              f"{outside:.2f} | {r['floor_s']:.2f} | {outside / r['floor_s']:.2f} | {exp_out} |")
    print(f"\n(sets under {work}; budget {args.budget:g} MiB; {os.cpu_count()} CPUs, load {load()} at the end)")


if __name__ == "__main__":
    main()
