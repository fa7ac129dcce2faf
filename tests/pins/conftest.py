from __future__ import annotations

import pytest
from pin_fixtures import History, make_history


@pytest.fixture(scope="session")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return make_history(tmp_path_factory.mktemp("pin-history"))
