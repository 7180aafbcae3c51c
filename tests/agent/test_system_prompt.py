"""The system prompt piko sends: pi's structure (tools, guidelines, appended text, context files,
skills, date, cwd) in piko's own words, checked against prompts captured from the real pi."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

import pytest
from agent_harness import MOCK
from agent_harness import OK
from agent_harness import SAMPLES
from agent_harness import PiEnv
from agent_harness import run_extension
from agent_harness import sample
from agent_harness import strip_volatile

from piko.engine.system_prompt import SystemPromptOptions
from piko.engine.system_prompt import build_system_prompt
from piko.engine.system_prompt import one_line
from piko.engine.system_prompt import plain_prompt
from piko.plugins.resources.default_prompt import build
from piko.resources.loader import ContextFile
from piko.resources.loader import Skill

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pi_system_prompt"

# The sentences each program words its own way, and a neutral token for each
PI_WORDING = {
    "You are an expert coding assistant operating inside pi, a coding agent harness. You help users "
    "by reading files, executing commands, editing code, and writing new files.": "<INTRO>",
    "In addition to the tools above, you may have access to other custom tools depending on the project.": (
        "<MORE-TOOLS>"
    ),
    "- Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)": "- <EXPLORERS>",
    "- Be concise in your responses": "- <CONCISE>",
    "- Show file paths clearly when working with files": "- <PATHS>",
    "Project-specific instructions and guidelines:": "<CONTEXT>",
    "The following skills provide specialized instructions for specific tasks.\n"
    "Use the read tool to load a skill's file when the task matches its description.\n"
    "When a skill file references a relative path, resolve it against the skill directory (parent of "
    "SKILL.md / dirname of the path) and use that absolute path in tool commands.": "<SKILLS>",
}
PIKO_WORDING = {
    "You are an expert coding assistant working inside piko, a coding agent harness. You help users "
    "by reading files, running commands, editing code and writing new files.": "<INTRO>",
    "Other tools may also be available, depending on the project.": "<MORE-TOOLS>",
    "- Prefer the grep, find and ls tools over bash for exploring files (faster, and they respect "
    ".gitignore)": "- <EXPLORERS>",
    "- Keep answers short and to the point": "- <CONCISE>",
    "- Name file paths clearly when you work with files": "- <PATHS>",
    "Instructions and guidelines for this project:": "<CONTEXT>",
    "Skills below hold specialised instructions for particular tasks.\n"
    "When a task matches a skill's description, read its file with the read tool first.\n"
    "Relative paths inside a skill file are relative to the skill's own directory; use absolute "
    "paths in tool calls.": "<SKILLS>",
}
_DOCS = re.compile(r"\n\n(?:Pi|piko) documentation [^\n]*(?:\n- [^\n]*)*")


def neutral(prompt: str, wording: dict[str, str]) -> str:
    """The prompt with each program's own sentences and its documentation block as tokens."""
    for text, token in wording.items():
        prompt = prompt.replace(text, token)
    return _DOCS.sub("\n\n<DOCS>", prompt)


def _places(env: PiEnv) -> dict[str, Path]:
    return {"<AGENT>": env.home, "<HOME>": env.user_home, "<WORK>": env.work}


def _build(env: PiEnv, files: dict[str, str]) -> None:
    places = _places(env)
    for name, text in files.items():
        prefix, _, rest = name.partition("/")
        env.write(rest, text, base=places[prefix])


def _tokens(prompt: str, env: PiEnv) -> str:
    for token, path in sorted(_places(env).items(), key=lambda kv: -len(str(kv[1]))):
        prompt = prompt.replace(str(path), token)
    return re.sub(r"Current date: \d{4}-\d\d-\d\d", "Current date: <DATE>", prompt)


SCENARIOS = json.loads((CAPTURES / "scenarios.json").read_text())


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_prompt_has_pis_structure(pi_env: Any, scenario: dict[str, Any]) -> None:
    env = pi_env([{"blocks": [{"text": "ok"}]}])
    env.trust()  # captured from pi 0.73, which loaded project files without asking
    _build(env, scenario["files"])
    done = env.run(*scenario["args"], cwd=env.work / scenario["cwd"])
    assert done.returncode == 0, done.stderr
    ours = neutral(_tokens(env.system_prompt(), env), PIKO_WORDING)
    theirs = neutral((CAPTURES / f"{scenario['name']}.txt").read_text(), PI_WORDING)
    assert ours == theirs


def test_default_request_is_pis_but_for_the_prompt(pi_env: Any) -> None:
    """Tools in pi's order (read, bash, edit, write) and every other field as pi sent them."""
    env = pi_env(sample("a-print-text", "scenario.json"))
    assert env.run("-p", "say hi", *MOCK).returncode == 0
    (theirs,) = sample("a-print-text", "requests.jsonl")
    ours = dict(env.server.requests[0]["body"])
    pis = dict(theirs["body"])
    assert env.tool_names() == ["read", "bash", "edit", "write"]
    ours["messages"], pis["messages"] = ours["messages"][1:], pis["messages"][1:]
    assert strip_volatile(ours) == strip_volatile(pis)


def test_tool_lines_and_guidelines_match_pis_sample(pi_env: Any) -> None:
    """The tools' own lines (snippets, tool guidelines) are pi's text, in pi's order."""
    env = pi_env(sample("c-tools-json", "scenario.json"))
    env.run("--mode", "json", "--tools", "read,bash,edit,write,grep,find,ls", *MOCK, "go")
    pis = json.loads((SAMPLES / "c-tools-json" / "requests.jsonl").read_text().splitlines()[0])
    theirs = neutral(pis["body"]["messages"][0]["content"], PI_WORDING)
    ours = neutral(env.system_prompt(), PIKO_WORDING)
    head = lambda text: text.split("\n\n<DOCS>")[0]  # noqa: E731
    assert head(ours) == head(theirs)


@pytest.mark.parametrize(
    ("tools", "listed", "explore_line"),
    [
        ("bash", ["bash"], "- Use bash for file operations like ls, rg, find"),
        ("bash,grep", ["bash", "grep"], "- <EXPLORERS>"),
        ("read,grep,find,ls", ["read", "grep", "find", "ls"], None),
    ],
)
def test_guidelines_depend_on_the_active_tools(
    pi_env: Any, tools: str, listed: list[str], explore_line: str | None
) -> None:
    env = pi_env([{"blocks": [{"text": "ok"}]}])
    assert env.run("-p", "--tools", tools, *MOCK, "hi").returncode == 0
    prompt = neutral(env.system_prompt(), PIKO_WORDING)
    tool_block = prompt.split("Available tools:\n")[1].split("\n\n")[0]
    assert [line.split(":")[0][2:] for line in tool_block.splitlines()] == listed
    guidelines = prompt.split("Guidelines:\n")[1].split("\n\n")[0].splitlines()
    assert guidelines[-2:] == ["- <CONCISE>", "- <PATHS>"]
    bash_lines = [g for g in guidelines if "bash" in g or g == "- <EXPLORERS>"]
    assert bash_lines == ([explore_line] if explore_line else [])
    assert env.tool_names() == listed


def test_no_tools_lists_none_and_skills_need_read(pi_env: Any) -> None:
    env = pi_env([{"blocks": [{"text": "ok"}]}] * 2)
    env.write("skills/one/SKILL.md", "---\ndescription: The one skill.\n---\nBody\n", base=env.home)
    assert env.run("-p", "--no-tools", *MOCK, "hi").returncode == 0
    prompt = env.system_prompt()
    assert "Available tools:\n(none)\n" in prompt
    assert "<available_skills>" not in prompt
    assert env.tool_names() == []
    assert env.run("-p", "--tools", "read", *MOCK, "hi").returncode == 0
    assert "<name>one</name>" in env.system_prompt(1)


def test_system_prompt_flag_takes_text_or_a_file(pi_env: Any) -> None:
    env = pi_env([{"blocks": [{"text": "ok"}]}] * 2)
    env.write(".pi/SYSTEM.md", "From SYSTEM.md.")
    env.write("AGENTS.md", "Project rules.\n")
    env.write("custom.txt", "From a file.")
    assert env.run("-p", "--system-prompt", "Inline prompt.", *MOCK, "hi").returncode == 0
    assert env.run("-p", "--system-prompt", "custom.txt", *MOCK, "hi").returncode == 0
    for index, start in ((0, "Inline prompt."), (1, "From a file.")):
        prompt = env.system_prompt(index)
        assert prompt.startswith(start + "\n\n# Project Context\n")
        assert "Project rules." in prompt and "SYSTEM.md" not in prompt
        assert prompt.endswith(f"\nCurrent working directory: {env.work}")


def test_global_system_and_append_files_apply_without_a_project_one(pi_env: Any) -> None:
    env = pi_env([{"blocks": [{"text": "ok"}]}] * 3)
    env.write("SYSTEM.md", "Global system.", base=env.home)
    env.write("APPEND_SYSTEM.md", "Global append.", base=env.home)
    assert env.run("-p", *MOCK, "hi").returncode == 0
    assert env.system_prompt().startswith("Global system.\n\nGlobal append.\nCurrent date: ")
    env.write(".pi/APPEND_SYSTEM.md", "")  # an empty project file still hides the global one...
    untrusted = env.run("-p", *MOCK, "hi")
    assert untrusted.returncode == 0
    assert env.system_prompt(1).startswith(
        "Global system.\n\nGlobal append.\nCurrent date: "
    )  # ...once trusted
    assert "(.pi/APPEND_SYSTEM.md): this project is not trusted" in untrusted.stderr
    assert env.run("-p", "--approve", *MOCK, "hi").returncode == 0
    assert env.system_prompt(2).startswith("Global system.\nCurrent date: ")


def test_no_context_files_flag(pi_env: Any) -> None:
    env = pi_env([{"blocks": [{"text": "ok"}]}] * 2)
    env.write("AGENTS.md", "Global.\n", base=env.home)
    env.write("CLAUDE.md", "Claude here.\n")
    assert env.run("-p", *MOCK, "hi").returncode == 0
    prompt = env.system_prompt()
    assert prompt.index(f"## {env.home / 'AGENTS.md'}") < prompt.index(f"## {env.work / 'CLAUDE.md'}")
    assert env.run("-p", "-nc", *MOCK, "hi").returncode == 0
    assert "# Project Context" not in env.system_prompt(1)


def test_date_and_cwd_close_the_prompt(pi_env: Any) -> None:
    env = pi_env([{"blocks": [{"text": "ok"}]}])
    (env.work / "src").mkdir(exist_ok=True)
    assert env.run("-p", *MOCK, "hi", cwd=env.work / "src").returncode == 0
    lines = env.system_prompt().splitlines()
    assert lines[-2] == f"Current date: {datetime.date.today().isoformat()}"
    assert lines[-1] == f"Current working directory: {env.work / 'src'}"


# -- unit level ------------------------------------------------------------------------------


def _skill(name: str, **kwargs: Any) -> Skill:
    return Skill(
        name=name,
        description=f"{name} skill",
        file_path=f"/s/{name}/SKILL.md",
        base_dir=f"/s/{name}",
        **kwargs,
    )


def test_custom_prompt_keeps_appends_context_skills_date_and_cwd() -> None:
    options = SystemPromptOptions(
        cwd="C:\\work\\proj",
        tool_names=["read"],
        custom_prompt="Custom.",
        append=["One.", "Two."],
        context_files=[ContextFile(path="/p/AGENTS.md", content="Rules.")],
        skills=[_skill("shown"), _skill("hidden", disable_model_invocation=True)],
    )
    prompt = build(options, today=datetime.date(2026, 1, 2))
    assert prompt.startswith("Custom.\n\nOne.\n\nTwo.\n\n# Project Context\n\n")
    assert "## /p/AGENTS.md\n\nRules.\n\n" in prompt
    assert "<name>shown</name>" in prompt and "hidden" not in prompt
    assert prompt.endswith(
        "</available_skills>\nCurrent date: 2026-01-02\nCurrent working directory: C:/work/proj"
    )


def test_empty_append_adds_nothing_and_snippets_are_one_line() -> None:
    plain = build(SystemPromptOptions(cwd="/w", custom_prompt="X"), today=datetime.date(2026, 1, 2))
    empty = build(
        SystemPromptOptions(cwd="/w", custom_prompt="X", append=[""]), today=datetime.date(2026, 1, 2)
    )
    assert plain == empty == "X\nCurrent date: 2026-01-02\nCurrent working directory: /w"
    assert one_line("  Reads\n  files,\r\n\tfast ") == "Reads files, fast"
    assert one_line(" \n ") is None


def test_without_the_default_prompt_plugin_the_session_sends_the_plain_frame(pi_env: Any) -> None:
    """Blocking ``resources.default-prompt`` leaves a working program: the prompt is the custom
    prompt, appended text, context files, date and directory, with none of pi's wording."""
    env = pi_env([{"blocks": [{"text": "ok"}]}])
    env.write("AGENTS.md", "Project rules.")
    done = env.run(
        "-p", *MOCK, "--disable-plugin", "resources.default-prompt", "--append-system-prompt", "Extra.", "hi"
    )
    assert done.returncode == 0, done.stderr
    system = env.system_prompt()
    assert "coding assistant" not in system
    assert system.startswith("Extra.\n\n# Project Context")
    assert "Project rules." in system and "Current working directory:" in system


def test_the_plain_frame_and_the_hook_fallback() -> None:
    options = SystemPromptOptions(cwd="/w", custom_prompt="X", append=["Y"])
    today = datetime.date(2026, 1, 2)
    assert build_system_prompt(options, None, today) == plain_prompt(options, today)
    assert plain_prompt(options, today) == "X\n\nY\nCurrent date: 2026-01-02\nCurrent working directory: /w"


def test_a_plugin_may_write_the_prompt_itself(pi_env: Any, tmp_path: Path) -> None:
    """``piko_build_system_prompt``: the first answer wins; ``tryfirst`` goes before the default."""
    plugin = (
        "from piko import hookimpl\n\n"
        "@hookimpl(tryfirst=True)\n"
        "def piko_build_system_prompt(options, today):\n"
        "    return 'Mine: ' + ','.join(options.tool_names)\n"
    )
    env, _done, _rows = run_extension(
        pi_env, tmp_path, plugin, OK, "-p", "--tools", "read,ls", "hi", name="my_prompt.py"
    )
    assert env.system_prompt() == "Mine: read,ls"
