"""A file of a published chain that cannot be looked up (a symlink loop, a name too long, a
dangling link) is an error naming it — never read as "not published", which would start
a new chain at revision 1 or let a revision be written over."""

from __future__ import annotations

from pathlib import Path

import pytest

from histor_sign._chain_store import is_published, latest_envelope, refuse_published
from histor_sign.errors import InputError
from histor_sign.layout import chain_dir

SERVER = "io.github.alice/docs"


def _looped(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(path.name)
    return path


def test_a_symlink_loop_as_the_latest_envelope_is_an_error(tmp_path: Path) -> None:
    _looped(chain_dir(tmp_path, SERVER) / "latest.envelope.json")
    with pytest.raises(InputError, match=r"latest\.envelope\.json.*symbolic links"):
        latest_envelope(tmp_path, SERVER)


def test_a_symlink_loop_where_a_revision_goes_is_not_free(tmp_path: Path) -> None:
    _looped(chain_dir(tmp_path, SERVER) / "2.envelope.json")
    with pytest.raises(InputError, match=r"2\.envelope\.json.*symbolic links"):
        refuse_published(tmp_path, SERVER, 2)


def test_absent_dangling_and_too_long(tmp_path: Path) -> None:
    assert latest_envelope(tmp_path, SERVER) is None  # nothing there: the first release
    assert not is_published(tmp_path / "a-file" / "below")
    dangling = chain_dir(tmp_path, SERVER) / "1.envelope.json"
    dangling.parent.mkdir(parents=True)
    dangling.symlink_to("nowhere")
    with pytest.raises(InputError, match="dangling"):
        is_published(dangling)
    with pytest.raises(InputError, match="too long"):
        is_published(tmp_path / ("x" * 300) / "latest.envelope.json")
