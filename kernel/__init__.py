"""piko: a coding agent compatible with pi, built as a plugin microkernel on pluggy.

This package's top level is the public API for plugins and extensions. Names are imported on
first use (``from piko import hookimpl`` imports pluggy, nothing else), so ``pi --version``
stays fast; type checkers see every name and its type through the imports below, which only
they run.
"""

from __future__ import annotations

from piko.version import __version__

TYPE_CHECKING = False  # not typing's: importing typing is most of what ``pi --version`` costs
if TYPE_CHECKING:
    from piko.app.application import App
    from piko.app.sdk import AgentSession
    from piko.app.sdk import EventStream
    from piko.app.sdk import SessionClosedError
    from piko.app.sdk import SessionSetupError
    from piko.app.sdk import create_agent_session
    from piko.app.sdk_options import InlineExtension
    from piko.app.sdk_options import ResourceOverrides
    from piko.app.sdk_options import SessionOptionError
    from piko.app.sdk_options import SessionOptions
    from piko.config.settings import Settings
    from piko.data.messages import AssistantMessage
    from piko.data.messages import BashExecutionMessage
    from piko.data.messages import BranchSummaryMessage
    from piko.data.messages import CompactionSummaryMessage
    from piko.data.messages import Cost
    from piko.data.messages import CustomMessage
    from piko.data.messages import ImageContent
    from piko.data.messages import Model
    from piko.data.messages import ModelCost
    from piko.data.messages import TextContent
    from piko.data.messages import ThinkingContent
    from piko.data.messages import ToolCall
    from piko.data.messages import ToolResult
    from piko.data.messages import ToolResultMessage
    from piko.data.messages import Usage
    from piko.data.messages import UserMessage
    from piko.data.streaming import Context
    from piko.data.streaming import StreamEvent
    from piko.data.streaming import StreamOptions
    from piko.data.streaming import ToolSpec
    from piko.data.wire import message_from_wire
    from piko.data.wire import to_wire
    from piko.extensions.context import ExtensionContext
    from piko.extensions.context import ExtensionRuntimeNotInitializedError
    from piko.extensions.extension_api import ExtensionAPI
    from piko.extensions.function_tools import ToolOptions
    from piko.extensions.function_tools import ToolSchemaError
    from piko.extensions.function_tools import tool
    from piko.extensions.ui import NoOpUI
    from piko.lib.abort import AbortController
    from piko.lib.abort import AbortSignal
    from piko.platform.markers import hookimpl
    from piko.platform.markers import hookspec
    from piko.platform.protocols import UI
    from piko.platform.protocols import Context as HandlerContext
    from piko.platform.protocols import Register
    from piko.platform.protocols import RegisterCliCommand
    from piko.platform.protocols import RegisterCommand
    from piko.platform.protocols import RegisterFlag
    from piko.platform.protocols import RegisterMessageRenderer
    from piko.platform.protocols import RegisterMode
    from piko.platform.protocols import RegisterPackageSource
    from piko.platform.protocols import RegisterProvider
    from piko.platform.protocols import RegisterProviderApi
    from piko.platform.protocols import RegisterResourceLoader
    from piko.platform.protocols import RegisterShortcut
    from piko.platform.protocols import RegisterTool
    from piko.platform.protocols import ToolExecute
    from piko.platform.protocols import ToolUpdate
    from piko.platform.registries import CliCommandDefinition
    from piko.platform.registries import CommandDefinition
    from piko.platform.registries import FlagDefinition
    from piko.platform.registries import MessageRendererDefinition
    from piko.platform.registries import ModeDefinition
    from piko.platform.registries import PackageSourceDefinition
    from piko.platform.registries import ProviderApi
    from piko.platform.registries import ProviderConfig
    from piko.platform.registries import ResourceLoaderDefinition
    from piko.platform.registries import ShortcutDefinition
    from piko.platform.registries import ToolDefinition
    from piko.resources.loader import ContextFile
    from piko.resources.loader import PromptTemplate
    from piko.resources.loader import Skill
    from piko.sessions.manager import SessionManager

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

# Written out (not derived from _EXPORTS) so that type checkers read it: under ``mypy --strict`` a
# name imported above is exported only when ``__all__`` lists it.
__all__ = [
    "UI",
    "AbortController",
    "AbortSignal",
    "AgentSession",
    "App",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CliCommandDefinition",
    "CommandDefinition",
    "CompactionSummaryMessage",
    "Context",
    "ContextFile",
    "Cost",
    "CustomMessage",
    "EventStream",
    "ExtensionAPI",
    "ExtensionContext",
    "ExtensionRuntimeNotInitializedError",
    "FlagDefinition",
    "HandlerContext",
    "ImageContent",
    "InlineExtension",
    "MessageRendererDefinition",
    "ModeDefinition",
    "Model",
    "ModelCost",
    "NoOpUI",
    "PackageSourceDefinition",
    "PromptTemplate",
    "ProviderApi",
    "ProviderConfig",
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
    "ResourceLoaderDefinition",
    "ResourceOverrides",
    "SessionClosedError",
    "SessionManager",
    "SessionOptionError",
    "SessionOptions",
    "SessionSetupError",
    "Settings",
    "ShortcutDefinition",
    "Skill",
    "StreamEvent",
    "StreamOptions",
    "TextContent",
    "ThinkingContent",
    "ToolCall",
    "ToolDefinition",
    "ToolExecute",
    "ToolOptions",
    "ToolResult",
    "ToolResultMessage",
    "ToolSchemaError",
    "ToolSpec",
    "ToolUpdate",
    "Usage",
    "UserMessage",
    "__version__",
    "create_agent_session",
    "hookimpl",
    "hookspec",
    "message_from_wire",
    "to_wire",
    "tool",
]


def __getattr__(name: str) -> object:
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module 'piko' has no attribute {name!r}")
    import importlib

    module_name, _, attribute = where.partition(":")
    value = getattr(importlib.import_module(module_name), attribute or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
