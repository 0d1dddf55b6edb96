"""Push N translation records to a real local Argilla server and read them back; compare with logging
the same records with the bare Argilla SDK.

    .venv/bin/python benchmarks/bench_annotation.py [--records 5000] [--rounds 2]

Starts its own stack (redis-server, osmem-server, argilla-server on 127.0.0.1, fresh home) and stops it.
"ours" is annotation.push.sync_records: it reads the ids and content hashes already on the server, hashes
every record and upserts the new or changed ones. "bare SDK" is ``dataset.records.log`` of the same
records into an identical fresh dataset. Each round pushes both ways into fresh datasets, alternating
which goes first (ours/bare, bare/ours, ...) so a server that slows as it fills favours neither; the
overhead is reported per round and over the medians, with the spread. Also timed: reading all records
back, and a second push of the same records (nothing to send: the idempotence check alone).
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this tree's annotation package, not whatever the editable install points at

from annotation.push import get_or_create_dataset, sync_records, to_sdk_record  # noqa: E402
from annotation.server import connect  # noqa: E402
from annotation.testing.stack import ArgillaStack  # noqa: E402
from annotation.translations import record_specs, settings  # noqa: E402
from builder.translate import fill_template  # noqa: E402

ENGLISH = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "jobtitlesimilarity" / "dataset" / "en"


def synthetic_translations(n: int) -> pl.DataFrame:
    """n rows in the builder's translations.parquet layout, from the real English titles (repeated with a
    suffix past the 2,700 unique ones)."""
    unique: dict[str, str] = {}
    for name in ("queries.tsv", "corpus_documents.tsv"):
        unique.update(line.rstrip("\n").split("\t") for line in open(ENGLISH / name, encoding="utf-8"))
    titles = list(unique.items())
    rows = []
    for k in range(n):
        sid, en = titles[k % len(titles)]
        sid = sid if k < len(titles) else f"{sid}__{k // len(titles)}"
        m, f = en.lower(), en.lower() + "a"
        rows.append({
            "source_id": sid, "source_text": en, "in_queries": False, "in_corpus": True,
            "sentence_masculine": fill_template("He is a {title}.", en),
            "sentence_feminine": fill_template("She is a {title}.", en),
            "output_masculine": f"Ele é um {m}.", "output_feminine": f"Ela é uma {f}.",
            "mt_masculine": m, "mt_feminine": f,
            "title_masculine": m, "title_feminine": f, "check_masculine": "masculine",
            "check_feminine": "feminine", "check_method": "rule:pt-suffix",
            "verdict": "gendered" if k % 5 else "needs_review",
            "reason": "" if k % 5 else "the feminine output is not the masculine's inflection",
            "flags": [] if k % 7 else ["echo"], "translator": "bergamot", "translator_version": "bench",
            "status": "machine",
        })
    return pl.DataFrame(rows)


def read_back(dataset) -> int:
    return sum(1 for _ in dataset.records(batch_size=1000, with_suggestions=True, with_responses=True))


def push_ours(server, name: str, specs, batch_size: int) -> dict[str, float]:
    dataset = get_or_create_dataset(server, "bench", name, settings())
    t = time.perf_counter()
    report = sync_records(server, dataset, specs, batch_size)
    push = time.perf_counter() - t
    t = time.perf_counter()
    n = read_back(dataset)
    back = time.perf_counter() - t
    t = time.perf_counter()
    again = sync_records(server, dataset, specs, batch_size)
    push_again = time.perf_counter() - t
    assert n == len(specs) and (report.new, again.new, again.changed) == (len(specs), 0, 0), (n, report, again)
    return {"push": push, "read back": back, "push again (no change)": push_again}


def push_bare(server, name: str, specs, batch_size: int) -> dict[str, float]:
    dataset = get_or_create_dataset(server, "bench", name, settings())
    records = [to_sdk_record(s) for s in specs]  # built before the clock: the SDK's own cost only
    t = time.perf_counter()
    dataset.records.log(records, batch_size=batch_size)
    push = time.perf_counter() - t
    t = time.perf_counter()
    n = read_back(dataset)
    back = time.perf_counter() - t
    assert n == len(specs), n
    return {"push": push, "read back": back}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=2, help="rounds of (ours, bare), alternating which goes first")
    args = parser.parse_args()
    logging.getLogger("argilla.sdk").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")
    print(f"$ {' '.join([Path(sys.executable).name, *sys.argv])}  ({os.cpu_count()} CPUs, load {load_average()})", flush=True)
    specs = record_specs(synthetic_translations(args.records), "pt")
    runs: dict[str, list[dict[str, float]]] = {"ours": [], "bare SDK": []}
    order_log = []
    with tempfile.TemporaryDirectory(prefix="bench-argilla-") as home:
        t0 = time.perf_counter()
        stack = ArgillaStack(Path(home)).start()
        print(f"stack cold start: {time.perf_counter() - t0:.1f} s")
        try:
            server = connect(stack.api_url, stack.owner_api_key)
            for r in range(args.rounds):
                order = ("ours", "bare SDK") if r % 2 == 0 else ("bare SDK", "ours")
                for who in order:
                    push = push_ours if who == "ours" else push_bare
                    result = push(server, f"pt-translations-{'ours' if who == 'ours' else 'sdk'}-{r}", specs,
                                  args.batch_size)
                    runs[who].append(result)
                    order_log.append(who)
                    print(f"round {r + 1}: {who:8} push {result['push']:7.2f} s (load {load_average()})", flush=True)
        finally:
            stack.stop()
    n = args.records
    print(f"\n{n} records, batch size {args.batch_size}, {args.rounds} round(s), order: {' / '.join(order_log)}")
    print(f"{'step':32} {'median s':>9} {'min s':>7} {'max s':>7} {'records/s':>10}")
    for who, results in runs.items():
        for step in results[0]:
            secs = [x[step] for x in results]
            med = statistics.median(secs)
            print(f"{who + ': ' + step:32} {med:9.2f} {min(secs):7.2f} {max(secs):7.2f} {n / med:10.0f}")
    per_round = [o["push"] / b["push"] - 1 for o, b in zip(runs["ours"], runs["bare SDK"])]
    overall = statistics.median(o["push"] for o in runs["ours"]) / statistics.median(b["push"] for b in runs["bare SDK"]) - 1
    print(f"\noverhead of the idempotent push over bare SDK logging: {overall:+.1%} (ratio of medians; "
          f"per round {', '.join(f'{x:+.1%}' for x in per_round)}; target <= +10%); load {load_average()} at the end")


def load_average() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


if __name__ == "__main__":
    main()
