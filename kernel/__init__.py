"""piko: a coding agent compatible with pi, built as a plugin microkernel on pluggy.

This package's top level is the public API for plugins and extensions. Names are imported on
first use (``from piko import hookimpl`` imports pluggy, nothing else), so ``pi --version``
stays fast; type checkers see every name and its type through the imports below, which only
they run (written ``import name as name``, the form that re-exports a name under ``mypy --strict``).
"""

from __future__ import annotations

from piko.version import __version__ as __version__

TYPE_CHECKING = False  # not typing's: importing typing is most of what ``pi --version`` costs
if TYPE_CHECKING:
    from collections.abc import Callable

    from piko.app.application import App as App
    from piko.app.sdk import AgentSession as AgentSession
    from piko.app.sdk import EventStream as EventStream
    from piko.app.sdk import SessionClosedError as SessionClosedError
    from piko.app.sdk import SessionSetupError as SessionSetupError
    from piko.app.sdk import create_agent_session as create_agent_session
    from piko.app.sdk_options import InlineExtension as InlineExtension
    from piko.app.sdk_options import ResourceOverrides as ResourceOverrides
    from piko.app.sdk_options import SessionOptionError as SessionOptionError
    from piko.app.sdk_options import SessionOptions as SessionOptions
    from piko.config.settings import Settings as Settings
    from piko.data.messages import AssistantMessage as AssistantMessage
    from piko.data.messages import BashExecutionMessage as BashExecutionMessage
    from piko.data.messages import BranchSummaryMessage as BranchSummaryMessage
    from piko.data.messages import CompactionSummaryMessage as CompactionSummaryMessage
    from piko.data.messages import Cost as Cost
    from piko.data.messages import CustomMessage as CustomMessage
    from piko.data.messages import ImageContent as ImageContent
    from piko.data.messages import Model as Model
    from piko.data.messages import ModelCost as ModelCost
    from piko.data.messages import TextContent as TextContent
    from piko.data.messages import ThinkingContent as ThinkingContent
    from piko.data.messages import ToolCall as ToolCall
    from piko.data.messages import ToolResult as ToolResult
    from piko.data.messages import ToolResultMessage as ToolResultMessage
    from piko.data.messages import Usage as Usage
    from piko.data.messages import UserMessage as UserMessage
    from piko.data.streaming import Context as Context
    from piko.data.streaming import StreamEvent as StreamEvent
    from piko.data.streaming import StreamOptions as StreamOptions
    from piko.data.streaming import ToolSpec as ToolSpec
    from piko.data.wire import message_from_wire as message_from_wire
    from piko.data.wire import to_wire as to_wire
    from piko.extensions.context import ExtensionContext as ExtensionContext
    from piko.extensions.context import (
        ExtensionRuntimeNotInitializedError as ExtensionRuntimeNotInitializedError,
    )
    from piko.extensions.extension_api import ExtensionAPI as ExtensionAPI
    from piko.extensions.function_tools import ToolOptions as ToolOptions
    from piko.extensions.function_tools import ToolSchemaError as ToolSchemaError
    from piko.extensions.function_tools import tool as tool
    from piko.extensions.ui import NoOpUI as NoOpUI
    from piko.lib.abort import AbortController as AbortController
    from piko.lib.abort import AbortSignal as AbortSignal
    from piko.platform.markers import hookimpl as hookimpl
    from piko.platform.markers import hookspec as hookspec
    from piko.platform.markers import registers as registers
    from piko.platform.protocols import UI as UI
    from piko.platform.protocols import Context as _HandlerContext
    from piko.platform.protocols import Register as Register
    from piko.platform.protocols import RegisterCliCommand as RegisterCliCommand
    from piko.platform.protocols import RegisterCommand as RegisterCommand
    from piko.platform.protocols import RegisterFlag as RegisterFlag
    from piko.platform.protocols import RegisterMessageRenderer as RegisterMessageRenderer
    from piko.platform.protocols import RegisterMode as RegisterMode
    from piko.platform.protocols import RegisterPackageSource as RegisterPackageSource
    from piko.platform.protocols import RegisterProvider as RegisterProvider
    from piko.platform.protocols import RegisterProviderApi as RegisterProviderApi
    from piko.platform.protocols import RegisterResourceLoader as RegisterResourceLoader
    from piko.platform.protocols import RegisterShortcut as RegisterShortcut
    from piko.platform.protocols import RegisterTool as RegisterTool
    from piko.platform.protocols import ToolExecute as ToolExecute
    from piko.platform.protocols import ToolUpdate as ToolUpdate
    from piko.platform.registries import CliCommandDefinition as CliCommandDefinition
    from piko.platform.registries import CommandDefinition as CommandDefinition
    from piko.platform.registries import FlagDefinition as FlagDefinition
    from piko.platform.registries import MessageRendererDefinition as MessageRendererDefinition
    from piko.platform.registries import ModeDefinition as ModeDefinition
    from piko.platform.registries import PackageSourceDefinition as PackageSourceDefinition
    from piko.platform.registries import ProviderApi as ProviderApi
    from piko.platform.registries import ProviderConfig as ProviderConfig
    from piko.platform.registries import ResourceLoaderDefinition as ResourceLoaderDefinition
    from piko.platform.registries import ShortcutDefinition as ShortcutDefinition
    from piko.platform.registries import ToolDefinition as ToolDefinition
    from piko.resources.loader import ContextFile as ContextFile
    from piko.resources.loader import PromptTemplate as PromptTemplate
    from piko.resources.loader import Skill as Skill
    from piko.sessions.manager import SessionManager as SessionManager

    HandlerContext = _HandlerContext  # pi's handler ctx, named apart from the stream Context

_EXPORTS: dict[str, str] = {
    # the agent as a library (docs/sdk.md)
    "create_agent_session": "piko.app.sdk",
    "AgentSession": "piko.app.sdk",
    "EventStream": "piko.app.sdk",
    "SessionClosedError": "piko.app.sdk",
    "SessionSetupError": "piko.app.sdk",
    "SessionOptions": "piko.app.sdk_options",
    "SessionOptionError": "piko.app.sdk_options",
    "InlineExtension": "piko.app.sdk_options",
    "ResourceOverrides": "piko.app.sdk_options",
    "SessionManager": "piko.sessions.manager",
    "Settings": "piko.config.settings",
    "Skill": "piko.resources.loader",
    "PromptTemplate": "piko.resources.loader",
    "ContextFile": "piko.resources.loader",
    # tools from plain functions
    "tool": "piko.extensions.function_tools",
    "ToolSchemaError": "piko.extensions.function_tools",
    "ToolOptions": "piko.extensions.function_tools",
    # hook markers
    "hookimpl": "piko.platform.markers",
    "hookspec": "piko.platform.markers",
    "registers": "piko.platform.markers",
    # extension API and context
    "ExtensionAPI": "piko.extensions.extension_api",
    "ExtensionContext": "piko.extensions.context",
    "ExtensionRuntimeNotInitializedError": "piko.extensions.context",
    "NoOpUI": "piko.extensions.ui",
    "App": "piko.app.application",
    # data model
    "TextContent": "piko.data.messages",
    "ThinkingContent": "piko.data.messages",
    "ImageContent": "piko.data.messages",
    "ToolCall": "piko.data.messages",
    "UserMessage": "piko.data.messages",
    "AssistantMessage": "piko.data.messages",
    "ToolResultMessage": "piko.data.messages",
    "BashExecutionMessage": "piko.data.messages",
    "CustomMessage": "piko.data.messages",
    "BranchSummaryMessage": "piko.data.messages",
    "CompactionSummaryMessage": "piko.data.messages",
    "Usage": "piko.data.messages",
    "Cost": "piko.data.messages",
    "Model": "piko.data.messages",
    "ModelCost": "piko.data.messages",
    "ToolResult": "piko.data.messages",
    "to_wire": "piko.data.wire",
    "message_from_wire": "piko.data.wire",
    # registrations
    "ToolDefinition": "piko.platform.registries",
    "ProviderApi": "piko.platform.registries",
    "CommandDefinition": "piko.platform.registries",
    "CliCommandDefinition": "piko.platform.registries",
    "FlagDefinition": "piko.platform.registries",
    "ShortcutDefinition": "piko.platform.registries",
    "ModeDefinition": "piko.platform.registries",
    "MessageRendererDefinition": "piko.platform.registries",
    "ResourceLoaderDefinition": "piko.platform.registries",
    "PackageSourceDefinition": "piko.platform.registries",
    "ProviderConfig": "piko.platform.registries",
    # the shapes plugins work with (Protocols)
    "HandlerContext": "piko.platform.protocols:Context",
    "UI": "piko.platform.protocols",
    "Register": "piko.platform.protocols",
    "RegisterTool": "piko.platform.protocols",
    "RegisterProviderApi": "piko.platform.protocols",
    "RegisterProvider": "piko.platform.protocols",
    "RegisterCommand": "piko.platform.protocols",
    "RegisterCliCommand": "piko.platform.protocols",
    "RegisterFlag": "piko.platform.protocols",
    "RegisterShortcut": "piko.platform.protocols",
    "RegisterMode": "piko.platform.protocols",
    "RegisterMessageRenderer": "piko.platform.protocols",
    "RegisterResourceLoader": "piko.platform.protocols",
    "RegisterPackageSource": "piko.platform.protocols",
    "ToolExecute": "piko.platform.protocols",
    "ToolUpdate": "piko.platform.protocols",
    # streaming
    "Context": "piko.data.streaming",
    "StreamOptions": "piko.data.streaming",
    "StreamEvent": "piko.data.streaming",
    "ToolSpec": "piko.data.streaming",
    "AbortSignal": "piko.lib.abort",
    "AbortController": "piko.lib.abort",
}

__all__ = ["__version__", *_EXPORTS]


def _import_on_first_use(package: str, exports: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: ``exports`` maps each public name to the module
    that defines it (``"module"`` or ``"module:attribute"``), imported when the name is first read
    and then kept in the package, so the next read is a plain attribute. ``piko.testing`` uses it
    too."""

    def __getattr__(name: str) -> object:
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib
        import sys

        module_name, _, attribute = where.partition(":")
        value = getattr(importlib.import_module(module_name), attribute or name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


if not TYPE_CHECKING:  # type checkers read the imports above; an unknown name stays an error to them
    __getattr__ = _import_on_first_use(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted(__all__)
