"""`python -m releases checkout X.Y.Z`: a published version by its version alone, in any clone.

Tags do not travel with every clone, so the version is looked up in git's history: its tag when the clone
has one, otherwise the commit that added it to published.json (anchor.resolve_release). The work tree is
checked out at that commit, a detached HEAD (refused when it has uncommitted changes; the command prints the git
command that goes back to the branch or commit it left), then `dvc pull` fetches the release
folder that commit records from the committed dvc-storage/, and the folder is verified against the digests
the commit records (published.json, dvc.lock). The verification runs with the code that was loaded before
the checkout, so it does not depend on what the checked-out commit's own `releases` can resolve.
"""

from __future__ import annotations

import importlib.util
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .anchor import PUBLISHED_NAME, AnchoredVerification, git, published_entry, resolve_release, verify_against
from .manifest import ReleaseError
from .publish import _dvc


@dataclass
class Checkout:
    version: str
    commit: str
    how: str
    folder: str
    moved: bool                      # False when HEAD was at the commit already
    branch: str | None               # the branch HEAD was on before (None: a detached HEAD, or no move)
    back: str | None                 # the git command that returns the clone to where it was (None: no move)
    verified: AnchoredVerification | None = None
    notes: list[str] = field(default_factory=list)


def checkout_release(repo: Path, name: str, pull: bool = True) -> Checkout:
    resolved = resolve_release(repo, name)
    if resolved.version is None:
        raise ReleaseError(f"{name}: checkout takes a published version X.Y.Z (README.md lists them, so does "
                           f"{PUBLISHED_NAME}); for any other commit use `git checkout {name}`")
    entry = published_entry(repo, resolved)
    if entry is None:
        raise ReleaseError(f"{name}: {resolved.how} ({resolved.commit[:12]}) has no {PUBLISHED_NAME} entry for "
                           f"{resolved.version}; the tag is misplaced, delete it (`git tag -d`) to use the commit "
                           f"that added {resolved.version} to {PUBLISHED_NAME}")
    if pull and importlib.util.find_spec("dvc") is None:
        raise ReleaseError("dvc is not installed in this Python environment, so the release cannot be pulled; "
                           "pip install '.[researcher]' (README.md, Releases), or pass --no-pull")
    changed = [line for line in git(repo, "status", "--porcelain", "--untracked-files=no").splitlines() if line]
    if changed:
        shown = ", ".join(line[3:] for line in changed[:3]) + (", …" if len(changed) > 3 else "")
        raise ReleaseError(f"{repo}: the work tree has uncommitted changes ({len(changed)} file(s): {shown}); "
                           "commit or stash them (`git stash`) first: checkout replaces the tracked files")
    head = git(repo, "rev-parse", "HEAD").strip()
    moved = head != resolved.commit
    # where HEAD was, to say how to go back: `git switch -` fails when it was a detached HEAD (another version's)
    on = subprocess.run(["git", "-C", str(repo), "symbolic-ref", "-q", "--short", "HEAD"], capture_output=True, text=True)
    branch = on.stdout.strip() if on.returncode == 0 and on.stdout.strip() else None
    back = None if not moved else f"git switch {branch}" if branch else f"git switch --detach {head[:12]}"
    if moved:
        done = subprocess.run(["git", "-C", str(repo), "-c", "advice.detachedHead=false", "checkout", "-q",
                               "--detach", resolved.commit], capture_output=True, text=True)
        if done.returncode != 0:
            why = " ".join(done.stderr.split())
            raise ReleaseError(f"git checkout {resolved.commit[:12]} (release {resolved.version}) failed: {why}")
    result = Checkout(resolved.version, resolved.commit, resolved.how, entry["folder"], moved, branch if moved else None, back)
    if pull:
        try:
            _dvc(repo, "pull", "-q", entry["folder"])
            result.verified = verify_against(repo / entry["folder"], name, repo)
        except ReleaseError as exc:
            done = "checked out" if moved else "at"
            raise ReleaseError(f"{done} commit {resolved.commit[:12]} (release {resolved.version}), then: {exc}") from None
    return result
