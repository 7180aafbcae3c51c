"""RPC mode's loop: commands in on stdin, responses and events out on stdout, one JSON record a line.

Each record read starts its command at once, in arrival order, so ``abort``, ``get_state`` or
``abort_bash`` are answered while a prompt streams or a shell command runs; ``prompt`` answers
as soon as the session accepted it and streams its events after. Nothing a client sends stops
the process: bad JSON, unknown commands and bad fields get error responses. End of input (or
SIGTERM/SIGHUP/SIGINT, or an extension's ``ctx.shutdown()``) stops what runs, fires
``session_shutdown`` and exits; work that ignores the abort is given up after the grace print
mode gives it (``ABORT_GRACE_S``), and the exit status is the signal's all the same.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import Any

from piko.lib.exit_signals import ABORT_GRACE_S
from piko.lib.exit_signals import abort_within
from piko.lib.exit_signals import on_exit_signals
from piko.lib.redaction import redact
from piko.plugins.modes.rpc.commands import ANSWERED
from piko.plugins.modes.rpc.commands import COMMANDS
from piko.plugins.modes.rpc.commands import NO_DATA
from piko.plugins.modes.rpc.commands import CommandError
from piko.plugins.modes.rpc.jsonl import LineSplitter
from piko.plugins.modes.rpc.jsonl import ParseError
from piko.plugins.modes.rpc.jsonl import parse_line
from piko.plugins.modes.rpc.jsonl import serialize
from piko.plugins.modes.rpc.output import ProtocolOutput
from piko.plugins.modes.rpc.output import RawJson
from piko.plugins.modes.rpc.output import take_over_stdout
from piko.plugins.modes.rpc.ui import RpcUI

READ_SIZE = 1 << 16
SETTLE_SECONDS = 5.0  # how long stopped commands may take to answer before they are cancelled


async def run_rpc(app: Any) -> int:
    """Serve the RPC protocol until end of input; returns the exit code."""
    guard = take_over_stdout()
    try:
        return await RpcHost(app, guard.output).serve()
    finally:
        guard.restore()


class RpcHost:
    """One RPC session: reads records, runs commands, writes responses and events."""

    def __init__(self, app: Any, output: ProtocolOutput) -> None:
        self.app = app
        self.output = output
        self.ui = RpcUI(output.send)
        self.session: Any = None
        self._splitter = LineSplitter()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopped: asyncio.Event | None = None
        self._exit_code = 0
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    async def serve(self) -> int:
        from piko.data.events import event_to_wire
        from piko.engine.setup import SetupError

        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        try:
            self.session = await self.app.create_agent_session(ui=self.ui, mode="rpc")
        except SetupError as exc:
            sys.stderr.write(f"Error: {exc}\n")
            return 1
        self.app.report()
        self.app.dispatcher.error_listeners.append(lambda error: self.output.send(event_to_wire(error)))
        self.session.subscribe(lambda event: self.output.send(event_to_wire(event)))
        on_exit_signals(self.stop, interrupt=True)  # SIGTERM/SIGHUP/SIGINT: stop with 143/129/130
        self._start_reader()
        await self._stopped.wait()
        await self._shutdown()
        return self._exit_code

    def stop(self, code: int = 0) -> None:
        """Begin shutting down (end of input, a signal, or ``ctx.shutdown()``)."""
        if self._stopped is not None and not self._stopped.is_set():
            self._exit_code = code
            self._stopped.set()

    async def _shutdown(self) -> None:
        self._closing = True
        session = self.session
        self.ui.cancel_all()
        session.abort_bash()
        session.compaction.abort()  # abort_within below stops the run and a retry wait
        stopped = False
        try:
            stopped = await abort_within(session)
            if not stopped:  # a tool that ignores the abort: go on without it
                self.log(
                    f"what runs did not stop within {ABORT_GRACE_S:g} s of the abort; shutting down anyway"
                )
        except Exception as exc:
            self.log(f"abort failed while shutting down: {exc}")
        await self._settle_tasks(SETTLE_SECONDS if stopped else 0.0)
        try:
            await session.shutdown("quit", abort_grace=None if stopped else 0.0)
        except Exception as exc:
            self.log(f"shutdown failed: {exc}")

    async def _settle_tasks(self, timeout: float) -> None:
        """Let running commands answer for up to ``timeout`` seconds, then cancel them."""
        current = asyncio.current_task()
        tasks = [t for t in self._tasks if t is not current and not t.done()]
        if not tasks:
            return
        pending = set(tasks)
        if timeout > 0:
            _done, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=1.0)

    # -- input -----------------------------------------------------------------------------------

    def _start_reader(self) -> None:
        """Read stdin on a thread (a blocking read must not hold the loop; the descriptor stays as it is)."""
        loop = self._loop
        assert loop is not None

        def read() -> None:
            while True:
                try:
                    chunk = os.read(0, READ_SIZE)
                except InterruptedError:
                    continue
                except OSError:
                    chunk = b""
                try:
                    loop.call_soon_threadsafe(self._feed, chunk)
                except RuntimeError:  # the loop is gone: the process is exiting
                    return
                if not chunk:
                    return

        threading.Thread(target=read, name="piko-rpc-stdin", daemon=True).start()

    def _feed(self, chunk: bytes) -> None:
        if self._closing:
            return
        if chunk:
            for line in self._splitter.feed(chunk):
                self.handle_line(line)
            return
        for line in self._splitter.finish():
            self.handle_line(line)
        self.stop(0)

    def handle_line(self, line: str) -> None:
        """One record from the client: an answer to a dialog, or a command to start.

        Commands start as tasks, and refusals are written through the loop too, so answers that
        need no waiting leave in the order their records came in.
        """
        assert self._loop is not None
        try:
            command = parse_line(line)
        except ParseError as exc:
            self._loop.call_soon(self._parse_failure, f"Failed to parse command: {exc}")
            return
        if not isinstance(command, dict):
            message = 'Failed to parse command: a command is a JSON object with a "type"'
            self._loop.call_soon(self._parse_failure, message)
            return
        if command.get("type") == "extension_ui_response":
            self.ui.resolve(command)
            return
        task = self._loop.create_task(self._run_command(command))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _parse_failure(self, message: str) -> None:
        self.output.send({"type": "response", "command": "parse", "success": False, "error": message})

    # -- commands --------------------------------------------------------------------------------

    async def _run_command(self, command: dict[str, Any]) -> None:
        name = command.get("type")
        if not isinstance(name, str):
            self.fail(command, "unknown", 'Invalid command: "type" must be a string naming the command')
            return
        spec = COMMANDS.get(name)
        if spec is None:
            self.fail(command, name, f"Unknown command: {name}")
            return
        try:
            spec.check(name, command)
            data = await spec.run(self, command)
        except CommandError as exc:
            self.fail(command, name, str(exc))
        except Exception as exc:
            self.fail(command, name, str(exc) or type(exc).__name__)
        else:
            if data is not ANSWERED:
                self.respond(command, name, data)
        if self.session.shutdown_requested:
            self.stop(0)

    def respond(self, command: dict[str, Any], name: str, data: Any) -> None:
        """A success response echoing the command's ``id`` (when it had one)."""
        record: dict[str, Any] = {"id": command["id"]} if "id" in command else {}
        record.update(type="response", command=name, success=True)
        if isinstance(data, RawJson):
            self.output.write_raw(serialize(record)[:-2] + b',"data":' + data.data + b"}\n")
            return
        if data is not NO_DATA:
            record["data"] = data
        self.output.send(record)

    def fail(self, command: dict[str, Any], name: str, message: str) -> None:
        """An error response echoing the command's ``id`` (pi drops it for unknown commands; we keep it)."""
        record: dict[str, Any] = {"id": command["id"]} if "id" in command else {}
        record.update(type="response", command=name, success=False, error=redact(message))
        self.output.send(record)

    def log(self, message: str) -> None:
        try:
            sys.stderr.write(f"piko rpc: {redact(message)}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
