"""Connecting to Argilla: URL and key from the environment, and server failures as clear errors."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

from annotation import AnnotationError
from config import check_url
from config.secrets import scrub

URL_VAR = "ARGILLA_API_URL"
KEY_VAR = "ARGILLA_API_KEY"


def _rg():
    # The SDK imports `datasets` and more; load it only for commands that talk to a server.
    import argilla as rg

    return rg


@contextmanager
def server_errors(api_url: str) -> Iterator[None]:
    """Turn transport and API failures into an AnnotationError that names the server and what to do."""
    from argilla._exceptions import ArgillaAPIError, ArgillaCredentialsError, ArgillaError

    api_url = scrub(api_url)  # never the password of a http://user:password@host URL
    try:
        yield
    except ArgillaCredentialsError:
        raise AnnotationError(
            f"Argilla at {api_url} rejected the API key in {KEY_VAR}; set it to a valid key "
            f"(Argilla UI → My settings → API key)"
        ) from None
    except httpx.TransportError as exc:
        raise AnnotationError(
            f"cannot reach Argilla at {api_url} ({type(exc).__name__}: {exc}); is the server running and is "
            f"{URL_VAR} right? Run the command again once it is up: work already sent or pulled is kept"
        ) from None
    except ArgillaAPIError as exc:
        # The SDK wraps transport failures met inside its own retries as API errors too.
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, httpx.TransportError):
            raise AnnotationError(
                f"cannot reach Argilla at {api_url} ({type(cause).__name__}); is the server running? "
                f"Run the command again once it is up: work already sent or pulled is kept"
            ) from None
        status = getattr(exc, "status_code", "?")
        if status == 401:
            raise AnnotationError(f"Argilla at {api_url} rejected the API key in {KEY_VAR}; set it to a valid key") from None
        raise AnnotationError(f"Argilla at {api_url} answered {status}: {exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        # Not Argilla's API: HTML (a login page, a proxy's error page) or JSON of another shape. JSON and
        # pydantic validation errors are ValueErrors; a missing field is a KeyError or TypeError.
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise AnnotationError(
            f"Argilla at {api_url} answered something that is not the Argilla API ({type(exc).__name__}: {detail}); "
            f"check that {URL_VAR} points at argilla-server itself (not a login page or proxy)") from None
    except ArgillaError as exc:
        # The SDK refusing before or after a request (SettingsError: a dataset of that name with other settings,
        # RecordsIngestionError, MetadataError): its own message, on one line.
        detail = " ".join(str(exc).split()).removeprefix("Argilla SDK error: ").removeprefix(f"{type(exc).__name__}: ")[:300]
        raise AnnotationError(f"Argilla at {api_url}: {type(exc).__name__}: {detail}; nothing already sent is lost, "
                              f"fix what it names (or push to a new dataset: raise annotation.dataset_version) and "
                              f"run the command again") from None


@dataclass(frozen=True)
class Server:
    client: object  # argilla.Argilla
    url: str


def connect(api_url: str | None = None, api_key: str | None = None) -> Server:
    """A client for ARGILLA_API_URL / ARGILLA_API_KEY (or the given values); checks the key at once."""
    api_url = api_url or os.environ.get(URL_VAR)
    api_key = api_key or os.environ.get(KEY_VAR)
    if not api_url:
        raise AnnotationError(f"{URL_VAR} is not set; export the Argilla server URL, e.g. http://localhost:6900")
    if not api_key:
        raise AnnotationError(f"{KEY_VAR} is not set; export your Argilla API key (never put it in a file)")
    check_url(api_url, URL_VAR, AnnotationError)  # a bad port or IPv6 address: one line, before the SDK loads
    rg = _rg()
    with server_errors(api_url):
        return Server(rg.Argilla(api_url=api_url, api_key=api_key, retries=1), scrub(api_url.rstrip("/")))


@contextmanager
def quiet_not_found() -> Iterator[None]:
    """Silence the SDK's ``UserWarning: Workspace/Dataset with name … not found`` for a lookup whose None the
    caller handles (a first push creates them, a first pull has nothing to read); every other warning stays."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(Workspace|Dataset) with name .* not found", category=UserWarning)
        yield


@contextmanager
def sdk_bars_on_a_terminal_only() -> Iterator[None]:
    """The SDK draws its own tqdm bar ("Sending records...", argilla/records/_dataset_records.py) without a
    ``disable`` argument, so off a terminal it would write a carriage-return update per batch into a log. Within
    this block a tqdm bar whose caller chose nothing gets ``disable=None``, the project's own bars' setting: drawn
    when stderr is a terminal, off otherwise (a bar whose caller chose keeps its choice)."""
    from functools import partialmethod

    from tqdm import tqdm

    init = vars(tqdm)["__init__"]
    tqdm.__init__ = partialmethod(init, disable=None)
    try:
        yield
    finally:
        tqdm.__init__ = init


def find_dataset(server: Server, name: str, workspace):
    """The dataset, or None when the workspace has none of that name (no warning printed)."""
    with server_errors(server.url), quiet_not_found():
        return server.client.datasets(name, workspace=workspace)


def ensure_workspace(server: Server, name: str):
    rg = _rg()
    with server_errors(server.url):
        with quiet_not_found():
            workspace = server.client.workspaces(name)
        if workspace is None:
            workspace = rg.Workspace(name=name, client=server.client).create()
    return workspace
