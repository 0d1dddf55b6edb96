"""The audit's figures for one language and corpus variant, from the models' ``PairMatrix``: the mean
asymmetry of each model, correlations between every two models, systemic exclusion (shares with intervals,
the rho x tau grid, the most often excluded occupations) and the per-pair rows (definitions in docs/audit.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from eval.correlation import CORRELATIONS, correlation_with_ci
from eval.errors import AuditError
from eval.exclusion import check_tau, exclusion, served
from eval.pair_matrix import PairMatrix
from eval.stats import mean_figure

if TYPE_CHECKING:
    from eval.audit import AuditSettings

__all__ = ["audit_corpus", "form_exclusion"]


def _mean(values: np.ndarray, settings: AuditSettings) -> dict:
    return mean_figure(values, resamples=settings.bootstrap_resamples, seed=settings.seed)


def _share(indicator: np.ndarray, settings: AuditSettings) -> dict:
    """Share of pairs where ``indicator`` holds, with its interval and the count."""
    values = np.asarray(indicator, dtype=np.float64)
    return {**_mean(values, settings), "count": int(values.sum())}


def audit_corpus(pm: PairMatrix, texts: Mapping[str, str], settings: AuditSettings,
                 sources: Mapping[str, list[str]] | None = None) -> dict:
    """Per-pair rows, correlations between models, systemic exclusion (with the rho x tau grid) and the most
    often excluded occupations for one corpus variant."""
    n_models = len(pm.models)
    check_tau(settings.tau, n_models)
    scorable = pm.scorable

    correlations: dict[str, list[dict]] = {}
    for measure in pm.values:
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
        correlations[measure] = entries

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
                    **{m: (None if np.isnan(v[i, j]) else float(v[i, j])) for m, v in pm.values.items()},
                    **({"served_M": bool(served(pm.hit_m[i, j], pm.ap_m[i, j], settings.rho)),
                        "served_F": bool(served(pm.hit_f[i, j], pm.ap_f[i, j], settings.rho))} if scorable[i] else {}),
                }
                for j, name in enumerate(pm.models)
            },
        })

    mean_asymmetry = {
        m: {name: _mean(v[:, j], settings) for j, name in enumerate(pm.models)} for m, v in pm.values.items()
    }
    return {"pairs": len(pm.pairs), "mean": mean_asymmetry, "correlation": correlations, "exclusion": exclusion_block,
            "most_excluded": most, "per_pair": per_pair}


def form_exclusion(blocks: Mapping[str, dict], corpus: str, settings: AuditSettings) -> dict:
    """Systemic exclusion of the extra query forms (doublet, neomorpheme) over one corpus variant, with the served
    definition of the masculine/feminine audit: per form and reference gender (``vs_M``, ``vs_F``), a pair
    (form query, masculine or feminine query of one ``pair_id``) is **form-excluded** when at least tau models
    serve the reference form while failing the extra form, **reference-excluded** the reverse. Pairs whose two
    queries have no relevant title in the corpus variant are left out. ``blocks``: model name -> language block
    of the results (its ``per_form_pair`` and ``per_query`` rows); {} for a set without extra forms."""
    models = list(blocks)
    n_models = len(models)
    check_tau(settings.tau, n_models)
    acc_key = f"acc@{settings.k}"
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = {}
    columns: dict[tuple[str, str], dict[str, list[np.ndarray]]] = {}
    for name in models:
        block = blocks[name]
        rows = [r for r in block.get("per_form_pair", ()) if r["corpus"] == corpus]
        queries = {r["query_id"]: r for r in block["per_query"] if r["corpus"] == corpus}
        by_kind: dict[tuple[str, str], list[dict]] = {}
        for r in rows:
            by_kind.setdefault((r["form"], r["reference"]), []).append(r)
        for kind, kind_rows in by_kind.items():
            keys = [(r["form_id"], r["reference_id"]) for r in kind_rows]
            if grouped.setdefault(kind, keys) != keys:
                raise AuditError(f"model {name!r} was scored on other {kind[0]} pairs than {models[0]!r}; audit results of one test set")
            col = columns.setdefault(kind, {"ap_x": [], "ap_r": [], "hit_x": [], "hit_r": []})
            col["ap_x"].append(np.array([np.nan if r["AP_form"] is None else r["AP_form"] for r in kind_rows]))
            col["ap_r"].append(np.array([np.nan if r["AP_reference"] is None else r["AP_reference"] for r in kind_rows]))
            hit = [queries[q].get(acc_key) for q, _ in keys], [queries[q].get(acc_key) for _, q in keys]
            col["hit_x"].append(np.array([np.nan if v is None else v for v in hit[0]], dtype=np.float64))
            col["hit_r"].append(np.array([np.nan if v is None else v for v in hit[1]], dtype=np.float64))
    short = {"masculine": "M", "feminine": "F"}
    out: dict[str, dict] = {}
    for (form, reference), col in columns.items():
        if len(col["ap_x"]) != n_models:
            raise AuditError(f"not every model's results hold the {form} pairs; evaluate every model on the same test set")
        ap_x, ap_r, hit_x, hit_r = (np.stack(col[k], axis=1) for k in ("ap_x", "ap_r", "hit_x", "hit_r"))
        scorable = ~(np.isnan(ap_x).any(axis=1) | np.isnan(ap_r).any(axis=1))
        s_x = served(hit_x[scorable], ap_x[scorable], settings.rho)
        s_r = served(hit_r[scorable], ap_r[scorable], settings.rho)
        ex = exclusion(s_r, s_x, settings.tau)  # "feminine" of exclusion(): the second (the form) fails
        keys = [key for key, ok in zip(grouped[(form, reference)], scorable) if ok]
        out.setdefault(form, {})[f"vs_{short[reference]}"] = {
            "pairs_scored": int(scorable.sum()), "pairs_left_out": int((~scorable).sum()),
            "form_excluded": _share(ex["feminine"], settings),
            "reference_excluded": _share(ex["masculine"], settings),
            "both_failed": _share(ex["both_failed"], settings),
            "form_excluded_pairs": [{"form_id": x, "reference_id": r} for (x, r), hit in zip(keys, ex["feminine"]) if hit],
        }
    return out
