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
    from piko.app.sdk import (
        AgentSession,
        EventStream,
        SessionClosedError,
        SessionSetupError,
        create_agent_session,
    )
    from piko.app.sdk_options import InlineExtension, ResourceOverrides, SessionOptionError, SessionOptions
    from piko.config.settings import Settings
    from piko.data.messages import (
        AssistantMessage,
        BashExecutionMessage,
        BranchSummaryMessage,
        CompactionSummaryMessage,
        Cost,
        CustomMessage,
        ImageContent,
        Model,
        ModelCost,
        TextContent,
        ThinkingContent,
        ToolCall,
        ToolResult,
        ToolResultMessage,
        Usage,
        UserMessage,
    )
    from piko.data.streaming import Context, StreamEvent, StreamOptions, ToolSpec
    from piko.data.wire import message_from_wire, to_wire
    from piko.extensions.context import ExtensionContext, ExtensionRuntimeNotInitializedError
    from piko.extensions.extension_api import ExtensionAPI
    from piko.extensions.function_tools import ToolSchemaError, tool
    from piko.extensions.ui import NoOpUI
    from piko.lib.abort import AbortController, AbortSignal
    from piko.platform.markers import hookimpl, hookspec
    from piko.platform.protocols import (
        UI,
        Register,
        RegisterCliCommand,
        RegisterCommand,
        RegisterFlag,
        RegisterMessageRenderer,
        RegisterMode,
        RegisterPackageSource,
        RegisterProvider,
        RegisterProviderApi,
        RegisterResourceLoader,
        RegisterShortcut,
        RegisterTool,
        ToolExecute,
        ToolUpdate,
    )
    from piko.platform.protocols import Context as HandlerContext
    from piko.platform.registries import (
        CliCommandDefinition,
        CommandDefinition,
        FlagDefinition,
        MessageRendererDefinition,
        ModeDefinition,
        PackageSourceDefinition,
        ProviderApi,
        ProviderConfig,
        ResourceLoaderDefinition,
        ShortcutDefinition,
        ToolDefinition,
    )
    from piko.resources.loader import ContextFile, PromptTemplate, Skill
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
