"""Every program of ``examples/sdk/`` runs, as a user would run it, against the scripted 127.0.0.1 server.

Each example is a subprocess of the project's Python in a project folder, with an agent dir
whose ``models.json`` and ``settings.json`` make ``mock/mock-1`` (the scripted server) the
default model. The examples are also checked with ``mypy --strict``: what they show is typed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.processes import reaped
from support.sdk_rig import SdkRig

from piko.testing import text_turn
from piko.testing import tool_turn

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "sdk"


def _env(sdk: SdkRig, **extra: str) -> dict[str, str]:
    (sdk.agent_dir / "settings.json").write_text(
        json.dumps({"defaultProvider": "mock", "defaultModel": "mock-1"})
    )
    (sdk.project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    env.update(PI_CODING_AGENT_DIR=str(sdk.agent_dir), PI_OFFLINE="1", **extra)
    return env


def _run(sdk: SdkRig, name: str, **extra: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=sdk.project,
        env=_env(sdk, **extra),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _user_texts(request: dict[str, Any]) -> list[str]:
    out = []
    for message in request["body"]["messages"]:
        if message["role"] == "user":
            content = message["content"]
            out.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return out


def test_every_example_is_tested() -> None:
    tested = {name for name in globals() if name.startswith("test_example_")}
    for path in sorted(EXAMPLES.glob("*.py")):
        assert f"test_example_{path.stem.split('_', 1)[1]}" in tested, path.name


def test_example_minimal(sdk: SdkRig) -> None:
    server = sdk.serve([text_turn("There is calc.py.")])
    assert _run(sdk, "01_minimal.py") == "There is calc.py.\n"
    assert _user_texts(server.requests[0]) == ["What files are in the current directory?"]
    assert len(sdk.session_files()) == 1


def test_example_custom_model(sdk: SdkRig) -> None:
    server = sdk.serve([text_turn("Hello from local.")])
    out = _run(sdk, "02_custom_model.py", PIKO_MODEL="mock/mock-2", LOCAL_LLM_URL=server.base_url + "/v1")
    assert out.splitlines() == ["known model: mock/mock-2 low", "local model: Hello from local."]
    assert server.requests[0]["body"]["model"] == "local-7b"


def test_example_tools(sdk: SdkRig) -> None:
    server = sdk.serve(
        [
            tool_turn("convert_temperature", {"value": 212, "to": "celsius"}),
            tool_turn("word_count", {"text": "one two three"}),
            text_turn("212F is 100C."),
        ]
    )
    out = _run(sdk, "03_tools.py").splitlines()
    assert out[0] == "active tools: read, grep, convert_temperature, word_count"
    assert out[1] == "convert_temperature -> 100.0 degrees celsius"
    assert out[2] == f"word_count -> 3 words (working in {sdk.project})"
    assert out[3] == "212F is 100C."
    schema = next(
        t["function"]["parameters"]
        for t in server.requests[0]["body"]["tools"]
        if t["function"]["name"] == "convert_temperature"
    )
    assert schema["properties"]["to"]["enum"] == ["celsius", "fahrenheit"]


def test_example_extensions(sdk: SdkRig) -> None:
    server = sdk.serve([tool_turn("bash", {"command": "rm -rf build"}), text_turn("I was not allowed to.")])
    out = _run(sdk, "04_extensions.py").splitlines()
    assert out == [
        "Hello, SDK!",
        "tool result: rm -rf is not allowed here",
        "I was not allowed to.",
        "guard: 2 turn(s)",
    ]
    assert len(server.requests) == 2  # the command never reached the model


def test_example_settings_and_sessions(sdk: SdkRig) -> None:
    server = sdk.serve([text_turn("Noted: 7."), text_turn("Noted: kite."), text_turn("Kite.")])
    out = _run(sdk, "05_settings_and_sessions.py").splitlines()
    assert out == ["in memory: None - Noted: 7.", "continued: True 2 messages", "Kite."]
    assert len(sdk.session_files()) == 1  # the in-memory session wrote nothing
    assert _user_texts(server.requests[2]) == ["Remember the word kite.", "Which word?"]
    assert not (sdk.agent_dir / "settings.json").read_text().count("retry")


def test_example_streaming(sdk: SdkRig) -> None:
    sdk.serve([text_turn("Once upon a time."), tool_turn("ls", {}), text_turn("The end.")])
    out = _run(sdk, "06_streaming.py")
    assert out == "Once upon a time.\n\n[ls]\nThe end.\n"


def test_example_service(sdk: SdkRig) -> None:
    server = sdk.serve([text_turn("Hi, A."), text_turn("Hi, B."), text_turn("Again, A.")])
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "07_service.py")],
        cwd=sdk.project,
        env=_env(sdk, PORT="0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with reaped(process):
        assert process.stdout is not None
        url = process.stdout.readline().split()[-1]

        def ask(conversation: str, text: str) -> str:
            request = urllib.request.Request(
                f"{url}/conversations/{conversation}", data=text.encode(), method="POST"
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                return str(response.read().decode())

        assert ask("a", "hello from A") == "Hi, A.\n"
        assert ask("b", "hello from B") == "Hi, B.\n"
        assert ask("a", "A again") == "Again, A.\n"
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"{url}/nowhere", timeout=30)  # GET: answered with 404, server serves on
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert out.strip() == "closed 2 conversation(s)"
    assert _user_texts(server.requests[2]) == ["hello from A", "A again"]  # one session per conversation
    assert _user_texts(server.requests[1]) == ["hello from B"]
    assert sdk.session_files() == []


def test_example_resources(sdk: SdkRig) -> None:
    server = sdk.serve([text_turn("The add function subtracts.")])
    (sdk.project / "AGENTS.md").write_text("Project rules here.\n")
    out = _run(sdk, "08_resources.py").splitlines()
    assert out == ["You are a careful code reviewer.", "The add function subtracts."]
    system = server.requests[0]["body"]["messages"][0]["content"]
    assert "Answer in one sentence." in system and "Project rules here." in system
    assert "Never change files." in system
    assert _user_texts(server.requests[0]) == ["Review calc.py for bugs."]


def test_example_session_runtime(sdk: SdkRig) -> None:
    sdk.serve([text_turn("First."), text_turn("Second.")])
    out = _run(sdk, "09_session_runtime.py").splitlines()
    assert out == [
        "first: True",
        "second is another file: True",
        "back in the first: 2 messages",
        "forked before: This is the first conversation.",
        "runs heard by one subscription: 2",
    ]
    assert len(sdk.session_files()) == 2


def _mypy_strict(target: Path) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` on ``target``, seeing piko as an installed, typed package."""
    tree = ROOT / ".typecheck"
    if not (tree / "piko").exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "typecheck.py"), "--version"], check=True)
    command = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental"]
    return subprocess.run(
        [*command, str(target)],
        cwd=tree,
        env={**os.environ, "MYPYPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_examples_pass_mypy_strict(tmp_path: Path) -> None:
    import shutil

    copies = tmp_path / "examples"
    copies.mkdir()
    for path in EXAMPLES.glob("*.py"):  # module names may not start with a digit: copy them renamed
        shutil.copyfile(path, copies / f"example_{path.name}")
    done = _mypy_strict(copies)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_type_checker_catches_wrong_options(tmp_path: Path) -> None:
    program = tmp_path / "wrong.py"
    program.write_text(
        "import piko\n\n\n"
        "async def main() -> None:\n"
        '    await piko.create_agent_session(modle="mock/mock-1")\n'
        '    await piko.create_agent_session(tools="read")\n'
        "    session = await piko.create_agent_session()\n"
        "    await session.prompt(42)\n",
        encoding="utf-8",
    )
    out = _mypy_strict(program).stdout
    assert 'Unexpected keyword argument "modle"' in out, out
    assert 'Argument "tools" to "create_agent_session" has incompatible type "str"' in out, out
    assert 'Argument 1 to "prompt" of "AgentSession" has incompatible type "int"' in out, out


def test_the_code_in_docs_sdk_md_compiles() -> None:
    """The snippets of ``docs/sdk.md`` are fragments (the examples are the programs that run):
    each must at least be valid Python, top-level ``await`` allowed."""
    import ast
    import re

    text = (ROOT / "docs" / "sdk.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 4
    for block in blocks:
        compile(block, "docs/sdk.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def test_docs_sdk_md_names_every_example_and_option() -> None:
    import piko

    text = (ROOT / "docs" / "sdk.md").read_text(encoding="utf-8")
    for path in EXAMPLES.glob("*.py"):
        assert f"(../examples/sdk/{path.name})" in text, path.name
    for option in piko.SessionOptions.__annotations__:
        assert f"| `{option}` |" in text, option
