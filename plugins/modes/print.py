"""Print mode (``pi -p``): run the prompt(s), print the answer (``text``) or every event (``json``), exit.

``text`` prints the final assistant text to stdout; an error or abort goes to stderr with exit
code 1. ``json`` prints the session header, then each event as one JSON line, as pi's
``--mode json`` does. Piped stdin is prepended to the first prompt. SIGTERM and SIGHUP stop
the run as pi's print mode does: what runs is aborted, the session shuts down (extensions see
``session_shutdown``), and piko exits with 143 or 129. SIGINT (Ctrl+C) does the same with 130
(pi dies of it). When the abort is not done within ``piko.lib.exit_signals.ABORT_GRACE_S`` (a tool that ignores
it), or at a second signal, the run is cancelled outright.
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


def _error(message: str, *, masked: bool = True) -> int:
    """Write ``message`` to stderr (credentials masked, unless it is piko's own text) and return 1."""
    from piko.lib.redaction import redact

    sys.stderr.write(f"{redact(message) if masked else message}\n")
    sys.stderr.flush()
    return 1


async def run_print(app: Any, *, json_output: bool) -> int:
    """Run a print-mode session; returns the exit code.

    In JSON mode stdout carries the records alone: what extensions ``print()`` goes to stderr,
    as in RPC mode.
    """
    out = sys.stdout
    if not json_output:
        return await _run_print(app, out, json_output=False)
    sys.stdout = sys.stderr
    try:
        return await _run_print(app, out, json_output=True)
    finally:
        sys.stdout = out


async def _run_print(app: Any, out: Any, *, json_output: bool) -> int:
    import asyncio

    from piko.data.events import event_to_wire
    from piko.data.messages import AssistantMessage
    from piko.data.messages import TextContent
    from piko.engine.initial_message import InitialMessageError
    from piko.engine.initial_message import build_initial_message
    from piko.engine.initial_message import read_piped_stdin
    from piko.engine.setup import SetupError
    from piko.engine.setup import open_session_manager
    from piko.lib import jsonio
    from piko.lib.exit_signals import on_exit_signals

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
        from piko.models.guidance import no_models_message

        await session.shutdown()
        return _error(no_models_message(), masked=False)  # its example "apiKey": "ollama" is no secret

    app.dispatcher.error_listeners.append(
        lambda error: sys.stderr.write(f"Extension error ({error.extension_path}): {error.error}\n")
    )
    if json_output:
        header = session.session_manager.header
        out.write(jsonio.dumps(getattr(header, "raw", header)) + "\n")

        def print_event(event: Any) -> None:
            out.write(jsonio.dumps(event_to_wire(event)) + "\n")

        session.subscribe(print_event)

    async def prompts() -> None:
        if first:
            await session.prompt(first, images)
            await session.settle()  # what extensions sent meanwhile is answered too
        for message in rest:
            if signals.code is not None:
                break
            await session.prompt(message)
            await session.settle()

    code = 0
    signals = _Stop(session)
    remove_handlers = on_exit_signals(signals.stop, interrupt=True)
    work = asyncio.ensure_future(prompts())
    try:
        await signals.outlast(work)
        if signals.code is not None:
            code = signals.code
        else:
            work.result()  # what went wrong, if anything
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
        remove_handlers()
        await session.shutdown(abort_grace=0.0 if signals.gave_up else None)
        try:
            out.flush()
        except OSError:
            pass
    return code


class _Stop:
    """SIGTERM/SIGHUP/SIGINT during the run: abort the session; when the work has not ended
    within ``ABORT_GRACE_S`` (or at a second signal) cancel it, and go on without it if it
    still runs (a tool that ignores both)."""

    def __init__(self, session: Any) -> None:
        import asyncio

        self.session = session
        self.code: int | None = None
        self._signalled = asyncio.Event()
        self._again = asyncio.Event()
        self._abort: Any = None  # the abort task, kept referenced until it ends
        self.gave_up = False  # the work did not end after the abort and its cancellation

    def stop(self, code: int) -> None:
        import asyncio

        if self.code is not None:
            self._again.set()
            return
        self.code = code
        self._abort = asyncio.ensure_future(self.session.abort())
        self._signalled.set()

    async def outlast(self, work: Any) -> None:
        """Return when ``work`` ended, or when a signal came and the work was given up."""
        import asyncio

        from piko.lib.exit_signals import ABORT_GRACE_S

        signalled = asyncio.ensure_future(self._signalled.wait())
        try:
            await asyncio.wait({work, signalled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            signalled.cancel()
        if work.done() or self.code is None:
            return
        again = asyncio.ensure_future(self._again.wait())
        try:
            await asyncio.wait({work, again}, timeout=ABORT_GRACE_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            again.cancel()
        if not work.done():
            work.cancel()
            await asyncio.wait({work}, timeout=1.0)
            self.gave_up = not work.done()
