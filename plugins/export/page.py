"""The whole export page: header, session tree, conversation, inline CSS and script, strict CSP.

Everything is in the one file: styles and the script inline, images as data URIs. The page's
Content-Security-Policy forbids every network load and admits only its own script (by hash), so
even text that slipped past escaping could neither run nor fetch anything. Without the script
the page still shows the current branch; the script adds branch navigation from the tree,
toggles and local times.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from importlib import resources
from typing import Any

from piko.plugins.export.blocks import esc
from piko.plugins.export.blocks import format_tokens
from piko.plugins.export.blocks import truncate
from piko.plugins.export.entries import render_entry
from piko.plugins.export.entries import tree_summary
from piko.plugins.export.session_view import SessionView
from piko.version import __version__

__all__ = ["render_page"]

MAX_DEPTH_CLASS = 24


@functools.lru_cache(maxsize=8)
def _asset(name: str) -> str:
    return resources.files("piko.plugins.export").joinpath("assets", name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def _styles() -> str:
    from piko.plugins.export.theme import theme_css

    depth = "\n".join(
        f".tree li.d{n} a {{ padding-left: {10 + 14 * n}px; }}" for n in range(1, MAX_DEPTH_CLASS + 1)
    )
    return f"{theme_css()}\n{_asset('page.css')}\n{depth}\n"


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def _full_time(timestamp: Any) -> str:
    from piko.sessions.ids import ms_from_iso

    ms = ms_from_iso(timestamp)
    if ms is None:
        return esc(timestamp) if isinstance(timestamp, str) and timestamp else "unknown"
    import time

    stamp = time.gmtime(ms / 1000)
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", stamp) + f".{ms % 1000:03d}Z"
    return f'<time class="full" datetime="{iso}">{time.strftime("%Y-%m-%d %H:%M:%S", stamp)} UTC</time>'


def _header(view: SessionView) -> str:
    stats = view.stats()
    title = view.name or "Session"
    messages = [
        f"{n} {what}"
        for n, what in (
            (stats.user, "user"),
            (stats.assistant, "assistant"),
            (stats.tool_results, "tool results"),
            (stats.custom, "custom"),
            (stats.compactions, "compactions"),
            (stats.branch_summaries, "branch summaries"),
        )
        if n
    ]
    tokens = [
        f"{mark}{format_tokens(n)}"
        for mark, n in (
            ("↑", stats.input),
            ("↓", stats.output),
            ("R", stats.cache_read),
            ("W", stats.cache_write),
        )
        if n
    ]
    rows = [
        ("Date", _full_time(view.header.get("timestamp"))),
        ("Directory", esc(view.header.get("cwd") or "unknown")),
        ("Models", esc(", ".join(stats.models) or "unknown")),
        ("Messages", esc(", ".join(messages) or "0")),
        ("Tool calls", esc(stats.tool_calls)),
        ("Tokens", esc(" ".join(tokens) or "0")),
        ("Cost", esc(f"${stats.cost:.3f}")),
        ("Entries", esc(f"{len(view.branch_ids)} on the current branch, {len(view.entries)} in all")),
    ]
    parent = view.header.get("parentSession")
    if isinstance(parent, str) and parent:
        rows.append(("Forked from", esc(parent)))
    info = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return (
        '<header class="session-header">'
        f"<h1>{esc(title)}</h1>"
        f'<div class="session-id">Session {esc(view.session_id or "unknown")}</div>'
        f'<dl class="info">{info}</dl>'
        '<div class="controls">'
        '<button type="button" data-action="thinking" title="Collapse or expand thinking (T)">Toggle thinking</button>'
        '<button type="button" data-action="output" title="Collapse or expand long tool output (O)">Toggle tool output</button>'
        '<button type="button" data-action="theme" title="Light, dark or as the system prefers">Theme: auto</button>'
        '<span class="hint">Click an entry in the tree to show its branch.</span>'
        "</div></header>"
    )


def _extras(view: SessionView, tools: list[dict[str, Any]] | None) -> str:
    out: list[str] = []
    if view.diagnostics:
        items = "".join(f"<li>{esc(d)}</li>" for d in view.diagnostics[:20])
        more = f"<li>… and {len(view.diagnostics) - 20} more</li>" if len(view.diagnostics) > 20 else ""
        out.append(
            f'<div class="diagnostics">Lines of the session file that could not be read:<ul>{items}{more}</ul></div>'
        )
    if view.system_prompt:
        lines = view.system_prompt.count("\n") + 1
        out.append(
            f'<details class="system-prompt"><summary>System prompt ({lines} lines)</summary>'
            f"<pre>{esc(view.system_prompt)}</pre></details>"
        )
    if tools:
        items = "".join(
            f'<div class="tool-item"><code>{esc(t.get("name", ""))}</code> '
            f'<span class="muted">{esc(truncate(str(t.get("description") or ""), 300))}</span></div>'
            for t in tools
        )
        out.append(f'<details class="tool-list"><summary>Tools ({len(tools)})</summary>{items}</details>')
    return "".join(out)


def _tree(view: SessionView) -> str:
    rows: list[str] = []
    for row in view.tree_rows():
        entry = row.entry
        kind, text = tree_summary(entry, view)
        label = view.labels.get(entry.id)
        label_html = f'<span class="tree-label">[{esc(label)}]</span> ' if label else ""
        classes = [f"k-{k}" for k in kind.split()]
        if row.depth:
            classes.append(f"d{min(row.depth, MAX_DEPTH_CLASS)}")
        if row.on_branch:
            classes.append("on-branch")
        if row.is_leaf:
            classes.append("is-leaf selected")
        rows.append(
            f'<li class="{" ".join(classes)}" data-id="{esc(entry.id)}" data-parent="{esc(entry.parent_id or "")}">'
            f'<a href="#e-{esc(entry.id)}" data-target="{esc(entry.id)}">{label_html}{text}</a></li>'
        )
    status = f"{len(view.branch_ids)} of {len(view.entries)} entries on the shown branch"
    return (
        '<nav id="sidebar" aria-label="Session tree">'
        '<div class="tree-tools"><input type="search" id="tree-search" placeholder="Search the tree" aria-label="Search the tree">'
        '<label><input type="checkbox" id="tree-all"> show label entries</label></div>'
        f'<ul class="tree" id="tree">{"".join(rows)}</ul>'
        f'<div class="tree-status" id="tree-status">{esc(status)}</div></nav>'
    )


def render_page(view: SessionView, tools: list[dict[str, Any]] | None = None) -> str:
    """The HTML page of a session view."""
    script = _asset("page.js")
    conversation = "".join(render_entry(entry, view) for entry in view.entries)
    if not view.entries:
        conversation = '<p class="muted">This session has no entries yet.</p>'
    title = f"{view.name} - pi session" if view.name else f"Session {view.session_id or 'export'}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en" class="no-js">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(_csp(script))}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="piko {esc(__version__)}">\n'
        f"<title>{esc(title)}</title>\n<style>\n{_styles()}</style>\n</head>\n"
        f'<body data-leaf="{esc(view.leaf_id or "")}">\n<div id="layout">\n{_tree(view)}\n'
        f'<main id="main">\n{_header(view)}\n{_extras(view, tools)}\n'
        f'<section id="conversation">\n{conversation}\n</section>\n</main>\n</div>\n'
        f"<script>{script}</script>\n</body>\n</html>\n"
    )
