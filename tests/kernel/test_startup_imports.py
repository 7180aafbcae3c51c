"""What ``pi -p``, ``pi --mode rpc`` and ``pi --version`` import on their way to an answer:
nothing a run of theirs does not use (issue 20's start-up figures are mostly imports; see
benchmarks/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

from support.llm_server import LLMServer

import piko

# Modules a text turn or an RPC start never needs: the docs folder is found without
# importlib.resources, decimal waits for --list-models, prompt_toolkit and rich for the
# interactive mode, jsonschema and cattrs for tool arguments and wire classes that need them,
# ssl (OpenSSL) for the first https connection (piko.lib.deferred_ssl).
NEVER = ("importlib.resources", "decimal", "prompt_toolkit", "rich", "jsonschema", "cattrs", "yaml", "ssl")


def _modules(out: Path) -> set[str]:
    return set(json.loads(out.read_text(encoding="utf-8")))


def test_a_print_turn_imports_only_what_it_uses(run_pi, env) -> None:
    out = env.root / "modules.json"
    with LLMServer([{"blocks": [{"text": "hi there"}]}]) as server:
        env.use_llm_server(server)
        result = run_pi(
            "-p", "--no-session", "--provider", "mock", "--model", "mock-1", "hi", modules_out=out
        )
    assert result.code == 0 and "hi there" in result.stdout, result
    modules = _modules(out)
    assert "piko.plugins.modes.print" in modules
    assert sorted(m for m in NEVER if m in modules) == []
    # the user shell waits for a ``!command``, base64 for an ``@image`` argument
    assert sorted(m for m in ("piko.engine.user_shell", "base64") if m in modules) == []


def test_an_rpc_start_imports_no_http_client_nor_digests(run_pi, env) -> None:
    out = env.root / "modules.json"
    env.write_models({"mock": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                               "apiKey": "mock-key", "models": [{"id": "mock-1"}]}})  # fmt: skip
    result = run_pi(
        "--mode", "rpc", "--no-session", "--provider", "mock", "--model", "mock-1",
        input='{"id": "s", "type": "get_state"}\n', modules_out=out,
    )  # fmt: skip
    assert result.code == 0, result
    answer = json.loads(next(line for line in result.stdout.splitlines() if '"response"' in line))
    assert answer["id"] == "s" and answer["success"] and answer["data"]["model"]["id"] == "mock-1"
    modules = _modules(out)
    # httpx (and the OpenSSL digests it brings) wait for the first request
    assert sorted(m for m in (*NEVER, "httpx", "h11", "hashlib") if m in modules) == []
    # what only a prompt needs waits for one (AgentSession builds those parts on first use), and
    # so do streaming blocks, the Protocols of annotations, front matter and the MCP config parser
    assert sorted(m for m in RUN_ONLY if m in modules) == []


RUN_ONLY = (
    "piko.engine.retry",
    "piko.engine.run_control",
    "piko.engine.stop_hook",
    "piko.engine.user_shell",
    "piko.engine.prompt_flow",
    "piko.engine.prompt_input",
    "piko.engine.extension_messages",
    "piko.engine.extension_events",
    "piko.engine.provider_hooks",
    "piko.engine.loop_hooks",
    "piko.data.stream_blocks",
    "piko.platform.protocols",
    "piko.plugins.resources.frontmatter",
    "piko.plugins.mcp.config",
    "piko.plugins.modes.rpc.tree",
    "piko.sessions.readonly",
    "piko.extensions.extension_shapes",
)


def test_version_answers_without_importing_typing(run_pi, env) -> None:
    out = env.root / "modules.json"
    result = run_pi("--version", modules_out=out)
    assert result.code == 0 and result.stderr.strip() == piko.__version__, result
    modules = _modules(out)
    assert "piko.app.cli" in modules
    assert (
        sorted(m for m in modules if m == "typing" or (m.startswith("piko.") and m not in VERSION_PATH)) == []
    )


# all ``pi --version`` imports of piko: the package, its version and the CLI module
VERSION_PATH = ("piko.version", "piko.app", "piko.app.cli")
