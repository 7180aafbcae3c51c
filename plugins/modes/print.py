"""Print mode (``pi -p``): run the prompt(s), print the answer (``text``) or every event (``json``), exit.

``text`` prints the final assistant text to stdout; an error or abort goes to stderr with exit
code 1. ``json`` prints the session header, then each event as one JSON line, as pi's
``--mode json`` does. Piped stdin is prepended to the first prompt. SIGTERM and SIGHUP stop
the run as pi's print mode does: what runs is aborted, the session shuts down (extensions see
``session_shutdown``), and piko exits with 143 or 129.
"""

from __future__ import annotations

import sys
from typing import Any

from piko import hookimpl

# How long an abort may take before the run is cancelled outright.
ABORT_GRACE_S = 3.0


@hookimpl
def piko_register_modes(register: Any) -> None:
    register(name="text", run=run_text, description="Print the final answer and exit (what -p does)")
    register(name="json", run=run_json, description="Print the session header and every event as JSON lines")


async def run_text(app: Any) -> int:
    return await run_print(app, json_output=False)


async def run_json(app: Any) -> int:
    return await run_print(app, json_output=True)


def _error(message: str) -> int:
    from piko.redaction import redact

    sys.stderr.write(f"{redact(message)}\n")
    sys.stderr.flush()
    return 1


async def run_print(app: Any, *, json_output: bool) -> int:
    """Run a print-mode session; returns the exit code."""
    import asyncio

    from piko import jsonio
    from piko.events import event_to_wire
    from piko.initial_message import InitialMessageError, build_initial_message, read_piped_stdin
    from piko.messages import AssistantMessage, TextContent
    from piko.session_setup import SetupError, open_session_manager

    def setup_failed(exc: SetupError) -> int:
        app.report()  # a broken models.json or settings file may be why (pi says nothing here)
        return _error(str(exc) if getattr(exc, "bare", False) else f"Error: {exc}")

    try:
        manager = open_session_manager(app)  # pi looks the session up before reading @files
    except SetupError as exc:
        return setup_failed(exc)
    try:
        first, images, rest = build_initial_message(app, read_piped_stdin())
    except InitialMessageError as exc:
        return _error(f"Error: {exc}")
    try:
        session = await app.create_agent_session(
            mode="json" if json_output else "print", session_manager=manager
        )
    except SetupError as exc:
        return setup_failed(exc)
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
    stopped: list[int] = []
    remove_handlers = _on_signals(session, stopped)
    try:
        if first:
            await session.prompt(first, images)
        for message in rest:
            if stopped:
                break
            await session.prompt(message)
        if stopped:
            code = stopped[0]
        elif not json_output:
            last = session.messages[-1] if session.messages else None
            if isinstance(last, AssistantMessage):
                if last.stop_reason in ("error", "aborted"):
                    code = _error(last.error_message or f"Request {last.stop_reason}")
                else:
                    for block in last.content:
                        if isinstance(block, TextContent):
                            out.write(block.text + "\n")
    except asyncio.CancelledError:
        if not stopped:
            raise
        code = stopped[0]
    except Exception as exc:
        code = _error(str(exc) or type(exc).__name__)
    finally:
        remove_handlers()
        await session.shutdown()
        try:
            out.flush()
        except OSError:
            pass
    return code


def _on_signals(session: Any, stopped: list[int]) -> Any:
    """Handle SIGTERM/SIGHUP: abort the session, and cancel the run if the abort hangs."""
    import asyncio

    from piko.exit_signals import on_exit_signals

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    aborts: list[Any] = []  # keeps the abort task referenced until it ends

    def cancel_if_still_running() -> None:
        if task is not None and not task.done():
            task.cancel()

    def stop(code: int) -> None:
        if stopped:
            return
        stopped.append(code)
        aborts.append(loop.create_task(session.abort()))
        loop.call_later(ABORT_GRACE_S, cancel_if_still_running)

    return on_exit_signals(stop)
