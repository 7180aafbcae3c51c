"""The shapes a plugin works with, as Protocols: ``register`` callbacks, ``ctx``, ``ctx.ui``, tool ``execute``.

These are for type checkers and readers: piko passes concrete objects (each mode supplies its
own ``ctx.ui``), and anything with these methods fits. Annotate a plugin with them::

    from piko import Context, RegisterTool, ToolDefinition, hookimpl

    @hookimpl
    def piko_register_tools(register: RegisterTool) -> None:
        register(name="hello", description="Say hello", execute=execute)

    async def execute(tool_call_id: str, params: dict, signal, on_update, ctx: Context) -> str: ...
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from piko.platform.registries import (
    CliCommandDefinition,
    CommandDefinition,
    FlagDefinition,
    MessageRendererDefinition,
    ModeDefinition,
    PackageSourceDefinition,
    ProviderApi,
    ProviderConfig,
    ShortcutDefinition,
    ToolDefinition,
)

if TYPE_CHECKING:
    from piko.data.messages import Model, ToolResult
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
RegisterProviderApi = Register[ProviderApi]
RegisterProvider = Register[ProviderConfig]
RegisterCommand = Register[CommandDefinition]
RegisterCliCommand = Register[CliCommandDefinition]
RegisterFlag = Register[FlagDefinition]
RegisterShortcut = Register[ShortcutDefinition | None]  # None: the key is reserved
RegisterMode = Register[ModeDefinition]
RegisterMessageRenderer = Register[MessageRendererDefinition]
RegisterResourceLoader = Register[None]
RegisterPackageSource = Register[PackageSourceDefinition]


@runtime_checkable
class UI(Protocol):
    """``ctx.ui``: what an extension may show or ask. Where a mode cannot show something the
    method does nothing, and a dialog answers its cancel value (``None``, ``False``)."""

    has_ui: bool

    async def select(self, title: str, options: list[Any], **opts: Any) -> Any: ...
    async def confirm(self, title: str, message: str = "", **opts: Any) -> bool: ...
    async def input(self, title: str, placeholder: str | None = None, **opts: Any) -> str | None: ...
    async def editor(self, title: str, prefill: str | None = None, **opts: Any) -> str | None: ...
    async def custom(self, component: Any, **opts: Any) -> Any: ...
    def notify(self, message: str, level: str = "info") -> None: ...
    def set_status(self, key: str, text: str | None = None) -> None: ...
    def set_working_message(self, message: str | None = None) -> None: ...
    def set_widget(self, key: str, content: Any = None, **opts: Any) -> None: ...
    def set_footer(self, factory: Any = None) -> None: ...
    def set_header(self, factory: Any = None) -> None: ...
    def set_title(self, title: str) -> None: ...
    def set_editor_text(self, text: str) -> None: ...
    def get_editor_text(self) -> str: ...
    def set_editor_component(self, factory: Any = None) -> None: ...
    def get_all_themes(self) -> list[Any]: ...
    def get_theme(self, name: str) -> Any: ...
    def set_theme(self, theme: Any) -> bool: ...


@runtime_checkable
class Context(Protocol):
    """``ctx``: the running session as a handler, command or tool sees it."""

    @property
    def ui(self) -> UI: ...
    @property
    def has_ui(self) -> bool: ...
    @property
    def cwd(self) -> str: ...
    @property
    def session_manager(self) -> Any: ...
    @property
    def model_registry(self) -> Any: ...
    @property
    def model(self) -> Model | None: ...
    def is_idle(self) -> bool: ...
    def abort(self) -> Any: ...
    def has_pending_messages(self) -> bool: ...
    def shutdown(self) -> None: ...
    def get_context_usage(self) -> Any: ...
    def compact(self, custom_instructions: str | None = None, **options: Any) -> Any: ...
    def get_system_prompt(self) -> str: ...
    async def wait_for_idle(self) -> None: ...
    async def new_session(self, **options: Any) -> Any: ...
    async def fork(self, entry_id: str) -> Any: ...
    async def navigate_tree(self, target_id: str, **options: Any) -> Any: ...
    async def switch_session(self, session_path: str) -> Any: ...
    async def reload(self) -> None: ...


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
