"""The message data model: content blocks, messages, usage and models, as attrs classes.

Attribute names are Python's snake_case; the JSON wire form (camelCase, exactly as pi writes
it) is produced and read by :mod:`piko.data.wire`. Every class keeps the wire fields it does not
know in ``extra`` so that a message read from pi and written back loses nothing.
"""

from __future__ import annotations

from typing import Any
from typing import ClassVar
from typing import Literal
from typing import TypeAlias

from attrs import define
from attrs import field

# "pending" (pi 1.6) only in the message_start of a message still streaming, never persisted
StopReason: TypeAlias = Literal["pending", "stop", "length", "toolUse", "error", "aborted"]
ThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]

# "xhigh" and (pi 1.6) "max" only where the model lists them; otherwise lowered to what it takes
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


def _extra() -> Any:
    return field(factory=dict, repr=False, eq=False)


class _Shown:
    """One ``__repr__`` and one ``__eq__`` for every class here, as attrs writes them:
    ``TextContent(text='hi')``, and equal when of the same class with equal fields (``extra``
    left out).

    attrs would compile both for each of the 18 classes, on every start: sharing the repr saves
    about 2 ms, sharing the eq 7.9 M instructions of ``import piko.data.messages`` (callgrind,
    273.2 M against 265.3 M with attrs and ``piko.lib.text`` imported before). Each class spells
    out ``@define(..., repr=False, eq=False)``: mypy's attrs plugin sees fields only through a
    direct ``define`` call, not through a name bound to one.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{a.name}={getattr(self, a.name)!r}"
            for a in self.__attrs_attrs__  # type: ignore[attr-defined]
            if a.repr
        )
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = _compared_fields(self.__class__)
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

    __hash__ = None  # type: ignore[assignment]  # mutable, like attrs' classes with their own eq


_COMPARED: dict[type, tuple[str, ...]] = {}


def _compared_fields(cls: type) -> tuple[str, ...]:
    names = _COMPARED.get(cls)
    if names is None:
        names = _COMPARED[cls] = tuple(a.name for a in cls.__attrs_attrs__ if a.eq)  # type: ignore[attr-defined]
    return names


class _Keyed(_Shown):
    """``obj["toolCallId"]`` / ``obj.get("tool_call_id")``: fields by pi's or Python's name.

    Extensions written from pi's reference index messages and blocks as objects of their wire
    form (``message["role"]``, ``block["type"]``); the same reads work here.
    """

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        from piko.lib.text import snake

        name = snake(key) if isinstance(key, str) else key
        try:
            return getattr(self, name)
        except (AttributeError, TypeError):
            raise KeyError(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]`` (camelCase or snake_case), or ``default`` when there is no such field."""
        try:
            return self[key]
        except KeyError:
            return default


class _Block(_Keyed):
    """A content block: ``block.type`` is its wire type (``"text"``, ``"toolCall"``, ...)."""

    __slots__ = ()
    TYPE: ClassVar[str] = ""

    @property
    def type(self) -> str:
        """The block's wire type (``"text"``, ``"thinking"``, ``"image"``, ``"toolCall"``)."""
        return self.TYPE


class _Message(_Keyed):
    """A message: ``message.role`` is its wire role (``"user"``, ``"toolResult"``, ...)."""

    __slots__ = ()
    ROLE: ClassVar[str] = ""

    @property
    def role(self) -> str:
        """The message's wire role (``"user"``, ``"assistant"``, ``"toolResult"``, ``"custom"``, ...)."""
        return self.ROLE


# ---------------------------------------------------------------------------
# Content blocks
# ---------------------------------------------------------------------------


@define(kw_only=True, slots=True, repr=False, eq=False)
class TextContent(_Block):
    """Plain text; ``text_signature`` is provider replay state (OpenAI responses ids)."""

    TYPE: ClassVar[str] = "text"
    text: str = ""
    text_signature: str | None = None
    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class ThinkingContent(_Block):
    """Model reasoning; ``thinking_signature`` is replayed to the provider that made it."""

    TYPE: ClassVar[str] = "thinking"
    thinking: str = ""
    thinking_signature: str | None = None
    redacted: bool | None = None
    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class ImageContent(_Block):
    """A base64-encoded image."""

    TYPE: ClassVar[str] = "image"
    data: str = ""
    mime_type: str = "image/png"
    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class ToolCall(_Block):
    """A tool invocation requested by the model; ``arguments`` is the parsed JSON object."""

    TYPE: ClassVar[str] = "toolCall"
    id: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(factory=dict)
    thought_signature: str | None = None
    extra: dict[str, Any] = _extra()


UserContentBlock: TypeAlias = TextContent | ImageContent
AssistantContentBlock: TypeAlias = TextContent | ThinkingContent | ToolCall
ContentBlock: TypeAlias = TextContent | ThinkingContent | ImageContent | ToolCall


# ---------------------------------------------------------------------------
# Usage and cost
# ---------------------------------------------------------------------------


@define(kw_only=True, slots=True, repr=False, eq=False)
class _ByTokenKind(_Shown):
    """An amount for each kind of token: the fields that costs and prices share, in pi's order."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0


@define(kw_only=True, slots=True, repr=False, eq=False)
class Cost(_ByTokenKind):
    """Dollar cost of one response, by token kind. ``total_from_provider`` (pi 1.6): ``total`` is the
    cost the provider billed (True) or an estimate from the catalog's prices (False; None, as in
    sessions from before pi 1.6, means the same)."""

    total: float = 0
    total_from_provider: bool | None = None
    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class Usage(_Shown):
    """Token counts of one response (``input`` excludes cache reads) and their cost.

    ``reasoning`` (pi 1.6) is how many of the ``output`` tokens were reasoning, where the provider
    says (already counted in ``output``: never add it again); None where it does not."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int | None = None
    total_tokens: int = 0
    cost: Cost = field(factory=Cost)
    extra: dict[str, Any] = _extra()


def combine_usage(first: Usage, second: Usage) -> Usage:
    """The sum of two usages (two requests made for one result), as pi 1.6 adds them:
    ``reasoning`` kept when either side reports it, and the total provider-billed only when both
    parts are."""
    a, b = first.cost, second.cost
    reasoning = None if first.reasoning is None and second.reasoning is None else (
        (first.reasoning or 0) + (second.reasoning or 0)
    )  # fmt: skip
    return Usage(
        input=first.input + second.input,
        output=first.output + second.output,
        cache_read=first.cache_read + second.cache_read,
        cache_write=first.cache_write + second.cache_write,
        reasoning=reasoning,
        total_tokens=first.total_tokens + second.total_tokens,
        cost=Cost(
            input=a.input + b.input,
            output=a.output + b.output,
            cache_read=a.cache_read + b.cache_read,
            cache_write=a.cache_write + b.cache_write,
            total=a.total + b.total,
            total_from_provider=a.total_from_provider is True and b.total_from_provider is True,
        ),
    )


# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------


@define(kw_only=True, slots=True, repr=False, eq=False)
class UserMessage(_Message):
    """What the user said: a string or text and image blocks."""

    ROLE: ClassVar[str] = "user"
    content: str | list[UserContentBlock] = field(factory=list)
    timestamp: int = 0
    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class AssistantMessage(_Message):
    """One model response, complete or (while streaming) partial."""

    ROLE: ClassVar[str] = "assistant"
    content: list[AssistantContentBlock] = field(factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = field(factory=Usage)
    stop_reason: StopReason = "stop"
    timestamp: int = 0
    response_id: str | None = None
    response_model: str | None = None
    error_message: str | None = None
    # pi 1.6: the provider's own stop reason, how long the response took, the level asked for
    raw_stop_reason: str | None = None
    duration_ms: int | None = None
    thinking_level: str | None = None
    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class ToolResultMessage(_Message):
    """The result of one tool call, sent back to the model."""

    ROLE: ClassVar[str] = "toolResult"
    tool_call_id: str = ""
    tool_name: str = ""
    content: list[UserContentBlock] = field(factory=list)
    details: Any = None
    is_error: bool = False
    duration_ms: int | None = None  # pi 1.6: how long the tool's execute took (None: it did not run)
    timestamp: int = 0
    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class BashExecutionMessage(_Message):
    """A command the user ran with ``!`` (or ``!!``, excluded from the model's context)."""

    ROLE: ClassVar[str] = "bashExecution"
    command: str = ""
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    timestamp: int = 0
    exclude_from_context: bool | None = None
    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class CustomMessage(_Message):
    """A message injected by an extension (``send_message``)."""

    ROLE: ClassVar[str] = "custom"
    custom_type: str = ""
    content: str | list[UserContentBlock] = ""
    display: bool = True
    details: Any = None
    timestamp: int = 0
    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class BranchSummaryMessage(_Message):
    """Summary of a branch the conversation came back from."""

    ROLE: ClassVar[str] = "branchSummary"
    summary: str = ""
    from_id: str = ""
    timestamp: int = 0
    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class CompactionSummaryMessage(_Message):
    """Summary standing in for compacted history."""

    ROLE: ClassVar[str] = "compactionSummary"
    summary: str = ""
    tokens_before: int = 0
    timestamp: int = 0
    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class UnknownMessage(_Message):
    """A message with a role this version does not know; kept verbatim in ``extra``."""

    ROLE: ClassVar[str] = ""
    role: str = ""
    extra: dict[str, Any] = _extra()


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
AgentMessage: TypeAlias = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
    | UnknownMessage
)


def message_role(message: AgentMessage) -> str:
    """The wire ``role`` of a message."""
    if isinstance(message, UnknownMessage):
        return message.role
    return message.ROLE


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------


@define(kw_only=True, slots=True, repr=False, eq=False)
class ModelCost(_ByTokenKind):
    """Prices in dollars per million tokens."""

    extra: dict[str, Any] = _extra()


@define(kw_only=True, slots=True, repr=False, eq=False)
class Model(_Shown):
    """A model a provider serves, with the API used to reach it."""

    id: str
    name: str = ""
    api: str = ""
    provider: str = ""
    base_url: str = ""
    reasoning: bool = False
    thinking_level_map: dict[str, str | None] | None = None
    input: list[str] = field(factory=lambda: ["text"])
    cost: ModelCost = field(factory=ModelCost)
    context_window: int = 128000
    max_tokens: int = 16384
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    extra: dict[str, Any] = _extra()

    @property
    def key(self) -> str:
        """``provider/id``, the unique name of a model."""
        return f"{self.provider}/{self.id}"


# ---------------------------------------------------------------------------
# Tool results as tools return them
# ---------------------------------------------------------------------------


@define(kw_only=True, slots=True, repr=False, eq=False)
class ToolResult(_Shown):
    """What a tool's ``execute`` returns (and what ``on_update`` receives while it runs).

    ``structured_content`` (pi 1.6's ``structuredContent``) is the result as data for programs
    (bash's output and exit code, an MCP tool's structured result); the model sees ``content``.
    It travels in ``tool_result`` and ``tool_execution_end``; the session keeps ``content`` and
    ``details`` only, as pi 1.6's does."""

    content: list[UserContentBlock] = field(factory=list)
    details: Any = None
    structured_content: Any = None
    is_error: bool = False


def text_of(content: str | list[Any]) -> str:
    """Concatenate the text blocks of a message's content."""
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))
