"""Provider tests' shared set-up: pi's recording for the test module's ``API``."""

from __future__ import annotations

import pytest
from support.stream_runs import PiRecording


@pytest.fixture
def pi_recording(request: pytest.FixtureRequest) -> PiRecording:
    """What the real pi sent and made of the answer for the module's ``API`` (``pi_requests/<api>.json``)."""
    return PiRecording(request.module.API)
