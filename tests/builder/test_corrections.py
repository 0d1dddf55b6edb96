"""corrections/<lang>.jsonl is checked as docs/FORMAT.md gives it, by one reader (builder/corrections.py) that the
builder and annotation share: every refusal one error naming file:line, never a traceback, nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation import AnnotationError
from annotation import corrections as annotation_corrections
from builder.corrections import (Corrections, TranslationCorrection, check_line, check_source_ids, read_corrections,
                                 read_lines, write_lines)
from builder.errors import CorrectionsError

REPO = Path(__file__).resolve().parents[2]

GOOD_T = {"kind": "translation", "lang": "pt", "source_id": "Waiter", "record_id": "pt-translation-Waiter",
          "masculine": "garçom", "feminine": None, "gender_marking": "gendered", "flag": None,
          "annotators": ["ana"], "submitted_at": "2026-11-29T15:00:00Z"}
GOOD_R = {"kind": "relevance", "lang": "pt", "query_source_id": "Waiter", "doc_source_id": "Server",
          "record_id": "pt-relevance-Waiter-Server", "relevant": True, "annotators": ["ana", "rui"],
          "submitted_at": "2026-11-29T15:00:00Z"}


def _write(path: Path, *lines) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in lines),
                    encoding="utf-8")
    return path


BAD = [
    (dict(GOOD_T, note="typo fixed"), r"unknown field\(s\) \['note'\] in a translation correction"),
    (dict(GOOD_R, weight=2), r"unknown field\(s\) \['weight'\]"),
    (dict(GOOD_T, annotators="ana"), r"annotators is 'ana'; expected a list"),  # was provenance human:a,n
    (dict(GOOD_T, annotators=[]), r"annotators is \[\]"),
    (dict(GOOD_T, annotators=["ana", 3]), r"annotators\[1\] is 3"),
    (dict(GOOD_T, masculine="   "), r"masculine '   ' has no visible character"),
    (dict(GOOD_T, feminine="\u200b"), r"feminine '\\u200b' has no visible character"),
    (dict(GOOD_T, masculine="gar\x00çom"), r"masculine holds the control character U\+0000"),
    (dict(GOOD_T, masculine="gar\x85çom"), r"masculine holds the control character U\+0085"),
    (dict(GOOD_T, feminine="gar\u2028çonete"), r"feminine holds the control character U\+2028"),
    (dict(GOOD_T, source_id=""), r"source_id '' has no visible character"),
    (dict(GOOD_T, masculine=5), r"masculine is 5; expected a string or null"),
    (dict(GOOD_R, relevant="yes"), r"relevant must be true or false"),
    (dict(GOOD_R, doc_source_id=None), r"doc_source_id is None; expected a string"),
    ({k: v for k, v in GOOD_T.items() if k != "submitted_at"}, r"missing field\(s\) \['submitted_at'\]"),
    (dict(GOOD_T, flag="typo"), r"flag 'typo' not one of"),
    (dict(GOOD_T, kind=["translation"]), r"kind \['translation'\]; expected 'translation' or 'relevance'"),  # was a TypeError
    ('{"kind": "translation", "lang": "pt", "source_id": "Waiter", "record_id": "r", "masculine": "gar\\ud800om", '
     '"feminine": null, "gender_marking": "gendered", "flag": null, "annotators": ["ana"], "submitted_at": "t"}',
     r"masculine holds a lone surrogate \(\\ud800\)"),  # was a traceback
    ('{"kind": "translation", "lang": "pt", "source_id": "Waiter", "record_id": "r", "masculine": null, '
     '"feminine": null, "gender_marking": "gendered", "flag": null, "annotators": ["\\udfff"], "submitted_at": "t"}',
     r"annotators\[0\] holds a lone surrogate"),
]


@pytest.mark.parametrize("line, message", BAD)
def test_both_readers_refuse_what_the_format_does_not_allow(tmp_path, line, message):
    path = _write(tmp_path / "pt.jsonl", GOOD_R, line)
    with pytest.raises(CorrectionsError, match=rf"^{path}:2: {message}") as built:
        read_corrections(path, "pt")
    with pytest.raises(AnnotationError) as annotated:
        annotation_corrections.read_corrections(path, "pt")
    assert str(annotated.value) == str(built.value)


def test_good_lines_read_alike(tmp_path):
    path = _write(tmp_path / "pt.jsonl", GOOD_T, "", GOOD_R)
    found = read_corrections(path, "pt")
    assert found.translations["Waiter"].annotators == ("ana",) and found.relevance == {("Waiter", "Server"): True}
    assert found.lines == {"Waiter": 1, ("Waiter", "Server"): 3}
    assert annotation_corrections.read_corrections(path, "pt") == [GOOD_T, GOOD_R]


@pytest.mark.parametrize("line, message", BAD)
def test_the_writer_refuses_what_the_readers_refuse(tmp_path, line, message):
    """The format's one writer (what pull and rule write through) checks each line with the reader's own check:
    a line the builder would refuse is never written, from either side, and the file stays as it was."""
    obj = json.loads(line) if isinstance(line, str) else line
    path = tmp_path / "pt.jsonl"
    write_lines(path, [GOOD_R], "pt")
    before = path.read_bytes()
    with pytest.raises(CorrectionsError, match=rf"^{path}: line 2 to write: {message}"):
        write_lines(path, [GOOD_R, obj], "pt")
    with pytest.raises(AnnotationError, match=rf"^{path}: line 2 to write: {message}.*; nothing was written$"):
        annotation_corrections.write_corrections([GOOD_R, obj], path, "pt")
    assert path.read_bytes() == before


# Lines near the format: each field either its good value or one of a few others (wrong types, empty or invisible
# text, control characters, a lone surrogate, unknown markings), and now and then a field missing or one added.
_ODD = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["", " ", "\u200b", "a\nb", "\ud800",
                                                                                "masculine", "typo", "ana", "es"]),
                 st.text(max_size=6), st.lists(st.sampled_from(["ana", "", 3, "\x00"]), max_size=2))


@st.composite
def _near_lines(draw):
    good = dict(draw(st.sampled_from([GOOD_T, GOOD_R])))
    line = {k: (v if draw(st.integers(0, 3)) else draw(_ODD)) for k, v in good.items()}
    if draw(st.integers(0, 9)) == 0:
        line.pop(draw(st.sampled_from(sorted(line))))
    if draw(st.integers(0, 9)) == 0:
        line["note"] = "x"
    return line


@settings(max_examples=300, deadline=None)
@given(st.lists(_near_lines(), max_size=4))
def test_what_annotation_writes_the_builder_reads_back_and_both_refuse_alike(lines):
    """Fed the same lines, annotation's writer and the builder's reader agree: the file is written exactly when
    every line passes the format's check, and then both readers give back the lines written, in order."""
    import tempfile

    def accepted(line) -> bool:
        try:
            check_line(line, "x", "pt")
            return True
        except CorrectionsError:
            return False

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pt.jsonl"
        path.write_bytes(b"")
        try:
            annotation_corrections.write_corrections(lines, path, "pt")
        except AnnotationError:
            assert not all(accepted(line) for line in lines)
            assert path.read_bytes() == b""
            return
        assert all(accepted(line) for line in lines)
        assert [line for _, line in read_lines(path, "pt")] == lines
        assert annotation_corrections.read_corrections(path, "pt") == lines
        built = read_corrections(path, "pt")
        assert len(built.translations) + len(built.relevance) == len({
            (x["source_id"],) if x["kind"] == "translation" else (x["query_source_id"], x["doc_source_id"])
            for x in lines})


def test_ids_the_english_source_lacks_are_refused_naming_the_line(tmp_path):
    """Such a line changed nothing yet was counted as applied in stats.json."""
    check_source_ids(read_corrections(_write(tmp_path / "pt.jsonl", GOOD_T, GOOD_R), "pt"), ["Waiter"], ["Server"])
    path = _write(tmp_path / "pt.jsonl", GOOD_T, GOOD_R, dict(GOOD_T, source_id="Astronaut"))
    corrections = read_corrections(path, "pt")
    with pytest.raises(CorrectionsError, match=rf"^{path}:3: source_id 'Astronaut' is no id of the English source; "
                                               "remove the line"):
        check_source_ids(corrections, ["Waiter"], ["Server", "Waiter"])
    path = _write(tmp_path / "pt.jsonl", GOOD_T, dict(GOOD_R, doc_source_id="Nope"))
    with pytest.raises(CorrectionsError, match=rf"^{path}:2: doc_source_id 'Nope' is no corpus id"):
        check_source_ids(read_corrections(path, "pt"), ["Waiter"], ["Server"])
    path = _write(tmp_path / "pt.jsonl", dict(GOOD_R, query_source_id="Server"))  # a corpus id as the query
    with pytest.raises(CorrectionsError, match=rf"^{path}:1: query_source_id 'Server' is no query id"):
        check_source_ids(read_corrections(path, "pt"), ["Waiter"], ["Server"])
    check_source_ids(Corrections(translations={"X": TranslationCorrection("X", None, None, "gendered", None, ("a",))}),
                     ["X"], [])


def _cli(package: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", package, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def _one_error_line(r: subprocess.CompletedProcess, needle: str) -> None:
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("error: ") and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert needle in r.stderr, r.stderr


def test_the_commands_refuse_a_bad_file_with_one_line(tmp_path):
    """`builder corrections` (the dvc stage before postprocess) and `annotation pull` (which merges into the
    file, before it asks any server) give the same error line and leave the file as it was."""
    bad = _write(tmp_path / "pt.jsonl", GOOD_T, dict(GOOD_T, source_id="Nurse", annotators="ana"))
    before = bad.read_bytes()
    _one_error_line(_cli("builder", "corrections", "--lang", "pt", "--corrections", str(bad)),
                    f"{bad}:2: annotators is 'ana'")
    surrogate = tmp_path / "pt2.jsonl"
    surrogate.write_text(json.dumps(dict(GOOD_T, masculine="gar\ud800om")) + "\n", encoding="utf-8")
    r = _cli("annotation", "pull", "--lang", "pt", "--out", str(surrogate))
    _one_error_line(r, f"{surrogate}:1: masculine holds a lone surrogate")
    assert bad.read_bytes() == before


def test_a_build_refuses_a_correction_of_an_unknown_id(tmp_path):
    """Before anything is translated: one error line naming file:line, and no set written."""
    from builder.translators import offline_available

    if not offline_available("apertium", "es"):
        pytest.skip("apertium-eng-spa not installed")
    from tests.builder.test_build import tiny_source

    src = tiny_source(tmp_path / "en")
    corrections = _write(tmp_path / "es.jsonl", dict(GOOD_T, lang="es", source_id="Waiter"),
                         dict(GOOD_R, lang="es", query_source_id="Waiter", doc_source_id="Astronaut"))
    r = _cli("builder", "build", "--source", str(src), "--lang", "es", "--route", "mt", "--translator", "apertium",
             "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--corrections", str(corrections),
             "--quiet")
    _one_error_line(r, f"{corrections}:2: doc_source_id 'Astronaut' is no corpus id of the English source")
    assert not (tmp_path / "out" / "es").exists()
