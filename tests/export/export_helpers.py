"""Helpers of the export tests: a builder of session files in pi's format, and an HTML inspector."""

from __future__ import annotations

import base64
import io
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RICH = REPO / "tests" / "session" / "fixtures" / "pi_rich" / "session.jsonl"
SAMPLES = REPO / "tests" / "session" / "fixtures" / "pi_samples"


def png_base64(width: int = 24, height: int = 16, color: tuple[int, int, int] = (220, 40, 40)) -> str:
    """A real PNG (made with Pillow) as base64."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


class SessionFile:
    """Writes a v3 session file entry by entry, as pi lays its lines out; ids are ``e1``, ``e2``..."""

    def __init__(self, path: Path, session_id: str = "01a22ab5-0000-7000-8000-000000000001") -> None:
        self.path = path
        self.header: dict[str, Any] = {
            "type": "session",
            "version": 3,
            "id": session_id,
            "timestamp": "2026-11-30T10:00:00.000Z",
            "cwd": "/home/alice/project",
        }
        self.entries: list[dict[str, Any]] = []
        self.leaf: str | None = None
        self.clock = 0

    def add(self, entry_type: str, parent: str | None = "", **fields: Any) -> str:
        entry_id = fields.pop("id", None) or f"e{len(self.entries) + 1}"
        self.clock += 1
        entry = {
            "type": entry_type,
            "id": entry_id,
            "parentId": self.leaf if parent == "" else parent,
            "timestamp": f"2026-11-30T10:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z",
            **fields,
        }
        self.entries.append(entry)
        self.leaf = entry_id
        return entry_id

    def message(self, message: dict[str, Any], parent: str | None = "", **fields: Any) -> str:
        message.setdefault("timestamp", 1796032800000 + len(self.entries) * 1000)
        return self.add("message", parent, message=message, **fields)

    def user(self, content: Any, parent: str | None = "") -> str:
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        return self.message({"role": "user", "content": content}, parent)

    def assistant(self, *blocks: dict[str, Any], parent: str | None = "", **fields: Any) -> str:
        message = {
            "role": "assistant",
            "content": list(blocks),
            "api": "openai-completions",
            "provider": "mock",
            "model": "mock-1",
            "usage": {
                "input": 1200,
                "output": 300,
                "cacheRead": 50,
                "cacheWrite": 0,
                "totalTokens": 1550,
                "cost": {
                    "input": 0.0036,
                    "output": 0.0045,
                    "cacheRead": 0.0001,
                    "cacheWrite": 0,
                    "total": 0.0082,
                },
            },
            "stopReason": "toolUse" if any(b.get("type") == "toolCall" for b in blocks) else "stop",
        }
        message.update(fields)
        return self.message(message, parent)

    def tool_result(
        self,
        call_id: str,
        name: str,
        text: str = "",
        *,
        images: list[str] = (),
        details: Any = None,
        error: bool = False,
    ) -> str:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "image", "data": data, "mimeType": "image/png"} for data in images]
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": content,
        }
        if details is not None:
            message["details"] = details
        message["isError"] = error
        return self.message(message)

    def write(self) -> Path:
        lines = [json.dumps(self.header, ensure_ascii=False)]
        lines += [json.dumps(e, ensure_ascii=False) for e in self.entries]
        self.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return self.path


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


class Page(HTMLParser):
    """A parsed export page: every element with its attributes, the text, the scripts."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.html = html
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[str] = []
        self.text_parts: list[str] = []
        self._in_script = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.text_parts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    def find(self, tag: str | None = None, **attrs: str) -> list[dict[str, str]]:
        """Elements of ``tag`` whose attributes contain ``attrs`` (``class_`` matches one class)."""
        out = []
        for name, element_attrs in self.elements:
            if tag is not None and name != tag:
                continue
            ok = True
            for key, value in attrs.items():
                if key == "class_":
                    ok = value in element_attrs.get("class", "").split()
                else:
                    ok = element_attrs.get(key) == value
                if not ok:
                    break
            if ok:
                out.append(element_attrs)
        return out

    def entry(self, entry_id: str) -> dict[str, str]:
        found = self.find(id=f"e-{entry_id}")
        assert len(found) == 1, f"entry {entry_id}: {len(found)} elements"
        return found[0]
