"""A Table-1-style summary of built languages beside the paper's numbers."""

from __future__ import annotations

from languages import Language


def table1_rows(all_stats: list[dict], languages: list[Language]) -> list[list[str]]:
    """all_stats: stats.json of each built language; languages: their declarations, whose ``paper_table1`` is
    García-Sardiña et al. (2025), Table 1 (M/F pairs, neutral, unique titles; queries then corpus) where the
    paper has the language."""
    paper_rows = {lang.code: lang.paper_table1 for lang in languages}
    # The paper's Table 1 abbreviates (M/F, N, T); spelled out here so the printed table reads on its own.
    rows = [["set", "source", "queries M/F pairs", "queries neutral", "queries unique titles", "corpus M/F pairs",
             "corpus neutral", "corpus unique titles", "corpus masculine only", "corpus feminine only",
             "corpus reinflected", "qrels lines", "sources to review"]]
    for st in all_stats:
        lang = st["lang"]
        if paper_rows.get(lang):
            rows.append([lang.upper(), "paper (Google)", *map(str, paper_rows[lang]), "", "", "", "", ""])
        q, c = st["queries"], st["corpus"]
        source = (f"given translation ({(st.get('alignment') or {}).get('translated_by', '?')})"
                  + (f" + {st['translator']}" if st.get("translator") else "")
                  if st.get("route") == "reference" else f"ESCO {st['esco']['version']}" if st.get("source") == "esco"
                  else st["translator"])
        rows.append([lang.upper(), f"this build ({source})", str(q["pairs"]), str(q["neutral"]), str(q["titles"]),
                     str(c["pairs"]), str(c["neutral"]), str(c["titles"]), str(c.get("masculine_only", "")),
                     str(c.get("feminine_only", "")), str(c.get("reinflected", "")), str(st["qrels"]),
                     str(st["needs_review"])])
    return rows


def format_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def describe(st: dict, out) -> str:
    """One line per built language: which gender check decided (never changed silently) and what needs review."""
    layer = st.get("gender_layer") or {}
    how = (f"gender by {layer['lexicon']} + {layer['word_list']}" if layer.get("method") == "lexicon"
           else f"gender by {layer.get('method', 'rules')} (no lexicon declared for {st['lang']})")
    c = st["corpus"]
    a = st.get("alignment")
    if a:
        how += (f"; given translation ({a['translated_by']}) for {st['routes'].get('reference', 0)} English ids, "
                f"{a['corpus']['aligned']}/{a['corpus']['total']} corpus and {a['queries']['aligned']}/"
                f"{a['queries']['total']} queries aligned confidently, relevance edges preserved "
                f"{a['edges_preserved']}/{a['edges_checked']}; MT route {st['routes'].get('mt', 0)}, no item "
                f"{st['routes'].get('none', 0)}")
    return (f"{st['lang']}: {how}; corpus {c.get('reinflected', 0)} reinflected items, {c.get('masculine_only', 0)} "
            f"masculine-only and {c.get('feminine_only', 0)} feminine-only occupations; {st['needs_review']} sources "
            f"need review; written to {out}")
