"""Session-wide guard: nothing in the test suite may reach a model hub, a dataset hub or DVC's telemetry.

Set at import, so every subprocess a test starts (CLIs, servers) inherits it too.
"""

import os

for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "DVC_NO_ANALYTICS"):
    os.environ[name] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

# A build without --corrections applies <GJT_CORRECTIONS_DIR>/<lang>.jsonl (builder/build.py): the repository's own
# corrections hold the maintainers' review of the whole English source (docs/review.md), which a test's slice of
# the source lacks ids of. The suite builds from the machine's text unless a test names a corrections file; the
# pipeline tests pass dvc.yaml's explicit --corrections.
import tempfile  # noqa: E402

os.environ["GJT_CORRECTIONS_DIR"] = tempfile.mkdtemp(prefix="gjt-no-corrections-")


# --- the fast subset ---------------------------------------------------------------------------------------------
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

SLOW_LIST = Path(__file__).with_name("slow.txt")


def slow_entries(text: str) -> list[str]:
    """The node ids tests/slow.txt lists: a line's id before its `  # seconds` note; comments and blank lines skipped."""
    ids = (line.split("  #", 1)[0].strip() for line in text.splitlines())
    return [i for i in ids if i and not i.startswith("#")]


@pytest.hookimpl(tryfirst=True)  # before -m deselects: `-m "not slow"` must see these marks
def pytest_collection_modifyitems(config, items):
    entries = set(slow_entries(SLOW_LIST.read_text(encoding="utf-8")))
    matched = set()
    for item in items:
        for name in (item.nodeid, item.nodeid.split("[", 1)[0]):
            if name in entries:
                item.add_marker(pytest.mark.slow)
                matched.add(name)
    # A module collected whole (no `file::test` argument) must hold every test listed for it: a renamed slow test
    # would otherwise slip into the fast subset unnoticed.
    if any("::" in arg for arg in config.args):
        return
    collected = {item.nodeid.split("::", 1)[0] for item in items}
    stale = sorted(e for e in entries - matched if e.split("::", 1)[0] in collected)
    if stale:
        raise pytest.UsageError(f"{SLOW_LIST}: {len(stale)} listed test(s) not found in their module: {', '.join(stale[:5])}; "
                                "remove or rename them there")
