"""The horizon of the ESCO family: the ESCO languages with grammatical gender and no pack yet, and what a gender
layer for each would need (languages/horizon.yaml, measured; docs/esco.md "Horizon" is rendered from it).

    .venv/bin/python scripts/horizon.py            # print the section as docs/esco.md holds it
    .venv/bin/python scripts/horizon.py --write    # rewrite that section of docs/esco.md from the YAML
    .venv/bin/python scripts/horizon.py --count    # recount the dual-form preferred labels from MELO's files
    .venv/bin/python scripts/horizon.py --measure /usr/share   # remeasure `measured` with the packages installed
        # (or unpacked, not installed: apt-get download <pkgs>; dpkg-deb -x <deb> ROOT; --measure ROOT/usr/share)

The YAML is data, not a pack: the pack loader reads languages/packs/ only. One renderer (``render``), used by
``--write`` and by tests/languages/test_horizon.py, so the docs cannot drift from the file.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

HORIZON = REPO / "languages" / "horizon.yaml"
DOC = REPO / "docs" / "esco.md"
# The section's bounds in docs/esco.md: what lies between them is render()'s output, nothing else.
BEGIN = "<!-- horizon: rendered by scripts/horizon.py from languages/horizon.yaml; edit the YAML, then --write -->"
END = "<!-- /horizon -->"
KEYS = ("code", "name", "melo", "esco_version", "occupations", "preferred_dual_form", "lexicon", "word_list",
        "measured", "missing", "verdict")
VERDICTS = ("buildable here: ", "not buildable here: ")


class HorizonError(Exception):
    """languages/horizon.yaml is not as the renderer reads it; the message names the file and the entry."""


def load(path: Path | None = None) -> list[dict]:
    """The entries of the horizon file (default languages/horizon.yaml), checked for the keys the renderer reads."""
    import yaml

    from config import load_yaml, yaml_error_where

    path = path or HORIZON
    try:
        data = load_yaml(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        line, problem = yaml_error_where(exc)
        raise HorizonError(f"{path}{line}: not YAML ({problem}); fix the file") from None
    entries = data.get("languages") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise HorizonError(f"{path}: expected a list under 'languages'")
    for n, e in enumerate(entries):
        missing = [k for k in KEYS if not isinstance(e, dict) or k not in e]
        if missing:
            raise HorizonError(f"{path}: languages[{n}] lacks {', '.join(missing)}")
        if not str(e["verdict"]).startswith(VERDICTS):
            raise HorizonError(f"{path}: {e['code']}: verdict {e['verdict']!r} starts with neither "
                               f"{' nor '.join(repr(v) for v in VERDICTS)}")
    return entries


def _lexicon(e: dict) -> str:
    if not e["lexicon"]:
        return "none"
    return "; ".join(f"{x['package']} {x['version']} ({x['source']}; pairs with "
                     f"{', '.join(x['pairs_with']) or 'none of en/es/fr/it/pt'})" for x in e["lexicon"])


def _share(m: dict, part: str, whole: str) -> str:
    return f"{m[part]:,} of {m[whole]:,}" if part in m else "—"


def render(entries: list[dict]) -> str:
    """The section of docs/esco.md between BEGIN and END: one table row per language, then what each lacks."""
    rows = ["| lang | MELO dataset (ESCO) | preferred labels in dual form | lexicon (Debian) | word list | first "
            "words the word list knows | the lexicon analyses | feminine first words it reads as feminine nouns "
            "| verdict |", "|---|---|---|---|---|---|---|---|---|"]
    for e in entries:
        m, w = e["measured"], e["word_list"]
        rows.append(f"| {e['code']} ({e['name']}) | `{e['melo']}` ({e['esco_version']}) | {e['preferred_dual_form']:,} "
                    f"of {e['occupations']:,} | {_lexicon(e)} | {w['package']} {w['version']} | "
                    f"{_share(m, 'hunspell_known', 'first_words')} | {_share(m, 'analysed', 'first_words')} | "
                    f"{_share(m, 'feminine_nouns', 'feminine_first_words')} | {e['verdict']} |")
    notes = [f"- **{e['code']}**: {e['missing']}." + (f" Also on PyPI: {'; '.join(e['also_on_pypi'])}."
                                                    if e.get("also_on_pypi") else "") for e in entries]
    return "\n".join(rows + [""] + notes)


def count(melo_root: Path, entries: list[dict] | None = None) -> dict[str, tuple[int, int]]:
    """(occupations, preferred labels in dual form) per horizon language, read and counted by builder/esco.py."""
    from builder.esco import melo_occupations, preferred_dual_form

    out = {}
    for e in entries if entries is not None else load():
        occupations = melo_occupations(Path(melo_root) / "processed" / "melo" / e["melo"], e["code"])
        out[e["code"]] = (len(occupations), preferred_dual_form(occupations))
    return out


def first_words(occupations) -> tuple[list[str], list[str]]:
    """The distinct first words (lowercased) of every form of the preferred labels (both sides of a dual form, as
    builder/esco.py's dual_sides reads them), and those of the second, feminine side of the dual forms."""
    from builder.esco import dual_sides

    every, feminine = set(), set()
    for o in occupations:
        sides = [s.split()[0].strip(",.()").lower() for s in dual_sides(o.preferred)[0] if s.split()]
        every.update(w for w in sides if w)
        if len(sides) == 2 and sides[1]:
            feminine.add(sides[1])
    return sorted(every), sorted(feminine)


def _hunspell_known(words: list[str], dictionary: Path) -> int:
    import subprocess

    unknown = set(subprocess.run(["hunspell", "-d", str(dictionary), "-l", "-i", "utf-8"], input="\n".join(words),
                                 capture_output=True, text=True, check=True).stdout.split())
    return sum(w not in unknown for w in words)


def _analyses(words: list[str], analyser: Path) -> list[str]:
    """lt-proc's output line of each word (one word a line in, one line out)."""
    import subprocess

    if not analyser.is_file():
        raise HorizonError(f"{analyser}: missing; install or unpack its package first")
    out = subprocess.run(["lt-proc", str(analyser)], input="\n".join(words) + "\n", capture_output=True, text=True,
                         check=True).stdout.split("\n")[:len(words)]
    if len(out) != len(words):
        raise HorizonError(f"{analyser}: {len(out)} lines for {len(words)} words; lt-proc split a word")
    return out


# A noun reading with a gender tag (Apertium: m, f, nt; Serbo-Croatian/Slovenian animacy ma, mi; mp, mf), and a
# feminine noun reading.
_NOUN_GENDER = re.compile(r"<n>(<[a-z0-9]+>)*<(m|f|ma|mi|mp|mf|nt)>")
_NOUN_FEMININE = re.compile(r"<n>(<[a-z0-9]+>)*<f>")


def measure(entries: list[dict], melo_root: Path, share: Path) -> dict[str, dict]:
    """Each entry's ``measured``, again: the word list and the lexicon (under ``share``: hunspell/<dictionary>,
    apertium/<package>/<analyser>) asked about the first words of ESCO's preferred labels."""
    from builder.esco import melo_occupations

    out = {}
    for e in entries:
        every, feminine = first_words(melo_occupations(Path(melo_root) / "processed" / "melo" / e["melo"], e["code"]))
        dictionary = Path(share) / "hunspell" / e["word_list"]["dictionary"]
        if not dictionary.with_suffix(".dic").is_file():
            raise HorizonError(f"{dictionary}.dic: missing; install or unpack {e['word_list']['package']} first")
        got = {"first_words": len(every), "hunspell_known": _hunspell_known(every, dictionary)}
        if e["lexicon"]:
            lex = e["lexicon"][0]
            lines = _analyses(every, Path(share) / "apertium" / lex["package"] / lex["analyser"])
            known = [line for line in lines if line.count("^") == 1 and "/*" not in line]
            got |= {"analysed": len(known), "noun_gender": sum(bool(_NOUN_GENDER.search(x)) for x in known)}
        got |= {"feminine_first_words": len(feminine), "feminine_hunspell_known": _hunspell_known(feminine, dictionary)}
        if e["lexicon"]:
            got["feminine_nouns"] = sum(bool(_NOUN_FEMININE.search(x)) for x in _analyses(feminine, Path(share) / "apertium"
                                                                                           / lex["package"] / lex["analyser"]))
        out[e["code"]] = got
    return out


def section(doc_text: str, path: Path = DOC) -> str:
    """What docs/esco.md holds between BEGIN and END."""
    if doc_text.count(BEGIN) != 1 or doc_text.count(END) != 1:
        raise HorizonError(f"{path}: expected one {BEGIN!r} and one {END!r}")
    return doc_text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")


def with_section(doc_text: str, text: str, path: Path = DOC) -> str:
    """docs/esco.md with ``text`` between BEGIN and END (whatever was there before replaced)."""
    section(doc_text, path)  # the bounds are there, once each
    head, rest = doc_text.split(BEGIN, 1)
    return f"{head}{BEGIN}\n{text}\n{END}{rest.split(END, 1)[1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the section of docs/esco.md")
    parser.add_argument("--count", action="store_true", help="recount the dual forms from MELO's files")
    parser.add_argument("--measure", type=Path, metavar="SHARE", help="remeasure with the packages under SHARE "
                        "(/usr/share when installed); prints each language's measured beside the file's")
    parser.add_argument("--horizon", type=Path, default=HORIZON, help="the horizon file (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        entries = load(args.horizon)
        text = render(entries)
        if args.count:
            from builder.esco import DEFAULT_MELO_DIR

            for code, (occupations, dual) in count(DEFAULT_MELO_DIR, entries).items():
                print(f"{code}\t{occupations}\t{dual}")
        elif args.measure:
            from builder.esco import DEFAULT_MELO_DIR

            for code, got in measure(entries, DEFAULT_MELO_DIR, args.measure).items():
                listed = next(e for e in entries if e["code"] == code)["measured"]
                print(f"{code}\t{'same' if got == listed else 'DIFFERENT'}\t{got}")
        elif args.write:
            DOC.write_text(with_section(DOC.read_text(encoding="utf-8"), text), encoding="utf-8")
        else:
            print(text)
    except Exception as exc:  # one error line, never a traceback (bad YAML, a missing MELO file)
        from builder.errors import SourceError

        if not isinstance(exc, (HorizonError, SourceError, OSError, ValueError)):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
