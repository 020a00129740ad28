"""Fixtures every package's tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eagle import _core


@pytest.fixture(params=[1, 2, 4], ids=lambda n: f"threads{n}")
def threads(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run the test under a team of 1, 2 and 4 threads."""
    before = _core.num_threads()
    _core.set_num_threads(request.param)
    yield request.param
    _core.set_num_threads(before)
