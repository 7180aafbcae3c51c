"""What piko adds to pi 0.73.1's records as pi 1.6 does, taken out again to compare with 0.73 transcripts.

The additions are strictly additive (a 0.73 client ignores them): the ``agent_settled`` and
``bash_execution_update`` events, the assistant message fields ``rawStopReason``, ``durationMs`` and
``thinkingLevel``, a tool result's ``durationMs`` (message and ``tool_execution_end``),
``agent_end``'s ``willRetry`` and the ``data.disposition`` of ``prompt``/``steer``/``follow_up``
responses, a usage's ``reasoning`` and its cost's ``totalFromProvider``, a tool result's
``structuredContent`` (in ``tool_execution_end``). One value changed rather than added: a streaming assistant message's ``message_start``
says ``stopReason: "pending"`` where 0.73 wrote ``"stop"``; it is put back. Comparing
our output with a 0.73 transcript after :func:`without_additions` shows everything else is
still pi 0.73.1's, key order and bytes included.
"""

from __future__ import annotations

import json
import re
from typing import Any

ADDED_EVENTS = ("agent_settled", "bash_execution_update")
ADDED_ASSISTANT_FIELDS = ("rawStopReason", "durationMs", "thinkingLevel")
# in an assistant message the three come together, in this order (get_state's thinkingLevel stays)
_FIELD = re.compile(r'(?:,"rawStopReason":"[^"]*")?,"durationMs":\d+,"thinkingLevel":"[^"]*"')
# a tool result's durationMs (before the message's timestamp, or last in tool_execution_end),
# agent_end's willRetry, and a prompt/steer/follow_up response's data
_OTHER_FIELDS = re.compile(
    r',"durationMs":\d+(?=,"timestamp"|\}$)|,"willRetry":(?:true|false)|,"data":\{"disposition":"[a-z]+"\}'
    r'|,"reasoning":\d+(?=,"totalTokens")|,"totalFromProvider":(?:true|false)'
)
DISPOSITION_COMMANDS = ("prompt", "steer", "follow_up")


_PENDING = '"stopReason":"pending"'


def without_additions(value: Any) -> Any:
    """``value`` (a record, a list of records, or anything inside one) without pi 1.6's additions."""
    if isinstance(value, list):
        return [without_additions(v) for v in value if not _added_record(v)]
    if isinstance(value, dict):
        out = {k: without_additions(v) for k, v in value.items() if not _added_field(value, k)}
        if out.get("role") == "assistant" and out.get("stopReason") == "pending":
            out["stopReason"] = "stop"  # what 0.73 wrote in message_start
        return out
    return value


def _added_field(record: dict[str, Any], key: str) -> bool:
    if key == "structuredContent" and "role" not in record:  # a tool's result
        return True
    if key == "reasoning" and "totalTokens" in record:  # a usage
        return True
    if key == "totalFromProvider" and "total" in record:  # a usage's cost
        return True
    role, kind = record.get("role"), record.get("type")
    if role == "assistant":
        return key in ADDED_ASSISTANT_FIELDS
    if key == "durationMs":
        return role == "toolResult" or kind == "tool_execution_end"
    if key == "willRetry":
        return kind == "agent_end"
    if key == "data" and kind == "response" and record.get("command") in DISPOSITION_COMMANDS:
        return isinstance(record[key], dict) and list(record[key]) == ["disposition"]
    return False


def _added_record(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in ADDED_EVENTS and "role" not in value


def lines_without_additions(lines: list[str]) -> list[str]:
    """Raw JSON lines without the added records and with the added fields cut out of the text."""
    return [
        _without_structured(_OTHER_FIELDS.sub("", _FIELD.sub("", line))).replace(
            _PENDING, '"stopReason":"stop"'
        )
        for line in lines
        if not any(line.startswith(f'{{"type":"{t}"') for t in ADDED_EVENTS)
    ]


_STRUCTURED = ',"structuredContent":'


def _without_structured(line: str) -> str:
    """``line`` without each ``,"structuredContent":<value>`` (the value read as JSON)."""
    while (start := line.find(_STRUCTURED)) != -1:
        _value, end = json.JSONDecoder().raw_decode(line, start + len(_STRUCTURED))
        line = line[:start] + line[end:]
    return line
