"""annotation.server.server_errors: what the SDK raises becomes one AnnotationError line, never a traceback."""

from __future__ import annotations

import pytest
from argilla._exceptions import MetadataError, RecordsIngestionError, SettingsError

from annotation import AnnotationError
from annotation.server import server_errors


@pytest.mark.parametrize("error", [SettingsError, RecordsIngestionError, MetadataError])
def test_an_sdk_refusal_is_one_line_naming_the_server_and_what_to_do(error):
    with pytest.raises(AnnotationError) as caught:
        with server_errors("http://alice:secret@127.0.0.1:6900"):
            raise error("dataset 'pt-translations-v1' already exists\n  with other settings")
    text = str(caught.value)
    assert "\n" not in text and "secret" not in text
    assert text.startswith(f"Argilla at http://***@127.0.0.1:6900: {error.__name__}: dataset 'pt-translations-v1' "
                           "already exists with other settings; ")
    assert "annotation.dataset_version" in text


def test_a_bug_of_ours_is_not_dressed_as_the_servers():
    with pytest.raises(ZeroDivisionError):
        with server_errors("http://127.0.0.1:6900"):
            1 / 0
