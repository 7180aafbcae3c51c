"""Files the agent read and changed, gathered from ``read``/``write``/``edit`` tool calls and earlier summaries."""

from __future__ import annotations

import re
from typing import Any

from attrs import define
from attrs import field

from piko.data.messages import AssistantMessage
from piko.data.messages import ToolCall


@define
class FileOps:
    """Paths seen in tool calls, by kind (pi's ``FileOperations``)."""

    read: set[str] = field(factory=set)
    written: set[str] = field(factory=set)
    edited: set[str] = field(factory=set)

    def add_message(self, message: Any) -> None:
        """Record the paths of the ``read``/``write``/``edit`` calls of an assistant message."""
        if not isinstance(message, AssistantMessage):
            return
        for block in message.content:
            if not isinstance(block, ToolCall) or not isinstance(block.arguments, dict):
                continue
            path = block.arguments.get("path")
            if not isinstance(path, str) or not path:
                continue
            if block.name == "read":
                self.read.add(path)
            elif block.name == "write":
                self.written.add(path)
            elif block.name == "edit":
                self.edited.add(path)

    def add_details(self, details: Any) -> None:
        """Carry over the lists a previous summary stored in its ``details`` (``readFiles``/``modifiedFiles``)."""
        if not isinstance(details, dict):
            return
        read = details.get("readFiles")
        if isinstance(read, list):
            self.read.update(p for p in read if isinstance(p, str))
        modified = details.get("modifiedFiles")
        if isinstance(modified, list):
            self.edited.update(p for p in modified if isinstance(p, str))

    def lists(self) -> tuple[list[str], list[str]]:
        """``(read_only, modified)``, each sorted; a file both read and changed counts as modified."""
        modified = self.edited | self.written
        return sorted(self.read - modified, key=_js_order), sorted(modified, key=_js_order)

    def details(self) -> dict[str, list[str]]:
        """The ``details`` of a summary entry, as pi writes them."""
        read, modified = self.lists()
        return {"readFiles": read, "modifiedFiles": modified}


def _js_order(path: str) -> bytes:
    """Sort key matching JavaScript's default ``sort()`` (UTF-16 code unit order)."""
    return path.encode("utf-16-be", "surrogatepass")


def format_file_lists(read_files: list[str], modified_files: list[str]) -> str:
    """The file lists appended to a summary (``<read-files>``/``<modified-files>`` blocks), or ``""``."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


_TRAILING_LISTS = re.compile(r"(?:\s*<(read-files|modified-files)>\n.*?\n</\1>)+\s*\Z", re.DOTALL)


def strip_file_lists(summary: str) -> str:
    """``summary`` without the file lists :func:`format_file_lists` appended to it."""
    return _TRAILING_LISTS.sub("", summary)
