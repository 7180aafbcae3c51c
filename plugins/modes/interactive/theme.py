"""Colour themes in pi's JSON format: resolving ``vars``, and styles for rich and prompt_toolkit.

A theme file has ``name``, optional ``vars`` and ``colors`` (pi's 51 tokens). A colour is a
``#rrggbb`` hex string, an xterm 256-colour index, the name of a ``vars`` entry, or ``""`` for
the terminal's default. Built-in ``dark`` and ``light`` live in ``themes/``; others come from
the ``themes`` resource loader (``~/.pi/agent/themes``, ``.pi/themes``, packages, ``--theme``).
"""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import Any

BUILTIN_DIR = Path(__file__).resolve().parent / "themes"
BUILTIN_NAMES = ("dark", "light")

TOKENS: tuple[str, ...] = (
    "accent", "border", "borderAccent", "borderMuted", "success", "error", "warning", "muted", "dim",
    "text", "thinkingText", "selectedBg", "userMessageBg", "userMessageText", "customMessageBg",
    "customMessageText", "customMessageLabel", "toolPendingBg", "toolSuccessBg", "toolErrorBg",
    "toolTitle", "toolOutput", "mdHeading", "mdLink", "mdLinkUrl", "mdCode", "mdCodeBlock",
    "mdCodeBlockBorder", "mdQuote", "mdQuoteBorder", "mdHr", "mdListBullet", "toolDiffAdded",
    "toolDiffRemoved", "toolDiffContext", "syntaxComment", "syntaxKeyword", "syntaxFunction",
    "syntaxVariable", "syntaxString", "syntaxNumber", "syntaxType", "syntaxOperator",
    "syntaxPunctuation", "thinkingOff", "thinkingMinimal", "thinkingLow", "thinkingMedium",
    "thinkingHigh", "thinkingXhigh", "bashMode",
)  # fmt: skip


class ThemeError(ValueError):
    """A theme file that cannot be used (the message says why)."""


def _resolve(value: Any, variables: dict[str, Any], seen: tuple[str, ...] = ()) -> str | None:
    """A colour value as rich spells it (``#rrggbb``, ``color(N)``) or None for the default colour."""
    if isinstance(value, bool):
        raise ThemeError(f"invalid colour value {value!r}")
    if isinstance(value, int):
        if not 0 <= value <= 255:
            raise ThemeError(f"256-colour index out of range: {value}")
        return f"color({value})"
    if not isinstance(value, str):
        raise ThemeError(f"invalid colour value {value!r}")
    if value == "":
        return None
    if value.startswith("#"):
        digits = value[1:]
        if len(digits) != 6 or any(c not in "0123456789abcdefABCDEF" for c in digits):
            raise ThemeError(f"invalid hex colour {value!r}")
        return value.lower()
    if value in variables:
        if value in seen:
            raise ThemeError(f"circular variable reference: {' -> '.join((*seen, value))}")
        return _resolve(variables[value], variables, (*seen, value))
    raise ThemeError(f"unknown colour or variable {value!r}")


class Theme:
    """A resolved theme: ``color(token)`` gives a rich colour string or None (terminal default)."""

    def __init__(self, name: str, colors: dict[str, str | None], path: str | None = None) -> None:
        self.name = name
        self.colors = colors
        self.path = path

    @classmethod
    def from_data(
        cls, data: dict[str, Any], path: str | None = None, *, fallback: Theme | None = None
    ) -> Theme:
        """Build from parsed JSON; missing tokens are an error unless ``fallback`` supplies them."""
        if not isinstance(data, dict):
            raise ThemeError("a theme must be a JSON object")
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ThemeError('a theme needs a "name"')
        variables = data.get("vars") or {}
        raw = data.get("colors")
        if not isinstance(variables, dict) or not isinstance(raw, dict):
            raise ThemeError('"vars" and "colors" must be objects')
        colors: dict[str, str | None] = {}
        missing = [t for t in TOKENS if t not in raw]
        if missing and fallback is None:
            raise ThemeError(f"missing colour tokens: {', '.join(missing)}")
        for token in TOKENS:
            if token in raw:
                try:
                    colors[token] = _resolve(raw[token], variables)
                except ThemeError as exc:
                    raise ThemeError(f"{token}: {exc}") from None
            else:
                assert fallback is not None
                colors[token] = fallback.colors.get(token)
        return cls(name.strip(), colors, path)

    @classmethod
    def load_file(cls, path: str | Path, *, fallback: Theme | None = None) -> Theme:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ThemeError(f"cannot read {path}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise ThemeError(f"{path} is not valid JSON: {exc}") from None
        return cls.from_data(data, str(path), fallback=fallback)

    # -- colours ---------------------------------------------------------------------------------

    def color(self, token: str) -> str | None:
        return self.colors.get(token)

    def fg_style(self, token: str, *, bold: bool = False, italic: bool = False) -> Any:
        """A rich ``Style`` with the token as foreground colour."""
        from rich.style import Style

        return Style(color=self.color(token), bold=bold or None, italic=italic or None)

    def bg_style(self, token: str) -> Any:
        from rich.style import Style

        return Style(bgcolor=self.color(token))

    def style_str(self, token: str, *, bg: bool = False) -> str:
        """The token as a rich style string (``"#8abeb7"``, ``"on #343541"``, ``""`` for default)."""
        value = self.color(token)
        if value is None:
            return ""
        return f"on {value}" if bg else value

    def fg(self, token: str, text: str) -> Any:
        """``text`` as a rich ``Text`` in the token's colour (what plugin renderers usually need)."""
        from rich.text import Text

        return Text(text, style=self.fg_style(token))

    def bold(self, text: str) -> Any:
        from rich.text import Text

        return Text(text, style="bold")

    def thinking_border(self, level: str) -> str | None:
        token = {
            "off": "thinkingOff", "minimal": "thinkingMinimal", "low": "thinkingLow",
            "medium": "thinkingMedium", "high": "thinkingHigh", "xhigh": "thinkingXhigh", "max": "thinkingXhigh",
        }.get(level, "thinkingOff")  # fmt: skip
        return self.color(token)

    def pt_color(self, token: str, *, bg: bool = False) -> str:
        """The token as a prompt_toolkit style fragment (``fg:#8abeb7`` / ``bg:...`` / ``""``)."""
        value = self.color(token)
        if value is None:
            return ""
        if value.startswith("color("):
            value = xterm_hex(int(value[6:-1]))
        return f"{'bg' if bg else 'fg'}:{value}"

    # -- rich ------------------------------------------------------------------------------------

    @cached_property
    def rich_theme(self) -> Any:
        """Styles of rich's markdown elements in this theme's colours."""
        from rich.theme import Theme as RichTheme

        c = self.style_str
        styles = {
            "markdown.paragraph": "",
            "markdown.text": "",
            "markdown.em": "italic",
            "markdown.emph": "italic",
            "markdown.strong": "bold",
            "markdown.s": "strike",
            "markdown.code": c("mdCode"),
            "markdown.code_block": c("mdCodeBlock"),
            "markdown.block_quote": f"italic {c('mdQuote')}".strip(),
            "markdown.list": "",
            "markdown.item": "",
            "markdown.item.bullet": c("mdListBullet"),
            "markdown.item.number": c("mdListBullet"),
            "markdown.hr": c("mdHr"),
            "markdown.h1": f"bold underline {c('mdHeading')}".strip(),
            "markdown.h2": f"bold {c('mdHeading')}".strip(),
            "markdown.h3": f"bold {c('mdHeading')}".strip(),
            "markdown.h4": f"bold {c('mdHeading')}".strip(),
            "markdown.h5": f"bold {c('mdHeading')}".strip(),
            "markdown.h6": f"bold {c('mdHeading')}".strip(),
            "markdown.link": f"underline {c('mdLink')}".strip(),
            "markdown.link_url": c("mdLinkUrl"),
            "markdown.table.border": c("mdCodeBlockBorder"),
            "markdown.table.header": "bold",
            "markdown.kbd": "bold",
        }
        return RichTheme({k: v or "none" for k, v in styles.items()}, inherit=True)

    @cached_property
    def syntax_theme(self) -> Any:
        """A rich syntax theme from the ``syntax*`` tokens (no background)."""
        from pygments.token import Comment
        from pygments.token import Keyword
        from pygments.token import Name
        from pygments.token import Number
        from pygments.token import Operator
        from pygments.token import Punctuation
        from pygments.token import String
        from pygments.token import Token
        from rich.syntax import ANSISyntaxTheme

        s = self.fg_style
        return ANSISyntaxTheme(
            {
                Token: s("mdCodeBlock"),
                Comment: s("syntaxComment", italic=True),
                Keyword: s("syntaxKeyword"),
                Keyword.Type: s("syntaxType"),
                Name: s("syntaxVariable"),
                Name.Function: s("syntaxFunction"),
                Name.Class: s("syntaxType"),
                Name.Builtin: s("syntaxType"),
                Name.Decorator: s("syntaxFunction"),
                Name.Tag: s("syntaxKeyword"),
                Name.Attribute: s("syntaxVariable"),
                String: s("syntaxString"),
                Number: s("syntaxNumber"),
                Operator: s("syntaxOperator"),
                Punctuation: s("syntaxPunctuation"),
            }
        )


def xterm_hex(index: int) -> str:
    """The ``#rrggbb`` of an xterm 256-colour index (prompt_toolkit styles want hex)."""
    basic = [
        "000000", "800000", "008000", "808000", "000080", "800080", "008080", "c0c0c0",
        "808080", "ff0000", "00ff00", "ffff00", "0000ff", "ff00ff", "00ffff", "ffffff",
    ]  # fmt: skip
    if index < 16:
        return "#" + basic[index]
    if index < 232:
        index -= 16
        steps = [0, 95, 135, 175, 215, 255]
        r, g, b = steps[index // 36], steps[(index // 6) % 6], steps[index % 6]
        return f"#{r:02x}{g:02x}{b:02x}"
    level = 8 + (index - 232) * 10
    return f"#{level:02x}{level:02x}{level:02x}"


def builtin_theme(name: str) -> Theme:
    """``dark`` or ``light``."""
    return Theme.load_file(BUILTIN_DIR / f"{name}.json")


def detect_background() -> str:
    """``light`` when ``$COLORFGBG`` says the background is light, else ``dark`` (pi's first-run guess)."""
    value = os.environ.get("COLORFGBG", "")
    parts = value.split(";")
    try:
        background = int(parts[-1])
    except ValueError:
        return "dark"
    return "light" if background in (7, 15) or 9 < background < 16 else "dark"


class ThemeSet:
    """The built-in themes plus those the resource loader found; which one is active."""

    def __init__(self, loaded: list[Any] | None = None) -> None:
        self._dark = builtin_theme("dark")
        self.themes: dict[str, Theme] = {"dark": self._dark}
        self.errors: list[str] = []
        try:
            self.themes["light"] = builtin_theme("light")
        except ThemeError as exc:  # a broken install: keep going with dark
            self.errors.append(f"built-in theme light: {exc}")
        for resource in loaded or []:
            name = getattr(resource, "name", None)
            data = getattr(resource, "data", None)
            path = getattr(resource, "path", None)
            try:
                theme = Theme.from_data(data or {}, path)
            except ThemeError as exc:
                self.errors.append(f"theme {path or name}: {exc}")
                continue
            if theme.name in self.themes and theme.name in BUILTIN_NAMES:
                self.errors.append(f"theme {path}: the name {theme.name!r} is built in; ignored")
                continue
            self.themes.setdefault(theme.name, theme)

    def names(self) -> list[str]:
        return list(self.themes)

    def get(self, name: str | None) -> Theme | None:
        return self.themes.get(name) if name else None

    def choose(self, setting: str | None) -> tuple[Theme, str | None]:
        """The theme the ``theme`` setting names (or the detected default); an error when unknown."""
        if setting:
            theme = self.themes.get(setting)
            if theme is not None:
                return theme, None
            return self._dark, f'Failed to load theme "{setting}": Theme not found\nFell back to dark theme.'
        return self.themes.get(detect_background(), self._dark), None
