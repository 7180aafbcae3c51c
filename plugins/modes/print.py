"""Print mode (``pi -p``): run the prompt(s), print the answer (``text``) or every event (``json``), exit.

``text`` prints the final assistant text to stdout; an error or abort goes to stderr with exit
code 1. ``json`` prints the session header, then each event as one JSON line, as pi's
``--mode json`` does. Piped stdin is prepended to the first prompt.
"""

from __future__ import annotations

import sys
from typing import Any

from piko import hookimpl


@hookimpl
def piko_register_modes(register: Any) -> None:
    register(name="text", run=run_text, description="Print the final answer and exit (what -p does)")
    register(name="json", run=run_json, description="Print the session header and every event as JSON lines")


async def run_text(app: Any) -> int:
    return await run_print(app, json_output=False)


async def run_json(app: Any) -> int:
    return await run_print(app, json_output=True)


def _error(message: str) -> int:
    sys.stderr.write(f"{message}\n")
    sys.stderr.flush()
    return 1


async def run_print(app: Any, *, json_output: bool) -> int:
    """Run a print-mode session; returns the exit code."""
    from piko import jsonio
    from piko.events import event_to_wire
    from piko.initial_message import InitialMessageError, build_initial_message, read_piped_stdin
    from piko.messages import AssistantMessage, TextContent
    from piko.session_setup import SetupError

    try:
        first, images, rest = build_initial_message(app, read_piped_stdin())
    except InitialMessageError as exc:
        return _error(f"Error: {exc}")
    try:
        session = await app.create_agent_session(mode="json" if json_output else "print")
    except SetupError as exc:
        return _error(str(exc) if getattr(exc, "bare", False) else f"Error: {exc}")
    app.report()
    if session.model is None:
        from piko.guidance import no_models_message

        await session.shutdown()
        return _error(no_models_message())

    out = sys.stdout
    app.dispatcher.error_listeners.append(
        lambda error: sys.stderr.write(f"Extension error ({error.extension_path}): {error.error}\n")
    )
    if json_output:
        header = session.session_manager.header
        out.write(jsonio.dumps(getattr(header, "raw", header)) + "\n")

        def print_event(event: Any) -> None:
            out.write(jsonio.dumps(event_to_wire(event)) + "\n")

        session.subscribe(print_event)
    code = 0
    try:
        if first:
            await session.prompt(first, images)
        for message in rest:
            await session.prompt(message)
        if not json_output:
            last = session.messages[-1] if session.messages else None
            if isinstance(last, AssistantMessage):
                if last.stop_reason in ("error", "aborted"):
                    code = _error(last.error_message or f"Request {last.stop_reason}")
                else:
                    for block in last.content:
                        if isinstance(block, TextContent):
                            out.write(block.text + "\n")
    except Exception as exc:
        code = _error(str(exc) or type(exc).__name__)
    finally:
        await session.shutdown()
        try:
            out.flush()
        except OSError:
            pass
    return code
