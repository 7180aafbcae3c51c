"""The interactive mode's parts without a terminal: themes, keys, footer, pastes, completion, tool boxes."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from piko.config.settings import Settings
from piko.plugins.modes.interactive.completion import CommandEntry
from piko.plugins.modes.interactive.completion import EditorCompleter
from piko.plugins.modes.interactive.editor import Pastes
from piko.plugins.modes.interactive.editor import PromptHistory
from piko.plugins.modes.interactive.footer import format_tokens
from piko.plugins.modes.interactive.keys import KeyNameError
from piko.plugins.modes.interactive.keys import to_prompt_toolkit
from piko.plugins.modes.interactive.render import Painter
from piko.plugins.modes.interactive.theme import TOKENS
from piko.plugins.modes.interactive.theme import Theme
from piko.plugins.modes.interactive.theme import ThemeError
from piko.plugins.modes.interactive.theme import ThemeSet
from piko.plugins.modes.interactive.theme import builtin_theme
from piko.plugins.modes.interactive.tool_render import ToolRenderer
from piko.plugins.modes.interactive.tool_view import ToolView
from piko.plugins.resources.themes import load_themes
from piko.resources.loader import ResourceRequest

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


# -- themes ------------------------------------------------------------------------------------


def test_builtin_themes_define_every_token() -> None:
    assert len(TOKENS) == 51
    for name in ("dark", "light"):
        theme = builtin_theme(name)
        assert set(theme.colors) == set(TOKENS)
    dark = builtin_theme("dark")
    assert dark.color("accent") == "#8abeb7"  # a var reference resolved
    assert dark.color("text") is None  # "" is the terminal's default colour
    assert dark.thinking_border("high") == "#b294bb"


def test_theme_values_vars_indexes_and_errors() -> None:
    colors: dict[str, Any] = dict.fromkeys(TOKENS, "")
    colors.update({"accent": "primary", "border": 39, "error": "#FF0000"})
    theme = Theme.from_data({"name": "mine", "vars": {"primary": "#00aaff"}, "colors": colors})
    assert (theme.color("accent"), theme.color("border"), theme.color("error")) == (
        "#00aaff",
        "color(39)",
        "#ff0000",
    )
    assert theme.pt_color("border") == "fg:#00afff"
    with pytest.raises(ThemeError, match="missing colour tokens: accent"):
        Theme.from_data({"name": "x", "colors": {t: "" for t in TOKENS if t != "accent"}})
    with pytest.raises(ThemeError, match="unknown colour or variable 'nope'"):
        Theme.from_data({"name": "x", "colors": {**dict.fromkeys(TOKENS, ""), "dim": "nope"}})
    with pytest.raises(ThemeError, match="circular"):
        Theme.from_data(
            {"name": "x", "vars": {"a": "b", "b": "a"}, "colors": {**dict.fromkeys(TOKENS, ""), "dim": "a"}}
        )


def _request(tmp_path: Path, *, trusted: bool = True, **options: Any) -> ResourceRequest:
    agent = tmp_path / "agent"
    work = tmp_path / "work"
    agent.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    return ResourceRequest(
        cwd=str(work),
        agent_dir=str(agent),
        settings=Settings(work, agent, project_trusted=trusted),
        options=options,
        project_trusted=trusted,
    )


def _theme_file(path: Path, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "plugins/modes/interactive/themes/dark.json").read_text()
    )
    data["name"] = name
    path.write_text(json.dumps(data))
    return path


def test_theme_loader_finds_user_project_cli_and_settings_themes(tmp_path: Path) -> None:
    request = _request(tmp_path)
    _theme_file(tmp_path / "agent" / "themes" / "user-one.json", "user-one")
    _theme_file(tmp_path / "work" / ".pi" / "themes" / "proj.json", "proj")
    _theme_file(tmp_path / "agent" / "themes" / "dupe.json", "proj")
    cli = _theme_file(tmp_path / "elsewhere" / "cli.json", "from-cli")
    (tmp_path / "agent" / "themes" / "broken.json").write_text("{not json")
    request.options["theme"] = (str(cli),)
    found = load_themes(request)
    assert [t.name for t in found] == ["from-cli", "proj", "user-one"]  # --theme, project, user
    assert any("broken.json: invalid JSON" in d for d in request.diagnostics)
    assert any('theme "proj"' in d and "the name is taken" in d for d in request.diagnostics)
    # an untrusted project's themes are not read; --no-themes keeps only --theme
    untrusted = _request(tmp_path, trusted=False)
    assert not [t for t in load_themes(untrusted) if ".pi" in str(t.path)]
    only_cli = _request(tmp_path, no_themes=True, theme=(str(cli),))
    assert [t.name for t in load_themes(only_cli)] == ["from-cli"]
    # the mode offers them next to the built-ins and picks the setting's
    themes = ThemeSet(found)
    assert themes.names()[:2] == ["dark", "light"] and "user-one" in themes.names()
    assert themes.choose("user-one")[0].name == "user-one"
    fallback, error = themes.choose("missing")
    assert (
        fallback.name == "dark"
        and error == 'Failed to load theme "missing": Theme not found\nFell back to dark theme.'
    )


# -- keys --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("ctrl+p", ("c-p",)),
        ("escape", ("escape",)),
        ("esc", ("escape",)),
        ("alt+enter", ("escape", "enter")),
        ("shift+tab", ("s-tab",)),
        ("alt+up", ("escape", "up")),
        ("ctrl+left", ("c-left",)),
        ("shift+l", ("L",)),
        ("ctrl+-", ("c-_",)),
        ("ctrl+]", ("c-]",)),
        ("alt+backspace", ("escape", "c-h")),
        ("pageUp", ("pageup",)),
        ("f5", ("f5",)),
        ("space", (" ",)),
    ],
)
def test_pi_key_names_become_prompt_toolkit_keys(key: str, expected: tuple[str, ...]) -> None:
    assert to_prompt_toolkit(key) == expected


def test_extended_keys_get_spare_keys_and_parser_sequences() -> None:
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.keys import Keys

    shift_enter = to_prompt_toolkit("shift+enter")
    assert shift_enter[0].startswith("f") and to_prompt_toolkit("shift+enter") == shift_enter
    assert ANSI_SEQUENCES["\x1b[13;2u"] == Keys(shift_enter[0])
    back = to_prompt_toolkit("shift+ctrl+p")
    assert back == to_prompt_toolkit("ctrl+shift+p")
    assert ANSI_SEQUENCES["\x1b[112;6u"] == Keys(back[0])
    with pytest.raises(KeyNameError):
        to_prompt_toolkit("hyper+x")
    with pytest.raises(KeyNameError):
        to_prompt_toolkit("ctrl+nosuchkey")


# -- footer, pastes, history --------------------------------------------------------------------


def test_token_counts_are_formatted_like_pi() -> None:
    assert [format_tokens(n) for n in (999, 1234, 45678, 1234567, 12345678)] == [
        "999",
        "1.2k",
        "46k",
        "1.2M",
        "12M",
    ]


def test_large_pastes_become_markers_and_expand_back() -> None:
    pastes = Pastes()
    big = "\n".join(f"line {i}" for i in range(12))
    assert pastes.insert_text(big, "") == "[paste #1 +12 lines]"
    assert pastes.insert_text("x" * 1500, "") == "[paste #2 1500 chars]"
    assert pastes.insert_text("short\r\ntext\twith tab", "") == "short\ntext    with tab"
    assert pastes.insert_text("/tmp/file", "look at") == " /tmp/file"
    assert pastes.expand("a [paste #1 +12 lines] b [paste #9 +3 lines]") == f"a {big} b [paste #9 +3 lines]"


def test_prompt_history_is_kept_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "prompt-history.jsonl"
    history = PromptHistory(path)
    history.store_string("first")
    history.store_string("multi\nline")
    again = PromptHistory(path, ["from the session"])
    assert list(again.load_history_strings()) == ["from the session", "multi\nline", "first"]
    path.write_text("garbage\n" + json.dumps("ok") + "\n")
    assert list(PromptHistory(path).load_history_strings()) == ["ok"]


# -- completion --------------------------------------------------------------------------------


def _complete(completer: EditorCompleter, text: str, *, requested: bool = False) -> list[str]:
    event = CompleteEvent(completion_requested=requested)
    return [c.text for c in completer.get_completions(Document(text), event)]


def test_slash_and_argument_completion() -> None:
    commands = [
        CommandEntry(
            name="model", description="Select model", argument_completions=lambda p: ["gpt", "claude"]
        ),
        CommandEntry(name="scoped-models", description="Scope"),
        CommandEntry(name="skill:greeter", description="Greets", source="skill"),
    ]
    completer = EditorCompleter(lambda: commands, ".")
    assert _complete(completer, "/") == ["model", "scoped-models", "skill:greeter"]
    assert _complete(completer, "/mod")[0] == "model"
    assert _complete(completer, "/skill:gr") == ["skill:greeter"]
    assert _complete(completer, "/model c") == ["gpt", "claude"]
    assert _complete(completer, "/nosuch x") == []
    assert _complete(completer, "plain text") == []


def test_at_file_completion_respects_gitignore(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("secret/\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / "README.md").write_text("")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key.txt").write_text("")
    completer = EditorCompleter(lambda: [], str(tmp_path))
    found = _complete(completer, "look at @mai")
    assert found[0] == "@src/main.py"
    everything = _complete(completer, "@")
    assert "@README.md" in everything and "@src/" in everything
    assert not any("secret" in f for f in everything)
    assert _complete(completer, "cat src/m", requested=True) == ["src/main.py"]  # Tab: a path
    assert _complete(completer, "cat src/m") == []  # paths only on Tab


# -- tool boxes --------------------------------------------------------------------------------


def _lines(renderable: Any, width: int = 70) -> list[str]:
    painter = Painter(builtin_theme("dark"), "truecolor")
    return [_ANSI.sub("", line).rstrip() for line in painter.lines(renderable, width)]


def test_tool_boxes_summarise_and_expand() -> None:
    renderer = ToolRenderer(builtin_theme("dark"))
    read = ToolView(tool_call_id="1", name="read", args={"path": "/tmp/a.txt", "offset": 5, "limit": 3})
    read.set_result(
        {"content": [{"type": "text", "text": "\n".join(f"row {i}" for i in range(15))}]}, partial=False
    )
    collapsed = _lines(renderer.render(read, False))
    assert " read /tmp/a.txt:5-7" in collapsed
    assert " ... (5 more lines, ctrl+o to expand)" in collapsed and " row 14" not in collapsed
    assert " row 14" in _lines(renderer.render(read, True))
    grep = ToolView(tool_call_id="2", name="grep", args={"pattern": "TODO", "glob": "*.py", "limit": 5})
    grep.set_result(
        {"content": [{"type": "text", "text": "a.py:1: TODO"}], "details": {"matchLimitReached": 5}},
        partial=False,
    )
    lines = _lines(renderer.render(grep, False))
    assert " grep /TODO/ in . (*.py) limit 5" in lines and " [Truncated: 5 matches limit]" in lines
    find = ToolView(tool_call_id="4", name="find", args={"pattern": "*.md", "path": "docs", "limit": 2})
    assert " find *.md in docs (limit 2)" in _lines(renderer.render(find, False))
    edit = ToolView(tool_call_id="3", name="edit", args={"path": "x.py"})
    edit.set_result(
        {"content": [], "details": {"diff": " 1 keep\n-2 old value\n+2 new value"}}, partial=False
    )
    assert [line for line in _lines(renderer.render(edit, False)) if line] == [
        " edit x.py",
        "  1 keep",
        " -2 old value",
        " +2 new value",
    ]
    failed = ToolView(tool_call_id="4", name="write", args={"path": "y.txt", "content": "hello"})
    failed.set_result({"content": [{"type": "text", "text": "EACCES"}]}, partial=False, is_error=True)
    assert " EACCES" in _lines(renderer.render(failed, False))


def test_size_limits_in_tool_boxes_are_written_as_pi_writes_them() -> None:
    """pi's formatSize rounds with toFixed: a 1280-byte limit is 1.3KB (Python's .1f says 1.2KB)."""
    renderer = ToolRenderer(builtin_theme("dark"))
    grep = ToolView(tool_call_id="1", name="grep", args={"pattern": "x"})
    truncation = {"truncated": True, "truncatedBy": "bytes", "maxBytes": 1280, "outputLines": 3}
    grep.set_result(
        {"content": [{"type": "text", "text": "a.py:1: x"}], "details": {"truncation": truncation}},
        partial=False,
    )
    assert " [Truncated: 1.3KB limit]" in _lines(renderer.render(grep, False))


def test_plugin_renderers_replace_the_built_in_look() -> None:
    class Definition:
        @staticmethod
        def render_call(args: Any, theme: Any) -> str:
            return f"CALL {args['x']}"

        @staticmethod
        def render_result(result: Any, options: Any, theme: Any) -> str:
            return f"RESULT expanded={options['expanded']}"

    view = ToolView(tool_call_id="1", name="custom", args={"x": 7})
    view.set_result({"content": [{"type": "text", "text": "raw"}]}, partial=False)
    lines = _lines(ToolRenderer(builtin_theme("dark")).render(view, True, Definition()))
    assert " CALL 7" in lines and " RESULT expanded=True" in lines and " raw" not in lines


def test_footer_lines() -> None:
    from types import SimpleNamespace

    from piko.data.messages import AssistantMessage
    from piko.data.messages import Cost
    from piko.data.messages import Model
    from piko.data.messages import Usage
    from piko.engine.stats import ContextUsage
    from piko.plugins.modes.interactive.footer import FooterData
    from piko.plugins.modes.interactive.footer import footer_fragments

    usage = Usage(input=1500, output=250, cache_read=12000, cost=Cost(total=0.0123))
    entry = SimpleNamespace(type="message", message=AssistantMessage(usage=usage))
    manager = SimpleNamespace(
        cwd="/work/project", get_entries=lambda: [entry], get_session_name=lambda: "refactor"
    )
    model = Model(id="claude-x", provider="anthropic", reasoning=True, context_window=200000)
    session = SimpleNamespace(
        session_manager=manager,
        cwd="/work/project",
        model=model,
        thinking_level="high",
        compaction=SimpleNamespace(enabled=True),
        get_context_usage=lambda: ContextUsage(tokens=150000, context_window=200000, percent=75.0),
    )
    fragments = footer_fragments(
        session, 80, data=FooterData(), branch="main", statuses={"b": "two", "a": "one"}, provider_count=2
    )
    text = "".join(t for _s, t in fragments).split("\n")
    assert text[0] == "/work/project (main) • refactor"
    assert text[1].startswith("↑1.5k ↓250 R12k $0.012 75.0%/200k (auto)")
    assert text[1].endswith("(anthropic) claude-x • high") and len(text[1]) == 80
    assert text[2] == "one two"
    assert ("class:t-warning", "75.0%/200k (auto)") in fragments


def test_interactive_mode_refuses_a_non_terminal(tmp_path: Path) -> None:
    import os
    import sys

    piko = str(Path(sys.executable).with_name("piko"))
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path), "HOME": str(tmp_path)}
    done = subprocess.run(
        [piko, "--provider", "faux", "--mode", "interactive"],
        input="hello",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 1
    assert "the interactive mode needs a terminal" in done.stderr
