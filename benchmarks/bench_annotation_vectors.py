"""What ``annotation.vectors`` costs a translations push: the same records pushed with and without vectors.

    .venv/bin/python benchmarks/bench_annotation_vectors.py --data /work/main/data --lang pt [--records 500]
        [--model m-use] [--rounds 2]

Starts its own local stack (redis-server, osmem-server, argilla-server on 127.0.0.1, fresh home) and stops it.
The records are the first N of a real build's translation records (annotation.translations.record_specs, doubt
order). Each round pushes both ways into fresh datasets, alternating which goes first. "without" is
get_or_create_dataset + sync_records, what a push does with the option off; "with" adds what the option adds:
embedding the titles (annotation.vectors.with_vectors: the model's encode, the model loaded once before the
clock, its load time printed apart), the vector fields, and the vectors in the upserts. The k-NN check after a
push is left out (osmem refuses it at once; one query on a real backend).
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this tree's annotation package

from annotation import translations, vectors  # noqa: E402
from annotation.push import get_or_create_dataset, sync_records  # noqa: E402
from annotation.server import connect  # noqa: E402
from annotation.testing.stack import ArgillaStack  # noqa: E402


def load_average() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def push_without(server, name, specs, batch_size) -> dict[str, float]:
    t = time.perf_counter()
    dataset = get_or_create_dataset(server, "bench", name, translations.settings())
    report = sync_records(server, dataset, specs, batch_size)
    assert report.new == len(specs), report
    return {"total": time.perf_counter() - t}


def push_with(server, name, specs, batch_size, embedder) -> dict[str, float]:
    t = time.perf_counter()
    embedded, dimension = vectors.with_vectors(specs, embedder)
    encode = time.perf_counter() - t
    settings = translations.settings()
    settings.vectors = vectors.vector_fields(translations.VECTOR_TITLES, dimension)
    dataset = get_or_create_dataset(server, "bench", name, settings)
    vectors.ensure_vector_fields(server, dataset, vectors.vector_fields(translations.VECTOR_TITLES, dimension))
    t_send = time.perf_counter()
    report = sync_records(server, dataset, embedded, batch_size)
    end = time.perf_counter()
    assert report.new == len(specs), report
    return {"total": end - t, "encode": encode, "send": end - t_send}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="root of a build (holds <lang>/translations.parquet)")
    parser.add_argument("--lang", default="pt")
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--model", default="m-use")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    logging.getLogger("argilla.sdk").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")
    print(f"$ {' '.join([Path(sys.executable).name, *sys.argv])}  ({os.cpu_count()} CPUs, load {load_average()})",
          flush=True)
    specs = translations.record_specs(translations.read_translations(args.data, args.lang), args.lang)[:args.records]
    t = time.perf_counter()
    embedder = vectors.load_embedder(args.model)
    print(f"model {args.model} loaded in {time.perf_counter() - t:.1f} s (once, outside the timings)")
    runs: dict[str, list[dict[str, float]]] = {"without": [], "with": []}
    with tempfile.TemporaryDirectory(prefix="bench-argilla-vectors-") as home:
        t = time.perf_counter()
        stack = ArgillaStack(Path(home)).start()
        print(f"stack cold start: {time.perf_counter() - t:.1f} s", flush=True)
        try:
            server = connect(stack.api_url, stack.owner_api_key)
            for r in range(args.rounds):
                order = ("without", "with") if r % 2 == 0 else ("with", "without")
                for how in order:
                    name = f"{args.lang}-translations-{how}-{r}"
                    result = (push_with(server, name, specs, args.batch_size, embedder) if how == "with"
                              else push_without(server, name, specs, args.batch_size))
                    runs[how].append(result)
                    print(f"round {r + 1}: {how:7} vectors " + ", ".join(f"{k} {v:.2f} s" for k, v in result.items())
                          + f" (load {load_average()})", flush=True)
        finally:
            stack.stop()
    print(f"\n{len(specs)} records of {args.data}/{args.lang}, model {args.model}, batch size {args.batch_size}, "
          f"{args.rounds} round(s)")
    for how, results in runs.items():
        for step in results[0]:
            secs = [x[step] for x in results]
            print(f"{how + ' vectors: ' + step:24} median {statistics.median(secs):7.2f} s  "
                  f"(min {min(secs):.2f}, max {max(secs):.2f})")
    ratio = statistics.median(x["total"] for x in runs["with"]) / statistics.median(x["total"] for x in runs["without"])
    print(f"push with vectors / without: {ratio:.2f}x (ratio of medians); load {load_average()} at the end")


if __name__ == "__main__":
    main()
