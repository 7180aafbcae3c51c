"""Provider tests' shared set-up: pi's recording for the test module's ``API``; no auth.json ``env``
map kept from one test to the next."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.stream_runs import PiRecording


@pytest.fixture
def pi_recording(request: pytest.FixtureRequest) -> PiRecording:
    """What the real pi sent and made of the answer for the module's ``API`` (``pi_requests/<api>.json``)."""
    return PiRecording(request.module.API)


@pytest.fixture(autouse=True)
def _no_provider_env_between_tests() -> Iterator[None]:
    """An auth.json ``env`` map read in-process by one test is not another test's environment."""
    from piko.lib.provider_env import forget_provider_envs

    yield
    forget_provider_envs()
