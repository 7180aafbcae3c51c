"""The export's two colour schemes as CSS: light by default, dark when the reader's system prefers it.

The reader can also pick one with the page's theme button (``data-theme`` on ``<html>``). Code
colours come from pygments styles, scoped the same way.
"""

from __future__ import annotations

__all__ = ["DARK", "LIGHT", "theme_css"]

LIGHT: dict[str, str] = {
    "bg": "#f5f6f8",
    "panel": "#ffffff",
    "sidebar": "#eceff3",
    "text": "#1d232b",
    "muted": "#65707d",
    "border": "#d5dbe2",
    "accent": "#1f5fbf",
    "user-bg": "#e8f0fd",
    "tool-bg": "#f3f5f7",
    "ok": "#237a3b",
    "err": "#c42b2b",
    "warn": "#8a6100",
    "add-bg": "#e3f7e8",
    "add-fg": "#17612d",
    "del-bg": "#fde8e8",
    "del-fg": "#8c1b1b",
    "summary-bg": "#fdf6dc",
    "custom-bg": "#f2ecfc",
    "thinking": "#6a7480",
    "branch": "#dfe8f7",
    "code-bg": "#eef1f4",
}

DARK: dict[str, str] = {
    "bg": "#111418",
    "panel": "#191d23",
    "sidebar": "#15181d",
    "text": "#e2e7ed",
    "muted": "#8c96a2",
    "border": "#2e353e",
    "accent": "#6aa5ff",
    "user-bg": "#1b2a40",
    "tool-bg": "#20252c",
    "ok": "#4cc46a",
    "err": "#ff6b63",
    "warn": "#e0b041",
    "add-bg": "#15301f",
    "add-fg": "#85e3a0",
    "del-bg": "#3a1a1c",
    "del-fg": "#ffaaa3",
    "summary-bg": "#2c2715",
    "custom-bg": "#261f36",
    "thinking": "#95a0ac",
    "branch": "#1f2c40",
    "code-bg": "#14181d",
}

LIGHT_CODE_STYLE = "default"
DARK_CODE_STYLE = "github-dark"


def _vars(colors: dict[str, str]) -> str:
    return " ".join(f"--{name}: {value};" for name, value in colors.items())


def theme_css() -> str:
    """Colour variables and code colours for both schemes."""
    from piko.plugins.export.highlight import pygments_css

    light_code = pygments_css(LIGHT_CODE_STYLE, ":root")
    dark_auto = pygments_css(DARK_CODE_STYLE, ':root:not([data-theme="light"])')
    dark_forced = pygments_css(DARK_CODE_STYLE, ':root[data-theme="dark"]')
    return "\n".join(
        [
            f":root {{ color-scheme: light; {_vars(LIGHT)} }}",
            light_code,
            "@media (prefers-color-scheme: dark) {",
            f':root:not([data-theme="light"]) {{ color-scheme: dark; {_vars(DARK)} }}',
            dark_auto,
            "}",
            f':root[data-theme="dark"] {{ color-scheme: dark; {_vars(DARK)} }}',
            dark_forced,
        ]
    )
