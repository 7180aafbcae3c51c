"""Fixtures for the RPC tests: ``rpc(...)`` starts ``pi --mode rpc`` against a scripted LLM server."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rpc_client import SAMPLE_ARGS
from rpc_client import RpcProcess
from support.llm_server import LLMServer
from support.pi_dirs import make_pi_dirs

EXTENSIONS = Path(__file__).resolve().parent / "extensions"


@pytest.fixture
def rpc(tmp_path: Path) -> Iterator[Callable[..., RpcProcess]]:
    """``rpc(turns=None, args=SAMPLE_ARGS, settings=None, extensions=(), env=None, model_fields=None)``.

    A running ``pi --mode rpc`` against a scripted server (see :func:`support.pi_dirs.make_pi_dirs`);
    ``prepare(home, work)`` may add files before it starts.

    ``extensions`` are file names under ``tests/rpc/extensions`` loaded with ``-e``. The process
    is killed at the end of the test if it still runs.
    """
    runs = itertools.count()
    with ExitStack() as stack:

        def start(
            turns: list[dict[str, Any]] | None = None,
            *,
            args: list[str] | None = None,
            settings: dict[str, Any] | None = None,
            extensions: tuple[str, ...] | list[str] = (),
            env: dict[str, str] | None = None,
            model_fields: dict[str, dict[str, Any]] | None = None,
            prepare: Callable[[Path, Path], None] | None = None,
        ) -> RpcProcess:
            server = stack.enter_context(LLMServer(turns or []))
            home, work = make_pi_dirs(tmp_path / f"run{next(runs)}", server, settings, model_fields)
            if prepare is not None:
                prepare(home, work)
            extra: list[str] = []
            for name in extensions:
                extra += ["-e", str(EXTENSIONS / name)]
            process = RpcProcess(home, work, [*(args if args is not None else SAMPLE_ARGS), *extra], env)
            process.server = server  # type: ignore[attr-defined]
            return stack.enter_context(process)

        yield start
