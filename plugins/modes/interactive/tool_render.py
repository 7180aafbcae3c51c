"""How tool calls look: pi's one-line summaries and collapsed/expanded results for the seven tools.

A tool box is the call line (``$ ls -la``, ``read src/x.py:10-20``, ``edit path``...) and, once
it ran, a preview of the result: bash shows the output's tail, read/write the first lines
(highlighted by file type), edit a coloured diff (``details.diff``), grep/find/ls their first
matches; ``Ctrl+O`` shows everything. A tool plugin may draw its own with
``render_call(args, theme)`` and ``render_result(result, options, theme)`` on its
``ToolDefinition`` (``options``: ``{"expanded", "is_partial", "is_error"}``); each returns a
rich renderable or text, ``None`` for the built-in look. omp's longer forms work too:
``render_call(args, options, theme)`` (``options`` is the theme) and ``render_result(result,
options, theme, args)``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import time
from typing import Any

from rich.console import Group
from rich.padding import Padding
from rich.style import Style
from rich.text import Text

from piko.lib.jsnumbers import format_size
from piko.plugins.modes.interactive.theme import Theme
from piko.plugins.modes.interactive.tool_view import ToolView
from piko.plugins.modes.interactive.tool_view import shorten_path
from piko.plugins.modes.interactive.tool_view import text_output

_DIFF_LINE = re.compile(r"^([+\- ])(\s*\d*)\s(.*)$")

LANGUAGES = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".ts": "typescript",
    ".tsx": "tsx", ".jsx": "jsx", ".json": "json", ".md": "markdown", ".sh": "bash", ".bash": "bash",
    ".zsh": "bash", ".rs": "rust", ".go": "go", ".java": "java", ".c": "c", ".h": "c", ".cpp": "cpp",
    ".hpp": "cpp", ".cc": "cpp", ".rb": "ruby", ".php": "php", ".html": "html", ".css": "css",
    ".scss": "scss", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".sql": "sql", ".swift": "swift",
    ".kt": "kotlin", ".lua": "lua", ".xml": "xml", ".dockerfile": "docker", ".ini": "ini", ".cs": "csharp",
}  # fmt: skip


def _str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return None


class ToolRenderer:
    """Draws :class:`ToolView` objects in a theme; ``expand_key`` is the key shown in hints."""

    def __init__(self, theme: Theme, *, expand_key: str = "ctrl+o", cwd: str = ".") -> None:
        self.theme = theme
        self.expand_key = expand_key
        self.cwd = cwd

    # -- helpers -------------------------------------------------------------------------------

    def _t(self, text: str, token: str, *, bold: bool = False, italic: bool = False) -> Text:
        return Text(text, style=self.theme.fg_style(token, bold=bold, italic=italic))

    def _hint(self, text: str) -> Text:
        """``... (N more lines, ctrl+o to expand)`` in pi's muted/dim colours."""
        return Text.assemble(
            self._t(text, "muted"), self._t(self.expand_key, "dim"), self._t(" to expand)", "muted")
        )

    def _invalid(self) -> Text:
        return self._t("[invalid arg]", "error")

    def _path(self, value: Any, default: str = "") -> Text:
        raw = _str(value)
        if raw is None:
            return self._invalid()
        if not raw and not default:
            return self._t("...", "toolOutput")
        return self._t(shorten_path(raw or default), "accent")

    def _lines_preview(
        self, lines: list[str], limit: int, expanded: bool, *, total_note: str = ""
    ) -> list[Any]:
        shown = lines if expanded else lines[:limit]
        out: list[Any] = [self._t(line.replace("\t", "   "), "toolOutput") for line in shown]
        remaining = len(lines) - len(shown)
        if remaining > 0:
            out.append(self._hint(f"... ({remaining} more lines{total_note}, "))
        return out

    def _highlighted(
        self, text: str, path: str, limit: int, expanded: bool, *, total_note: bool = False
    ) -> list[Any]:
        lines = text.replace("\t", "   ").split("\n")
        while lines and not lines[-1].strip():
            lines.pop()
        shown = lines if expanded else lines[:limit]
        language = LANGUAGES.get(os.path.splitext(path)[1].lower())
        out: list[Any] = []
        if language and shown:
            from rich.syntax import Syntax

            try:
                out.append(Syntax("\n".join(shown), language, theme=self.theme.syntax_theme, word_wrap=True))
            except Exception:
                out.extend(self._t(line, "toolOutput") for line in shown)
        else:
            out.extend(self._t(line, "toolOutput") for line in shown)
        remaining = len(lines) - len(shown)
        if remaining > 0:
            note = f", {len(lines)} total" if total_note else ""
            out.append(self._hint(f"... ({remaining} more lines{note}, "))
        return out

    def _truncation_warning(self, details: Any, what: str = "") -> Text | None:
        if not isinstance(details, dict):
            return None
        truncation = details.get("truncation")
        if not isinstance(truncation, dict) or not truncation.get("truncated"):
            return None
        limit = format_size(int(truncation.get("maxBytes") or 50 * 1024))
        if truncation.get("firstLineExceedsLimit"):
            return self._t(f"[First line exceeds {limit} limit]", "warning")
        if truncation.get("truncatedBy") == "lines":
            return self._t(
                f"[Truncated: showing {truncation.get('outputLines')} of {truncation.get('totalLines')} lines{what}]",
                "warning",
            )
        return self._t(f"[Truncated: {truncation.get('outputLines')} lines shown ({limit} limit)]", "warning")

    # -- call lines ------------------------------------------------------------------------------

    def call_line(self, view: ToolView) -> Any:
        args = view.args if isinstance(view.args, dict) else {}
        title = lambda name: self._t(name, "toolTitle", bold=True)  # noqa: E731
        name = view.name
        if name == "bash":
            command = _str(args.get("command"))
            shown = (
                self._invalid()
                if command is None
                else (Text(command) if command else self._t("...", "toolOutput"))
            )
            line = Text.assemble(title("$ "), shown)
            line.stylize(self.theme.fg_style("toolTitle", bold=True), 0, len(line))
            if args.get("timeout"):
                line.append_text(self._t(f" (timeout {args['timeout']}s)", "muted"))
            return line
        if name in ("read", "write", "edit"):
            line = Text.assemble(title(name), " ", self._path(args.get("path", args.get("file_path"))))
            if name == "read" and (args.get("offset") is not None or args.get("limit") is not None):
                start = args.get("offset") or 1
                end = f"-{start + int(args['limit']) - 1}" if isinstance(args.get("limit"), int) else ""
                line.append_text(self._t(f":{start}{end}", "warning"))
            return line
        if name in ("grep", "find"):  # grep shows /pattern/, its glob, and "limit N"; find "(limit N)"
            pattern = _str(args.get("pattern"))
            pattern_text = f"/{pattern}/" if name == "grep" else pattern
            line = Text.assemble(
                title(name), " ",
                self._invalid() if pattern is None else self._t(pattern_text or "", "accent"),
                self._t(f" in {shorten_path(_str(args.get('path')) or '.')}", "toolOutput"),
            )  # fmt: skip
            if name == "grep" and args.get("glob"):
                line.append_text(self._t(f" ({args['glob']})", "toolOutput"))
            if args.get("limit") is not None:
                limit = f" limit {args['limit']}" if name == "grep" else f" (limit {args['limit']})"
                line.append_text(self._t(limit, "toolOutput"))
            return line
        if name == "ls":
            line = Text.assemble(title("ls"), " ", self._path(args.get("path"), "."))
            if args.get("limit") is not None:
                line.append_text(self._t(f" (limit {args['limit']})", "toolOutput"))
            return line
        line = title(name)
        if args:
            try:
                summary = json.dumps(args, ensure_ascii=False)
            except (TypeError, ValueError):
                summary = str(args)
            if len(summary) > 200:
                summary = summary[:197] + "..."
            line.append_text(self._t(" " + summary, "muted"))
        return line

    # -- results ---------------------------------------------------------------------------------

    def result_parts(self, view: ToolView, expanded: bool) -> list[Any]:
        """What is shown under the call line (may be empty)."""
        name = view.name
        args = view.args if isinstance(view.args, dict) else {}
        output = text_output(view.content) if view.has_result else ""
        details = view.details if isinstance(view.details, dict) else {}
        parts: list[Any] = []
        if name == "bash":
            body = output.strip()
            if body:
                lines = body.split("\n")
                if expanded or len(lines) <= 5:
                    parts.extend(self._t(line, "toolOutput") for line in lines)
                else:
                    parts.append(self._hint(f"... ({len(lines) - 5} earlier lines, "))
                    parts.extend(self._t(line, "toolOutput") for line in lines[-5:])
            warnings = []
            if details.get("fullOutputPath"):
                warnings.append(f"Full output: {details['fullOutputPath']}")
            truncation = details.get("truncation")
            if isinstance(truncation, dict) and truncation.get("truncated"):
                if truncation.get("truncatedBy") == "lines":
                    warnings.append(
                        f"Truncated: showing {truncation.get('outputLines')} of {truncation.get('totalLines')} lines"
                    )
                else:
                    limit = format_size(int(truncation.get("maxBytes") or 50 * 1024))
                    warnings.append(f"Truncated: {truncation.get('outputLines')} lines shown ({limit} limit)")
            if warnings:
                parts += [Text(""), self._t(f"[{'. '.join(warnings)}]", "warning")]
            if view.started_at is not None:
                end = view.ended_at or time.monotonic()
                label = "Elapsed" if view.is_partial else "Took"
                parts += [Text(""), self._t(f"{label} {end - view.started_at:.1f}s", "muted")]
            return self._spaced(parts) if body else parts
        if not view.has_result:
            if name == "write":
                return self._spaced(self._write_preview(args, expanded))
            return []
        if view.is_error and name not in ("bash",):
            if name == "write":
                parts.extend(self._write_preview(args, expanded))
            parts.append(self._t(output.strip() or "Error", "error"))
            return self._spaced(parts)
        if name == "read":
            path = _str(args.get("path", args.get("file_path"))) or ""
            parts.extend(self._highlighted(output, path, 10, expanded))
            warning = self._truncation_warning(details, "")
            if warning is not None:
                parts.append(warning)
        elif name == "write":
            parts.extend(self._write_preview(args, expanded))
        elif name == "edit":
            diff = details.get("diff")
            if isinstance(diff, str) and diff:
                parts.append(self.diff(diff))
        elif name in ("grep", "find", "ls"):
            body = output.strip()
            preview = {"grep": 15, "find": 20, "ls": 20}[name]
            if body:
                parts.extend(self._lines_preview(body.split("\n"), preview, expanded))
            notes = []
            key = {"grep": "matchLimitReached", "find": "resultLimitReached", "ls": "entryLimitReached"}[name]
            unit = {"grep": "matches", "find": "results", "ls": "entries"}[name]
            if details.get(key):
                notes.append(f"{details[key]} {unit} limit")
            truncation = details.get("truncation")
            if isinstance(truncation, dict) and truncation.get("truncated"):
                notes.append(f"{format_size(int(truncation.get('maxBytes') or 50 * 1024))} limit")
            if name == "grep" and details.get("linesTruncated"):
                notes.append("some lines truncated")
            if notes:
                parts.append(self._t(f"[Truncated: {', '.join(notes)}]", "warning"))
        else:
            body = output.strip()
            if body:
                parts.extend(self._lines_preview(body.split("\n"), 10, expanded))
        return self._spaced(parts)

    def _write_preview(self, args: dict[str, Any], expanded: bool) -> list[Any]:
        content = _str(args.get("content"))
        if content is None:
            return [self._t("[invalid content arg - expected string]", "error")]
        if not content:
            return []
        path = _str(args.get("path", args.get("file_path"))) or ""
        return self._highlighted(content.replace("\r", ""), path, 10, expanded, total_note=True)

    @staticmethod
    def _spaced(parts: list[Any]) -> list[Any]:
        return [Text(""), *parts] if parts else []

    def diff(self, diff: str) -> Any:
        """pi's coloured diff: removed red, added green, context grey; changed words inverted."""
        lines = diff.split("\n")
        out: list[Text] = []
        i = 0
        while i < len(lines):
            match = _DIFF_LINE.match(lines[i])
            if match is None:
                out.append(self._t(lines[i], "toolDiffContext"))
                i += 1
                continue
            prefix = match.group(1)
            if prefix == "-":
                removed = []
                while i < len(lines) and (m := _DIFF_LINE.match(lines[i])) and m.group(1) == "-":
                    removed.append(m)
                    i += 1
                added = []
                while i < len(lines) and (m := _DIFF_LINE.match(lines[i])) and m.group(1) == "+":
                    added.append(m)
                    i += 1
                if len(removed) == 1 and len(added) == 1:
                    old, new = self._intraline(removed[0].group(3), added[0].group(3))
                    out.append(self._diff_line(removed[0], "toolDiffRemoved", old))
                    out.append(self._diff_line(added[0], "toolDiffAdded", new))
                else:
                    out.extend(self._diff_line(m, "toolDiffRemoved") for m in removed)
                    out.extend(self._diff_line(m, "toolDiffAdded") for m in added)
            elif prefix == "+":
                out.append(self._diff_line(match, "toolDiffAdded"))
                i += 1
            else:
                out.append(self._diff_line(match, "toolDiffContext"))
                i += 1
        return Group(*out)

    def _diff_line(self, match: re.Match[str], token: str, body: Text | None = None) -> Text:
        text = self._t(f"{match.group(1)}{match.group(2)} ", token)
        text.append_text(body if body is not None else self._t(match.group(3).replace("\t", "   "), token))
        return text

    def _intraline(self, old: str, new: str) -> tuple[Text, Text]:
        old_words = re.findall(r"\s+|\w+|[^\w\s]", old.replace("\t", "   "))
        new_words = re.findall(r"\s+|\w+|[^\w\s]", new.replace("\t", "   "))
        removed = self._t("", "toolDiffRemoved")
        added = self._t("", "toolDiffAdded")
        red = self.theme.fg_style("toolDiffRemoved")
        green = self.theme.fg_style("toolDiffAdded")
        matcher = difflib.SequenceMatcher(a=old_words, b=new_words, autojunk=False)
        for op, a0, a1, b0, b1 in matcher.get_opcodes():
            old_part, new_part = "".join(old_words[a0:a1]), "".join(new_words[b0:b1])
            if op == "equal":
                removed.append(old_part, red)
                added.append(new_part, green)
                continue
            for part, target, style in ((old_part, removed, red), (new_part, added, green)):
                lead = part[: len(part) - len(part.lstrip())]
                target.append(lead, style)
                if part[len(lead) :]:
                    target.append(part[len(lead) :], style + Style(reverse=True))
        return removed, added

    # -- the whole box ---------------------------------------------------------------------------

    def render(self, view: ToolView, expanded: bool, definition: Any = None) -> Any:
        """The tool box: call line and result on the pending/success/error background."""
        call = None
        result: list[Any] | None = None
        if definition is not None and getattr(definition, "render_call", None):
            # omp's render_call(args, options, theme): its options answer the theme API
            wide = _takes(definition.render_call, 3)
            call = _plugin_call(
                definition.render_call, view.args, self.theme, *([self.theme] if wide else [])
            )
        if definition is not None and getattr(definition, "render_result", None) and view.has_result:
            rendered = _plugin_call(
                definition.render_result,
                {"content": view.content, "details": view.details, "is_error": view.is_error},
                {"expanded": expanded, "is_partial": view.is_partial, "is_error": view.is_error},
                self.theme,
                *([view.args] if _takes(definition.render_result, 4) else []),  # omp's 4th: the args
            )
            if rendered is not None:
                result = [Text(""), rendered]
        if call is None:
            call = self.call_line(view)
        if result is None:
            result = self.result_parts(view, expanded)
        if not view.has_result or view.is_partial:
            bg = "toolPendingBg"
        else:
            bg = "toolErrorBg" if view.is_error else "toolSuccessBg"
        return Padding(Group(call, *result), (1, 1), style=self.theme.bg_style(bg), expand=True)


def _takes(function: Any, count: int) -> bool:
    """Whether ``function`` accepts ``count`` positional arguments."""
    import inspect

    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in parameters if p.kind in positional) >= count


def _plugin_call(function: Any, *args: Any) -> Any:
    """A plugin's renderer; text becomes ``Text``, errors and ``None`` mean the built-in look."""
    try:
        value = function(*args)
    except Exception:
        return None
    if value is None:
        return None
    if isinstance(value, str):
        return Text.from_ansi(value)
    return value
