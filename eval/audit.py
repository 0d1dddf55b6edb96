"""Several models at once: per-pair asymmetry, how correlated the models' failures are, systemic exclusion,
and the normalisation mitigation measured before and after (definitions in docs/audit.md).

Inputs are the language blocks ``eval.evaluate.evaluate_language`` returns (their ``per_pair`` and
``per_query`` rows), one per model, over the same test set. Per query pair and model:

- asymmetry ``1-AO`` and ``1-RBO(p)`` of the masculine and feminine rankings, and the gap ``AP_M-AP_F``;
- across models, Pearson and Spearman correlations of those per-pair vectors, with a bootstrap interval
  that resamples pairs, the same pairs for every model;
- served: a query is **served** by a model when a relevant title is in its top k and its AP >= rho, and
  **fails** otherwise. A pair is **feminine-excluded** when at least tau models fail the feminine form
  while serving the masculine form (each model judged on both forms), and masculine-excluded the reverse.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from eval.errors import EvalError
from eval.stats import bootstrap_ci, percentile_interval, resample_indices
from eval.testset import TestSet

MEASURES = ("1-AO", "1-RBO", "AP_M-AP_F")  # "1-RBO" is named with its p in every output
CORRELATIONS = ("pearson", "spearman")

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
]


# The settings and the error type live with the other typed params (eval/params.py); re-exported here.
from eval.errors import AuditError  # noqa: E402
from eval.params import AuditSettings  # noqa: E402


def check_tau(tau: int, n_models: int) -> int:
    if not isinstance(tau, (int, np.integer)) or isinstance(tau, bool):
        raise AuditError(f"tau must be a whole number of models, got {tau!r}")
    if tau < 1:
        raise AuditError(f"tau must be at least 1 model, got {tau}")
    if tau > n_models:
        raise AuditError(
            f"tau = {tau} is larger than the number of models ({n_models}): no pair could ever be excluded by "
            f"{tau} models; use a tau between 1 and {n_models} or audit more models"
        )
    return int(tau)


# --- pure functions --------------------------------------------------------------------------------------


def served(hit_at_k: np.ndarray, ap: np.ndarray, rho: float) -> np.ndarray:
    """True where a query is served: a relevant title in the top k (``hit_at_k`` 1) and AP >= rho."""
    hit_at_k = np.asarray(hit_at_k, dtype=np.float64)
    ap = np.asarray(ap, dtype=np.float64)
    if hit_at_k.shape != ap.shape:
        raise ValueError(f"hit_at_k {hit_at_k.shape} and ap {ap.shape} must have the same shape")
    if np.isnan(hit_at_k).any() or np.isnan(ap).any():
        raise ValueError("served is undefined for a query without relevant titles (NaN); leave those pairs out first")
    return (hit_at_k > 0) & (ap >= rho)


def exclusion(served_m: np.ndarray, served_f: np.ndarray, tau: int) -> dict[str, np.ndarray]:
    """Per pair (rows) over models (columns): how many models fail one form while serving the other, and
    whether at least ``tau`` do. ``both_failed``: at least tau models fail both forms (not a gender gap)."""
    served_m = np.asarray(served_m, dtype=bool)
    served_f = np.asarray(served_f, dtype=bool)
    if served_m.shape != served_f.shape or served_m.ndim != 2:
        raise ValueError(f"served_m {served_m.shape} and served_f {served_f.shape} must be the same (pairs, models) shape")
    check_tau(tau, served_m.shape[1])
    count_f = (served_m & ~served_f).sum(axis=1)
    count_m = (served_f & ~served_m).sum(axis=1)
    count_both = (~served_m & ~served_f).sum(axis=1)
    return {
        "feminine_count": count_f, "masculine_count": count_m, "both_failed_count": count_both,
        "feminine": count_f >= tau, "masculine": count_m >= tau, "both_failed": count_both >= tau,
    }


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r per row of two (rows, n) arrays; NaN where a row is constant."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    sx = np.sqrt((xc * xc).sum(axis=1))
    sy = np.sqrt((yc * yc).sum(axis=1))
    constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=1) / (sx * sy)
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def _ranks_rows(x: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(x, axis=1)  # ties get their average rank


def _undefined_reason(x: np.ndarray, y: np.ndarray, names: tuple[str, str]) -> str | None:
    for v, name in ((x, names[0]), (y, names[1])):
        if v.size < 2:
            return f"fewer than 2 pairs ({v.size}): correlation undefined"
        if np.ptp(v) == 0:
            return f"{name} is constant (every pair {v[0]:g}): correlation undefined"
    return None


def _check_vectors(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"two vectors of the same length are needed, got {x.shape} and {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("vectors contain NaN; keep only the pairs every model scores")
    return x, y


def pearson(x: Sequence[float], y: Sequence[float], names: tuple[str, str] = ("x", "y")) -> tuple[float, str | None]:
    """Pearson r and, when it is undefined (a constant vector, fewer than 2 values), NaN and the reason."""
    x, y = _check_vectors(x, y)
    reason = _undefined_reason(x, y, names)
    if reason:
        return float("nan"), reason
    return float(_pearson_rows(x[None], y[None])[0]), None


def spearman(x: Sequence[float], y: Sequence[float], names: tuple[str, str] = ("x", "y")) -> tuple[float, str | None]:
    """Spearman rho (Pearson r of average ranks) and, when undefined, NaN and the reason."""
    x, y = _check_vectors(x, y)
    reason = _undefined_reason(x, y, names)
    if reason:
        return float("nan"), reason
    return float(_pearson_rows(_ranks_rows(x[None]), _ranks_rows(y[None]))[0]), None


def correlation_with_ci(
    x: Sequence[float], y: Sequence[float], method: str, *, resamples: int = 1000, seed: int = 0,
    names: tuple[str, str] = ("x", "y"),
) -> dict:
    """``{"value", "ci95", "n", "reason", "undefined_resamples"}``: the correlation and a percentile bootstrap
    over pairs (the same resampled pairs for both vectors); resamples on which it is undefined are left out
    of the interval and counted."""
    if method not in CORRELATIONS:
        raise ValueError(f"method must be one of {CORRELATIONS}, got {method!r}")
    x, y = _check_vectors(x, y)
    value, reason = (pearson if method == "pearson" else spearman)(x, y, names)
    out = {"value": None if reason else value, "ci95": [None, None], "n": int(x.size), "reason": reason,
           "undefined_resamples": None}
    if reason:
        return out
    idx = resample_indices(x.size, resamples=resamples, seed=seed)
    xs, ys = x[idx], y[idx]
    if method == "spearman":
        xs, ys = _ranks_rows(xs), _ranks_rows(ys)
    estimates = _pearson_rows(xs, ys)
    lo, hi = percentile_interval(estimates)
    out["ci95"] = [None if math.isnan(lo) else lo, None if math.isnan(hi) else hi]
    out["undefined_resamples"] = int(np.isnan(estimates).sum())
    return out


# --- from evaluation results to per-pair matrices ------------------------------------------------------


@dataclass
class PairMatrix:
    """Aligned (pairs, models) arrays for one language and corpus variant."""

    corpus: str
    models: list[str]
    pairs: list[tuple[str, str, str]]  # (pair_id, m_id, f_id)
    values: dict[str, np.ndarray]  # measure name -> (pairs, models); NaN where a form has no relevant title
    ap_m: np.ndarray
    ap_f: np.ndarray
    hit_m: np.ndarray  # relevant title in the top k (1.0 / 0.0), NaN without relevant titles
    hit_f: np.ndarray

    @property
    def scorable(self) -> np.ndarray:
        """Pairs whose two forms have relevant titles in the corpus variant (the same for every model)."""
        return ~(np.isnan(self.ap_m).any(axis=1) | np.isnan(self.ap_f).any(axis=1))


def _nan(v) -> float:
    return float("nan") if v is None else float(v)


def pair_matrix(blocks: Mapping[str, dict], corpus: str, k: int, rbo_name: str) -> PairMatrix:
    """Per-pair measures of several models from their ``evaluate_language`` blocks (same test set)."""
    models = list(blocks)
    keys: list[tuple[str, str, str]] | None = None
    cols: dict[str, list[np.ndarray]] = {m: [] for m in ("1-AO", "1-RBO", "AP_M-AP_F", "ap_m", "ap_f", "hit_m", "hit_f")}
    for name in models:
        block = blocks[name]
        rows = [r for r in block["per_pair"] if r["corpus"] == corpus]
        these = [(r["pair_id"], r["m_id"], r["f_id"]) for r in rows]
        if keys is None:
            keys = these
        elif these != keys:
            raise AuditError(f"model {name!r} was scored on other query pairs than {models[0]!r}; audit results of one test set")
        queries = {r["query_id"]: r for r in block["per_query"] if r["corpus"] == corpus}
        acc_key = f"acc@{k}"
        if queries and acc_key not in next(iter(queries.values())):
            raise AuditError(f"model {name!r}: results hold no {acc_key}; evaluate with accuracy_k including {k}")
        if rbo_name not in (rows[0] if rows else {rbo_name: 0}):
            raise AuditError(f"model {name!r}: results hold no {rbo_name}; evaluate with the same RBO p")
        cols["1-AO"].append(np.array([1.0 - r["AO"] for r in rows]))
        cols["1-RBO"].append(np.array([1.0 - r[rbo_name] for r in rows]))
        ap_m = np.array([_nan(r["AP_M"]) for r in rows])
        ap_f = np.array([_nan(r["AP_F"]) for r in rows])
        cols["AP_M-AP_F"].append(ap_m - ap_f)
        cols["ap_m"].append(ap_m)
        cols["ap_f"].append(ap_f)
        cols["hit_m"].append(np.array([_nan(queries[m][acc_key]) for _, m, _ in these]))
        cols["hit_f"].append(np.array([_nan(queries[f][acc_key]) for _, _, f in these]))
    stack = {name: (np.stack(v, axis=1) if v and len(v[0]) else np.zeros((0, len(models)))) for name, v in cols.items()}
    return PairMatrix(
        corpus, models, keys or [],
        {"1-AO": stack["1-AO"], "1-RBO": stack["1-RBO"], "AP_M-AP_F": stack["AP_M-AP_F"]},
        stack["ap_m"], stack["ap_f"], stack["hit_m"], stack["hit_f"],
    )


def _share(indicator: np.ndarray, settings: AuditSettings) -> dict:
    values = np.asarray(indicator, dtype=np.float64)
    if values.size == 0:
        return {"value": None, "ci95": [None, None], "n": 0, "count": 0}
    lo, hi = bootstrap_ci(values, resamples=settings.bootstrap_resamples, seed=settings.seed)
    return {"value": float(values.mean()), "ci95": [lo, hi], "n": int(values.size), "count": int(values.sum())}


def audit_corpus(pm: PairMatrix, texts: Mapping[str, str], settings: AuditSettings, rbo_name: str,
                 sources: Mapping[str, list[str]] | None = None) -> dict:
    """Per-pair rows, correlations between models, systemic exclusion (with the rho x tau grid) and the most
    often excluded occupations for one corpus variant."""
    n_models = len(pm.models)
    check_tau(settings.tau, n_models)
    label = {"1-AO": "1-AO", "1-RBO": f"1-{rbo_name}", "AP_M-AP_F": "AP_M-AP_F"}
    scorable = pm.scorable

    correlations: dict[str, list[dict]] = {}
    for measure in MEASURES:
        values = pm.values[measure]
        rows = ~np.isnan(values).any(axis=1)
        entries = []
        for a in range(n_models):
            for b in range(a + 1, n_models):
                names = (pm.models[a], pm.models[b])
                entry = {"a": names[0], "b": names[1]}
                for method in CORRELATIONS:
                    entry[method] = correlation_with_ci(
                        values[rows, a], values[rows, b], method, resamples=settings.bootstrap_resamples,
                        seed=settings.seed, names=names)
                entries.append(entry)
        correlations[label[measure]] = entries

    ap_m, ap_f = pm.ap_m[scorable], pm.ap_f[scorable]
    hit_m, hit_f = pm.hit_m[scorable], pm.hit_f[scorable]
    s_m, s_f = served(hit_m, ap_m, settings.rho), served(hit_f, ap_f, settings.rho)
    ex = exclusion(s_m, s_f, settings.tau)
    exclusion_block = {
        "definition": settings.served_definition(n_models),
        "k": settings.k, "rho": settings.rho, "tau": settings.tau, "models": n_models,
        "pairs_scored": int(scorable.sum()), "pairs_left_out": int((~scorable).sum()),
        "feminine_excluded": _share(ex["feminine"], settings),
        "masculine_excluded": _share(ex["masculine"], settings),
        "difference_F-M": {**_share(ex["feminine"].astype(float) - ex["masculine"].astype(float), settings), "count": None},
        "both_failed": _share(ex["both_failed"], settings),
        "served_share_per_model": {
            name: {"masculine": float(s_m[:, j].mean()) if s_m.size else None,
                   "feminine": float(s_f[:, j].mean()) if s_f.size else None}
            for j, name in enumerate(pm.models)
        },
    }
    taus = list(range(1, n_models + 1))
    grid = {"k": settings.k, "rho": list(settings.rho_grid), "tau": taus, "feminine_excluded": [], "masculine_excluded": []}
    for rho in settings.rho_grid:
        g_m, g_f = served(hit_m, ap_m, rho), served(hit_f, ap_f, rho)
        row_f, row_m = [], []
        for tau in taus:
            e = exclusion(g_m, g_f, tau)
            row_f.append(float(e["feminine"].mean()) if e["feminine"].size else None)
            row_m.append(float(e["masculine"].mean()) if e["masculine"].size else None)
        grid["feminine_excluded"].append(row_f)
        grid["masculine_excluded"].append(row_m)
    exclusion_block["grid"] = grid

    kept = [key for key, ok in zip(pm.pairs, scorable) if ok]

    def listing(count: np.ndarray, failing: np.ndarray, other: np.ndarray, ap_fail: np.ndarray, ap_other: np.ndarray) -> list[dict]:
        order = sorted(range(len(kept)), key=lambda i: (-int(count[i]), kept[i][0]))
        out = []
        for i in order[: settings.most_excluded]:
            if count[i] == 0:
                break
            pair_id, m_id, f_id = kept[i]
            out.append({
                "pair_id": pair_id, "masculine": texts.get(m_id, m_id), "feminine": texts.get(f_id, f_id),
                "english": (sources or {}).get(m_id, []), "models_excluding": int(count[i]),
                "models": [pm.models[j] for j in range(n_models) if failing[i, j] and other[i, j]],
                "AP_failed_form": {pm.models[j]: float(ap_fail[i, j]) for j in range(n_models)},
                "AP_served_form": {pm.models[j]: float(ap_other[i, j]) for j in range(n_models)},
            })
        return out

    most = {
        "feminine": listing(ex["feminine_count"], ~s_f, s_m, ap_f, ap_m),
        "masculine": listing(ex["masculine_count"], ~s_m, s_f, ap_m, ap_f),
    }

    per_pair = []
    for i, (pair_id, m_id, f_id) in enumerate(pm.pairs):
        per_pair.append({
            "pair_id": pair_id, "m_id": m_id, "f_id": f_id,
            "masculine": texts.get(m_id, m_id), "feminine": texts.get(f_id, f_id), "scored": bool(scorable[i]),
            "models": {
                name: {
                    **{label[m]: (None if np.isnan(pm.values[m][i, j]) else float(pm.values[m][i, j])) for m in MEASURES},
                    **({"served_M": bool(served(pm.hit_m[i, j], pm.ap_m[i, j], settings.rho)),
                        "served_F": bool(served(pm.hit_f[i, j], pm.ap_f[i, j], settings.rho))} if scorable[i] else {}),
                }
                for j, name in enumerate(pm.models)
            },
        })

    mean_asymmetry = {
        label[m]: {name: _mean_fig(pm.values[m][:, j], settings) for j, name in enumerate(pm.models)} for m in MEASURES
    }
    return {"pairs": len(pm.pairs), "mean": mean_asymmetry, "correlation": correlations, "exclusion": exclusion_block,
            "most_excluded": most, "per_pair": per_pair}


def _mean_fig(values: np.ndarray, settings: AuditSettings) -> dict:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return {"value": None, "ci95": [None, None], "n": 0}
    lo, hi = bootstrap_ci(values, resamples=settings.bootstrap_resamples, seed=settings.seed)
    return {"value": float(values.mean()), "ci95": [lo, hi], "n": int(values.size)}


# --- mitigation before / after ---------------------------------------------------------------------------


TAUTOLOGY_NOTE = (
    "pairs whose normalised masculine and feminine forms are the same string get symmetry 1.0 by construction "
    "(one string, one embedding, one ranking): a tautology, not an effect; they are reported apart and left out "
    "of the effect estimate, which uses only the pairs that still differ after normalisation"
)


def mitigation_corpus(before: dict, after: dict, split: pl.DataFrame, corpus: str, rbo_name: str,
                      settings: AuditSettings) -> dict:
    """Symmetry, MAP and accuracy of one model and corpus variant before and after normalisation.

    ``before``/``after``: ``evaluate_language`` blocks on the original and the normalised test set;
    ``split``: ``eval.mitigation.split_pairs`` of the original test set."""
    identical = {(p, m, f): bool(x) for p, m, f, x in split.select("pair_id", "m_id", "f_id", "identical_after").iter_rows()}
    rows_b = {(r["pair_id"], r["m_id"], r["f_id"]): r for r in before["per_pair"] if r["corpus"] == corpus}
    rows_a = {(r["pair_id"], r["m_id"], r["f_id"]): r for r in after["per_pair"] if r["corpus"] == corpus}
    if set(rows_b) != set(rows_a) or set(rows_b) - set(identical):
        raise AuditError("before/after results cover different query pairs; run both on the same test set")
    keys = sorted(rows_b)
    same = np.array([identical[k] for k in keys], dtype=bool)

    def vec(rows, metric, mask):
        return np.array([_nan(rows[k][metric]) for k, keep in zip(keys, mask) if keep])

    def before_after(metric: str, mask: np.ndarray) -> dict:
        b, a = vec(rows_b, metric, mask), vec(rows_a, metric, mask)
        ok = ~(np.isnan(b) | np.isnan(a))
        return {"before": _mean_fig(b[ok], settings), "after": _mean_fig(a[ok], settings),
                "change": _mean_fig(a[ok] - b[ok], settings)}

    out: dict = {
        "note": TAUTOLOGY_NOTE,
        "pairs": len(keys),
        "identical_after_normalisation": {
            "n": int(same.sum()),
            "symmetry_by_construction": True,
            "AO_after": _mean_fig(vec(rows_a, "AO", same), settings),
            rbo_name + "_after": _mean_fig(vec(rows_a, rbo_name, same), settings),
        },
        "still_different": {"n": int((~same).sum())},
    }
    for metric in ("AO", rbo_name, "identical_top1"):
        out["still_different"][metric] = before_after(metric, ~same)
    gap_b = vec(rows_b, "AP_M", ~same) - vec(rows_b, "AP_F", ~same)
    gap_a = vec(rows_a, "AP_M", ~same) - vec(rows_a, "AP_F", ~same)
    ok = ~(np.isnan(gap_b) | np.isnan(gap_a))
    out["still_different"]["AP_M-AP_F"] = {"before": _mean_fig(gap_b[ok], settings), "after": _mean_fig(gap_a[ok], settings)}
    # MAP and acc@1 of each form restricted to the pairs that still differ: the identical pairs would add the
    # same query twice after normalisation and pull the feminine figures to the masculine ones by construction.
    query_b = {r["query_id"]: r for r in before["per_query"] if r["corpus"] == corpus}
    query_a = {r["query_id"]: r for r in after["per_query"] if r["corpus"] == corpus}
    diff_keys = [k for k, keep in zip(keys, ~same) if keep]
    for side, pos in (("F", 2), ("M", 1)):
        for name, field in (("MAP", "AP"), ("acc@1", "acc@1")):
            b = np.array([_nan(query_b[k[pos]][field]) for k in diff_keys])
            a = np.array([_nan(query_a[k[pos]][field]) for k in diff_keys])
            keep = ~(np.isnan(b) | np.isnan(a))
            out["still_different"][f"{name}_{side}"] = {"before": _mean_fig(b[keep], settings), "after": _mean_fig(a[keep], settings),
                                                        "change": _mean_fig(a[keep] - b[keep], settings)}
    out["all_pairs_including_tautology"] = {
        metric: {"before": _mean_fig(vec(rows_b, metric, np.ones_like(same)), settings),
                 "after": _mean_fig(vec(rows_a, metric, np.ones_like(same)), settings)}
        for metric in ("AO", rbo_name)
    }
    cb, ca = before["corpora"][corpus], after["corpora"][corpus]
    out["MAP"] = {g: {"before": cb["MAP"][g], "after": ca["MAP"][g]} for g in ("feminine", "masculine", "neutral")}
    out["accuracy"] = {
        key: {g: {"before": cb["accuracy"][key][g], "after": ca["accuracy"][key][g]} for g in ("feminine", "masculine", "neutral")}
        for key in cb["accuracy"]
    }
    return out


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
    per-model results documents (as ``python -m eval run`` writes them, on the original test set).
    ``language_packs``: extra folders of language packs (params.yaml ``language_packs``); each language's
    declaration is resolved once here and its mitigation rules passed down."""
    import hashlib

    import eval as eval_pkg
    from eval.evaluate import evaluate_language, testset_version
    from eval.mitigation import normalise_testset, split_pairs
    from languages import LanguageError, load
    from eval.models import load_model
    from eval.testset import read_testset

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
    versions = {lang: testset_version(ts, data) for lang, ts in testsets.items()}
    normalised = {lang: normalise_testset(ts, packs[lang]) for lang, ts in testsets.items()} if mitigation else {}
    before: dict[str, dict[str, dict]] = {lang: {} for lang in langs}
    after: dict[str, dict[str, dict]] = {lang: {} for lang in langs}
    metas = []
    for spec in models:
        model = load_model(spec) if isinstance(spec, str) else spec
        metas.append(model.meta.to_dict())
        for lang, ts in testsets.items():
            before[lang][model.meta.name], _ = evaluate_language(ts, model, cache, eval_settings, progress=progress)
            if mitigation:
                after[lang][model.meta.name], _ = evaluate_language(normalised[lang][0], model, cache, eval_settings, progress=progress)
        metas[-1] = model.meta.to_dict()  # tfidf-char's revision names the corpus it was last fitted on
    model_labels = [m["name"] for m in metas]
    if len(set(model_labels)) != len(model_labels):
        raise AuditError(f"two model names load the same model ({model_labels}); give distinct models")

    rbo_name = eval_settings.rbo_name
    languages: dict[str, dict] = {}
    for lang, ts in testsets.items():
        texts, sources = query_texts(ts)
        block: dict = {"testset_version": versions[lang], "corpora": {}}
        for corpus in ("masculine", "feminine"):
            pm = pair_matrix(before[lang], corpus, settings.k, rbo_name)
            block["corpora"][corpus] = audit_corpus(pm, texts, settings, rbo_name, sources)
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
    combined = "+".join(f"{lang}-{v}" for lang, v in sorted(versions.items()))
    version = (next(iter(versions.values())) if len(set(versions.values())) == 1 and not next(iter(versions.values())).startswith("sha-")
               else "sha-" + hashlib.sha256(combined.encode()).hexdigest()[:12])
    doc = {
        "toolkit": {"name": "gendered-job-titles eval audit", "version": eval_pkg.__version__},
        "models": metas,
        "testset": {"root": str(data), "version": version, "languages": versions},
        "eval_settings": eval_settings.describe(),
        "audit_settings": settings.describe(len(names)),
        "mitigation": {"applied": mitigation, "note": TAUTOLOGY_NOTE if mitigation else None},
        "languages": languages,
    }
    runs = []
    for meta in metas:
        runs.append({
            "toolkit": {"name": "gendered-job-titles eval", "version": eval_pkg.__version__},
            "model": meta, "testset": doc["testset"], "settings": eval_settings.describe(),
            "languages": {lang: {**before[lang][meta["name"]], "testset_version": versions[lang]} for lang in langs},
        })
    return doc, runs
