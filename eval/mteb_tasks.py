"""A release's languages as MTEB retrieval tasks (the ``mteb`` extra): ``mteb.evaluate(model, tasks)`` gives MTEB's
own scores and, beside them, this benchmark's symmetry and parity figures.

    import mteb
    from gendered_job_titles.eval.mteb_tasks import gendered_tasks   # in a checkout: from eval.mteb_tasks import ...

    results = mteb.evaluate(mteb.get_model("intfloat/multilingual-e5-small"), gendered_tasks("release"), cache=None)

``gendered_tasks(root)``: one task per language of the folder (a release folder, or a builder's data/), named
``GenderedJobTitlesRetrieval-<lang>``, read offline from the BEIR-shaped copies ``releases make`` writes beside the
set (``<lang>/beir/``, ``eval.testset.beir_config_name``); nothing is downloaded. A task's four subsets are the
masculine and the feminine queries, each over the masculine corpus (masculine + neutral titles) and the feminine
one (feminine + neutral): ``masculine-queries_masculine-corpus``, ``feminine-queries_masculine-corpus``, ... MTEB
scores each subset as any retrieval task (``ndcg_at_10`` first; the BEIR files rank every title, as ``eval run
--self-match keep``).

This benchmark's figures are eval's own, never recomputed here: the task runs ``eval.evaluate.evaluate_language``
on the language's test set with the same model, handed the texts as MTEB hands them (``eval.models.MtebModel``,
the path of ``eval run --model module:callable``), under ``settings`` (default: eval's defaults; e.g.
``read_eval_settings("params.yaml")``), so its figures are those ``eval run`` writes for that model and set. Each
subset's scores gain, for its corpus, every pair measure's mean (``symmetry_AO``, ``symmetry_RBO(p=0.98)``, ...)
and every gap (``parity_MAP_M-MAP_F``, ``parity_paired_AP_M-AP_F``, ...), and for its query gender every query
measure's mean under its results name (``MAP``, ``accuracy_acc@1``, ``retrieval_nDCG@10``): the values of the
results' ``corpora.<corpus>`` block (their intervals and counts are in ``eval run``'s results). The texts are
encoded again for eval, after MTEB's search: MTEB keeps each query's top 1000 scores, not the whole ranking with
eval's exact scores and tie-break that AO and RBO are defined on.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from eval.errors import EvalError

try:  # the mteb extra
    from datasets import Dataset
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.languages.iso_mappings import _hf_lang_to_iso_lang_script  # pinned mteb (pyproject): ISO 639-1 -> "por-Latn"
    from mteb.models import EncoderProtocol
except ModuleNotFoundError as exc:  # still a ModuleNotFoundError (what an optional module's import raises), with the fix
    raise ModuleNotFoundError(f"eval.mteb_tasks needs the mteb extra ({exc}); pip install '.[mteb]'", name=exc.name) from None

from eval.evaluate import CORPORA, evaluate_language
from eval.models import EmbeddingCache, MtebModel
from eval.params import EvalSettings
from eval.testset import (BEIR_FOLDER, FEMININE, MASCULINE, beir_config_name, list_languages, read_testset,
                          testset_digest)

QUERY_FORMS = (MASCULINE, FEMININE)
SPLIT = "test"


# A task's subsets: the BEIR configurations of the masculine and the feminine queries over each corpus.
SUBSETS = {beir_config_name(form, corpus): (form, corpus) for corpus in CORPORA for form in QUERY_FORMS}


def _jsonl(path: Path, fields: tuple[str, ...]) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalError(f"{path}:{number}: not a JSON line ({exc.msg}); make the release again "
                                "(python -m releases make)") from None
            if not isinstance(row, dict) or any(not isinstance(row.get(f), str) for f in fields):
                raise EvalError(f"{path}:{number}: a BEIR row needs the text fields {', '.join(fields)}; make the "
                                "release again (python -m releases make)")
            rows.append(row)
    return rows


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as fh:
        if fh.readline().rstrip("\n") != "query-id\tcorpus-id\tscore":
            raise EvalError(f"{path}:1: not the BEIR header query-id<TAB>corpus-id<TAB>score; make the release again")
        for number, line in enumerate(fh, 2):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or not parts[2].isdigit():
                raise EvalError(f"{path}:{number}: a qrels line is query-id<TAB>corpus-id<TAB>score (a whole number)")
            out.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return out


class GenderedJobTitlesRetrieval(AbsTaskRetrieval):
    """One language of a test-set folder as an MTEB retrieval task (module docstring); ``gendered_task`` makes one.
    MTEB reads a task's ``metadata`` from its class (it drops an instance's own when it unloads the data), so each
    language is a subclass of this one that carries its metadata."""

    root: Path
    lang: str
    settings: EvalSettings

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._figures: tuple[object, dict] | None = None  # (model, eval's figures): MTEB evaluates subset by subset

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        """Each subset from its BEIR folder: corpus (``id``, ``title``, ``text``), queries (``id``, ``text``), qrels."""
        if self.data_loaded:
            return
        self.dataset = {}
        for subset in SUBSETS:
            folder = self.root / self.lang / BEIR_FOLDER / subset
            corpus = _jsonl(folder / "corpus.jsonl", ("_id", "title", "text"))
            queries = _jsonl(folder / "queries.jsonl", ("_id", "text"))
            self.dataset[subset] = {SPLIT: RetrievalSplitData(
                corpus=Dataset.from_dict({"id": [r["_id"] for r in corpus], "title": [r["title"] for r in corpus],
                                          "text": [r["text"] for r in corpus]}),
                queries=Dataset.from_dict({"id": [r["_id"] for r in queries], "text": [r["text"] for r in queries]}),
                relevant_docs=_qrels(folder / "qrels" / "test.tsv"), top_ranked=None)}
        self.data_loaded = True

    def evaluate(self, model, split: str = SPLIT, subsets_to_run=None, **kwargs: Any):
        """MTEB's scores per subset, each with eval's figures of its corpus and query gender added."""
        if not isinstance(model, EncoderProtocol):
            raise EvalError(f"{self.metadata.name}: {type(model).__name__} is not an MTEB encoder (mteb.models."
                            "EncoderProtocol); eval's figures rank embeddings, so give an encoder")
        scores = super().evaluate(model, split, subsets_to_run, **kwargs)
        if self._figures is None or self._figures[0] is not model:
            self._figures = (model, self.eval_figures(model))
        figures = self._figures[1]
        for subset, subset_scores in scores.items():
            form, corpus = SUBSETS[subset]
            subset_scores.update(subset_figures(figures["corpora"][corpus], form, self.settings))
        return scores

    def eval_figures(self, model) -> dict:
        """eval's figures of this language for ``model`` (``evaluate_language``: what ``eval run`` writes per language)."""
        meta = getattr(model, "mteb_model_meta", None)
        spec = getattr(meta, "name", None) or type(model).__name__
        encoder = MtebModel(spec, model, None, task_metadata=self.metadata)
        figures, _ = evaluate_language(read_testset(self.root, self.lang, qrels="stream"), encoder,
                                       EmbeddingCache(self.settings.cache), self.settings, progress=False)
        return figures


def subset_figures(block: dict, gender: str, settings: EvalSettings) -> dict[str, float | None]:
    """The values of one corpus block of eval's results that a subset of ``gender`` queries carries (module docstring)."""
    out: dict[str, float | None] = {f"symmetry_{name}": fig["value"] for name, fig in block["symmetry"].items()}
    for measure in settings.query_measures:
        out["_".join(measure.location)] = measure.figures(block)[gender]["value"]
    out.update({f"parity_{name}": fig["value"] for name, fig in block["parity"].items()})
    return out


def gendered_task(root: str | Path, lang: str, settings: EvalSettings | None = None) -> GenderedJobTitlesRetrieval:
    """The MTEB task of language ``lang`` of the folder ``root``, scored under ``settings`` (default: eval's defaults)."""
    root = Path(root)
    folder = root / lang / BEIR_FOLDER
    missing = [s for s in SUBSETS if not (folder / s / "qrels" / "test.tsv").is_file()]
    if missing:
        raise EvalError(f"{folder / missing[0]}: no BEIR copy of {lang}'s {missing[0]} (corpus.jsonl, queries.jsonl, "
                        "qrels/test.tsv); use a release made with release.beir: true (python -m releases make)")
    language = _hf_lang_to_iso_lang_script(lang)
    if language is None:
        raise EvalError(f"{root / lang}: MTEB knows no ISO 639-3 language and script for {lang!r}; a language folder is "
                        "named by its ISO 639-1 code")
    metadata = TaskMetadata(
        name=f"GenderedJobTitlesRetrieval-{lang}",
        description=f"Masculine and feminine job-title queries in {lang}, each ranked over the masculine and the "
        "feminine corpus (García-Sardiña et al. 2025); beside MTEB's scores, symmetry (AO, RBO) and parity gaps.",
        dataset={"path": str(folder.resolve()), "revision": testset_digest(root, lang)},
        type="Retrieval", category="t2t", modalities=["text"], eval_splits=[SPLIT],
        eval_langs={s: [language] for s in SUBSETS}, main_score="ndcg_at_10",
    )
    # the task's corpora are the masculine and the feminine ones, whatever eval.corpora adds (the doublet corpus)
    attributes = {"metadata": metadata, "root": root, "lang": lang,
                  "settings": replace(settings or EvalSettings(), corpora=CORPORA)}
    return type(f"GenderedJobTitlesRetrieval_{lang}", (GenderedJobTitlesRetrieval,), attributes)()


def gendered_tasks(root: str | Path = "release", langs: list[str] | None = None,
                   settings: EvalSettings | None = None) -> list[GenderedJobTitlesRetrieval]:
    """One task per language of ``root`` (``langs``: those only), for ``mteb.evaluate``."""
    found = list_languages(root)
    if not found:
        raise EvalError(f"{root}: no language folder with a test set (<lang>/queries.parquet); give a release folder "
                        "(python -m releases checkout <version>)")
    unknown = sorted(set(langs or ()) - set(found))
    if unknown:
        raise EvalError(f"{root}: no test set for {', '.join(unknown)} (it holds {', '.join(found)})")
    return [gendered_task(root, lang, settings) for lang in (langs or found)]
