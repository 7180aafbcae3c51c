"""Skills, prompt templates and their expansion, end to end through ``pi`` and at unit level."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agent_harness import MOCK
from agent_harness import OK
from agent_harness import PiEnv
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from piko.engine.expansion import expand_prompt_template
from piko.engine.expansion import parse_command_args
from piko.engine.expansion import strip_frontmatter
from piko.engine.expansion import substitute_args
from piko.plugins.resources.frontmatter import FrontmatterError
from piko.plugins.resources.frontmatter import parse_frontmatter
from piko.resources.loader import PromptTemplate
from piko.resources.patterns import apply_patterns
from piko.resources.patterns import glob_match


def skill_md(description: str | None, name: str | None = None, extra: str = "", body: str = "Body.") -> str:
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    if extra:
        lines.append(extra)
    return "\n".join([*lines, "---", body, ""])


def listed_skills(prompt: str) -> list[tuple[str, str]]:
    """``(name, location)`` of each skill in the prompt's ``<available_skills>`` block."""
    return re.findall(
        r"<name>(.*?)</name>\n\s*<description>.*?</description>\n\s*<location>(.*?)</location>", prompt, re.S
    )


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Warning: ")]


# ---------------------------------------------------------------------------
# Skills
# ---------------------------------------------------------------------------


def _skill_tree(env: PiEnv) -> None:
    home, work = env.home, env.work
    (work / ".git").mkdir()
    env.write("sub/.pi/skills/proj-skill/SKILL.md", skill_md("Project skill.", "proj-skill"))
    env.write("sub/.pi/skills/shared/SKILL.md", skill_md("Project wins the name.", "shared"))
    env.write("sub/.pi/skills/loose.md", skill_md("A loose project file."))
    env.write(".pi/skills/not-cwd/SKILL.md", skill_md(".pi is the cwd's, not the git root's."))
    env.write("sub/.agents/skills/deep/SKILL.md", skill_md("From cwd's .agents."))
    env.write(".agents/skills/root-agents/SKILL.md", skill_md("From the git root's .agents."))
    env.write(".agents/skills/ignored.md", skill_md("Root files of .agents folders are no skills."))
    env.write("skills/above-git/SKILL.md", skill_md("Above the git root."), base=work.parent / ".agents")
    env.write("skills/user-skill/SKILL.md", skill_md("User skill."), base=home)
    env.write("skills/shared/SKILL.md", skill_md("Loses, the project has the name."), base=home)
    env.write("skills/user-loose.md", skill_md("A loose user file."), base=home)
    env.write(".agents/skills/home-agents/SKILL.md", skill_md("From ~/.agents."), base=env.user_home)


def test_skills_come_from_every_place_in_pis_order(pi_env: Any) -> None:
    env = pi_env(OK)
    env.trust()  # the project's .pi files load once it is trusted
    _skill_tree(env)
    done = env.run("-p", *MOCK, "hi", cwd=env.work / "sub")
    assert done.returncode == 0, done.stderr
    found = listed_skills(env.system_prompt())
    assert found == [
        ("skills", str(env.work / "sub/.pi/skills/loose.md")),
        ("proj-skill", str(env.work / "sub/.pi/skills/proj-skill/SKILL.md")),
        ("shared", str(env.work / "sub/.pi/skills/shared/SKILL.md")),
        ("deep", str(env.work / "sub/.agents/skills/deep/SKILL.md")),
        ("root-agents", str(env.work / ".agents/skills/root-agents/SKILL.md")),
        ("user-skill", str(env.home / "skills/user-skill/SKILL.md")),
        ("home-agents", str(env.user_home / ".agents/skills/home-agents/SKILL.md")),
    ]
    assert warnings(done.stderr) == [
        f'Warning: skill "shared" at {env.home / "skills/shared/SKILL.md"} ignored: '
        f"{env.work / 'sub/.pi/skills/shared/SKILL.md'} has the name",
        f'Warning: skill "skills" at {env.home / "skills/user-loose.md"} ignored: '
        f"{env.work / 'sub/.pi/skills/loose.md'} has the name",
    ]


def test_invalid_skills_are_reported_and_the_ones_without_description_skipped(pi_env: Any) -> None:
    env = pi_env(OK)
    env.write("skills/Bad_Name/SKILL.md", skill_md("Loads despite the name."), base=env.home)
    env.write("skills/other-dir/SKILL.md", skill_md("Name differs.", "renamed"), base=env.home)
    env.write("skills/no-desc/SKILL.md", skill_md(None, "no-desc"), base=env.home)
    env.write("skills/long/SKILL.md", skill_md("x" * 1100), base=env.home)
    done = env.run("-p", *MOCK, "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"
    names = [name for name, _ in listed_skills(env.system_prompt())]
    assert names == ["Bad_Name", "long", "renamed"]
    skills = env.home / "skills"
    assert warnings(done.stderr) == [
        f"Warning: skill {skills / 'Bad_Name/SKILL.md'}: name contains invalid characters "
        "(must be lowercase a-z, 0-9, hyphens only)",
        f"Warning: skill {skills / 'long/SKILL.md'}: description exceeds 1024 characters (1100)",
        f"Warning: skill {skills / 'no-desc/SKILL.md'}: description is required; skipped",
        f'Warning: skill {skills / "other-dir/SKILL.md"}: name "renamed" does not match parent directory "other-dir"',
    ]


def test_skills_and_templates_whose_front_matter_pi_rejects_are_skipped(pi_env: Any) -> None:
    env = pi_env(OK * 3)
    env.write("skills/colon/SKILL.md", skill_md("Use when: the user asks", "colon"), base=env.home)
    env.write("skills/fine/SKILL.md", skill_md("Fine.", "fine"), base=env.home)
    env.write("prompts/broken.md", '---\ndescription: "unclosed\n---\nBody\n', base=env.home)
    env.write("prompts/ok.md", "---\ndescription: Works\n---\nBody\n", base=env.home)
    done = env.run("-p", *MOCK, "hi")
    assert done.returncode == 0, done.stderr
    assert [name for name, _ in listed_skills(env.system_prompt())] == ["fine"]
    assert warnings(done.stderr) == [
        f"Warning: skill {env.home / 'skills/colon/SKILL.md'}: Nested mappings are not allowed in compact "
        "mappings at line 2, column 14:"
    ]
    assert "description: Use when: the user asks\n             ^" in done.stderr
    assert env.run("-p", *MOCK, "/broken").returncode == 0  # not a template: the text goes as typed
    assert env.run("-p", *MOCK, "/ok").returncode == 0
    assert [env.user_texts(i) for i in range(3)] == [["hi"], ["/broken"], ["Body"]]


def test_skill_flag_adds_even_with_no_skills(pi_env: Any) -> None:
    env = pi_env(OK * 2)
    env.write("skills/auto/SKILL.md", skill_md("Discovered."), base=env.home)
    env.write("extra/flagged/SKILL.md", skill_md("Given with --skill."))
    env.write("one.md", skill_md("A single file.", "one-file"))
    done = env.run(
        "-p", "--no-skills", "--skill", "extra", "--skill", "one.md", "--skill", "missing", *MOCK, "hi"
    )
    assert done.returncode == 0, done.stderr
    assert [n for n, _ in listed_skills(env.system_prompt())] == ["flagged", "one-file"]
    assert f"Warning: skill path does not exist: {env.work / 'missing'}" in warnings(done.stderr)
    assert env.run("-p", "-ns", *MOCK, "hi").returncode == 0
    assert "<available_skills>" not in env.system_prompt(1)


def test_settings_skill_paths_and_patterns(pi_env: Any) -> None:
    env = pi_env(OK)
    env.trust()  # the project's .pi files load once it is trusted
    env.write("library/keep-me/SKILL.md", skill_md("Kept."), base=env.home)
    env.write("library/drop-me/SKILL.md", skill_md("Excluded by !drop-me."), base=env.home)
    env.write("library/note.md", skill_md("Loose file in a settings folder.", "note"), base=env.home)
    env.write("skills/auto-off/SKILL.md", skill_md("Auto, but excluded."), base=env.home)
    env.write(".pi/skills/proj-off/SKILL.md", skill_md("Forced out by the project."))
    env.write(".pi/skills/proj-on/SKILL.md", skill_md("Stays."))
    env.write("vendor/tools/SKILL.md", skill_md("Project settings path.", "tools"))
    env.settings({"skills": ["library", "!drop-me", "!auto-off"]})
    env.settings({"skills": ["../vendor", "-skills/proj-off"]}, project=True)
    assert env.run("-p", *MOCK, "hi").returncode == 0
    assert [n for n, _ in listed_skills(env.system_prompt())] == ["tools", "proj-on", "keep-me", "note"]


def test_linked_skill_folder_is_loaded_once(pi_env: Any) -> None:
    env = pi_env(OK)
    target = env.write("real/linked/SKILL.md", skill_md("Reached twice."), base=env.home).parent
    (env.home / "skills").mkdir()
    os.symlink(target, env.home / "skills" / "linked")
    done = env.run("-p", "--skill", str(target), *MOCK, "hi")
    assert done.returncode == 0
    assert [n for n, _ in listed_skills(env.system_prompt())] == ["linked"]
    assert warnings(done.stderr) == []


def test_skill_command_expands_with_arguments(pi_env: Any) -> None:
    env = pi_env(OK * 3)
    path = env.write(
        "skills/brave/SKILL.md",
        skill_md("Search.", "brave", body="\n# Brave\n\nRun ./search.js\n"),
        base=env.home,
    )
    env.settings({"enableSkillCommands": False})  # pi still expands: the setting only hides the commands
    done = env.run("-p", *MOCK, "/skill:brave  find   docs ", "/skill:brave", "/skill:nope x")
    assert done.returncode == 0, done.stderr
    block = f'<skill name="brave" location="{path}">\nReferences are relative to {path.parent}.\n\n# Brave\n\nRun ./search.js\n</skill>'
    assert env.user_texts(-1) == [block + "\n\nfind   docs", block, "/skill:nope x"]


def test_an_unreadable_skill_file_is_reported_and_the_text_passes_through(pi_env: Any) -> None:
    env = pi_env(OK)
    path = env.write("skills/gone/SKILL.md", skill_md("Soon gone.", "gone"), base=env.home)
    # the file is there when skills are found, and gone when the prompt expands it
    extension = env.write(
        "remover.py",
        "import os\n\ndef activate(pi):\n"
        f"    pi.on('session_start', lambda event, ctx: os.remove({str(path)!r}))\n",
    )
    done = env.run("-p", "-e", str(extension), *MOCK, "/skill:gone now")
    assert done.returncode == 0, done.stderr
    assert f"Extension error ({path}): ENOENT: no such file or directory, open '{path}'" in done.stderr
    assert env.user_texts()[0] == "/skill:gone now"


def test_skill_hidden_from_the_model_still_runs_as_a_command(pi_env: Any) -> None:
    env = pi_env(OK)
    env.write(
        "skills/manual/SKILL.md",
        skill_md("Manual only.", extra="disable-model-invocation: true"),
        base=env.home,
    )
    assert env.run("-p", *MOCK, "/skill:manual go").returncode == 0
    assert "<available_skills>" not in env.system_prompt()
    assert env.user_texts()[0].startswith('<skill name="manual"')


# ---------------------------------------------------------------------------
# Prompt templates
# ---------------------------------------------------------------------------


def test_templates_from_every_place_project_first(pi_env: Any) -> None:
    env = pi_env(OK * 6)
    env.trust()  # the project's .pi files load once it is trusted
    env.write(".pi/prompts/review.md", "---\ndescription: Review\n---\nProject review of $1\n")
    env.write("prompts/review.md", "Global review (loses)\n", base=env.home)
    env.write("prompts/global-only.md", "Global only: $@\n", base=env.home)
    env.write("prompts/nested/deep.md", "Not found: discovery is not recursive\n", base=env.home)
    env.write("team/prompts/a/team.md", "Team template from a settings folder\n")
    env.write("cli/flagged.md", "From --prompt-template\n")
    env.settings({"prompts": ["../team/prompts"]}, project=True)
    done = env.run(
        "-p", "--prompt-template", "cli/flagged.md", *MOCK,
        "/review 'a b.py'", "/global-only x y", "/team", "/flagged", "/deep", "/nope z",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # a body is trimmed only after front matter, as in pi
    assert env.user_texts(-1) == [
        "Project review of a b.py",
        "Global only: x y\n",
        "Team template from a settings folder\n",
        "From --prompt-template\n",
        "/deep",
        "/nope z",
    ]
    assert (
        f'Warning: prompt template "/review" at {env.home / "prompts/review.md"} ignored: '
        f"{env.work / '.pi/prompts/review.md'} has the name"
    ) in warnings(done.stderr)


def test_no_prompt_templates_keeps_only_the_flag_paths(pi_env: Any) -> None:
    env = pi_env(OK * 2)
    env.write("prompts/auto.md", "auto\n", base=env.home)
    env.write("mine.md", "mine $1\n")
    done = env.run(
        "-p", "-np", "--prompt-template", "mine.md", "--prompt-template", "gone.md", *MOCK, "/auto", "/mine 1"
    )
    assert done.returncode == 0
    assert env.user_texts(-1) == ["/auto", "mine 1\n"]
    assert f"Warning: prompt template path does not exist: {env.work / 'gone.md'}" in warnings(done.stderr)


def test_template_placeholders_end_to_end(pi_env: Any) -> None:
    env = pi_env(OK)
    env.trust()  # the project's .pi files load once it is trusted
    env.write(
        ".pi/prompts/all.md",
        "---\ndescription: all\nargument-hint: <a> [b]\n---\n\n1=$1 2=$2 9=$9 @=$@ A=$ARGUMENTS S=${@:2} L=${@:2:1} Z=${@:0}\n",
    )
    assert env.run("-p", *MOCK, "/all \"x y\" '$1' z").returncode == 0
    assert env.user_texts() == ["1=x y 2=$1 9= @=x y $1 z A=x y $1 z S=$1 z L=$1 Z=x y $1 z"]


def test_parse_command_args_groups_quotes() -> None:
    assert parse_command_args(" a  'b c'\t\"d 'e'\" f\"g h\" ") == ["a", "b c", "d 'e'", "fg h"]
    assert parse_command_args("") == []
    assert parse_command_args("'unclosed words") == ["unclosed words"]


@pytest.mark.parametrize(
    ("content", "args", "expected"),
    [
        ("$1-$2-$3", ["a", "b"], "a-b-"),
        ("$10", [str(i) for i in range(1, 11)], "10"),
        ("${@:2}|${@:2:2}|${@:9}", ["a", "b", "c", "d"], "b c d|b c|"),
        ("$@ / $ARGUMENTS", ["x", "$1"], "x $1 / x $1"),  # argument text is not substituted again
        ("${@:0:1}", ["a", "b"], "a"),
        ("no placeholders", ["a"], "no placeholders"),
    ],
)
def test_substitute_args(content: str, args: list[str], expected: str) -> None:
    assert substitute_args(content, args) == expected


def test_expand_prompt_template_needs_a_known_name() -> None:
    templates = [PromptTemplate(name="fix", description="", content="Fix $1", file_path="/p/fix.md")]
    assert expand_prompt_template("/fix bug", templates) == "Fix bug"
    assert expand_prompt_template("/fix", templates) == "Fix "
    assert expand_prompt_template("/fixer bug", templates) == "/fixer bug"
    assert expand_prompt_template("fix bug", templates) == "fix bug"


# ---------------------------------------------------------------------------
# Front matter, patterns
# ---------------------------------------------------------------------------


def test_frontmatter_reads_the_yaml_skills_use() -> None:
    text = (
        "---\r\nname: \"my-skill\"\r\ndescription: >-\r\n  Folded\r\n  text\r\nlicense: 'MIT'  \r\n"
        "allowed-tools: [read, 'bash']\r\nmetadata:\r\n  author: me\r\n  version: 2\r\n"
        "disable-model-invocation: yes\r\ntags:\r\n  - a\r\n  - b\r\n---\r\n\r\n  Body  \r\n"
    )
    fields, body = parse_frontmatter(text)
    assert fields == {
        "name": "my-skill",
        "description": "Folded text",
        "license": "MIT",
        "allowed-tools": ["read", "bash"],
        "metadata": {"author": "me", "version": 2},
        "disable-model-invocation": "yes",  # YAML 1.2: only true/false are booleans
        "tags": ["a", "b"],
    }
    assert body == "Body"


@pytest.mark.parametrize(
    ("text", "fields", "body"),
    [
        ("no front matter\n", {}, "no front matter\n"),
        ("---\nunclosed: x\n", {}, "---\nunclosed: x\n"),
        ("---\n---\n body \n", {}, "body"),
        (
            "---\ndescription: |\n  one\n\n  # two\nx: true\n---\n",
            {"description": "one\n\n# two\n", "x": True},
            "",
        ),
        ("---\ndescription: plain\n  continued # note\n---\nB", {"description": "plain continued"}, "B"),
        (
            "---\na: \"tab\\there\"\nb: 'it''s'\nc: null\nd: -1.5\n---\n",
            {"a": "tab\there", "b": "it's", "c": None, "d": -1.5},
            "",
        ),
    ],
)
def test_frontmatter_edges(text: str, fields: dict[str, Any], body: str) -> None:
    assert parse_frontmatter(text) == (fields, body)


# What pi 0.73.1's parser (the yaml package, 2.9.1) answers for the same front matter
@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        ("name: x\ndescription: Use when: the user asks",
         "Nested mappings are not allowed in compact mappings at line 2, column 14:\n\n"
         "description: Use when: the user asks\n             ^\n"),
        ("description: ends with colon:",
         "Nested mappings are not allowed in compact mappings at line 1, column 14:\n\n"
         "description: ends with colon:\n             ^\n"),
        ("description: a\n  b\n  c: d",
         "Nested mappings are not allowed in compact mappings at line 1, column 14:\n\ndescription: a\n             ^\n"),
        ("tags:\n  - a: b: c",
         "Nested mappings are not allowed in compact mappings at line 2, column 8:\n\n  - a: b: c\n       ^\n"),
        ('name: x\ndescription: "unclosed',
         'Missing closing "quote at line 2, column 23:\n\ndescription: "unclosed\n                      ^\n'),
        ('description: "multi\n  line unclosed',
         'Missing closing "quote at line 2, column 16:\n\n  line unclosed\n               ^\n'),
        ("description: 'x' trailing",
         "Unexpected scalar at node end at line 1, column 18:\n\ndescription: 'x' trailing\n                 ^^^^^^^^\n"),
        ("name: x\n\tdescription: tab",
         "Tabs are not allowed as indentation at line 2, column 1:\n\nname: x\n\tdescription: tab\n^\n"),
        (" \tdescription: x",
         "Tabs are not allowed as indentation at line 1, column 2:\n\n \tdescription: x\n ^\n"),
        ("metadata:\n  author: me\n  author: you",
         "Map keys must be unique at line 3, column 3:\n\n  author: me\n  author: you\n  ^\n"),
        ("name: x\ndescription: @at",
         "Plain value cannot start with reserved character @ at line 2, column 14:\n\ndescription: @at\n             ^\n"),
        ("name: x\ndescription: [a, b",
         "Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 19:\n\n"
         "description: [a, b\n                  ^\n"),
        ("description: {a: 1",
         "Flow map in block collection must be sufficiently indented and end with a } at line 1, column 19:\n\n"
         "description: {a: 1\n                  ^\n"),
        ("description: `tick`",
         "Plain value cannot start with reserved character ` at line 1, column 14:\n\ndescription: `tick`\n             ^\n"),
        ("description: %x",
         "Plain value cannot start with directive indicator character % at line 1, column 14:\n\n"
         "description: %x\n             ^\n"),
        ("description: - x",
         "Unexpected block-seq-ind on same line with key at line 1, column 14:\n\ndescription: - x\n             ^\n"),
        ("a: 'x' 'y'",
         "Unexpected single-quoted-scalar at node end at line 1, column 8:\n\na: 'x' 'y'\n       ^^^\n"),
        ('a: "\\u00e9\\q"',
         'Invalid escape sequence \\q at line 1, column 11:\n\na: "\\u00e9\\q"\n          ^\n'),
        ("a:\n    b: 1\n  c: 2",
         "All mapping items must start at the same column at line 3, column 1:\n\n    b: 1\n  c: 2\n^\n"),
        ("a: |\n  x\n b: 1",
         "All mapping items must start at the same column at line 3, column 1:\n\n  x\n b: 1\n^\n"),
        ("a:\n  - b: 1\n   c: 2",
         "Sequence item without - indicator at line 3, column 1:\n\n  - b: 1\n   c: 2\n^\n"),
    ],
)  # fmt: skip
def test_front_matter_pi_rejects_fails_with_pis_words(yaml: str, message: str) -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_frontmatter(f"---\n{yaml}\n---\nBody")
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "yaml",
    ["description: url http://x.y/z", "description: time 10:30", "description: a #not: comment",
     "description: foo:bar", "description: 'quoted: fine'", "description: \"it's: fine\""],
)  # fmt: skip
def test_colons_pi_accepts(yaml: str) -> None:
    assert parse_frontmatter(f"---\n{yaml}\n---\n")[0]["description"]


# What pi 0.73.1's parser reads (YAML 1.2, core schema), where a YAML 1.1 reader or a subset would not
@pytest.mark.parametrize(
    ("yaml", "fields"),
    [
        ("a: yes\nb: on\nc: No", {"a": "yes", "b": "on", "c": "No"}),
        ("a: 012\nb: 0o17\nc: 0x1f\nd: +12\ne: 1e3\nf: .5", {"a": 12, "b": 15, "c": 31, "d": 12, "e": 1000, "f": 0.5}),
        ("a: 1_000\nb: 0b11\nc: 10:30\nd: 0o8", {"a": "1_000", "b": "0b11", "c": "10:30", "d": "0o8"}),
        ("a: 2024-01-01\nb: 2024-01-01T10:00:00Z", {"a": "2024-01-01", "b": "2024-01-01T10:00:00Z"}),
        ("a: .inf\nb: ~\nc: Null\nd: TRUE\ne: tRue", {"a": float("inf"), "b": None, "c": None, "d": True, "e": "tRue"}),
        ("metadata: {author: me, tags: [a, [b, c]]}", {"metadata": {"author": "me", "tags": ["a", ["b", "c"]]}}),
        ("a: [a: 1, b]\nb: {x}", {"a": [{"a": 1}, "b"], "b": {"x": None}}),
        ("? a\n: b\n<<: {c: 1}", {"a": "b", "<<": {"c": 1}}),
        ("a: &x [1]\nb: *x\nc: !custom text", {"a": [1], "b": [1], "c": "text"}),
        ("a: \"multi\n  line\"\nb: 'it''s\n\n  x'\nc: plain\n\n  on", {"a": "multi line", "b": "it's\nx", "c": "plain\non"}),
        ("a: |\n  last block\n  keeps its newline", {"a": "last block\nkeeps its newline\n"}),
        ("a: >-\n  folded\n\n  para\nb: |2\n   indented", {"a": "folded\npara", "b": " indented\n"}),
        ("a: x\n\t\nb:\ty\t\nc: 'z'\t# tabs as blanks", {"a": "x", "b": "y", "c": "z"}),
    ],
)  # fmt: skip
def test_front_matter_values_are_read_as_pi_reads_them(yaml: str, fields: dict[str, Any]) -> None:
    assert parse_frontmatter(f"---\n{yaml}\n---\nBody") == (fields, "Body")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab:- \t\n'\"[]{}#|>@`%!&*?,.\\0x\x01é😀")), max_size=40))
def test_any_front_matter_parses_or_fails_with_a_frontmatter_error(yaml: str) -> None:
    try:
        fields, _body = parse_frontmatter(f"---\n{yaml}\n---\n")
    except FrontmatterError as exc:
        assert str(exc)
    else:
        assert isinstance(fields, dict)


def test_the_yaml_library_is_imported_for_front_matter_only() -> None:
    code = (
        "import sys\n"
        "from piko.plugins.resources.frontmatter import parse_frontmatter\n"
        "parse_frontmatter('# no front matter')\n"
        "parse_frontmatter('---\\n---\\nempty front matter')\n"
        "print('yaml' in sys.modules)\n"
        "parse_frontmatter('---\\na: 1\\n---\\n')\n"
        "print('yaml' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["False", "True"]


def test_strip_frontmatter_matches_the_parser() -> None:
    for text in ("---\na: 1\n---\n\nBody\n", "plain\r\ntext", "---\nnever closed"):
        assert strip_frontmatter(text) == parse_frontmatter(text)[1]


def test_patterns_follow_pis_rules(tmp_path: Path) -> None:
    base = tmp_path
    files = [
        base / "a" / "SKILL.md",
        base / "b" / "SKILL.md",
        base / "lib" / "c.md",
        base / "lib" / "deep" / "d.md",
    ]
    assert apply_patterns(files, [], base) == set(files)
    assert apply_patterns(files, ["lib/*"], base) == {files[2]}
    assert apply_patterns(files, ["lib/**"], base) == {files[2], files[3]}
    assert apply_patterns(files, ["!a"], base) == set(files) - {files[0]}  # a skill by its folder name
    assert apply_patterns(files, ["!*", "+b"], base) == {files[1]}
    assert apply_patterns(files, ["+b", "-b"], base) == set(files) - {files[1]}
    assert glob_match("x/y.md", "*.md") is False and glob_match("y.md", "?.md") is True
