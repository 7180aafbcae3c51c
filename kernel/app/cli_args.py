"""Parsing the main command's arguments: pi's own options, plugin flags, ``@files`` and messages.

The main command is a flat table of options, parsed here in one pass the way pi's own parser
reads them, rather than through click, whose import and parser set-up cost ``pi -p`` about
10 ms (measured when the parser replaced click: 171.7 ms against 181-190 ms for the round trip).
click would also word the errors its own way, where pi users get pi's (``Unknown option:
--model`` for a value option with nothing after it). The same loop picks the plugin-loading
options out of the command line before plugins load (:func:`pick_options`, :func:`options_end`),
so the main command has one parser. Subcommands (``pi install``, ``pi plugins``, ...) remain
click commands.

Option kinds: ``flag`` (``--print``), ``value`` (``--model x`` or ``--model=x``; the last one
given wins), ``multi`` (repeatable, values kept in order) and ``optional`` (``--list-models``
with or without a search word; a following ``-option`` or ``@file`` is not taken as its value).
``--`` ends the options. Anything else starting with ``-`` is an unknown option, and so, as in
pi, are a value option with nothing after it and a flag given a value (``--print=yes``).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any

from piko.lib.records import Record


class OptionSpec(Record, kw_only=False, frozen=True):
    """One option: the names it answers to, where its value goes, and its kind."""

    names: tuple[str, ...]
    dest: str
    kind: str  # flag | value | multi | optional
    default: Any = None


class ArgumentError(Exception):
    """A command line that cannot be parsed; the message is shown after ``Error: ``."""


def parse_arguments(argv: Sequence[str], options: Iterable[OptionSpec]) -> dict[str, Any]:
    """``{dest: value}`` for every option (its default when absent), plus ``args``: the rest, in order.

    ``multi`` values and ``args`` are tuples; an unknown option is an :class:`ArgumentError`.
    """
    return _parse(argv, options, "refuse")[0]


def pick_options(argv: Sequence[str], options: Iterable[OptionSpec]) -> dict[str, Any]:
    """The values of ``options`` wherever they stand, reading past every other argument (the
    plugin-loading options are picked out of a whole command line before plugins load)."""
    return _parse(argv, options, "skip")[0]


def options_end(argv: Sequence[str], options: Iterable[OptionSpec]) -> int:
    """The index of the first argument that is not one of the leading ``options`` (where a
    subcommand's name may stand)."""
    return _parse(argv, options, "stop")[1]


def _parse(argv: Sequence[str], options: Iterable[OptionSpec], others: str) -> tuple[dict[str, Any], int]:
    """The one reading loop; ``others``: ``refuse``, ``skip`` or ``stop`` at an argument that is
    not one of ``options``."""
    by_name: dict[str, OptionSpec] = {}
    values: dict[str, Any] = {}
    for spec in options:
        for name in spec.names:
            by_name[name] = spec
        values[spec.dest] = () if spec.kind == "multi" else spec.default
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            if others == "stop":
                i -= 1
                break
            positional.extend(argv[i:])
            break
        name, has_inline, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        found = by_name.get(name) if arg.startswith("-") and arg != "-" else None
        if found is None:
            if others == "stop":
                i -= 1
                break
            if others == "skip" or not arg.startswith("-") or arg == "-":
                positional.append(arg)
                continue
            raise ArgumentError(f"Unknown option: {name}")
        spec = found
        if spec.kind == "flag":
            if has_inline:  # pi matches flags whole: --print=yes is no flag it knows
                raise ArgumentError(f"Unknown option: {name}")
            values[spec.dest] = True
            continue
        if has_inline:
            value = inline
        elif spec.kind == "optional":
            following = argv[i] if i < len(argv) else None
            if following is None or following.startswith(("-", "@")):
                value = ""
            else:
                value, i = following, i + 1
        elif i < len(argv):
            value, i = argv[i], i + 1
        else:  # pi reads a value option with nothing after it as an option it does not know
            raise ArgumentError(f"Unknown option: {name}")
        values[spec.dest] = (*values[spec.dest], value) if spec.kind == "multi" else value
    values["args"] = tuple(positional)
    return values, i
