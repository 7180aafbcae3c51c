"""Extensions' markdown transformers (pi 1.6's ``pi.register_markdown_transformer``) for the transcript.

``transformer(markdown, context)`` returns the markdown to draw; ``context`` has ``message_type``
(``"user"``, ``"assistant"``, ``"assistant-thinking"``), ``is_streaming``, ``available_width``,
``message_id`` and ``timestamp`` (also as ``context["messageType"]``...). Transformers run in load
order, each on what the one before returned, on the surfaces its ``{"messageTypes": [...]}`` names
(by default the three above). One that fails is skipped: the markdown so far goes on. Display
only: the message itself is unchanged.
"""

from __future__ import annotations

import logging
from typing import Any

from piko.extensions.extension_api import registered_displays

log = logging.getLogger(__name__)

DEFAULT_TYPES = ("user", "assistant", "assistant-thinking")


class TransformContext:
    """What a transformer is told about the markdown it gets."""

    _NAMES = {
        "messageType": "message_type",
        "isStreaming": "is_streaming",
        "availableWidth": "available_width",
        "messageId": "message_id",
    }

    def __init__(self, message_type: str, is_streaming: bool, available_width: int) -> None:
        self.message_type = message_type
        self.is_streaming = is_streaming
        self.available_width = available_width
        self.message_id: str | None = None
        self.timestamp: str | None = None

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._NAMES.get(key, key))

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, self._NAMES.get(key, key), default)


def _types(options: Any) -> tuple[str, ...]:
    if isinstance(options, dict):
        given = options.get("messageTypes", options.get("message_types"))
    else:
        given = getattr(options, "message_types", None)
    return tuple(str(t) for t in given) if isinstance(given, (list, tuple)) else DEFAULT_TYPES


def transform(app: Any, markdown: str, message_type: str, *, streaming: bool, width: int) -> str:
    """``markdown`` after every transformer that runs on ``message_type``."""
    registered = registered_displays(app, "markdown_transformer")
    if not registered:
        return markdown
    context = TransformContext(message_type, streaming, width)
    for transformer, options in registered:
        if message_type not in _types(options):
            continue
        try:
            result = transformer(markdown, context)
        except Exception as exc:
            log.debug("markdown transformer failed: %s", exc)  # not on the terminal: it would tear the screen
            continue
        if isinstance(result, str):
            markdown = result
    return markdown


def has_transformers(app: Any) -> bool:
    """Whether any extension registered a transformer (nothing to do otherwise)."""
    return bool(registered_displays(app, "markdown_transformer"))
