"""Small inline test sets in the shared format, for the eval tests: pt and es sets of masculine, feminine and
neutral items (``make_testset``) and a pt set with doublet and neomorpheme queries (``forms_testset``).

A plain module, imported by the tests that build sets (``from .testsets import make_testset``): helpers live
here and fixtures in conftest.py, so no test imports a conftest or another test module."""

from __future__ import annotations

import polars as pl

from eval.testset import ITEM_SCHEMA, TestSet

# (source id, masculine, feminine); equal forms become one neutral item.
PT_QUERIES = [
    ("Lawyer", "advogado", "advogada"),
    ("Nurse", "enfermeiro", "enfermeira"),
    ("Teacher", "professor", "professora"),
    ("Cook", "cozinheiro", "cozinheira"),
    ("Data_Analyst", "analista de dados", "analista de dados"),
]
PT_CORPUS = [
    ("Lawyer", "advogado", "advogada"),
    ("Attorney", "procurador", "procuradora"),
    ("Paralegal", "assistente jurídico", "assistente jurídica"),
    ("Legal_Intern", "estagiário jurídico", "estagiária jurídica"),
    ("Nurse", "enfermeiro", "enfermeira"),
    ("Nurse_Assistant", "auxiliar de enfermagem", "auxiliar de enfermagem"),
    ("Midwife", "parteiro", "parteira"),
    ("Teacher", "professor", "professora"),
    ("Tutor", "tutor", "tutora"),
    ("School_Director", "diretor escolar", "diretora escolar"),
    ("Cook", "cozinheiro", "cozinheira"),
    ("Chef", "chefe de cozinha", "chefe de cozinha"),
    ("Baker", "padeiro", "padeira"),
    ("Data_Scientist", "cientista de dados", "cientista de dados"),
    ("BI_Analyst", "analista de negócios", "analista de negócios"),
    ("Driver", "motorista", "motorista"),
]
PT_QRELS = {
    "Lawyer": ["Attorney", "Paralegal", "Legal_Intern"],
    "Nurse": ["Nurse_Assistant", "Midwife"],
    "Teacher": ["Tutor", "School_Director"],
    "Cook": ["Chef", "Baker"],
    "Data_Analyst": ["Data_Scientist", "BI_Analyst"],
}

ES_QUERIES = [("Lawyer", "abogado", "abogada"), ("Nurse", "enfermero", "enfermera"), ("Driver", "conductor", "conductora")]
ES_CORPUS = [
    ("Lawyer", "abogado", "abogada"),
    ("Paralegal", "asistente judicial", "asistente judicial"),
    ("Associate", "asociado", "asociada"),
    ("Nurse", "enfermero", "enfermera"),
    ("Midwife", "partero", "partera"),
    ("Driver", "conductor", "conductora"),
    ("Truck_Driver", "camionero", "camionera"),
    ("Courier", "repartidor", "repartidora"),
]
ES_QRELS = {"Lawyer": ["Paralegal", "Associate"], "Nurse": ["Midwife"], "Driver": ["Truck_Driver", "Courier"]}


def items(rows: list[tuple[str, str, str]], prefix: str) -> pl.DataFrame:
    out = []
    for sid, masc, fem in rows:
        base = dict(pair_id=f"{prefix}-{sid}", source_ids=[sid], source_texts=[sid.replace("_", " ")], check_method="rule:test",
                    check_ok=True, flags=[], status="machine", provenance="test:1")
        if masc == fem:
            out.append(dict(id=f"{prefix}-{sid}-n", text=masc, gender="neutral", check_gender="neutral", **base))
        else:
            out.append(dict(id=f"{prefix}-{sid}-m", text=masc, gender="masculine", check_gender="masculine", **base))
            out.append(dict(id=f"{prefix}-{sid}-f", text=fem, gender="feminine", check_gender="feminine", **base))
    return pl.DataFrame(out, schema=ITEM_SCHEMA)


def qrels_for(queries: pl.DataFrame, corpus: pl.DataFrame, labels: dict[str, list[str]]) -> pl.DataFrame:
    rows = []
    for q_id, q_src in queries.select("id", "source_ids").iter_rows():
        for d_id, d_src in corpus.select("id", "source_ids").iter_rows():
            if any(d in labels.get(s, []) for s in q_src for d in d_src):
                rows.append((q_id, d_id, 1))
    return pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64}, orient="row")


def make_testset(lang: str) -> TestSet:
    q_rows, c_rows, labels = {"pt": (PT_QUERIES, PT_CORPUS, PT_QRELS), "es": (ES_QUERIES, ES_CORPUS, ES_QRELS)}[lang]
    queries, corpus = items(q_rows, f"{lang}q"), items(c_rows, f"{lang}c")
    return TestSet(lang=lang, queries=queries, corpus=corpus, qrels=qrels_for(queries, corpus, labels), stats={"lang": lang})


# (source id, form, text): the Lawyer doublet is written exactly as the masculine query, so its ranking is the
# masculine ranking; the others are the forms job ads write.
EXTRA_QUERIES = [
    ("Lawyer", "doublet", "advogado"),
    ("Nurse", "doublet", "enfermeiro(a)"),
    ("Teacher", "doublet", "professor(a)"),
    ("Cook", "doublet", "cozinheiro(a)"),
    ("Lawyer", "neomorpheme", "advogade"),
    ("Nurse", "neomorpheme", "enfermeire"),
]
# Doublet corpus items (the build.forms.corpus variant): one per corpus pair that has both forms.
EXTRA_CORPUS = [(sid, "doublet", f"{m}(a)") for sid, m, f in PT_CORPUS if m != f][:8]


def extra_items(rows: list[tuple[str, str, str]], prefix: str) -> pl.DataFrame:
    return pl.DataFrame([
        dict(id=f"{form}:{text}", text=text, gender="inclusive", form=form, pair_id=f"{prefix}-{sid}", source_ids=[sid],
             source_texts=[sid.replace("_", " ")], check_gender="inclusive", check_method=f"forms:pt-{form}",
             check_ok=True, flags=[], status="machine", provenance="test:1")
        for sid, form, text in rows], schema=ITEM_SCHEMA)


def forms_testset(corpus_doublets: bool = False) -> TestSet:
    base = make_testset("pt")
    queries = pl.concat([base.queries, extra_items(EXTRA_QUERIES, "ptq")])
    corpus = pl.concat([base.corpus, extra_items(EXTRA_CORPUS, "ptc")]) if corpus_doublets else base.corpus
    return TestSet("pt", queries, corpus, qrels_for(queries, corpus, PT_QRELS), {"lang": "pt"})
