"""piko-example-plugin: a tool, a slash command, a flag and a run mode, registered through hooks.

This module is what the ``example`` entry point names. piko imports it at start-up, so it stays
light: it imports only ``piko.hookimpl`` and ``piko.registers``, and names the tool's and the
mode's code by import strings (``"module:function"``) that piko imports the first time they are
used.
"""

from __future__ import annotations

from typing import Any

from piko import hookimpl
from piko import registers

WIDTH_FLAG = "oneline-width"
DEFAULT_WIDTH = 100


@hookimpl
def piko_register_tools(register: Any) -> None:
    """The ``word_count`` tool: the model can ask how long a text is."""
    register(
        name="word_count",
        label="Word count",
        description="Count the words, lines and characters of a text.",
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to count"}},
            "required": ["text"],
        },
        execute="piko_example_plugin.tool:execute",
        prompt_snippet="Count the words, lines and characters of a text",
        default_active=True,
    )


async def wordcount_command(args: str, ctx: Any) -> None:
    """``/wordcount some text``: show the counts as a notification."""
    from piko_example_plugin.tool import count

    ctx.ui.notify(count(args).summary(), "info")


@hookimpl
def piko_register_commands(register: Any) -> None:
    """The ``/wordcount`` slash command (interactive and RPC modes)."""
    register(
        "wordcount", description="Count the words of the text after the command", handler=wordcount_command
    )


# A hook that only registers fixed definitions can declare them with ``registers``.

# ``--oneline-width N``: how wide the ``oneline`` mode's lines may get (``pi --help`` lists it).
piko_register_flags = registers(
    name=WIDTH_FLAG,
    description=f"Width of the oneline mode's lines (default {DEFAULT_WIDTH})",
    type="string",
    default=str(DEFAULT_WIDTH),
)

# ``pi --mode oneline "prompt"``: print each agent event as a one-line summary.
piko_register_modes = registers(
    name="oneline",
    run="piko_example_plugin.oneline:run",
    description="Print each agent event as a one-line summary (piko-example-plugin)",
)
