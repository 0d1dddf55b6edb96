"""python -m releases make | verify | publish | checkout: package a versioned benchmark release, check a copy
of one (against the digests git records with --against), publish one to the project's DVC remote, or get a
published one by its version alone (no tag needed).

Defaults come from the `release:` section of params.yaml; flags override them.
"""

from __future__ import annotations

from config.cli import starting

# `python -m releases` or `gjt-releases`: before the imports below, so a Ctrl-C in them is one line, not a traceback
starting("releases", __name__)

import argparse
import json
import sys
import time
from pathlib import Path

from config.cli import params_option, program, run_command

from .errors import ReleaseError
from .params import read_release_params

# Each command imports what it runs when it runs (releases.make, .publish, .anchor and a release's files load
# polars): `--help` and a usage error load none of them.


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=program("releases"), description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    # --params on the subcommands that read params (make, publish; config/cli.py); the others read none
    make = sub.add_parser("make", help="package every built language into a release folder")
    params_option(make, help="params file (languages, release section)")
    make.add_argument("--data", help="the builder's output folder, one sub-folder per language (default: release.data)")
    make.add_argument("--esco", help="the ESCO family's folder, one sub-folder per language of esco.languages, "
                                     "released as <out>/esco/ (default: release.esco, from the params file's folder; "
                                     "python -m builder defaults writes data-esco)")
    make.add_argument("--version", help="release version X.Y.Z, git tag testset@vX.Y.Z (default: release.version)")
    make.add_argument("--out", help="the release folder to write (default: release.out)")
    make.add_argument("--push-to-hub", metavar="REPO_ID",
                      help="also upload the release to this Hugging Face dataset repository (token: HF_TOKEN)")
    make.add_argument("--hub-revision", default="main", help="branch of the Hub repository")
    make.add_argument("--dry-run", action="store_true", help="with --push-to-hub: print the upload plan, send nothing")
    make.set_defaults(func=cmd_make)

    verify = sub.add_parser("verify", help="check every checksum and row count of a release folder")
    verify.add_argument("release_dir", type=Path)
    verify.add_argument("--against", metavar="VERSION",
                        help="also check the folder against the digests git records (published.json, dvc.lock) "
                             "for this published version, e.g. 0.3.1 (found through its tag testset@v0.3.1 when "
                             "the clone has it, otherwise through the history of published.json), or at this "
                             "commit; without it the folder is only checked against its own manifest")
    verify.set_defaults(func=cmd_verify)

    checkout = sub.add_parser("checkout", help="check out the commit that published a version, pull its release "
                                               "folder and verify it; no tag needed")
    checkout.add_argument("version", help="a published version, e.g. 0.3.1 (README.md lists them)")
    checkout.add_argument("--no-pull", action="store_true",
                          help="only the git checkout; then `dvc pull release` and `python -m releases verify "
                               "release --against COMMIT` by hand")
    checkout.set_defaults(func=cmd_checkout)

    publish = sub.add_parser("publish", help="push a made release to the DVC remote and record its digests "
                                             "in published.json")
    params_option(publish, help="params file (release.out, the default --release)")
    publish.add_argument("--release",
                         help="the release folder, a DVC output recorded in dvc.lock (default: release.out)")
    publish.add_argument("--remote", help="DVC remote to push to (default: the default remote of .dvc/config)")
    publish.add_argument("--push-to-hub", metavar="REPO_ID",
                         help="also upload the same release folder to this Hugging Face dataset repository")
    publish.add_argument("--hub-revision", default="main", help="branch of the Hub repository")
    publish.add_argument("--dry-run", action="store_true",
                         help="with --push-to-hub: print the upload plan only (the DVC push still happens)")
    publish.set_defaults(func=cmd_publish)
    return parser


def _push(release_dir: Path, repo_id: str, revision: str, dry_run: bool) -> None:
    from .hub import plan_hub_upload, push_to_hub  # huggingface_hub only when publishing

    plan = plan_hub_upload(release_dir, repo_id, revision)
    if dry_run:
        print(json.dumps({"dry_run": True, **plan.describe()}, indent=2))
        return
    print(f"pushed to the Hub: {push_to_hub(plan)}")


def _print_anchored(release_dir, anchored) -> None:
    print(f"{release_dir}: release {anchored.version} verified against {anchored.rev} "
          f"(commit {anchored.commit[:12]}):")
    if anchored.how != "commit":
        print(f"  found: {anchored.rev} = commit {anchored.commit[:12]}, {anchored.how}")
    for line in anchored.checked:
        print(f"  checked: {line}")


def _with_release_defaults(args: argparse.Namespace, flags: dict[str, str]) -> None:
    """Fill each flag of ``flags`` (flag -> its release: key) not given from params.yaml's release: section (a
    missing params file leaves them unset: the flags then name them)."""
    release = read_release_params(args.params, required=False).release
    for flag, key in flags.items():
        if getattr(args, flag) is None:
            setattr(args, flag, getattr(release, key))


def cmd_make(args: argparse.Namespace) -> None:
    params_path = Path(args.params)
    _with_release_defaults(args, {"data": "data", "version": "version", "out": "out"})  # release.esco: make_release
    unset = [flag for flag in ("data", "version", "out") if getattr(args, flag) is None]
    if unset:
        lacks = (f"has no {', '.join('release.' + f for f in unset)}" if params_path.is_file()
                 else "does not exist")
        raise ReleaseError(f"{', '.join('--' + f for f in unset)} not given and {params_path} {lacks}; "
                           "pass the flag(s), or run from the repository root (or pass --params)")
    if args.dry_run and not args.push_to_hub:
        raise ReleaseError("--dry-run only applies with --push-to-hub REPO_ID")
    from .make import make_release

    start = time.perf_counter()
    manifest = make_release(args.data, str(args.version), args.out, args.params, args.esco)
    families = "".join(f"; {name}/: {', '.join(family['languages'])}" for name, family in manifest.get("families", {}).items())
    print(f"release {manifest['version']} ({', '.join(manifest['languages'])}{families}) written to {args.out}: "
          f"{len(manifest['files'])} files, {time.perf_counter() - start:.1f} s; publish with "
          "`python -m releases publish` (docs/releases.md)")
    if args.push_to_hub:
        _push(Path(args.out), args.push_to_hub, args.hub_revision, args.dry_run)


def cmd_publish(args: argparse.Namespace) -> None:
    _with_release_defaults(args, {"release": "out"})
    if args.release is None:
        raise ReleaseError(f"--release not given and {args.params} has no release.out; pass the flag")
    if args.dry_run and not args.push_to_hub:
        raise ReleaseError("--dry-run only applies with --push-to-hub REPO_ID")
    from .publish import publish_release

    entry, commands = publish_release(Path(args.release), args.remote)
    print(f"published release {entry['version']} ({args.release}, manifest sha256 "
          f"{entry['manifest_sha256'][:16]}…, DVC md5 {entry['dvc_md5']}); now record it in git:")
    for command in commands:
        print(f"  {command}")
    if args.push_to_hub:
        _push(Path(args.release), args.push_to_hub, args.hub_revision, args.dry_run)


def cmd_checkout(args: argparse.Namespace) -> None:
    from .anchor import git_root
    from .checkout import checkout_release  # not a dependency of the `release` stage (dvc.yaml)

    done = checkout_release(git_root(Path.cwd()), args.version, pull=not args.no_pull)
    if done.moved:
        left = f"branch {done.branch}" if done.branch else "the commit it was at"
        print(f"release {done.version}: checked out commit {done.commit[:12]}, {done.how}; the clone is now on a "
              f"detached HEAD (no branch): `{done.back}` goes back to {left}")
    else:
        print(f"release {done.version}: already at commit {done.commit[:12]}, {done.how}")
    if done.verified is None:
        print(f"  next: dvc pull {done.folder} && python -m releases verify {done.folder} --against "
              f"{done.commit}")
    else:
        print(f"  pulled: {done.folder}/ (dvc pull {done.folder})")
        _print_anchored(done.folder, done.verified)


def cmd_verify(args: argparse.Namespace) -> None:
    if args.against is not None:  # given, even empty: `--against ''` is a mistake, not a plain verify
        from .anchor import git_root, verify_against

        _print_anchored(args.release_dir, verify_against(args.release_dir, args.against, git_root(Path.cwd())))
        return
    from .manifest import verify_release

    result = verify_release(args.release_dir)
    for problem in result.problems:
        print(problem)
    if not result.ok:
        raise ReleaseError(f"{args.release_dir}: release {result.version} failed verification "
                           f"({len(result.problems)} problem(s) listed above)")
    print(f"{args.release_dir}: release {result.version} verified, {result.checked} files match the manifest "
          "(checked against the manifest in the same folder only; add --against "
          f"{result.version} to check it against the digests recorded in git)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # `verify | head -0` must not call a good release broken: run_command keeps a closed stdout harmless
    return run_command(lambda: args.func(args), errors=(ReleaseError,),
                       interrupted="interrupted: a release is moved into place only when complete, so none was "
                                   "half-written")


if __name__ == "__main__":
    sys.exit(main())
