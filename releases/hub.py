"""Optional publication of a verified release to the Hugging Face Hub as a dataset repository.

The plan (repository, revision, tag and the exact files with their SHA-256) is built offline from the
release folder; a dry run prints it, a real push sends exactly those operations with the token from the
environment (HF_TOKEN), which is never printed or stored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.utils import HFValidationError, validate_repo_id

from .manifest import MANIFEST_NAME, ReleaseError, read_manifest, verify_release


@dataclass(frozen=True)
class HubPlan:
    repo_id: str
    repo_type: str
    revision: str
    commit_message: str
    tag: str
    operations: tuple[CommitOperationAdd, ...]

    def describe(self) -> dict:
        return {
            "repo_id": self.repo_id,
            "repo_type": self.repo_type,
            "revision": self.revision,
            "commit_message": self.commit_message,
            "tag": self.tag,
            "files": [{"path_in_repo": op.path_in_repo, "bytes": op.upload_info.size,
                       "sha256": op.upload_info.sha256.hex()} for op in self.operations],
        }


def plan_hub_upload(release_dir: str | Path, repo_id: str, revision: str = "main") -> HubPlan:
    """Verify the release and list what a push would send; touches no network."""
    release_dir = Path(release_dir)
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise ReleaseError(f"--push-to-hub {repo_id!r}: not a valid Hub repository id ({exc})") from None
    verification = verify_release(release_dir)
    if not verification.ok:
        raise ReleaseError(f"{release_dir} fails verification, refusing to upload: " + "; ".join(verification.problems))
    manifest = read_manifest(release_dir)
    paths = [entry["path"] for entry in manifest["files"]] + [MANIFEST_NAME]
    operations = tuple(CommitOperationAdd(path_in_repo=p, path_or_fileobj=release_dir / p) for p in sorted(paths))
    version = manifest["version"]
    return HubPlan(repo_id=repo_id, repo_type="dataset", revision=revision,
                   commit_message=f"Release {version} ({manifest['tag']})",
                   tag=f"v{version}", operations=operations)


def push_to_hub(plan: HubPlan) -> str:
    """Send the plan; safe to run again after an interruption (unchanged files are skipped, the tag reused)."""
    token = os.environ.get("HF_TOKEN")
    if not token:
        raise ReleaseError("set HF_TOKEN (a Hugging Face write token) in the environment to push to the Hub")
    api = HfApi(token=token)
    api.create_repo(plan.repo_id, repo_type=plan.repo_type, exist_ok=True)
    commit = api.create_commit(plan.repo_id, list(plan.operations), commit_message=plan.commit_message,
                               repo_type=plan.repo_type, revision=plan.revision)
    api.create_tag(plan.repo_id, tag=plan.tag, revision=commit.oid, repo_type=plan.repo_type, exist_ok=True)
    return commit.commit_url
