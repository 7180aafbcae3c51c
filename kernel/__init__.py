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
    "hookimpl": "piko.markers",
    "hookspec": "piko.markers",
    # extension API and context
    "ExtensionAPI": "piko.extension_api",
    "ExtensionContext": "piko.context",
    "ExtensionRuntimeNotInitializedError": "piko.context",
    "NoOpUI": "piko.ui",
    "App": "piko.app",
    # data model
    "TextContent": "piko.messages",
    "ThinkingContent": "piko.messages",
    "ImageContent": "piko.messages",
    "ToolCall": "piko.messages",
    "UserMessage": "piko.messages",
    "AssistantMessage": "piko.messages",
    "ToolResultMessage": "piko.messages",
    "BashExecutionMessage": "piko.messages",
    "CustomMessage": "piko.messages",
    "BranchSummaryMessage": "piko.messages",
    "CompactionSummaryMessage": "piko.messages",
    "Usage": "piko.messages",
    "Cost": "piko.messages",
    "Model": "piko.messages",
    "ModelCost": "piko.messages",
    "ToolResult": "piko.messages",
    "to_wire": "piko.wire",
    "message_from_wire": "piko.wire",
    # registrations
    "ToolDefinition": "piko.registries",
    "ProviderApi": "piko.registries",
    "CommandDefinition": "piko.registries",
    "CliCommandDefinition": "piko.registries",
    "FlagDefinition": "piko.registries",
    "ShortcutDefinition": "piko.registries",
    "ModeDefinition": "piko.registries",
    "MessageRendererDefinition": "piko.registries",
    "ResourceLoaderDefinition": "piko.registries",
    "PackageSourceDefinition": "piko.registries",
    "ProviderConfig": "piko.model_registry",
    # streaming
    "Context": "piko.streaming",
    "StreamOptions": "piko.streaming",
    "StreamEvent": "piko.streaming",
    "ToolSpec": "piko.streaming",
    "AbortSignal": "piko.abort",
    "AbortController": "piko.abort",
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
