from __future__ import annotations

import pytest
from proxy_fixtures import World, make_world


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("proxy-world"))
