"""Optional publication of a verified release to the Hugging Face Hub as a dataset repository.

The plan (repository, revision, tag and the exact files with their SHA-256) is built offline from the
release folder; a dry run prints it, a real push sends exactly those operations with the token from the
environment (HF_TOKEN), which is never printed or stored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import httpx2  # the HTTP client huggingface_hub is built on (its declared dependency): its transport errors
from huggingface_hub import CommitOperationAdd, HfApi, constants
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.utils import HFValidationError, validate_repo_id

from config.secrets import scrub

from .manifest import MANIFEST_NAME, ReleaseError, read_manifest, verify_release


@dataclass(frozen=True)
class HubPlan:
    repo_id: str
    repo_type: str
    revision: str
    commit_message: str
    tag: str
    operations: tuple[CommitOperationAdd, ...]
    release_dir: Path

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
                   tag=f"v{version}", operations=operations, release_dir=release_dir)


def push_to_hub(plan: HubPlan) -> str:
    """Send the plan; safe to run again after an interruption (unchanged files are skipped, the tag reused)."""
    token = os.environ.get("HF_TOKEN")
    if not token:
        raise ReleaseError("set HF_TOKEN (a Hugging Face write token) in the environment to push to the Hub")
    api = HfApi(token=token)
    try:
        api.create_repo(plan.repo_id, repo_type=plan.repo_type, exist_ok=True)
        commit = api.create_commit(plan.repo_id, list(plan.operations), commit_message=plan.commit_message,
                                   repo_type=plan.repo_type, revision=plan.revision)
        api.create_tag(plan.repo_id, tag=plan.tag, revision=commit.oid, repo_type=plan.repo_type, exist_ok=True)
        return commit.commit_url
    except HfHubHTTPError as exc:  # an answer with an error status (before the transport errors: it is one too)
        status = exc.response.status_code if exc.response is not None else "an error"
        hint = (f"check that HF_TOKEN may write to {plan.repo_id}" if status in (401, 403)
                else "check the repository id and the Hub's status")
        raise ReleaseError(_failed(plan, f"the Hub at {_endpoint()} answered HTTP {status}", hint)) from None
    except (httpx2.HTTPError, OSError) as exc:  # refused, reset, timed out, no such host, offline mode
        raise ReleaseError(_failed(plan, f"cannot reach the Hub at {_endpoint()} ({type(exc).__name__}: {exc})",
                                   "check the network, and HF_ENDPOINT if set")) from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # not JSON, or not the JSON the Hub answers
        raise ReleaseError(_failed(plan, f"the Hub at {_endpoint()} answered something that is not the Hub's API "
                                   f"({type(exc).__name__})", "check HF_ENDPOINT (unset: huggingface.co)")) from None


def _endpoint() -> str:
    return scrub(constants.ENDPOINT)


def _failed(plan: HubPlan, cause: str, hint: str) -> str:
    """One line: what the Hub did, what to check, and that the release is intact (a push repeated later skips
    the files that already arrived)."""
    return (f"--push-to-hub {plan.repo_id}: {cause}; {hint}, and push again: {plan.release_dir} is complete and "
            "unchanged, and a repeated push skips what already arrived").replace("\n", " ")
