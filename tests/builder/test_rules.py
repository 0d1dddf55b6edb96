"""Term rules (corrections/<lang>.rules.jsonl, builder/rules.py): every build applies every rule to the titles it
decided, through the real postprocess stage (`python -m builder postprocess`) on a small Portuguese fixture whose
titles the real gender layer (Apertium + Hunspell) decides."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from builder.__main__ import main
from builder.corrections import CorrectionsError, check_rule, read_rules, write_rules
from builder.translate import RAW_SCHEMA
from eval.testset import read_testset

REPO = Path(__file__).resolve().parents[2]

# English id: (English title, the translator's two outputs). The build's verdicts (checked in
# test_the_fixture_verdicts): Clerk a pair, Manager and Agent neutral, Lawyer reinflected (all settled), Executive
# unverified (the layer reads "responsável executivo de conta" as an adjective before another word, not a person
# noun first: head_not_a_noun, doubtful).
TITLES = {
    "Account_Clerk": ("Account Clerk", "Ele é um escriturário de conta.", "Ela é uma escriturária de conta."),
    "Account_Manager": ("Account Manager", "Ele é um gerente de conta.", "Ela é uma gerente de conta."),
    "Account_Agent": ("Account Agent", "Ele é um agente de conta.", "Ela é uma agente de conta."),
    "Account_Lawyer": ("Account Lawyer", "Ele é um advogado de conta.", "Ela é uma advogado de conta."),
    "Account_Executive": ("Account Executive", "Ele é um responsável executivo de conta.",
                          "Ela é uma responsável executiva de conta."),
    "Lawyer": ("Lawyer", "Ele é um advogado.", "Ela é uma advogada."),
    "Accountant": ("Accountant", "Ele é um contador.", "Ela é uma contadora."),
}
QUERIES = ("Lawyer", "Account_Clerk")

RULE = {"id": "r1", "lang": "pt", "find": "de conta", "replace": "de contas", "english_word": None,
        "annotators": ["ana"], "submitted_at": "2026-12-01T10:00:00Z"}


def write_stage(root: Path, ids: tuple[str, ...]) -> tuple[Path, Path]:
    """An English source of ``ids`` and the translate stage's files for them (what `builder translate` writes):
    the source folder and the output root."""
    src, out = root / "en", root / "data"
    src.mkdir(parents=True)
    (out / "pt").mkdir(parents=True)
    queries = [i for i in ids if i in QUERIES]
    (src / "queries.tsv").write_text("".join(f"{i}\t{TITLES[i][0]}\n" for i in queries), encoding="utf-8")
    (src / "corpus_documents.tsv").write_text("".join(f"{i}\t{TITLES[i][0]}\n" for i in ids), encoding="utf-8")
    (src / "annotations.tsv").write_text("Lawyer\t0\tAccount_Clerk\t1\n" + (
        "Lawyer\t0\tAccount_Lawyer\t1\n" if "Account_Lawyer" in ids else ""), encoding="utf-8")
    pl.DataFrame([{"source_id": i, "source_text": TITLES[i][0], "in_queries": i in queries, "in_corpus": True,
                   "sentence_masculine": f"He is a {TITLES[i][0]}.", "sentence_feminine": f"She is a {TITLES[i][0]}.",
                   "output_masculine": TITLES[i][1], "output_feminine": TITLES[i][2], "translator": "fixture",
                   "translator_version": "1"} for i in ids], schema=RAW_SCHEMA).write_parquet(out / "pt" / "raw_translations.parquet")
    (out / "pt" / "templates.json").write_text("{}\n", encoding="utf-8")
    return src, out


def postprocess(src: Path, out: Path, corrections: Path, capsys=None) -> tuple[int, str, str]:
    rc = main(["postprocess", "--lang", "pt", "--source", str(src), "--out", str(out), "--corrections",
               str(corrections), "--cache", str(out.parent / "cache"), "--quiet"])
    if capsys is None:
        return rc, "", ""
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def translations(out: Path) -> dict[str, dict]:
    return {r["source_id"]: r for r in pl.read_parquet(out / "pt" / "translations.parquet").iter_rows(named=True)}


def corrections_folder(root: Path, rules: list[dict], lines: list[dict] = ()) -> Path:
    folder = root / "corrections"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pt.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (folder / "pt.rules.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rules),
                                           encoding="utf-8")
    return folder / "pt.jsonl"


def test_the_fixture_verdicts(tmp_path):
    """The cases below rest on these verdicts of the real gender layer: a change there shows here first."""
    src, out = write_stage(tmp_path, tuple(TITLES))
    assert postprocess(src, out, corrections_folder(tmp_path, []))[0] == 0
    verdicts = {sid: r["verdict"] for sid, r in translations(out).items()}
    assert verdicts == {"Account_Clerk": "gendered", "Account_Manager": "neutral", "Account_Agent": "neutral",
                        "Account_Lawyer": "reinflected", "Account_Executive": "unverified", "Lawyer": "gendered",
                        "Accountant": "gendered"}


def test_a_rule_applies_to_titles_added_after_it_was_written(tmp_path, capsys):
    """The rule is written against a build without Account_Manager; the next build has that title and fixes it."""
    corrections = corrections_folder(tmp_path / "then", [RULE])
    src, out = write_stage(tmp_path / "then", ("Lawyer", "Account_Clerk"))
    assert postprocess(src, out, corrections)[0] == 0
    assert translations(out)["Account_Clerk"]["title_masculine"] == "escriturário de contas"
    src, out = write_stage(tmp_path / "now", tuple(TITLES))
    rc, printed, err = postprocess(src, out, corrections, capsys)
    assert rc == 0, err
    rows = translations(out)
    assert (rows["Account_Manager"]["title_masculine"], rows["Account_Manager"]["title_feminine"]) == (
        "gerente de contas", "gerente de contas")
    assert rows["Account_Manager"]["verdict"] == "neutral" and rows["Account_Manager"]["status"] == "rule"
    assert "term rule r1 ('de conta' → 'de contas')" in rows["Account_Manager"]["reason"]
    assert rows["Account_Manager"]["mt_masculine"] == "gerente de conta"  # the machine's text stays beside it
    assert rows["Accountant"]["status"] == "machine" and rows["Accountant"]["title_masculine"] == "contador"
    ts = read_testset(out, "pt")
    item = ts.corpus.filter(pl.col("text") == "gerente de contas").row(0, named=True)
    # a rule's item is no longer "machine": its status says a rule changed it (issue 35)
    assert (item["gender"], item["status"], item["provenance"]) == ("neutral", "rule", "fixture:1+rule:r1")
    # no item keeps the old term, and the doubtful Executive is fixed too (still unverified: no item until a person
    # decides, but the person is shown the fixed title)
    assert ts.corpus.filter(pl.col("text").str.contains("de conta$")).height == 0
    assert rows["Account_Executive"]["title_masculine"] == "responsável executivo de contas"
    assert rows["Account_Executive"]["verdict"] == "unverified"
    # the reinflected pair: both forms fixed, each item naming the rule
    lawyer = ts.corpus.filter(pl.col("source_ids").list.contains("Account_Lawyer"))
    assert sorted(lawyer["text"]) == ["advogada de contas", "advogado de contas"]
    assert set(lawyer["provenance"]) == {"fixture:1+rule:r1"}
    # qrels follow the source ids: the rule changed the text, not the relevance
    lawyer_queries = ts.queries.filter(pl.col("source_ids").list.contains("Lawyer")).height
    assert ts.qrels.filter(pl.col("doc_id").is_in(lawyer["id"].to_list())).height == 2 * lawyer_queries
    # the rule fixed the five inputs before the gender layer read them (Executive among them, still a review item)
    assert "pt: term rules (" in printed and "r1 'de conta' → 'de contas': 5 input(s) and 0 title(s) changed" in printed


def test_a_persons_correction_wins_and_a_doubtful_record_is_changed_too(tmp_path):
    person = {"kind": "translation", "lang": "pt", "source_id": "Account_Agent", "record_id": "pt-translation-Account_Agent",
              "masculine": "agente de conta corrente", "feminine": None, "gender_marking": "neutral", "flag": None,
              "annotators": ["rui"], "submitted_at": "2026-11-30T10:00:00Z"}
    # a person who confirmed the proposal (null: keep it) wrote no title: the rule fixes the proposal they kept
    confirmed = {**person, "source_id": "Account_Clerk", "record_id": "pt-translation-Account_Clerk",
                 "masculine": None, "feminine": None, "gender_marking": "gendered", "annotators": ["eva"]}
    corrections = corrections_folder(tmp_path, [RULE], [person, confirmed])
    src, out = write_stage(tmp_path, tuple(TITLES))
    assert postprocess(src, out, corrections)[0] == 0
    rows = translations(out)
    assert rows["Account_Agent"]["title_masculine"] == "agente de conta corrente"  # the person's answer
    assert rows["Account_Agent"]["status"] == "corrected"
    assert rows["Account_Clerk"]["title_feminine"] == "escriturária de contas"
    assert rows["Account_Clerk"]["status"] == "corrected" and "term rule r1" in rows["Account_Clerk"]["reason"]
    clerk = read_testset(out, "pt").queries.filter(pl.col("source_ids").list.contains("Account_Clerk"))
    assert set(clerk.filter(pl.col("form").is_in(["masculine", "feminine"]))["text"]) == {
        "escriturário de contas", "escriturária de contas"}
    assert set(clerk["provenance"]) == {"human:eva+rule:r1"} and set(clerk["status"]) == {"corrected"}
    # the doubtful record holds the term too: fixed, and still a review item for a person
    assert rows["Account_Executive"]["title_masculine"] == "responsável executivo de contas"
    assert (rows["Account_Executive"]["status"], rows["Account_Executive"]["verdict"]) == ("rule", "unverified")
    stats = read_testset(out, "pt").stats["corrections"]["rules"]
    [r1] = stats["rules"]
    # on the inputs: Clerk (a proposal the person kept), Manager, Account_Lawyer, Executive; not the person's Agent
    assert sorted(t["source_id"] for t in r1["input_records"]) == [
        "Account_Clerk", "Account_Executive", "Account_Lawyer", "Account_Manager"]
    assert (r1["inputs_changed"], r1["changed"], r1["kept_corrected"]) == (4, 0, 1)
    assert r1["kept_corrected_records"] == [{
        "source_id": "Account_Agent", "english": "Account Agent",
        "before": {"masculine": "agente de conta corrente", "feminine": "agente de conta corrente"},
        "after": {"masculine": "agente de contas corrente", "feminine": "agente de contas corrente"}}]
    agent = read_testset(out, "pt").corpus.filter(pl.col("source_ids").list.contains("Account_Agent")).row(0, named=True)
    assert (agent["status"], agent["provenance"]) == ("corrected", "human:rui")


def test_stats_list_what_each_rule_touched_and_a_rule_matching_nothing(tmp_path, capsys):
    rules = [RULE, dict(RULE, id="r2", find="advogado", replace="jurista", english_word="lawyer"),
             dict(RULE, id="r3", find="astronauta", replace="cosmonauta")]
    src, out = write_stage(tmp_path, tuple(TITLES))
    rc, printed, err = postprocess(src, out, corrections_folder(tmp_path, rules), capsys)
    assert rc == 0, err
    stats = read_testset(out, "pt").stats["corrections"]["rules"]
    assert stats["file"] == str(tmp_path / "corrections" / "pt.rules.jsonl")
    assert [r["id"] for r in stats["rules"]] == ["r1", "r2", "r3"] and stats["matching_nothing"] == ["r3"]
    r1, r2, r3 = stats["rules"]
    assert sorted(t["source_id"] for t in r1["input_records"]) == [
        "Account_Agent", "Account_Clerk", "Account_Executive", "Account_Lawyer", "Account_Manager"]
    clerk = next(t for t in r1["input_records"] if t["source_id"] == "Account_Clerk")
    assert clerk["before"] == {"masculine": "escriturário de conta", "feminine": "escriturária de conta"}
    assert clerk["after"] == {"masculine": "escriturário de contas", "feminine": "escriturária de contas"}
    # r2 sees what r1 left (rules run in the file's order; "before" is the input before every rule) and only
    # English titles holding "lawyer"; the term is
    # whole words, so the translator's advogada stays and the layer then decides jurista / advogada
    assert [(t["source_id"], t["before"]["masculine"], t["after"]["masculine"]) for t in r2["input_records"]] == [
        ("Account_Lawyer", "advogado de conta", "jurista de contas"), ("Lawyer", "advogado", "jurista")]
    assert (r3["inputs_changed"], r3["changed"], r3["kept_corrected"]) == (0, 0, 0)
    assert stats["sources_changed"] == 6
    assert "r3 'astronauta' → 'cosmonauta': matches no title in this build" in printed
    rows = translations(out)
    assert rows["Lawyer"]["status"] == "rule" and "term rule r2" in rows["Lawyer"]["reason"]
    lawyer = read_testset(out, "pt").corpus.filter(pl.col("source_ids").list.contains("Account_Lawyer"))
    assert set(lawyer["provenance"]) == {"fixture:1+rule:r1+rule:r2"}


def test_a_rule_emptying_a_title_or_writing_the_other_gender_is_the_annotators_call(tmp_path):
    """The build does what the rule says: an emptied form gives no item; a pair made equal gives one item flagged
    gender_conflict, as any pair of equal forms."""
    rules = [dict(RULE, find="contadora", replace="", english_word="accountant"),
             dict(RULE, id="r2", find="advogada", replace="advogado", english_word="lawyer")]
    src, out = write_stage(tmp_path, tuple(TITLES))
    assert postprocess(src, out, corrections_folder(tmp_path, rules))[0] == 0
    assert translations(out)["Accountant"]["title_feminine"] is None
    corpus = read_testset(out, "pt").corpus
    assert corpus.filter(pl.col("source_ids").list.contains("Accountant"))["text"].to_list() == ["contador"]
    [lawyer] = corpus.filter(pl.col("source_ids").list.contains("Lawyer")).iter_rows(named=True)
    # the input advogado / advogado made the layer inflect advogada again; the rule on the titles undoes it
    assert (lawyer["text"], lawyer["gender"]) == ("advogado", "neutral") and "gender_conflict" in lawyer["flags"]


@pytest.mark.parametrize("line, message", [
    ("{not json", "not valid JSON"),
    (json.dumps({k: v for k, v in RULE.items() if k != "id"}), "missing field(s) ['id'] for a term rule"),
    (json.dumps(dict(RULE, touched=["Lawyer"], id=None)), "id None"),
    (json.dumps(dict(RULE, lang="es")), "lang 'es' in the rules file of 'pt'"),
    (json.dumps(dict(RULE, find=" ")), "find ' ' has no visible character"),
    (json.dumps(dict(RULE, english_word="chief officer")), "english_word 'chief officer' is not one word"),
    (json.dumps(dict(RULE, annotators="ana")), "annotators is 'ana'"),
    (json.dumps(dict(RULE, replace=None)), "replace is None"),
    (json.dumps(dict(RULE, scope="all")), "unknown field(s) ['scope']"),
])
def test_a_malformed_rules_file_is_one_error_line_naming_file_and_line(tmp_path, line, message):
    path = tmp_path / "corrections" / "pt.rules.jsonl"
    corrections_folder(tmp_path, [])
    path.write_text(json.dumps(dict(RULE, id="r0")) + "\n" + line + "\n", encoding="utf-8")
    src, out = write_stage(tmp_path, ("Lawyer", "Account_Clerk"))
    r = subprocess.run([sys.executable, "-m", "builder", "postprocess", "--lang", "pt", "--source", str(src), "--out",
                        str(out), "--corrections", str(tmp_path / "corrections" / "pt.jsonl"), "--quiet"],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith(f"error: {path}:2: ") and message in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
    assert not (out / "pt" / "stats.json").exists()  # nothing built


def test_an_old_rule_line_is_told_what_to_add_and_ids_are_unique(tmp_path):
    old = {"find": "de conta", "replace": "de contas", "english_word": None, "annotators": ["ana"],
           "submitted_at": "2026-11-01T00:00:00Z", "touched": ["Account_Clerk"]}
    with pytest.raises(CorrectionsError, match=r"missing field\(s\) \['id', 'lang'\] for a term rule \(e.g. \"id\": \"r1\", "
                                               r"\"lang\": \"pt\"\); a rule written before builds applied the rules: "
                                               r"add them \(the correction lines it wrote stay valid\)"):
        check_rule(old, "x:1", "pt")
    assert check_rule(dict(old, id="r1", lang="pt"), "x:1", "pt")["touched"] == ["Account_Clerk"]
    path = tmp_path / "pt.rules.jsonl"
    with pytest.raises(CorrectionsError, match=r"id 'r1' is already the id of line 1"):
        write_rules(path, [RULE, dict(RULE, find="x")], "pt")
    assert not path.exists()  # the writer checks before it writes
    write_rules(path, [RULE, dict(RULE, id="r2", replace="\\1 \\g<0>")], "pt")
    assert [(r.id, r.line, r.replacement) for r in read_rules(path, "pt")] == [("r1", 1, "de contas"),
                                                                               ("r2", 2, "\\1 \\g<0>")]


def test_the_corrections_step_creates_and_checks_the_rules_file(tmp_path, capsys):
    """`python -m builder corrections` (dvc.yaml corrections@<lang>) makes both files postprocess depends on."""
    fresh = tmp_path / "gl.jsonl"
    assert main(["corrections", "--lang", "gl", "--corrections", str(fresh)]) == 0
    assert (tmp_path / "gl.rules.jsonl").read_bytes() == b"" and "gl.rules.jsonl created empty" in capsys.readouterr().out
    (tmp_path / "gl.rules.jsonl").write_text(json.dumps(dict(RULE, lang="pt")) + "\n", encoding="utf-8")
    assert main(["corrections", "--lang", "gl", "--corrections", str(fresh)]) == 2
    assert f"error: {tmp_path / 'gl.rules.jsonl'}:1: lang 'pt' in the rules file of 'gl'" in capsys.readouterr().err
