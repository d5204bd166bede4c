"""Fixtures of the webhook tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hooks.hook_receiver import Receiver


@pytest.fixture()
def receiver() -> Iterator[Receiver]:
    """A local HTTP receiver of hook deliveries, up for one test."""
    r = Receiver().up()
    yield r
    r.down()
