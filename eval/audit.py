"""Several models at once (definitions in docs/audit.md): ``run_audit`` scores every model with
``eval.evaluate.evaluate`` (the results ``python -m eval run`` writes) and, with the mitigation, once more on
the normalised test set, then audits each language and corpus variant:

- ``eval.pair_matrix``: the models' per-pair asymmetries and AP side by side;
- ``eval.audit_figures``: mean asymmetries, correlations between models (``eval.correlation``), systemic
  exclusion (``eval.exclusion``), the most often excluded occupations, the per-pair rows;
- ``eval.mitigation_effect``: symmetry, MAP and accuracy before and after normalisation.

The audit's settings and its ``params.yaml`` reader are here too.
"""

from __future__ import annotations

from collections.abc import Sequence

from eval.audit_figures import audit_corpus, form_exclusion
from eval.correlation import correlation_with_ci, pearson, spearman
from eval.errors import AuditError
from eval.exclusion import check_tau, exclusion, served
from eval.mitigation_effect import TAUTOLOGY_NOTE, mitigation_corpus
from eval.pair_matrix import PairMatrix, pair_matrix
from eval.params import AuditSettings
from eval.testset import TestSet

__all__ = [
    "AuditError",
    "AuditSettings",
    "PairMatrix",
    "check_tau",
    "served",
    "exclusion",
    "pearson",
    "spearman",
    "correlation_with_ci",
    "pair_matrix",
    "audit_corpus",
    "mitigation_corpus",
    "run_audit",
]


# The settings live with the other typed params (eval/params.py); re-exported here.
def query_texts(ts: TestSet) -> tuple[dict[str, str], dict[str, list[str]]]:
    """id -> text and id -> English source titles of a test set's queries."""
    return (dict(zip(ts.queries["id"].to_list(), ts.queries["text"].to_list())),
            dict(zip(ts.queries["id"].to_list(), ts.queries["source_texts"].to_list())))


def run_audit(
    data, langs: Sequence[str], models: Sequence, cache, eval_settings, settings: AuditSettings, *,
    mitigation: bool = True, progress: bool = True, language_packs: Sequence[str] = (),
) -> tuple[dict, list[dict]]:
    """Score every model on every language (before and, with ``mitigation``, after normalisation) and audit.

    ``models``: names for ``eval.models.load_model`` or loaded models. Returns the audit document and the
    per-model results documents of ``eval.evaluate.evaluate`` (what ``python -m eval run`` writes, on the
    original test set). ``language_packs``: extra folders of language packs (params.yaml ``language_packs``);
    each language's declaration is resolved once here and its mitigation rules passed down."""
    from eval import __version__ as toolkit_version
    from eval.evaluate import evaluate, evaluate_language
    from eval.mitigation import normalise_testset, split_pairs
    from eval.models import load_model
    from eval.testset import read_testset
    from languages import LanguageError, load

    langs = list(langs)
    names = list(dict.fromkeys(m if isinstance(m, str) else m.meta.name for m in models))
    if len(names) < 2:
        raise AuditError(
            f"an audit across models needs at least two different models, got {names}: correlations between models "
            "and exclusion by tau models are undefined for one model; give two or more (--models A,B) or score a single "
            "model with `python -m eval run`")
    check_tau(settings.tau, len(names))
    if settings.k not in eval_settings.accuracy_k:
        raise AuditError(f"audit k={settings.k} must be one of the evaluated accuracy cut-offs {eval_settings.accuracy_k}")
    if mitigation:
        try:
            packs = {lang: load(lang, list(language_packs)) for lang in langs}
        except LanguageError as exc:
            raise AuditError(f"{exc}; audit without normalisation with --no-mitigation") from None
        unsupported = [lang for lang, pack in packs.items() if pack.mitigation is None]
        if unsupported:
            raise AuditError(f"no normalisation rules for {unsupported} (their packs have no mitigation: section); "
                             "audit those languages with --no-mitigation")
    testsets = {lang: read_testset(data, lang) for lang in langs}
    normalised = {lang: normalise_testset(ts, packs[lang]) for lang, ts in testsets.items()} if mitigation else {}
    runs: list[dict] = []
    after: dict[str, dict[str, dict]] = {lang: {} for lang in langs}
    metas = []
    for spec in models:
        model = load_model(spec) if isinstance(spec, str) else spec
        runs.append(evaluate(data, langs, model, cache, eval_settings, progress=progress))
        if mitigation:
            for lang in langs:
                after[lang][model.meta.name], _ = evaluate_language(normalised[lang][0], model, cache, eval_settings, progress=progress)
        metas.append(model.meta.to_dict())  # tfidf-char's revision names the corpus it was last fitted on
    model_labels = [m["name"] for m in metas]
    if len(set(model_labels)) != len(model_labels):
        raise AuditError(f"two model names load the same model ({model_labels}); give distinct models")
    before = {lang: {run["model"]["name"]: run["languages"][lang] for run in runs} for lang in langs}
    testset = runs[0]["testset"]

    rbo_name = eval_settings.rbo_name
    languages: dict[str, dict] = {}
    for lang, ts in testsets.items():
        texts, sources = query_texts(ts)
        block: dict = {"testset_version": testset["languages"][lang], "corpora": {}}
        for corpus in ("masculine", "feminine"):
            pm = pair_matrix(before[lang], corpus, settings.k, eval_settings.measure_objects)
            block["corpora"][corpus] = audit_corpus(pm, texts, settings, sources)
            forms = form_exclusion(before[lang], corpus, settings)
            if forms:  # a set with extra query forms (doublet, neomorpheme): the pairs each form excludes
                block["corpora"][corpus]["forms"] = forms
        if mitigation:
            split = split_pairs(ts, packs[lang])
            block["mitigation"] = {
                "rules": lang,
                "changes": normalised[lang][1],
                "pairs_identical_after": int(split["identical_after"].sum()),
                "pairs": split.height,
                "pairs_still_different": [
                    {"masculine": m, "feminine": f, "feminine_normalised": fn}
                    for m, f, fn, same in split.select("masculine", "feminine", "feminine_normalised", "identical_after").iter_rows()
                    if not same
                ],
                "models": {
                    name: {corpus: mitigation_corpus(before[lang][name], after[lang][name], split, corpus, rbo_name, settings)
                           for corpus in ("masculine", "feminine")}
                    for name in model_labels
                },
            }
        languages[lang] = block
    doc = {
        "toolkit": {"name": "gendered-job-titles eval audit", "version": toolkit_version},
        "models": metas,
        "testset": testset,
        "eval_settings": eval_settings.describe(),
        "audit_settings": settings.describe(len(names)),
        "mitigation": {"applied": mitigation, "note": TAUTOLOGY_NOTE if mitigation else None},
        "languages": languages,
    }
    return doc, runs
