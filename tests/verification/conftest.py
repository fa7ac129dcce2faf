from __future__ import annotations

import pytest
from sigstore_testkit import SignedSet, make_signed_set


@pytest.fixture(scope="session")
def signed_set(tmp_path_factory: pytest.TempPathFactory) -> SignedSet:
    return make_signed_set(tmp_path_factory.mktemp("signed-set"))
