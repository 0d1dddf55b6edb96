"""Push N translation records to a real local Argilla server and read them back; compare with logging
the same records with the bare Argilla SDK.

    .venv/bin/python benchmarks/bench_annotation.py [--records 5000]

Starts its own stack (redis-server, osmem-server, argilla-server on 127.0.0.1, fresh home) and stops it.
"ours" is annotation.push.sync_records: it reads the ids and content hashes already on the server, hashes
every record and upserts the new or changed ones. "bare SDK" is ``dataset.records.log`` of the same
records into an identical fresh dataset. Also timed: reading all records back, and a second push of the
same records (nothing to send: the idempotence check alone).
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
import warnings
from pathlib import Path

import polars as pl

from annotation.push import get_or_create_dataset, sync_records, to_sdk_record
from annotation.server import connect
from annotation.testing.stack import ArgillaStack
from annotation.translations import record_specs, settings

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
            "sentence_masculine": f"He is a {en}.", "sentence_feminine": f"She is a {en}.",
            "output_masculine": f"Ele é um {m}.", "output_feminine": f"Ela é uma {f}.",
            "title_masculine": m, "title_feminine": f, "check_masculine": "masculine",
            "check_feminine": "feminine", "check_method": "rule:pt-suffix",
            "verdict": "gendered" if k % 5 else "needs_review", "flags": [] if k % 7 else ["echo"],
        })
    return pl.DataFrame(rows)


def read_back(dataset) -> int:
    return sum(1 for _ in dataset.records(batch_size=1000, with_suggestions=True, with_responses=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    logging.getLogger("argilla.sdk").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")
    specs = record_specs(synthetic_translations(args.records), "pt")
    with tempfile.TemporaryDirectory(prefix="bench-argilla-") as home:
        t0 = time.perf_counter()
        stack = ArgillaStack(Path(home)).start()
        print(f"stack cold start: {time.perf_counter() - t0:.1f} s")
        try:
            server = connect(stack.api_url, stack.owner_api_key)
            results = {}
            # bare SDK first: it then meets the fresher server, which can only flatter the baseline
            bare = get_or_create_dataset(server, "bench", "pt-translations-sdk", settings())
            records = [to_sdk_record(s) for s in specs]
            t = time.perf_counter()
            bare.records.log(records, batch_size=args.batch_size)
            results["bare SDK log"] = time.perf_counter() - t
            t = time.perf_counter()
            n_sdk = read_back(bare)
            results["bare SDK read back"] = time.perf_counter() - t

            ours = get_or_create_dataset(server, "bench", "pt-translations-ours", settings())
            t = time.perf_counter()
            report = sync_records(server, ours, specs, args.batch_size)
            results["ours: push"] = time.perf_counter() - t
            t = time.perf_counter()
            n_ours = read_back(ours)
            results["ours read back"] = time.perf_counter() - t
            t = time.perf_counter()
            again = sync_records(server, ours, specs, args.batch_size)
            results["ours: push again (no change)"] = time.perf_counter() - t
        finally:
            stack.stop()
    assert n_sdk == n_ours == args.records, (n_sdk, n_ours)
    assert (report.new, again.new, again.changed) == (args.records, 0, 0), (report, again)
    n = args.records
    print(f"\n{n} records, batch size {args.batch_size}")
    print(f"{'step':32} {'seconds':>8} {'records/s':>10}")
    for step, secs in results.items():
        print(f"{step:32} {secs:8.2f} {n / secs:10.0f}")
    overhead = results["ours: push"] / results["bare SDK log"] - 1
    print(f"\noverhead of the idempotent push over bare SDK logging: {overhead:+.1%} (target <= +10%)")


if __name__ == "__main__":
    main()
