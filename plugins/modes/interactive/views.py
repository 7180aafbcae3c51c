"""How messages other than streamed answers look: user messages, notices, summaries, custom messages.

Each function returns a rich renderable in pi's style: user messages on the ``userMessageBg``
background, extension messages on ``customMessageBg`` under a ``[type]`` label (or drawn by
the plugin's message renderer), compaction and branch summaries collapsed to one line unless
expanded, ``/skill:name`` invocations as a ``[skill]`` block, and dim/yellow/red notices.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Group
from rich.padding import Padding
from rich.text import Text

from piko.plugins.modes.interactive.theme import Theme

_SKILL = re.compile(r'^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n</skill>(?:\n\n([\s\S]+))?$')


def status_line(theme: Theme, text: str) -> Any:
    return Padding(Text(text, style=theme.fg_style("dim")), (0, 1))


def warning_line(theme: Theme, text: str) -> Any:
    return Padding(Text(f"Warning: {text}", style=theme.fg_style("warning")), (0, 1))


def error_line(theme: Theme, text: str, *, prefix: bool = True) -> Any:
    return Padding(Text(f"Error: {text}" if prefix else text, style=theme.fg_style("error")), (0, 1))


def _markdown(theme: Theme, text: str, token: str) -> Any:
    from piko.plugins.modes.interactive.markdown import PikoMarkdown

    color = theme.color(token)
    return PikoMarkdown(text, theme, style=color or "none")


def user_message(theme: Theme, text: str, *, expanded: bool = False, expand_key: str = "ctrl+o") -> Any:
    """A user message box; a ``<skill>`` block shows as pi's collapsible ``[skill]`` entry."""
    skill = _SKILL.match(text)
    if skill is not None:
        name, _location, content, rest = skill.groups()
        label = Text("[skill] ", style=theme.fg_style("customMessageLabel", bold=True))
        if expanded:
            body: Any = Group(
                label + Text(name, style=theme.fg_style("customMessageText")),
                Text(""),
                _markdown(theme, content, "customMessageText"),
            )
        else:
            body = (
                label
                + Text(name, style=theme.fg_style("customMessageText"))
                + Text(f" ({expand_key} to expand)", style=theme.fg_style("dim"))
            )
        parts: list[Any] = [Padding(body, (1, 1), style=theme.bg_style("customMessageBg"), expand=True)]
        if rest and rest.strip():
            parts += [Text(""), _user_box(theme, rest.strip())]
        return Group(*parts)
    return _user_box(theme, text)


def _user_box(theme: Theme, text: str) -> Any:
    return Padding(
        _markdown(theme, text, "userMessageText"), (1, 1), style=theme.bg_style("userMessageBg"), expand=True
    )


def labeled_box(theme: Theme, label: str, body: Any) -> Any:
    head = Text(f"[{label}]", style=theme.fg_style("customMessageLabel", bold=True))
    return Padding(Group(head, Text(""), body), (1, 1), style=theme.bg_style("customMessageBg"), expand=True)


def custom_message(
    theme: Theme, message: Any, *, expanded: bool, renderer: Any = None, transform: Any = None
) -> Any:
    """An extension's message: its renderer's output, else ``[type]`` and the text (``transform``:
    the extensions' markdown transformers)."""
    if renderer is not None:
        try:
            rendered = renderer(message, {"expanded": expanded}, theme)
        except Exception:
            rendered = None
        if rendered is not None:
            return Text.from_ansi(rendered) if isinstance(rendered, str) else rendered
    content = message.content
    if isinstance(content, str):
        text = content
    else:
        text = "\n".join(getattr(b, "text", "") for b in content if getattr(b, "TYPE", "") == "text")
    if transform is not None:
        text = transform(text)
    return labeled_box(theme, message.custom_type, _markdown(theme, text, "customMessageText"))


def compaction_summary(
    theme: Theme, summary: str, tokens_before: int, *, expanded: bool, expand_key: str
) -> Any:
    tokens = f"{tokens_before:,}"
    if expanded:
        body: Any = _markdown(theme, f"**Compacted from {tokens} tokens**\n\n{summary}", "customMessageText")
    else:
        body = Text.assemble(
            (f"Compacted from {tokens} tokens (", theme.fg_style("customMessageText")),
            (expand_key, theme.fg_style("dim")),
            (" to expand)", theme.fg_style("customMessageText")),
        )
    return labeled_box(theme, "compaction", body)


def branch_summary(theme: Theme, summary: str, *, expanded: bool, expand_key: str) -> Any:
    if expanded:
        body: Any = _markdown(theme, f"**Branch Summary**\n\n{summary}", "customMessageText")
    else:
        body = Text.assemble(
            ("Branch summary (", theme.fg_style("customMessageText")),
            (expand_key, theme.fg_style("dim")),
            (" to expand)", theme.fg_style("customMessageText")),
        )
    return labeled_box(theme, "branch", body)


def key_hint(theme: Theme, key: str, text: str) -> Text:
    return Text.assemble((key, theme.fg_style("dim")), (f" {text}", theme.fg_style("muted")))


def header(theme: Theme, version: str, keys: dict[str, str], *, expanded: bool) -> Any:
    """The start-up header: name and version, the main keys, a pointer to more."""
    logo = Text.assemble(
        ("piko", theme.fg_style("accent", bold=True)), (f" v{version}", theme.fg_style("dim"))
    )
    dot = Text(" · ", style=theme.fg_style("muted"))
    if expanded:
        rows = [
            (keys["app.interrupt"], "to interrupt"),
            (keys["app.clear"], "to clear"),
            (f"{keys['app.clear']} twice", "to exit"),
            (keys["app.exit"], "to exit (empty)"),
            (keys["app.suspend"], "to suspend"),
            (keys["tui.editor.deleteToLineEnd"], "to delete to end"),
            (keys["app.thinking.cycle"], "to cycle thinking level"),
            (f"{keys['app.model.cycleForward']}/{keys['app.model.cycleBackward']}", "to cycle models"),
            (keys["app.model.select"], "to select model"),
            (keys["app.tools.expand"], "to expand tools"),
            (keys["app.thinking.toggle"], "to expand thinking"),
            (keys["app.editor.external"], "for external editor"),
            ("/", "for commands"),
            ("!", "to run bash"),
            ("!!", "to run bash (no context)"),
            (keys["app.message.followUp"], "to queue follow-up"),
            (keys["app.message.dequeue"], "to edit all queued messages"),
            (keys["app.clipboard.pasteImage"], "to paste image"),
            ("drop files", "to attach"),
        ]
        lines: list[Any] = [logo, *[key_hint(theme, k, t) for k, t in rows if k]]
    else:
        compact = [
            key_hint(theme, keys["app.interrupt"], "interrupt"),
            key_hint(theme, f"{keys['app.clear']}/{keys['app.exit']}", "clear/exit"),
            key_hint(theme, "/", "commands"),
            key_hint(theme, "!", "bash"),
            key_hint(theme, keys["app.tools.expand"], "more"),
        ]
        line = Text()
        for index, part in enumerate(compact):
            if index:
                line.append_text(dot)
            line.append_text(part)
        lines = [
            logo,
            line,
            Text(
                f"Press {keys['app.tools.expand']} to show full startup help and loaded resources.",
                style=theme.fg_style("dim"),
            ),
        ]
    lines += [
        Text(""),
        Text(
            "piko can explain its own features and look up its docs. Ask it how to use or extend it.",
            style=theme.fg_style("dim"),
        ),
    ]
    return Padding(Group(*lines), (0, 1))


def resource_section(theme: Theme, name: str, items: list[str], *, color: str = "mdHeading") -> Any:
    head = Text(f"[{name}]", style=theme.fg_style(color))
    body = Text("  " + ", ".join(items), style=theme.fg_style("dim"))
    return Group(head, body)
