"""Running piko's tools for tests: a real App and ctx in a temp dir, fixture setup, result records.

Shared by the tool test modules (the exec-tool tests may import it too):

- ``make_app(cwd, settings=...)``: an ``App`` on ``cwd`` with its own agent dir, tool plugins registered.
- ``run_tool(name, params, cwd)`` / ``await run_tool_async(...)``: prepare, validate and execute a
  tool as the agent loop would; returns a :class:`ToolRun` (result or error, never raises).
- ``apply_setup(root, steps)``: the conformance fixtures' setup steps (files, dirs, links, commands).
- ``record(run, root)``: a JSON-like record of a run, in the form ``pi_tools_oracle/oracle.json`` uses.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from piko.app.application import App
from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.data.messages import ToolResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RUST_FIXTURES = FIXTURES / "pi_agent_rust" / "conformance"
ORACLE_DIR = FIXTURES / "pi_tools_oracle"

# Tool name -> plugin module. Other tool tests may add their tools here.
TOOL_MODULES: dict[str, str] = {
    "read": "piko.plugins.tools.read",
    "write": "piko.plugins.tools.write",
    "edit": "piko.plugins.tools.edit",
    "ls": "piko.plugins.tools.ls",
    "bash": "piko.plugins.tools.bash",
    "grep": "piko.plugins.tools.grep",
    "find": "piko.plugins.tools.find",
}

LONG_TEXT = 4000  # texts longer than this (UTF-16 units) are recorded by hash, as the oracle does


class ToolRun:
    """The outcome of one tool call: ``result`` or ``error``."""

    def __init__(self, result: ToolResult | None = None, error: BaseException | None = None) -> None:
        self.result = result
        self.error = error

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def text(self) -> str:
        """The text blocks joined (the error message for a failed call)."""
        if self.error is not None:
            return str(self.error)
        assert self.result is not None
        return "\n".join(b.text for b in self.result.content if isinstance(b, TextContent))

    @property
    def details(self) -> Any:
        return None if self.result is None else self.result.details

    def __repr__(self) -> str:
        return f"ToolRun(ok={self.ok}, text={self.text[:200]!r}, details={self.details!r})"


# ---------------------------------------------------------------------------
# App, ctx and execution
# ---------------------------------------------------------------------------


def make_app(
    cwd: Path | str, *, settings: dict[str, Any] | None = None, agent_dir: Path | str | None = None
) -> App:
    """An ``App`` on ``cwd`` (agent dir ``<cwd>/../agent-<name>`` unless given) with the tool plugins."""
    cwd = Path(cwd)
    if agent_dir is None:
        agent_dir = cwd.parent / f".agent-{cwd.name}"
    Path(agent_dir).mkdir(parents=True, exist_ok=True)
    app = App(cwd=cwd, agent_dir=agent_dir)
    for key, value in (settings or {}).items():
        app.settings.override(key, value)
    for name, module_name in TOOL_MODULES.items():
        try:
            module = importlib.import_module(module_name)
        except Exception:  # a tool still being written elsewhere must not break the others' tests
            continue
        app.pm.register(module, f"tools.{name}")
    return app


def tool_definition(app: App, name: str) -> Any:
    definition = app.registries.tools.get(name)
    if definition is None:
        raise LookupError(f"tool {name!r} is not registered")
    return definition


async def run_tool_async(
    name: str,
    params: dict[str, Any],
    cwd: Path | str,
    *,
    app: App | None = None,
    ctx: Any = None,
    signal: Any = None,
    on_update: Any = None,
    validate: bool = True,
) -> ToolRun:
    """Prepare (edit's argument repair), validate against the schema, then execute the tool."""
    app = app or make_app(cwd)
    ctx = ctx or app.context()
    definition = tool_definition(app, name)
    module = importlib.import_module(TOOL_MODULES[name])
    prepare = getattr(module, "prepare_arguments", None)
    try:
        args = prepare(params) if prepare else params
        if validate:
            args = _validate(name, definition.parameters, args)
        execute = definition.resolved("execute")
        value = execute("call_1", args, signal, on_update, ctx)
        if hasattr(value, "__await__"):
            value = await value
    except Exception as exc:
        return ToolRun(error=exc)
    return ToolRun(result=value)


def aborted_signal() -> Any:
    """The signal of a run aborted before it started."""
    from piko.lib.abort import AbortController

    controller = AbortController()
    controller.abort()
    return controller.signal


def run_tool(name: str, params: dict[str, Any], cwd: Path | str, **kwargs: Any) -> ToolRun:
    """:func:`run_tool_async` in a fresh event loop."""
    return asyncio.run(run_tool_async(name, params, cwd, **kwargs))


def _validate(name: str, schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    try:
        from piko.engine.tool_validation import validate_tool_arguments
    except ImportError:  # the agent loop's validator is not there: check with jsonschema directly
        import jsonschema

        jsonschema.validate(args, schema)
        return args
    return dict(validate_tool_arguments(name, schema, args))


# ---------------------------------------------------------------------------
# Fixture setup
# ---------------------------------------------------------------------------


def apply_setup(root: Path, steps: list[dict[str, Any]] | None) -> None:
    """Create what a conformance case's ``setup`` lists, under ``root``."""
    for step in steps or []:
        kind = step["type"]
        target = root / step["path"] if "path" in step else root
        if kind in ("create_file", "create_file_b64", "create_file_lines", "create_file_repeat"):
            target.parent.mkdir(parents=True, exist_ok=True)
        if kind == "create_file":
            target.write_bytes(step["content"].encode("utf-8"))
        elif kind == "create_file_b64":
            target.write_bytes(base64.b64decode(step["content_b64"]))
        elif kind == "create_file_lines":
            lines = [step["pattern"].replace("{n}", str(n)) for n in range(1, step["count"] + 1)]
            text = "\n".join(lines) + ("\n" if step.get("newline_at_end") else "")
            target.write_bytes(text.encode("utf-8"))
        elif kind == "create_file_repeat":
            text = step.get("prefix", "") + step["chunk"] * step["times"] + step.get("suffix", "")
            target.write_bytes(text.encode("utf-8"))
        elif kind == "create_files_numbered":
            for n in range(step["count"]):
                (root / (str(n).zfill(step["width"]) + step["suffix"])).write_bytes(b"")
        elif kind == "create_dir":
            target.mkdir(parents=True, exist_ok=True)
        elif kind == "create_symlink":
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(step["target"], target)
        elif kind == "run_command":
            subprocess.run(step["command"], shell=True, cwd=root, check=True, capture_output=True, timeout=60)
        else:
            raise ValueError(f"unknown setup step {kind!r}")


def substitute_cwd(value: Any, root: Path) -> Any:
    """Replace the ``<CWD>`` placeholder in a case's input with the temp dir."""
    return json.loads(json.dumps(value).replace("<CWD>", str(root)))


def load_suite(name: str) -> dict[str, Any]:
    return json.loads((RUST_FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def case_params(suites: Iterable[dict[str, Any]]) -> list[Any]:
    """One ``pytest.param(tool, case)`` per case of ``suites``, named ``tool/case``."""
    import pytest

    return [
        pytest.param(suite["tool"], case, id=f"{suite['tool']}/{case['name']}")
        for suite in suites
        for case in suite["cases"]
    ]


def load_oracle() -> dict[str, Any]:
    return json.loads((ORACLE_DIR / "oracle.json").read_text(encoding="utf-8"))["results"]


def load_extra_suites() -> list[dict[str, Any]]:
    return json.loads((ORACLE_DIR / "cases.json").read_text(encoding="utf-8"))["suites"]


# ---------------------------------------------------------------------------
# Records (the oracle's format)
# ---------------------------------------------------------------------------


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def text_record(text: str) -> dict[str, Any]:
    if _utf16_len(text) <= LONG_TEXT:
        return {"type": "text", "text": text}
    return {"type": "text", "textSha256": _sha(text.encode("utf-8")), "textLength": _utf16_len(text)}


def block_record(block: Any) -> dict[str, Any]:
    if isinstance(block, TextContent):
        return text_record(block.text)
    if isinstance(block, ImageContent):
        data = base64.b64decode(block.data)
        return {
            "type": "image",
            "mimeType": block.mime_type,
            "dataSha256": _sha(data),
            "dataBytes": len(data),
        }
    raise TypeError(f"unexpected block {block!r}")


def details_record(details: Any) -> Any:
    if isinstance(details, dict) and isinstance(details.get("truncation"), dict):
        truncation = dict(details["truncation"])
        content = truncation.get("content", "")
        if _utf16_len(content) > LONG_TEXT:
            del truncation["content"]
            truncation["contentSha256"] = _sha(content.encode("utf-8"))
        return {**details, "truncation": truncation}
    return details


def snapshot(root: Path) -> dict[str, Any]:
    """Every regular file under ``root`` (links not followed): sha256 and size."""
    files: dict[str, Any] = {}
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(directory, d))]
        for name in filenames:
            full = os.path.join(directory, name)
            if os.path.islink(full):
                continue
            data = Path(full).read_bytes()
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            files[rel] = {"sha256": _sha(data), "size": len(data)}
    return files


def record(run: ToolRun, root: Path) -> dict[str, Any]:
    """``{ok, content, details, files}`` or ``{ok: false, error, files}``, with the temp dir as ``<CWD>``."""
    out: dict[str, Any]
    if run.ok:
        assert run.result is not None
        out = {
            "ok": True,
            "content": [block_record(b) for b in run.result.content],
            "details": details_record(run.result.details),
        }
    else:
        out = {"ok": False, "error": str(run.error)}
    out["files"] = snapshot(root)
    return json.loads(json.dumps(out).replace(str(root), "<CWD>"))


def strip_long_text_previews(oracle_record: dict[str, Any]) -> dict[str, Any]:
    """The oracle keeps readable ends of long texts (``head``/``tail``); records compare without them."""
    out = json.loads(json.dumps(oracle_record))
    for block in out.get("content", []):
        block.pop("head", None)
        block.pop("tail", None)
    return out


# ---------------------------------------------------------------------------
# Permission denials that hold even for root
# ---------------------------------------------------------------------------

# Capabilities that let root ignore file modes and the immutable flag.
_OVERRIDE_CAPS = "-dac_override,-dac_read_search,-fowner,-linux_immutable"


def is_root() -> bool:
    return os.geteuid() == 0


def unprivileged_prefix() -> list[str] | None:
    """A command prefix under which file modes apply to this user; ``None`` if none is available.

    Not root: nothing is needed. Root: ``setpriv`` drops the capabilities that override modes.
    """
    import shutil

    if not is_root():
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, f"--inh-caps={_OVERRIDE_CAPS}", f"--bounding-set={_OVERRIDE_CAPS}"]


def run_unprivileged(target: str, *args: Any) -> Any:
    """Call ``module:function(*args)`` (a module in ``tests/tools``) in a child process where
    permission bits apply even to root, and return its JSON-able result."""
    prefix = unprivileged_prefix()
    if prefix is None:
        import pytest

        pytest.skip("running as root without setpriv: no way to make file modes apply")
    module, _, function = target.partition(":")
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        f"from {module} import {function} as target\n"
        "print(json.dumps(target(*json.loads(sys.argv[1]))))\n"
    )
    completed = subprocess.run(
        [*prefix, sys.executable, "-c", script, json.dumps(list(args))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"child failed ({completed.returncode}): {completed.stderr}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def run_tool_outcome(name: str, params: dict[str, Any], cwd: str) -> dict[str, Any]:
    """For :func:`run_unprivileged`: run a tool, return ``{ok, text, errno}``."""
    run = run_tool(name, params, cwd)
    return {"ok": run.ok, "text": run.text, "errno": getattr(run.error, "errno", None)}
