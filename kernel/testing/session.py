"""Run prompts in process with the plugin under test: the ``piko_session`` fixture's object.

:class:`PikoSession` boots an :class:`~piko.app.application.App` on a :class:`~piko.testing.home.PikoHome`
(its ``models.json`` points the ``mock`` providers at the scripted server), loads the plugins
and extension files named, builds an :class:`~piko.engine.session.AgentSession` as a mode does,
runs the prompts and returns a :class:`SessionRun`: every event, the messages, the session
entries, the extension errors and what the plugin showed on ``ctx.ui``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import types
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import ParamSpec
from typing import TypeVar

from piko.app.application import App
from piko.app.application import BootOptions
from piko.data.events import ExtensionErrorEvent
from piko.data.events import event_to_wire
from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import ToolResultMessage
from piko.extensions.ui import NoOpUI
from piko.platform.discovery import EntryPointRecord
from piko.testing.home import MOCK_MODEL
from piko.testing.home import MOCK_PROVIDER
from piko.testing.home import PikoHome

__all__ = ["PikoSession", "RecordingUI", "SessionRun"]

PluginTarget = str | types.ModuleType
P = ParamSpec("P")
R = TypeVar("R")


def _blocking(method: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, R]:
    """The synchronous twin of a coroutine method ``name_async``: ``name``, run in a new event loop."""

    @functools.wraps(method)
    def blocking(*args: P.args, **kwargs: P.kwargs) -> R:
        return asyncio.run(method(*args, **kwargs))

    blocking.__name__ = method.__name__.removesuffix("_async")
    blocking.__qualname__ = method.__qualname__.removesuffix("_async")
    return blocking


class RecordingUI(NoOpUI):
    """A ``ctx.ui`` that records what a plugin shows and answers dialogs from ``answers``.

    ``answers`` maps a dialog (``"select"``, ``"confirm"``, ``"input"``, ``"editor"``) to the value
    it returns (a list is answered one item per call); a dialog without an answer returns its
    cancel value as :class:`~piko.extensions.ui.NoOpUI` does. ``has_ui`` is true when answers are given.
    """

    def __init__(self, answers: Mapping[str, Any] | None = None) -> None:
        self.answers: dict[str, Any] = dict(answers or {})
        self.has_ui = bool(self.answers)
        self.notifications: list[tuple[str, str]] = []  # (message, level)
        self.statuses: dict[str, str | None] = {}
        self.widgets: dict[str, Any] = {}
        self.dialogs: list[tuple[str, str]] = []  # (kind, title) of every dialog opened

    def _answer(self, kind: str, title: str, cancel: Any) -> Any:
        self.dialogs.append((kind, title))
        if kind not in self.answers:
            return cancel
        value = self.answers[kind]
        if isinstance(value, list):
            return value.pop(0) if value else cancel
        return value

    async def select(self, title: str, options: list[Any], **opts: Any) -> Any:
        """The scripted ``select`` answer, else ``None``."""
        return self._answer("select", title, None)

    async def confirm(self, title: str, message: str = "", **opts: Any) -> bool:
        """The scripted ``confirm`` answer, else ``False``."""
        return bool(self._answer("confirm", title, False))

    async def input(self, title: str, placeholder: str | None = None, **opts: Any) -> str | None:
        """The scripted ``input`` answer, else ``None``."""
        result = self._answer("input", title, None)
        return None if result is None else str(result)

    async def editor(self, title: str, prefill: str | None = None, **opts: Any) -> str | None:
        """The scripted ``editor`` answer, else ``None``."""
        result = self._answer("editor", title, None)
        return None if result is None else str(result)

    def notify(self, message: str, level: str = "info") -> None:
        """Record a notification in :attr:`notifications`."""
        self.notifications.append((message, level))

    def set_status(self, key: str, text: str | None = None) -> None:
        """Record a status line in :attr:`statuses`."""
        self.statuses[key] = text

    def set_widget(self, key: str, content: Any = None, **opts: Any) -> None:
        """Record a widget in :attr:`widgets`."""
        self.widgets[key] = content


@dataclass(eq=False, repr=False)
class SessionRun:
    """What one :meth:`PikoSession.run` produced.

    ``events`` are the objects of :mod:`piko.data.events` the session's subscribers saw, in order;
    ``messages`` the conversation afterwards (``UserMessage``, ``AssistantMessage``,
    ``ToolResultMessage``, ``CustomMessage``...); ``entries`` the session's entries
    (:mod:`piko.sessions.entries`); ``extension_errors`` every ``extension_error`` reported;
    ``ui`` the :class:`RecordingUI` handlers saw; ``app`` and ``session`` stay usable.
    """

    app: App
    session: Any
    events: list[Any]
    extension_errors: list[ExtensionErrorEvent]
    ui: RecordingUI
    messages: list[Any] = field(init=False)
    entries: list[Any] = field(init=False)
    session_file: Path | None = field(init=False)

    def __post_init__(self) -> None:
        self.messages = list(self.session.messages)
        self.entries = list(self.session.session_manager.get_entries())
        file = self.session.session_manager.get_session_file()
        self.session_file = Path(file) if file else None

    @property
    def records(self) -> list[dict[str, Any]]:
        """The events as the JSON lines ``pi --mode json`` prints."""
        return [event_to_wire(event) for event in self.events]

    def of_type(self, kind: str) -> list[Any]:
        """The events of one type (``"tool_execution_end"``, ``"message_end"``...)."""
        return [event for event in self.events if event.TYPE == kind]

    @property
    def types(self) -> list[str]:
        """The type of every event, in order."""
        return [event.TYPE for event in self.events]

    @property
    def assistant(self) -> AssistantMessage | None:
        """The last assistant message."""
        return next((m for m in reversed(self.messages) if isinstance(m, AssistantMessage)), None)

    @property
    def text(self) -> str:
        """The text of the last assistant message ("" when there is none)."""
        last = self.assistant
        if last is None:
            return ""
        return "".join(block.text for block in last.content if isinstance(block, TextContent))

    @property
    def tool_results(self) -> list[ToolResultMessage]:
        """Every tool result of the conversation, in order."""
        return [m for m in self.messages if isinstance(m, ToolResultMessage)]

    def file_entries(self) -> list[dict[str, Any]]:
        """The session file's lines as JSON objects (the header first); [] when nothing was written."""
        if self.session_file is None or not self.session_file.exists():
            return []
        lines = self.session_file.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]


class PikoSession:
    """Boots piko in this process and runs prompts with the plugin under test (``piko_session``).

    Installed plugins (a distribution with a ``piko`` entry point, such as the package under
    test installed with ``pip install -e .``) load as they would for ``pi``. ``extensions`` are
    files or package folders loaded as with ``pi -e``; ``plugins`` maps a plugin name to a module
    (its name, ``"module:attr"``, or the module object) loaded as an entry point would be.
    """

    def __init__(self, home: PikoHome, server: Any = None) -> None:
        self.home = home
        self.server = server
        if server is not None:
            home.use_llm_server(server)

    def boot(
        self,
        *,
        extensions: Iterable[str | os.PathLike[str]] = (),
        plugins: Mapping[str, PluginTarget] | None = None,
        disable: Iterable[str] = (),
    ) -> App:
        """A booted :class:`~piko.app.application.App` with the plugins loaded (no session yet).

        Raises ``AssertionError`` naming the plugin when one of ``extensions`` or ``plugins``
        failed to load (its one-line cause as ``pi plugins`` shows it).
        """
        app = App(cwd=self.home.project, agent_dir=self.home.agent_dir)
        files = [str(Path(path)) for path in extensions]
        app.boot(BootOptions(extensions=files, disable_plugins=list(disable)))
        if plugins:
            records = [_entry_point(name, target) for name, target in plugins.items()]
            app.pm.load_entry_points(records, app.make_extension_api)
            app.pm.validate()
        names = [Path(f).stem if f.endswith(".py") else Path(f).name for f in files] + list(plugins or {})
        for name in names:
            info = app.pm.infos.get(name)
            if info is not None and info.error:
                raise AssertionError(f"plugin '{name}' failed to load: {info.error}")
        return app

    async def run_async(
        self,
        *prompts: str,
        turns: Iterable[Any] | None = None,
        extensions: Iterable[str | os.PathLike[str]] = (),
        plugins: Mapping[str, PluginTarget] | None = None,
        disable: Iterable[str] = (),
        model: str = f"{MOCK_PROVIDER}/{MOCK_MODEL}",
        tools: Iterable[str] | None = None,
        options: Mapping[str, Any] | None = None,
        ui: RecordingUI | None = None,
        timeout: float = 60,
    ) -> SessionRun:
        """Run ``prompts`` one after the other in a new session and return what happened.

        ``turns`` are added to the scripted server first. ``model`` is ``"provider/id"``;
        ``tools`` the active tools (``--tools``; by default those active by default); ``options``
        any other parsed command-line option (``{"thinking": "high"}``). A prompt may be a
        ``/command`` of the plugin. The run is given up after ``timeout`` seconds.
        ``run(...)`` runs it to the end in a new event loop; a test that already runs one awaits
        ``run_async(...)``.
        """
        if turns is not None:
            if self.server is None:
                raise ValueError("turns need the scripted server: take the llm_server fixture")
            self.server.add_turns(turns)
        app = self.boot(extensions=extensions, plugins=plugins, disable=disable)
        provider, _, model_id = model.partition("/")
        app.options = {"provider": provider, "model": model_id, "session_dir": str(self.home.sessions)}
        if tools is not None:
            app.options["tools"] = ",".join(tools)
        app.options.update(options or {})
        recording = ui if ui is not None else RecordingUI()
        errors: list[ExtensionErrorEvent] = []
        app.dispatcher.error_listeners.append(errors.append)
        session = await app.create_agent_session(ui=recording, mode="print")
        events: list[Any] = []
        session.subscribe(events.append)
        try:
            async with asyncio.timeout(timeout):
                for prompt in prompts:
                    await session.prompt(prompt)
        finally:
            await session.shutdown()
        return SessionRun(app, session, events, errors, recording)

    run = _blocking(run_async)


def _entry_point(name: str, target: PluginTarget) -> EntryPointRecord:
    """An entry-point record for a plugin given by module name (``"module[:attr]"``) or module."""
    if isinstance(target, types.ModuleType):
        value = target.__name__
    elif isinstance(target, str):
        value = target
    else:
        raise TypeError(
            f"plugin '{name}': give a module or its name ('package.module' or 'module:attr'), "
            f"not {type(target).__name__}"
        )
    return EntryPointRecord(name, value, "piko.testing", "", "")
