"""piko: a coding agent compatible with pi, built as a plugin microkernel on pluggy.

This package's top level is the public API for plugins and extensions. Names are imported on
first use (``from piko import hookimpl`` imports pluggy, nothing else), so ``pi --version``
stays fast.
"""

from __future__ import annotations

from typing import Any

from piko.version import __version__

_EXPORTS: dict[str, str] = {
    # hook markers
    "hookimpl": "piko.platform.markers",
    "hookspec": "piko.platform.markers",
    # extension API and context
    "ExtensionAPI": "piko.platform.extension_api",
    "ExtensionContext": "piko.platform.context",
    "ExtensionRuntimeNotInitializedError": "piko.platform.context",
    "NoOpUI": "piko.platform.ui",
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
    # streaming
    "Context": "piko.data.streaming",
    "StreamOptions": "piko.data.streaming",
    "StreamEvent": "piko.data.streaming",
    "ToolSpec": "piko.data.streaming",
    "AbortSignal": "piko.lib.abort",
    "AbortController": "piko.lib.abort",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'piko' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
