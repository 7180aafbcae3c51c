"""The shapes a plugin works with, as Protocols: ``register`` callbacks, ``ctx``, ``ctx.ui``, tool ``execute``.

These are for type checkers and readers: piko passes concrete objects (each mode supplies its
own ``ctx.ui``), and anything with these methods fits. Annotate a plugin with them::

    from piko import HandlerContext, RegisterTool, hookimpl

    @hookimpl
    def piko_register_tools(register: RegisterTool) -> None:
        register(name="hello", description="Say hello", execute=execute)

    async def execute(tool_call_id: str, params: dict, signal, on_update, ctx: HandlerContext) -> str: ...

(``piko.HandlerContext`` is this module's :class:`Context`; ``piko.Context`` is what a provider
API's stream receives.)
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol
from typing import TypeVar
from typing import runtime_checkable

from piko.platform.registries import CliCommandDefinition
from piko.platform.registries import CommandDefinition
from piko.platform.registries import FlagDefinition
from piko.platform.registries import MessageRendererDefinition
from piko.platform.registries import ModeDefinition
from piko.platform.registries import PackageSourceDefinition
from piko.platform.registries import ProviderApi
from piko.platform.registries import ProviderConfig
from piko.platform.registries import ShortcutDefinition
from piko.platform.registries import ToolDefinition

if TYPE_CHECKING:
    from piko.data.messages import Model
    from piko.data.messages import ToolResult
    from piko.lib.abort import AbortSignal

D = TypeVar("D", covariant=True)

__all__ = [
    "UI",
    "Context",
    "Register",
    "RegisterCliCommand",
    "RegisterCommand",
    "RegisterFlag",
    "RegisterMessageRenderer",
    "RegisterMode",
    "RegisterPackageSource",
    "RegisterProvider",
    "RegisterProviderApi",
    "RegisterResourceLoader",
    "RegisterShortcut",
    "RegisterTool",
    "ToolExecute",
    "ToolUpdate",
]


class Register(Protocol[D]):
    """The ``register`` a registration hook receives: a definition object, a dict of its
    fields (pi's camelCase or snake_case), or its fields as arguments; returns the definition."""

    def __call__(self, *args: Any, **fields: Any) -> D: ...


RegisterTool = Register[ToolDefinition]
"""The ``register`` of ``piko_register_tools``: name, description, JSON-schema ``parameters`` and ``execute``."""
RegisterProviderApi = Register[ProviderApi]
"""The ``register`` of ``piko_register_provider_apis``: an ``api`` name and its ``stream`` function."""
RegisterProvider = Register[ProviderConfig]
"""The ``register`` of ``piko_register_providers``: a provider, its URL, key, headers and models."""
RegisterCommand = Register[CommandDefinition]
"""The ``register`` of ``piko_register_commands``: a ``/name`` command and its ``handler(args, ctx)``."""
RegisterCliCommand = Register[CliCommandDefinition]
"""The ``register`` of ``piko_register_cli_commands``: a ``pi NAME`` subcommand (a click command)."""
RegisterFlag = Register[FlagDefinition]
"""The ``register`` of ``piko_register_flags``: a ``--name`` option of the main command."""
RegisterShortcut = Register[ShortcutDefinition | None]
"""The ``register`` of ``piko_register_shortcuts``: a key of the interactive mode (``None`` when piko
reserves the key)."""
RegisterMode = Register[ModeDefinition]
"""The ``register`` of ``piko_register_modes``: a ``--mode NAME`` and its ``run(app)``."""
RegisterMessageRenderer = Register[MessageRendererDefinition]
"""The ``register`` of ``piko_register_message_renderers``: how the interactive mode shows a custom
message type."""
RegisterResourceLoader = Register[None]
"""The ``register`` of ``piko_register_resource_loaders``: a loader of skills, prompt templates,
themes or context files."""
RegisterPackageSource = Register[PackageSourceDefinition]
"""The ``register`` of ``piko_register_package_sources``: a scheme ``pi install`` understands."""


@runtime_checkable
class UI(Protocol):
    """``ctx.ui``: what an extension may show or ask. Where a mode cannot show something the
    method does nothing, and a dialog answers its cancel value (``None``, ``False``)."""

    has_ui: bool

    async def select(self, title: str, options: list[Any], **opts: Any) -> Any:
        """Ask to pick one of ``options`` (strings); the one picked, or ``None`` when cancelled."""

    async def confirm(self, title: str, message: str = "", **opts: Any) -> bool:
        """Ask a yes/no question; ``True`` for yes, ``False`` for no or cancelled."""

    async def input(self, title: str, placeholder: str | None = None, **opts: Any) -> str | None:
        """Ask for one line of text; the text, or ``None`` when cancelled."""

    async def editor(self, title: str, prefill: str | None = None, **opts: Any) -> str | None:
        """Open a multi-line editor (with ``prefill``); the text, or ``None`` when cancelled."""

    async def custom(self, component: Any, **opts: Any) -> Any:
        """Show a component of the interactive mode until it closes; what it returned (``None`` elsewhere)."""

    def notify(self, message: str, level: str = "info") -> None:
        """Show a notification; ``level`` is ``"info"``, ``"warning"`` or ``"error"``."""

    def set_status(self, key: str, text: str | None = None) -> None:
        """Set the footer status under ``key`` (one per extension, say); ``None`` clears it."""

    def set_working_message(self, message: str | None = None) -> None:
        """Replace the working indicator's text while the agent runs; ``None`` restores the default."""

    def set_widget(self, key: str, content: Any = None, **opts: Any) -> None:
        """Show lines (a list of strings) above the editor under ``key``
        (``placement="belowEditor"`` below it); ``None`` removes the widget."""

    def set_footer(self, factory: Any = None) -> None:
        """Replace the footer with a component from ``factory``; ``None`` restores piko's."""

    def set_header(self, factory: Any = None) -> None:
        """Replace the header with a component from ``factory``; ``None`` restores piko's."""

    def set_title(self, title: str) -> None:
        """Set the terminal window's title."""

    def set_editor_text(self, text: str) -> None:
        """Replace the text of the prompt editor."""

    def get_editor_text(self) -> str:
        """The text of the prompt editor ("" where there is none)."""

    def set_editor_component(self, factory: Any = None) -> None:
        """Replace the prompt editor with a component from ``factory``; ``None`` restores piko's."""

    def get_all_themes(self) -> list[Any]:
        """The themes there are (built-in and loaded)."""

    def get_theme(self, name: str) -> Any:
        """The theme called ``name``, or ``None``."""

    def set_theme(self, theme: Any) -> bool:
        """Switch to ``theme`` (a theme or its name); ``False`` when there is no such theme."""

    async def ask_dialog(self, *args: Any, **opts: Any) -> Any:
        """pi's ``askDialog``: accepted, answers ``None`` (piko has no such dialog yet)."""

    def set_working_visible(self, visible: bool = True) -> None:
        """Show or hide the working indicator while the agent runs."""

    def set_working_indicator(self, indicator: Any = None) -> None:
        """Replace the working indicator (pi 1.6); accepted, inert in piko's modes."""

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        """What a hidden thinking block shows (``Thinking...``); ``None`` restores it."""

    def paste_to_editor(self, text: str) -> None:
        """Paste ``text`` into the prompt editor as if typed (pastes are expanded)."""

    def get_editor_component(self) -> Any:
        """The factory last given to :meth:`set_editor_component` (``None``: the built-in editor)."""

    def add_autocomplete_provider(self, factory: Any) -> None:
        """Add completions to the prompt editor; accepted, inert in piko's modes."""

    def on_terminal_input(self, handler: Any) -> Any:
        """Subscribe to raw terminal input; returns the function that unsubscribes."""

    def get_tools_expanded(self) -> bool:
        """Whether tool boxes are expanded (Ctrl+O's state)."""

    def set_tools_expanded(self, expanded: bool) -> None:
        """Expand or collapse the tool boxes, as Ctrl+O does."""


@runtime_checkable
class Context(Protocol):
    """``ctx``: the running session as a handler, command or tool sees it."""

    @property
    def ui(self) -> UI:
        """What the extension may show or ask (:class:`UI`); does nothing where nothing can be shown."""

    @property
    def has_ui(self) -> bool:
        """Whether dialogs reach a person: true in the interactive and RPC modes, false in print and JSON."""

    @property
    def cwd(self) -> str:
        """The working directory of the session."""

    @property
    def session_manager(self) -> Any:
        """The session's entries, read only: ``get_entries()``, ``get_branch()``, ``get_session_file()``...
        (:class:`piko.sessions.manager.SessionManager`'s ``get_*`` methods)."""

    @property
    def model_registry(self) -> Any:
        """The registry of providers and models: ``find(provider, id)``, ``available_models()``,
        ``all_models()``, ``has_auth(provider)``..."""

    @property
    def model(self) -> Model | None:
        """The session's model, or ``None`` when there is none (or no session yet)."""

    def is_idle(self) -> bool:
        """False while the agent runs (streaming, tools, retries) or a compaction runs."""

    def abort(self) -> Any:
        """Stop the running turn; returns a task that ends once the agent is idle (awaiting it is optional)."""

    def has_pending_messages(self) -> bool:
        """Whether steering, follow-up or next-turn messages are queued."""

    def shutdown(self) -> None:
        """Ask piko to exit once the agent is idle (extensions see ``session_shutdown``); print mode
        exits after its prompts anyway."""

    def get_context_usage(self) -> Any:
        """``{"tokens", "contextWindow", "percent"}``: the estimated tokens in context against the model's
        window (``tokens`` is ``None`` right after a compaction); ``None`` without a model."""

    def compact(self, custom_instructions: str | None = None, **options: Any) -> Any:
        """Start a compaction of the session (with ``custom_instructions`` for the summary); returns its
        task without waiting for it."""

    def get_system_prompt(self) -> str:
        """The system prompt as it stands (within ``before_agent_start``: with the changes so far)."""

    async def wait_for_idle(self) -> None:
        """Wait until the agent is idle (commands only: from an event handler it would wait for itself)."""

    async def new_session(self, **options: Any) -> Any:
        """Start a new session (``parent_session=`` names the one it came from); ``{"cancelled": bool}``."""

    async def fork(self, entry_id: str) -> Any:
        """A new session from the history before the user message ``entry_id``;
        ``{"cancelled": bool, "text": <that message's text>}``."""

    async def navigate_tree(self, target_id: str, **options: Any) -> Any:
        """Move to another entry of the session tree (``summarize=``, ``custom_instructions=``,
        ``label=``); ``{"cancelled": bool, "editorText": str | None}``."""

    async def switch_session(self, session_path: str) -> Any:
        """Resume another session file; ``{"cancelled": bool}``."""

    async def reload(self) -> None:
        """What ``/reload`` does: settings, extension files, newly installed plugins, resources and the
        system prompt are read again (``session_shutdown`` then ``session_start`` with reason ``reload``)."""


ToolUpdate = Callable[[Any], None]
"""What a running tool calls with partial output (``{"content": [...], "details": ...}``)."""


class ToolExecute(Protocol):
    """A tool's ``execute``: a coroutine function or a plain function (run on a thread).

    It returns a :class:`~piko.data.messages.ToolResult`, a dict with ``content``, ``details``
    and ``is_error``, or plain text; raising makes the result an error.
    """

    def __call__(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdate | None,
        ctx: Context,
        /,
    ) -> ToolResult | dict[str, Any] | str | Awaitable[ToolResult | dict[str, Any] | str]: ...
