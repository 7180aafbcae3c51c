"""The main command's argument parser: option kinds, inline values, ``--`` and its errors."""

from __future__ import annotations

import pytest

from piko.app.cli_args import ArgumentError
from piko.app.cli_args import OptionSpec
from piko.app.cli_args import options_end
from piko.app.cli_args import parse_arguments
from piko.app.cli_args import pick_options

SPECS = [
    OptionSpec(("--print", "-p"), "print", "flag", False),
    OptionSpec(("--model",), "model", "value"),
    OptionSpec(("--skill",), "skill", "multi"),
    OptionSpec(("--list-models",), "list_models", "optional"),
    OptionSpec(("--no-tools", "-nt"), "no_tools", "flag", False),
    OptionSpec(("--plan",), "plugin_flag__plan", "flag"),  # a plugin's boolean flag: None when absent
]


def test_defaults_when_nothing_is_given() -> None:
    assert parse_arguments([], SPECS) == {
        "print": False, "model": None, "skill": (), "list_models": None, "no_tools": False,
        "plugin_flag__plan": None, "args": (),
    }  # fmt: skip


def test_options_and_messages_interleave() -> None:
    values = parse_arguments(["@a.md", "-p", "--model", "x", "hello", "-nt", "--model=y", "world"], SPECS)
    assert values["print"] is True and values["no_tools"] is True
    assert values["model"] == "y"  # the last one given wins
    assert values["args"] == ("@a.md", "hello", "world")


def test_repeatable_options_keep_their_order() -> None:
    assert parse_arguments(["--skill", "a", "--skill=b", "--skill", "c"], SPECS)["skill"] == ("a", "b", "c")


def test_a_value_may_start_with_a_dash_and_may_be_empty() -> None:
    assert parse_arguments(["--model", "-odd"], SPECS)["model"] == "-odd"
    assert parse_arguments(["--model="], SPECS)["model"] == ""


@pytest.mark.parametrize(
    ("argv", "expected", "rest"),
    [
        (["--list-models"], "", ()),
        (["--list-models", "claude"], "claude", ()),
        (["--list-models=son"], "son", ()),
        (["--list-models", "-p"], "", ()),
        (["--list-models", "@file.md"], "", ("@file.md",)),
    ],
)
def test_optional_value(argv: list[str], expected: str, rest: tuple[str, ...]) -> None:
    values = parse_arguments(argv, SPECS)
    assert (values["list_models"], values["args"]) == (expected, rest)


def test_double_dash_ends_the_options_and_a_lone_dash_is_a_message() -> None:
    assert parse_arguments(["-", "--", "--model", "-p"], SPECS)["args"] == ("-", "--model", "-p")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--nope"], "Unknown option: --nope"),
        (["--nope=1"], "Unknown option: --nope"),
        (["-x"], "Unknown option: -x"),
        (["-pnt"], "Unknown option: -pnt"),  # pi does not combine short options either
        (["--model"], "Unknown option: --model"),  # pi's words for both
        (["--print=yes"], "Unknown option: --print"),
    ],
)
def test_errors(argv: list[str], message: str) -> None:
    with pytest.raises(ArgumentError) as caught:
        parse_arguments(argv, SPECS)
    assert str(caught.value) == message


LOADING = [
    OptionSpec(("-e", "--extension"), "extensions", "multi"),
    OptionSpec(("--no-extensions", "-ne"), "no_extensions", "flag", False),
]


def test_options_are_picked_out_of_a_whole_command_line() -> None:
    """Before plugins load, their options are read wherever they stand, the rest passed over."""
    values = pick_options(["-p", "--model", "x", "-e", "a.py", "hi", "--extension=b.py", "-ne"], LOADING)
    assert values["extensions"] == ("a.py", "b.py") and values["no_extensions"] is True


def test_the_leading_options_end_where_a_subcommand_may_stand() -> None:
    assert options_end(["-e", "a.py", "-ne", "plugins", "--json"], LOADING) == 3
    assert options_end(["plugins"], LOADING) == 0
    assert options_end(["-p", "hi"], LOADING) == 0
