"""A review round of one language through a real Argilla server, end to end (docs/review.md): push the build's
translation records, each reader of the round's readings answers as an Argilla user through the API the
annotation UI uses (submitted responses; the drop as "no title" and a flag), then `annotation pull --review`
writes the corrections file, the third reading and the strict re-read settling ties (`--adjudicator`). Prints how
many pulled lines equal the readings' decisions (`annotation review import` decides the same readings).

    .venv/bin/python scripts/review_through_argilla.py --data data --lang pt \\
        --readings corrections/review/0.5.0-r1/pt.jsonl --round 0.5.0-r1 --out corrections/pt.jsonl

Starts its own stack (annotation.testing.stack: redis-server, osmem-server, argilla-server) on 127.0.0.1 and
stops it at the end; or uses $ARGILLA_API_URL / $ARGILLA_API_KEY when both are set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from annotation import review  # noqa: E402
from annotation.cli import pull, push_translations  # noqa: E402
from annotation.corrections import read_corrections  # noqa: E402
from annotation.params import load_params, with_overrides  # noqa: E402
from annotation.translations import NO_TITLE, dataset_name, record_id  # noqa: E402

# The reading whose user settles a tie, first to last: the third reading, then the strict re-read of a kept title.
PRECEDENCE = ("adjudication", "recheck")


def answer_values(r: dict) -> dict:
    """A reading as the answers an annotator submits in the UI."""
    if r["action"] == "drop":
        return {"gender_marking": NO_TITLE, "flag": r["flag"], "reason": r["reason"]}
    values = {"masculine": r["masculine"], "feminine": r["feminine"], "gender_marking": r["gender_marking"],
              "reason": r.get("reason")}
    return {k: v for k, v in values.items() if v is not None}


def users(api_url: str, key: str, names: list[str], workspace: str) -> dict[str, str]:
    """Annotator users in the workspace (created where missing); name -> their own API key."""
    import argilla as rg

    owner = rg.Argilla(api_url=api_url, api_key=key)
    keys = {}
    with httpx.Client(base_url=api_url, headers={"X-Argilla-Api-Key": key}, timeout=60) as http:
        for name in names:
            user = owner.users(name) or rg.User(username=name, password=f"{name}-review-password", role="annotator",
                                                client=owner).create()
            user.add_to_workspace(owner.workspaces(workspace))
            keys[name] = http.get(f"/api/v1/users/{user.id}").raise_for_status().json()["api_key"]
    return keys


def submit_all(api_url: str, keys: dict[str, str], dataset: str, readings: list[dict]) -> int:
    sent = 0
    for name, key in keys.items():
        with httpx.Client(base_url=api_url, headers={"X-Argilla-Api-Key": key}, timeout=60) as http:
            ds = next(d["id"] for d in http.get("/api/v1/me/datasets").raise_for_status().json()["items"]
                      if d["name"] == dataset)
            ids, offset = {}, 0
            while True:  # the reader's own queue, as the UI lists it
                page = http.post(f"/api/v1/me/datasets/{ds}/records/search",
                                 params={"limit": 1000, "offset": offset}, json={}).raise_for_status().json()["items"]
                ids.update({it["record"]["external_id"]: it["record"]["id"] for it in page})
                if len(page) < 1000:
                    break
                offset += 1000
            mine = [r for r in readings if r["reader"] == name]
            for r in mine:
                body = {"values": {q: {"value": v} for q, v in answer_values(r).items()}, "status": "submitted"}
                record = ids[record_id(lang_of(dataset), r["id"])]
                http.post(f"/api/v1/records/{record}/responses", json=body).raise_for_status()
                sent += 1
            print(f"{name}: {len(mine)} answers submitted", flush=True)
    return sent


def comparable(x: dict) -> tuple:
    """A correction line or a reading as the build reads it: the form a single-form marking ignores left out."""
    m, f = (None, None) if x.get("action") == "drop" else (x["masculine"], x["feminine"])
    if x["gender_marking"] == "masculine_only":
        f = None
    if x["gender_marking"] == "feminine_only":
        m = None
    return m, f, x["gender_marking"], x["flag"]


def lang_of(dataset: str) -> str:
    return dataset.split("-", 1)[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--lang", required=True)
    ap.add_argument("--readings", required=True)
    ap.add_argument("--round", required=True)
    ap.add_argument("--out", required=True, help="the corrections file the pull writes")
    args = ap.parse_args()
    rows = review.read_readings(args.readings, args.lang)
    decided, ties = review.decide_readings(rows)
    if ties:
        print(f"error: {args.readings}: {len(ties)} tie(s) nobody settled (e.g. {ties[0]})", file=sys.stderr)
        return 2
    stack = None
    if not (os.environ.get("ARGILLA_API_URL") and os.environ.get("ARGILLA_API_KEY")):
        from annotation.testing.stack import ArgillaStack

        stack = ArgillaStack(Path(tempfile.mkdtemp(prefix="argilla-review-"))).start()
        os.environ["ARGILLA_API_URL"], os.environ["ARGILLA_API_KEY"] = stack.api_url, stack.owner_api_key
    try:
        params_file = Path(tempfile.mkdtemp()) / "params.yaml"
        params_file.write_text(json.dumps({"annotation": {"workspace": "review", "dataset_version": args.round,
                                                          "min_submitted": 1}}), encoding="utf-8")
        params = with_overrides(load_params(params_file), params_file)
        start = time.monotonic()
        print(push_translations(args.data, args.lang, params, params_path=params_file), flush=True)
        print(f"pushed in {time.monotonic() - start:.0f} s", flush=True)
        names = sorted({r["reader"] for r in rows})
        keys = users(os.environ["ARGILLA_API_URL"], os.environ["ARGILLA_API_KEY"], names, "review")
        start = time.monotonic()
        sent = submit_all(os.environ["ARGILLA_API_URL"], keys, dataset_name(args.lang, args.round), rows)
        print(f"{sent} answers submitted in {time.monotonic() - start:.0f} s", flush=True)
        settle = tuple(dict.fromkeys(r["reader"] for p in PRECEDENCE for r in rows if r["pass"] == p))
        summary = pull(args.lang, params, args.out, review=args.round, adjudicators=settle)
        print(f"{summary['out']}: {summary['decided']} decided, {len(summary['ties'])} tie(s), {summary['new']} new, "
              f"{summary['changed']} changed, {summary['kept']} kept", flush=True)
        pulled = {x["source_id"]: x for x in read_corrections(args.out, args.lang) if x["kind"] == "translation"}
        same = sum(1 for sid, r in decided.items() if sid in pulled and comparable(pulled[sid]) == comparable(r))
        print(f"pulled lines equal to the readings' decisions: {same} of {len(decided)}")
        return 0 if same == len(decided) else 1
    finally:
        if stack is not None:
            stack.stop()


if __name__ == "__main__":
    sys.exit(main())
