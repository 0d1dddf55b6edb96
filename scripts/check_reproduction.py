"""Whether a build reproduced the bytes dvc.lock records: after ``builder defaults`` (or ``dvc repro``) on a fresh
machine, each output of the builder's stages (``python -m builder …`` in dvc.lock) hashed as DVC hashes it and
compared with the lock, one line per output.

    .venv/bin/python scripts/check_reproduction.py [--lock dvc.lock] [--root .] [--outputs DIR]

``same``: the bytes dvc.lock records. ``differs``: other bytes, with the reason where it is known: an input of
the stage (a file, a folder or a param the lock records) is not what the lock records (the lock is older than the
inputs: ``dvc repro`` records the new outputs), or the file records something the pipeline's commands record
otherwise (``explain``). ``missing``: the build did not write it. Exit status 0 whatever differs (CI reports the
result, it does not fail on it: docs/releases.md "A fresh machine against dvc.lock"); 2 when the lock cannot be
read.

The hashes are DVC 3's ``md5``: of a file, the MD5 of its bytes; of a folder (``<md5>.dir``), the MD5 of the JSON
list DVC stores for it, ``[{"md5": …, "relpath": …}, …]`` in the order of ``relpath``, leaving out what .dvcignore
names (tests/test_check_reproduction.py checks both against DVC's own hashing and a real ``dvc repro``).
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import sys
from pathlib import Path


def file_md5(path: Path) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def ignore_patterns(root: Path) -> list[str]:
    """The patterns of ``root/.dvcignore``: only the name patterns this project uses (``__pycache__/``, ``*.pyc``),
    matched against each file's and folder's name; a pattern with a slash inside would need gitignore's path rules
    and is refused rather than read wrongly."""
    path = root / ".dvcignore"
    if not path.is_file():
        return []
    patterns = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "/" in line.rstrip("/") or line.startswith("!"):
            raise SystemExit(f"error: {path}:{number}: {line!r} is a path pattern; this check reads only name "
                             "patterns (such as __pycache__/ or *.pyc)")
        patterns.append(line)
    return patterns


def _ignored(name: str, is_dir: bool, patterns: list[str]) -> bool:
    for pattern in patterns:
        if pattern.endswith("/"):
            if is_dir and fnmatch.fnmatchcase(name, pattern[:-1]):
                return True
        elif fnmatch.fnmatchcase(name, pattern):
            return True
    return False


def dir_md5(folder: Path, patterns: list[str]) -> str:
    """DVC's ``.dir`` hash of ``folder``: the MD5 of ``json.dumps(entries, sort_keys=True)``, one entry per file
    (``md5``, ``relpath`` with ``/``), in the order of ``relpath`` (dvc_data's Tree.as_bytes)."""
    entries = []

    def walk(here: Path, parts: tuple[str, ...]) -> None:
        for child in here.iterdir():
            if _ignored(child.name, child.is_dir(), patterns):
                continue
            if child.is_dir():
                walk(child, (*parts, child.name))
            else:
                entries.append(((*parts, child.name), file_md5(child)))

    walk(folder, ())
    # sorted by the joined path, as DVC sorts (``sub-x`` before ``sub/a``), not part by part
    listing = sorted(({"md5": md5, "relpath": "/".join(parts)} for parts, md5 in entries), key=lambda e: e["relpath"])
    return hashlib.md5(json.dumps(listing, sort_keys=True).encode("utf-8")).hexdigest() + ".dir"


def md5_of(path: Path, patterns: list[str]) -> str | None:
    """DVC's md5 of ``path`` (a file or a folder); None when it is not there."""
    if path.is_dir():
        return dir_md5(path, patterns)
    if path.is_file():
        return file_md5(path)
    return None


def _param(params: dict, dotted: str):
    value = params
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def changed_inputs(stage: dict, root: Path, outputs: Path, built: set[str], patterns: list[str]) -> tuple[list[str], list[str]]:
    """The inputs of ``stage`` that are not what the lock records: (those of the checkout: code, corrections and
    params by value; those the build itself wrote, ``built``, read where it wrote them). A dep neither holds is no
    input of this build (``builder defaults`` reads the English folder in place of the source stage's copy)."""
    checkout, upstream = [], []
    for dep in stage.get("deps", []):
        if "md5" not in dep:
            continue
        ours = dep["path"] in built and not dep["path"].startswith("corrections/")
        where = (outputs if ours else root) / dep["path"]
        if where.exists() and md5_of(where, patterns) != dep["md5"]:
            (upstream if ours else checkout).append(dep["path"])
    for file, recorded in (stage.get("params") or {}).items():
        current = _yaml(root / file)
        checkout += [f"{file}:{key}" for key, value in recorded.items() if _param(current, key) != value]
    return checkout, upstream


def _listed(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _yaml(path: Path):
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}


def _json(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


# The differences understood, each found by building on a fresh machine (docs/releases.md, "A fresh machine
# against dvc.lock"): what `builder defaults` writes otherwise than the pipeline's stage commands, which dvc.lock
# records. Each reads the built file and says why when it applies; None when it does not.

def _reference_folder(path: Path, lang: str) -> str | None:
    doc = _json(path)
    recorded = (doc.get("alignment") if path.name == "stats.json" else doc) or {}
    folder = recorded.get("reference") if isinstance(recorded, dict) else None
    expected = f"data/source/reference/{lang}"
    if folder is None or folder == expected:
        return None
    return (f"it records the folder its given translations were read from, {folder}; the pipeline reads the source "
            f"stage's copy, {expected}")


def _version(path: Path, root: Path) -> str | None:
    release = _param(_yaml(root / "params.yaml"), "release.version")
    built = _json(path).get("version")
    if built == release:
        return None
    recorded = "no release version" if built is None else f"the release version {built}"
    return (f"it records {recorded}; the pipeline's postprocess passes release.version {release} (builder defaults "
            "passes none)")


def _apertium_batches(path: Path) -> str | None:
    try:
        import pyarrow.parquet as pq

        translators = set(pq.read_table(path, columns=["translator"]).column("translator").to_pylist())
    except Exception:  # not a readable raw translations file: nothing to explain by
        return None
    if not any("apertium" in str(t) for t in translators):
        return None
    return ("likely the translation cache: Apertium translates a few sentences differently beside other sentences "
            "in one call, and a build that found some sentences cached sent the rest in other calls than a fresh "
            "machine, whose calls are the same every time (docs/releases.md)")


def explain(out_path: str, built: Path, stage_name: str, stage: dict, root: Path, *,
            inputs_changed: bool = False) -> str | None:
    """Why the built ``out_path`` legitimately differs from (or is missing against) dvc.lock, else None. A guess
    (the translation cache) only when the stage's inputs are the lock's (``inputs_changed`` false)."""
    cmd = str(stage.get("cmd", ""))
    if cmd.startswith("python -m builder corrections "):
        return ("a file people write (annotation pull) and git keeps, which this stage only checks: dvc.lock records "
                "it as of the last dvc repro, older than the commit that changed it")
    if not built.exists():
        if cmd.startswith("python -m builder source "):
            return "the source stage's copy of the English folder: builder defaults reads that folder in place"
        return None
    lang = Path(out_path).parent.name
    reasons = []
    if built.name in ("alignment.json", "stats.json"):
        reasons.append(_reference_folder(built, lang))
    if built.name == "stats.json" and stage_name.startswith("postprocess@"):
        reasons.append(_version(built, root))
    if built.name == "raw_translations.parquet" and not inputs_changed:
        reasons.append(_apertium_batches(built))
    reasons = [r for r in reasons if r]
    return "; ".join(reasons) or None


def builder_stages(lock: dict) -> dict[str, dict]:
    """The stages of ``lock`` whose command runs the builder."""
    return {name: stage for name, stage in (lock.get("stages") or {}).items()
            if str(stage.get("cmd", "")).startswith("python -m builder ")}


def check(lock_path: Path, root: Path, outputs: Path | None = None) -> list[tuple[str, str, str]]:
    """(path, "same" | "differs" | "missing", why) for every output the builder's stages record, in path order;
    the outputs read under ``outputs`` (default: ``root``, the checkout whose inputs the lock's deps name)."""
    import yaml

    outputs = root if outputs is None else outputs
    try:
        lock = yaml.safe_load(lock_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        reason = " ".join(str(exc).split())  # YAML's message runs over several lines
        raise SystemExit(f"error: {lock_path}: cannot read the lock ({reason[:200]}); give dvc.lock with --lock") from None
    if not isinstance(lock, dict) or not isinstance(lock.get("stages"), dict):
        raise SystemExit(f"error: {lock_path}: no stages: mapping; not a dvc.lock")
    patterns = ignore_patterns(root)
    stages = builder_stages(lock)
    built = {out["path"] for stage in stages.values() for out in stage.get("outs", [])}
    rows = []
    for name, stage in stages.items():
        changed = None  # computed once per stage, when one of its outputs differs
        for out in stage.get("outs", []):
            if "md5" not in out:
                continue
            path = (root if name.startswith("corrections@") else outputs) / out["path"]
            got = md5_of(path, patterns)
            if got == out["md5"]:
                rows.append((out["path"], "same", ""))
                continue
            if changed is None:
                changed = changed_inputs(stage, root, outputs, built, patterns)
            checkout, upstream = changed
            reasons = [explain(out["path"], path, name, stage, root, inputs_changed=bool(checkout))]
            if checkout:
                reasons.insert(0, f"{name}: its inputs are not the ones dvc.lock records ({_listed(checkout)}); dvc "
                                  "repro records the new bytes")
            elif upstream and reasons[0] is None:
                reasons = [f"{name}: its inputs built here differ from dvc.lock ({_listed(upstream)}; see their lines)"]
            why = "; ".join(r for r in reasons if r) or (
                "not written by this build" if got is None else "not understood: the same inputs gave other bytes")
            rows.append((out["path"], "missing" if got is None else "differs", why))
    return sorted(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lock", default="dvc.lock", help="the lock to compare with (default: dvc.lock)")
    parser.add_argument("--root", default=".", help="the checkout whose inputs the lock names (default: .)")
    parser.add_argument("--outputs", help="the folder the build wrote into, holding data/ and data-esco/ "
                                          "(default: --root)")
    args = parser.parse_args(argv)
    try:
        rows = check(Path(args.lock), Path(args.root), Path(args.outputs) if args.outputs else None)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    for path, verdict, why in rows:
        print(f"{verdict:8} {path}" + (f"  ({why})" if why else ""))
    counts = {v: sum(1 for _, verdict, _ in rows if verdict == v) for v in ("same", "differs", "missing")}
    print(f"reproduction against {args.lock}: {counts['same']} same, {counts['differs']} differ, "
          f"{counts['missing']} missing, of {len(rows)} builder outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
