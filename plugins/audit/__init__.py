"""Plugin ``audit.log``: an append-only, hash-chained JSONL of what the agent did.

Enabled by the ``audit`` settings block (``{"path": FILE, "required": true, "content": false}``,
which a managed policy can force), or by ``PIKO_AUDIT_LOG=FILE``. Each line records one action
(a prompt, a model call, a tool call and its result, policy refusals, the session's start) with
who and where, and carries the hash of the line before it, so ``pi audit verify FILE`` finds a
removed or edited line. Secrets are redacted by piko's one redaction rule before anything is
written. With ``required``, a tool call whose audit line cannot be written is blocked.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING
from typing import Any

from piko import hookimpl

if TYPE_CHECKING:  # the log module (hashlib, socket, getpass) is imported only when auditing
    from piko.plugins.audit.log import AuditLog

_state: dict[str, Any] = {"log": None}


def _settings(app: Any) -> dict[str, Any]:
    block = app.settings.get("audit") if getattr(app, "settings", None) is not None else None
    block = dict(block) if isinstance(block, dict) else {}
    path = os.environ.get("PIKO_AUDIT_LOG") or block.get("path")
    if path:
        block["path"] = os.path.expanduser(str(path))
    return block


@hookimpl
def piko_configure(config: Any) -> None:
    options = _settings(config)
    _state["log"] = None
    if options.get("path"):
        from piko.plugins.audit.log import AuditLog

        _state["log"] = AuditLog(options["path"], content=bool(options.get("content")))
    _state["required"] = bool(options.get("required"))


@hookimpl
def piko_register_cli_commands(register: Any) -> None:
    register("audit", "piko.plugins.audit.verify:audit_command", help="Check an audit log's hash chain")


def _write(event: str, ctx: Any = None, **fields: Any) -> str | None:
    """Append one line; the error text when it could not be written."""
    log: AuditLog | None = _state["log"]
    if log is None:
        return None
    session = None
    manager = getattr(ctx, "session_manager", None) if ctx is not None else None
    if manager is not None:
        try:
            session = manager.get_session_id()
        except Exception:
            session = None
    try:
        log.append(event, session=session, **fields)
    except OSError as exc:
        return f"the audit log {log.path} could not be written: {exc.strerror or exc}"
    return None


@hookimpl
def piko_session_start(event: Any, ctx: Any) -> None:
    app = getattr(ctx, "app", None)
    refusals = [d for d in (app.diagnostics() if app is not None else []) if "managed policy" in d]
    model = getattr(ctx, "model", None)
    _write(
        "session_start", ctx, reason=event.reason, cwd=getattr(ctx, "cwd", None),
        model=f"{model.provider}/{model.id}" if model is not None else None, policy=refusals or None,
    )  # fmt: skip


@hookimpl
def piko_input(event: Any, ctx: Any) -> None:
    log: AuditLog | None = _state["log"]
    if log is not None:
        _write("prompt", ctx, source=event.source, **log.text_fields("text", event.text))


@hookimpl
def piko_message_end(event: Any, ctx: Any) -> None:
    message = event.message
    if getattr(message, "ROLE", "") != "assistant":
        return
    usage = message.usage
    _write(
        "model_call", ctx, provider=message.provider, model=message.model, stop_reason=message.stop_reason,
        input_tokens=usage.input, output_tokens=usage.output, cost=round(usage.cost.total, 6),
        error=message.error_message or None,
    )  # fmt: skip


@hookimpl(trylast=True)
def piko_tool_call(event: Any, ctx: Any) -> Any:
    """Recorded after every other gate allowed the call; blocks it when a required log fails."""
    log: AuditLog | None = _state["log"]
    if log is None:
        return None
    failure = _write(
        "tool_call", ctx, tool=event.tool_name, id=event.tool_call_id, args=log.value(event.input)
    )
    if failure and _state.get("required"):
        return {"block": True, "reason": f"Blocked: {failure} (audit is required)"}
    return None


@hookimpl
def piko_tool_execution_end(event: Any, ctx: Any) -> None:
    from piko.plugins.audit.log import result_size

    _write(
        "tool_result", ctx, tool=event.tool_name, id=event.tool_call_id, is_error=event.is_error,
        result_bytes=result_size(event.result),
    )  # fmt: skip
