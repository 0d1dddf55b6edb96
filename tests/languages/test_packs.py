"""Language packs: the built-in packs load, a broken pack is a one-line error naming the file and the key, a
toy language declared in a temporary folder is built, released and scored without touching the repository,
and no language-code table is left in the code outside languages/."""

from __future__ import annotations

import copy
import datetime
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import languages
from languages import LanguageError, load
from tests.builder.libre_server import LibreServer

REPO = Path(__file__).resolve().parents[2]
BUILTIN = ("pt", "es", "fr", "it", "de")


def test_every_builtin_pack_loads_with_its_tables():
    assert set(BUILTIN) <= set(languages.available())
    for code in BUILTIN:
        pack = load(code)
        assert pack.code == code and pack.name and pack.path == REPO / "languages" / "packs" / f"{code}.yaml"
        assert pack.gender_rules.suffixes and pack.mitigation is not None
        assert "title" in re.compile(pack.strip).groupindex
    assert load("pt").lexicon.package == "apertium-es-pt" and load("de").lexicon is None
    assert load("de").gender_rules.head_last and not load("pt").gender_rules.head_last
    assert load("pt").web_code("mymemory") == "pt-PT" and load("pt").web_code("google") == "pt"


def _pack(tmp_path: Path, code: str, text: str) -> Path:
    folder = tmp_path / "packs"
    folder.mkdir(exist_ok=True)
    (folder / f"{code}.yaml").write_text(text, encoding="utf-8")
    return folder


PT = yaml.safe_load((REPO / "languages" / "packs" / "pt.yaml").read_text(encoding="utf-8"))
NEXT_SUFFIX = len(PT["gender_rules"]["suffixes"])  # the index of a suffix appended to pt's list


@pytest.mark.parametrize("edit,key", [
    (lambda d: d.pop("strip"), "strip is missing; expected a regular expression with a named group (?P<title>...)"),
    (lambda d: d["gender_rules"].pop("suffixes"), "gender_rules.suffixes is missing"),
    (lambda d: d["gender_rules"]["suffixes"].append(["o", "x"]),
     f"gender_rules.suffixes[{NEXT_SUFFIX}][1] is 'x'; expected one of m, f, n"),
    (lambda d: d["lexicon"].update(irregular=["a"]), "lexicon.irregular is ['a']; expected a mapping"),
    (lambda d: d.update(stirp="x"), "unknown key(s) stirp; known: code, "),
    (lambda d: d.update(strip="(?P<name>.+)"), "strip is '(?P<name>.+)'; expected a pattern with a named group (?P<title>...)"),
    (lambda d: d.update(paper_table1=[1, 2]), "paper_table1 is [1, 2]; expected a list of 6 items (an integer each) or null"),
    (lambda d: d["mitigation"].update(min_stem="2"), "mitigation.min_stem is '2'; expected an integer >= 0"),
    (lambda d: d["forms"]["doublet"].update(style="dash"), "forms.doublet.style is 'dash'; expected one of slash"),
    (lambda d: d["forms"]["doublet"].update(variants=["star", "tilde"]), "forms.doublet.variants[1] is 'tilde'"),
    (lambda d: d["forms"]["doublet"].update(irregular="guess"), "forms.doublet.irregular is 'guess'"),
    (lambda d: d["forms"]["doublet"].update(endings=[["o", "o"]]), "forms.doublet.endings[0] is ['o', 'o']; expected "
                                                                   "[masculine ending, feminine ending], two different"),
    (lambda d: d["forms"]["doublet"].pop("endings"), "forms.doublet.endings is missing"),
    (lambda d: d["forms"]["neomorpheme"].update(endings=[["o", "a", ""]]), "forms.neomorpheme.endings[0][2] is ''"),
    (lambda d: d["forms"].update(schwa={}), "unknown key(s) forms.schwa; known: doublet, neomorpheme"),
])
def test_a_bad_or_missing_key_names_the_file_and_the_key(tmp_path, edit, key):
    data = copy.deepcopy(PT)
    data["code"] = "zz"
    edit(data)
    folder = _pack(tmp_path, "zz", yaml.safe_dump(data, allow_unicode=True))
    with pytest.raises(LanguageError) as err:
        load("zz", [folder])
    assert str(err.value).startswith(f"{folder / 'zz.yaml'}: {key}"), str(err.value)


def test_a_missing_pack_is_a_one_line_error_from_the_cli(tmp_path):
    done = subprocess.run([sys.executable, "-m", "builder", "postprocess", "--lang", "zz", "--out", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, env={**os.environ, languages.PACKS_ENV: ""})
    assert done.returncode == 2
    assert done.stderr.startswith("error: no language pack zz.yaml in ") and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_extra_folders_come_before_the_builtin_packs(tmp_path, monkeypatch):
    data = yaml.safe_load((REPO / "languages" / "packs" / "pt.yaml").read_text(encoding="utf-8"))
    data["name"] = "Portuguese (my variant)"
    folder = _pack(tmp_path, "pt", yaml.safe_dump(data, allow_unicode=True))
    assert load("pt", [folder]).name == "Portuguese (my variant)"
    monkeypatch.setenv(languages.PACKS_ENV, str(folder))
    assert load("pt").name == "Portuguese (my variant)"
    monkeypatch.delenv(languages.PACKS_ENV)
    assert load("pt").name == "Portuguese"


# --- a toy language, declared in a temporary folder only -----------------------------------------------
# Toylang: the head (first word) takes -o for a man, -a for a woman; the words of NEUTRAL take -i for both.
TOY_PACK = r"""
code: xx
name: Toylang
notes: A made-up language for the tests; translated by a LibreTranslate-compatible server on 127.0.0.1.
translator: libre
web_codes: {libre: ga}   # the code the service knows it by (any code deep-translator accepts)
templates:
  libre: {masculine: 'He is a {title}.', feminine: 'She is a {title}.', lowercase: true}
strip: '(?:li|shi)\s+estas\s+(?P<title>.+)'
paper_table1: null
gender_rules:
  head_last: false
  suffixes: [[o, m], [a, f], [i, n]]
  weak: []
  articles: {}
  agreement: []
  phrase_end: [de]
  spacy_pipeline: null
lexicon: null
mitigation:
  suffixes: [[a, o]]
  stop_words: [de]
"""
QUERIES = ["Lawyer", "Nurse", "Software Engineer", "Waiter", "Data Analyst", "Judge"]
CORPUS = ["Attorney", "Paralegal", "Legal Assistant", "Registered Nurse", "Nursing Assistant", "Developer",
          "Programmer", "Web Developer", "Server", "Bartender", "Business Analyst", "Data Scientist", "Teacher", "Baker"]
QRELS = [("Lawyer", "Attorney"), ("Lawyer", "Paralegal"), ("Nurse", "Registered Nurse"), ("Nurse", "Nursing Assistant"),
         ("Software Engineer", "Developer"), ("Software Engineer", "Programmer"), ("Waiter", "Server"),
         ("Waiter", "Bartender"), ("Data Analyst", "Business Analyst"), ("Data Analyst", "Data Scientist"),
         ("Judge", "Teacher")]
NEUTRAL = {"judge", "teacher", "server"}


def toy_translation(sentence: str) -> str:
    """'He is a software engineer.' -> 'Li estas softwareo engineer.' (the table the test server answers from)."""
    pronoun, title = re.fullmatch(r"(He|She) is an? (.+)\.", sentence).groups()
    head, *rest = title.split(" ")
    ending = "i" if head in NEUTRAL else ("o" if pronoun == "He" else "a")
    return f"{'Li' if pronoun == 'He' else 'Shi'} estas {' '.join([head + ending, *rest])}."


def run(cwd: Path, *args: str, env: dict | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                               "HF_HUB_OFFLINE": "1", "DVC_NO_ANALYTICS": "1", **(env or {})})
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.mark.server
def test_a_toy_language_pack_in_a_temporary_folder_is_built_released_and_scored(tmp_path):
    from builder.translate import fill_template

    project = tmp_path / "project"
    project.mkdir()
    english = tmp_path / "en"
    english.mkdir()
    sid = lambda t: t.replace(" ", "_")  # noqa: E731
    (english / "queries.tsv").write_text("".join(f"{sid(t)}\t{t}\n" for t in QUERIES))
    (english / "corpus_documents.tsv").write_text("".join(f"{sid(t)}\t{t}\n" for t in CORPUS))
    (english / "annotations.tsv").write_text("".join(f"{sid(q)}\t0\t{sid(c)}\t1\n" for q, c in QRELS))
    # The project: the repository's params.yaml with one language added, and the pack in a folder of its own.
    (project / "my-packs").mkdir()
    (project / "my-packs" / "xx.yaml").write_text(TOY_PACK, encoding="utf-8")
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["languages"] = ["xx"]
    params["language_packs"] = ["my-packs"]
    params["release"]["tracked_inputs"] = ["params.yaml", "my-packs"]
    params["esco"]["languages"] = []  # a project of one new language has no ESCO family to release
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    (project / ".gitignore").write_text("/release/\n/results/\n/cache/\n", encoding="utf-8")

    template = yaml.safe_load(TOY_PACK)["templates"]["libre"]  # lowercase: true
    table = {fill_template(template[g], t, template["lowercase"]): None for t in QUERIES + CORPUS
             for g in ("masculine", "feminine")}  # "He is an attorney.": the sentences the build sends
    table = {s: toy_translation(s) for s in table}
    with LibreServer(table) as server:
        out = run(project, "builder", "build", "--lang", "xx", "--source", str(english), "--libre-url", server.url,
                  "--cache", "cache", env={"LIBRE_API_KEY": "test-key"})
    assert "gender by rules (no lexicon declared for xx)" in out, out
    stats = json.loads((project / "data" / "xx" / "stats.json").read_text(encoding="utf-8"))
    assert stats["translator"] == "libre" and stats["strip_pattern"] == yaml.safe_load(TOY_PACK)["strip"]
    assert stats["verdicts"] == {"gendered": len(QUERIES + CORPUS) - len(NEUTRAL), "neutral": len(NEUTRAL)}, stats["verdicts"]
    assert stats["queries"]["pairs"] == 5 and stats["queries"]["neutral"] == 1

    for command in ("git init -q -b main", "git config user.email m@example.org", "git config user.name M"):
        subprocess.run(command.split(), cwd=project, check=True)
    run(project, "dvc", "init", "-q")
    run(project, "dvc", "add", "-q", "data")
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "toy language"], cwd=project, check=True)
    run(project, "releases", "make", "--data", "data", "--version", "0.1.0", "--out", "release")
    card = (project / "release" / "README.md").read_text(encoding="utf-8")
    assert "### Toylang (`xx`)" in card and "Toylang (`xx`)" in card.split("## How each language was built")[0]
    run(project, "releases", "verify", "release")

    run(project, "eval", "run", "--data", "release", "--model", "tfidf-char", "--out", "results", "--quiet")
    results = [json.loads(p.read_text()) for p in (project / "results").rglob("*.json")]
    assert any(json.dumps(r).count('"xx"') for r in results), [p.name for p in (project / "results").rglob("*")]
    assert not (REPO / "languages" / "packs" / "xx.yaml").exists()


# --- no language tables in the code -------------------------------------------------------------------
CODES = "pt|es|fr|it|de|ca|gl|ro|nl|en"
TABLE_PATTERNS = [
    re.compile(rf"""["']({CODES})["']\s*:"""),  # a dict keyed by a language code
    re.compile(rf"""\b(lang|language|code|target)\s*(==|!=|in|not in)\s*[\[({{]?\s*["']({CODES})["']"""),
    re.compile(rf"""[\[({{,]\s*["']({CODES})["']\s*[,)\]}}]"""),  # a code in a tuple, list or set literal
    re.compile(r"""\b(SUFFIXES|WEAK|ARTICLES|AGREEMENT|PHRASE_END|MYMEMORY_CODES|LANGUAGE_NAMES|PAPER_TABLE1)\b\s*[:=]"""),
]
# Translator registries, not language knowledge: which language pairs an installed engine offers.
ALLOWED = {
    "builder/translators.py": "the offline engines' own pairs (Bergamot en->pt model, Apertium eng-spa mode)",
    "builder/chain.py": "the Apertium pairs between two languages and the engines' output languages",
    "eval/models.py": "the languages each model record declares it was trained on (model metadata, not language knowledge)",
    "builder/german.py": "German's own gender layer (pack key gender_layer: german): its grammar is code by design",
    "builder/dutch.py": "Dutch's own gender layer (pack key gender_layer: dutch): its grammar is code by design",
    "builder/polish.py": "Polish's own gender layer (pack key gender_layer: polish): its grammar is code by design",
    "builder/esco.py": "the pinned MELO dataset of each language (a third-party download's folders, ESCO versions and "
                       "SHA-256s, like a lock file), not knowledge of the language",
}


def test_no_language_code_tables_outside_the_packs():
    found = []
    for folder in ("builder", "eval", "releases", "annotation"):
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel in ALLOWED:
                continue
            for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                if any(p.search(code) for p in TABLE_PATTERNS):
                    found.append(f"{rel}:{lineno}: {line.strip()}")
    assert not found, "language-specific tables belong in languages/packs/<code>.yaml:\n" + "\n".join(found)


def test_the_grep_finds_a_table():
    """The patterns catch the tables this project used to keep in code."""
    samples = ['WEAK = {"pt": {"o", "a"}}', 'if lang == "de":', 'pairs = ("pt",)', 'LANGUAGE_NAMES = {}',
               'x = {"es": "es-ES"}']
    assert all(any(p.search(s) for p in TABLE_PATTERNS) for s in samples)


# --- one engine: the pack's declaration is checked by config's typed reader --------------------------------------
def _positions(value, key: str = "", steps: tuple = ()):
    """(dotted key, steps to it) of every value in a pack as read from YAML, the key in the notation errors use:
    ``a.b`` for a mapping's key, ``a[3]`` for a list's item. Of a list, and of a mapping longer than any section (a
    word table: lexicon.irregular), the first and last entries: the rest are alike."""
    if isinstance(value, dict):
        names = list(value)
        for k in names if len(names) <= 20 else [names[0], names[-1]]:
            yield from _positions(value[k], f"{key}.{k}" if key else str(k), (*steps, k))
    elif isinstance(value, list) and value:
        for i in sorted({0, len(value) - 1}):
            yield from _positions(value[i], f"{key}[{i}]", (*steps, i))
    if key:
        yield key, steps


@pytest.mark.parametrize("code", ["pt", "de", "es", "nl"])
def test_a_wrong_type_anywhere_in_a_pack_is_one_line_naming_the_file_and_that_key(tmp_path, code):
    """Every key of a shipped pack, given a value of the wrong kind (a mapping of nested junk where a value or list
    belongs, a list where a mapping belongs, a date where null was), is refused by the one typed reader: a
    LanguageError of one short line that names the pack file and exactly that key, whatever the key's depth."""
    original = yaml.safe_load((REPO / "languages" / "packs" / f"{code}.yaml").read_text(encoding="utf-8"))
    original["code"] = "zz"
    folder = tmp_path / "packs"
    folder.mkdir()
    path = folder / "zz.yaml"
    positions = [(key, steps) for key, steps in _positions(original) if key != "code"]
    assert any("[" in key and "." in key.split("[", 1)[0] for key, _ in positions)  # nested keys and list items
    for key, steps in positions:
        data = copy.deepcopy(original)
        parent = functools.reduce(lambda value, step: value[step], steps[:-1], data)
        current = parent[steps[-1]]
        if isinstance(current, dict):
            parent[steps[-1]] = [["junk"]]
        elif current is None:  # a section or value left null: a YAML date, which no key of a pack takes
            parent[steps[-1]] = datetime.date(2020, 1, 1)
        else:
            parent[steps[-1]] = {"junk": [1, {"deeper": None}], "x" * 500: "y" * 5000}
        path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        languages._load_file.cache_clear()
        with pytest.raises(LanguageError) as err:
            load("zz", [folder])
        message = str(err.value)
        assert message.startswith(f"{path}: {key} is "), (key, message)
        assert "\n" not in message and len(message) < len(str(path)) + len(key) + 400, (key, message)


def test_a_malformed_pack_is_one_error_line_from_the_cli(tmp_path):
    """Through a command line: nested junk at a nested key is one ``error:`` line naming the file and the key."""
    data = copy.deepcopy(PT)
    data["code"] = "zz"
    data["mitigation"]["adjective_before_changed_head"] = {"ending": "e", "append": "r", "min_length": {"a": [1]}}
    folder = _pack(tmp_path, "zz", yaml.safe_dump(data, allow_unicode=True))
    done = subprocess.run([sys.executable, "-m", "builder", "postprocess", "--lang", "zz", "--out", str(tmp_path / "out")],
                          cwd=REPO, capture_output=True, text=True, env={**os.environ, languages.PACKS_ENV: str(folder)})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.startswith(f"error: {folder / 'zz.yaml'}: mitigation.adjective_before_changed_head.min_length is ")
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_the_documented_pack_keys_are_the_declared_ones():
    """docs/new-language.md's table of keys and the declaration config's reader checks a pack against agree."""
    import dataclasses

    table = (REPO / "docs" / "new-language.md").read_text(encoding="utf-8").split("| key | what it is |", 1)[1]
    documented = set()
    for row in table.split("\n\n", 1)[0].splitlines()[2:]:
        documented |= set(re.findall(r"`([a-z_0-9]+)`", row.split("|")[1]))
    assert documented == {f.name for f in dataclasses.fields(languages._Pack)}
