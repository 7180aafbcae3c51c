"""Project trust over every protected project input (pi 1.6's list), with real ``pi`` runs.

What waits for trust, what does not (context files, a bare ``.pi``), the order of the decision
(``--approve``/``--no-approve``, the ``project_trust`` event, saved decisions by canonical path
with the closest folder applying, ``defaultProjectTrust``), print/json/RPC runs that never wait
and say once what they skipped, and a damaged ``trust.json`` that trusts nothing and says so.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agent_harness import MOCK
from agent_harness import PI
from agent_harness import PiEnv

from piko.app import trust

OK = [{"blocks": [{"text": "ok"}], "repeat": True}]
SKILL = "---\nname: proj-skill\ndescription: A project skill.\n---\nBody\n"


def _notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "Project resources in" in line]


def _project(env: PiEnv) -> None:
    """A project using every kind of protected input the prompt shows, and a context file."""
    env.write(".pi/SYSTEM.md", "PROJECT-SYSTEM.")
    env.write(".pi/APPEND_SYSTEM.md", "PROJECT-APPEND.")
    env.write(".pi/skills/proj-skill/SKILL.md", SKILL)
    env.write(".pi/prompts/hi.md", "PROJECT-TEMPLATE $1\n")
    env.write(".pi/settings.json", json.dumps({"defaultThinkingLevel": "high"}))
    env.write("AGENTS.md", "PROJECT-RULES.\n")


@pytest.mark.parametrize(
    "entry",
    [
        ".pi/settings.json",
        ".pi/mcp.json",
        ".pi/extensions/x.py",
        ".pi/skills/s/SKILL.md",
        ".pi/prompts/p.md",
        ".pi/themes/t.json",
        ".pi/SYSTEM.md",
        ".pi/APPEND_SYSTEM.md",
        ".agents/skills/s/SKILL.md",
        "../.agents/skills/s/SKILL.md",
    ],
)
def test_each_protected_input_asks_for_trust(tmp_path: Path, entry: str) -> None:
    work = tmp_path / "a" / "work"
    path = work / entry
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    found = trust.protected_inputs(work)
    expected = entry.split("/")[0] + "/" + entry.split("/")[1]
    if entry.startswith(".."):
        expected = str(tmp_path / "a" / ".agents" / "skills")
    assert found == [expected]


def test_a_bare_pi_folder_and_the_users_own_agents_skills_ask_nothing(
    tmp_path: Path, monkeypatch: Any
) -> None:
    work = tmp_path / "home" / "work"
    (work / ".pi" / "sessions").mkdir(parents=True)
    (tmp_path / "home" / ".agents" / "skills").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert trust.protected_inputs(work) == []


def test_untrusted_runs_skip_the_project_but_read_its_context_files(pi_env: Any) -> None:
    env = pi_env(OK)
    _project(env)
    untrusted = env.run("-p", *MOCK, "/hi there")
    assert untrusted.returncode == 0, untrusted.stderr
    prompt = env.system_prompt(0)
    assert "PROJECT-RULES." in prompt  # context files load regardless, as in pi
    for marker in ("PROJECT-SYSTEM.", "PROJECT-APPEND.", "proj-skill"):
        assert marker not in prompt
    assert env.user_texts(0) == ["/hi there"]
    assert "reasoning_effort" not in env.server.requests[0]["body"]  # the project's thinking level
    (notice,) = _notices(untrusted.stderr)
    assert notice == (
        f"Warning: Project resources in {os.path.realpath(env.work)} were not loaded (.pi/settings.json, "
        ".pi/skills, .pi/prompts, .pi/SYSTEM.md, .pi/APPEND_SYSTEM.md): this project is not trusted. Use "
        f"--approve (-a) to trust it for this run, or `pi trust` in {os.path.realpath(env.work)} (/trust in "
        "the interactive mode) to save a decision"
    )
    approved = env.run("-a", "-p", *MOCK, "/hi there")
    assert approved.returncode == 0 and _notices(approved.stderr) == []
    prompt = env.system_prompt(1)
    for marker in ("PROJECT-SYSTEM.", "PROJECT-APPEND.", "proj-skill", "PROJECT-RULES."):
        assert marker in prompt
    assert env.user_texts(1) == ["PROJECT-TEMPLATE there\n"]
    assert not (env.home / "trust.json").exists()  # --approve is for one run


def test_the_order_of_the_decision(pi_env: Any) -> None:
    env = pi_env(OK)
    env.write(".pi/prompts/hi.md", "EXPANDED\n")

    def loaded(*args: str, settings: dict[str, Any] | None = None) -> bool:
        if settings is not None:
            env.settings(settings)
        done = env.run(*args, "-p", *MOCK, "/hi")
        assert done.returncode == 0, done.stderr
        expanded = env.user_texts() == ["EXPANDED\n"]
        assert bool(_notices(done.stderr)) is not expanded  # skipped: said once; loaded: nothing said
        return expanded

    assert not loaded(settings={"defaultProjectTrust": "ask"})  # asked nowhere: not trusted
    assert loaded(settings={"defaultProjectTrust": "always"})
    assert not loaded(settings={"defaultProjectTrust": "never"})
    env.trust(trusted=False)
    assert not loaded(settings={"defaultProjectTrust": "always"})  # a saved decision beats the setting
    assert loaded("--approve")  # the command line beats everything
    env.trust(env.work.parent, True)  # a parent's decision does not beat the project's own
    assert not loaded()
    (env.home / "trust.json").write_text(json.dumps({os.path.realpath(env.work.parent): True}))
    assert loaded()  # ... and covers it when the project has none
    assert not loaded("-na")
    assert not loaded("--approve", "--no-approve")  # both: the safer one


def test_a_project_setting_cannot_choose_the_default(pi_env: Any) -> None:
    env = pi_env(OK)
    env.write(".pi/settings.json", json.dumps({"defaultProjectTrust": "always"}))
    env.write(".pi/prompts/hi.md", "EXPANDED\n")
    assert env.run("-p", *MOCK, "/hi").returncode == 0
    assert env.user_texts() == ["/hi"]


def test_a_bad_default_is_named_and_counts_as_ask(pi_env: Any) -> None:
    env = pi_env(OK)
    env.write(".pi/prompts/hi.md", "EXPANDED\n")
    env.settings({"defaultProjectTrust": "sometimes"})
    done = env.run("-p", *MOCK, "/hi")
    assert done.returncode == 0
    assert (
        f"Warning: defaultProjectTrust in {env.home / 'settings.json'} must be one of ask, always, never, "
        "not 'sometimes'; using \"ask\""
    ) in done.stderr.splitlines()
    assert env.user_texts() == ["/hi"]


def test_saved_decisions_use_the_canonical_path(pi_env: Any, tmp_path: Path) -> None:
    env = pi_env(OK)
    env.write(".pi/prompts/hi.md", "EXPANDED\n")
    link = tmp_path / "link-to-work"
    link.symlink_to(env.work)
    done = env.run("trust", cwd=link)
    assert done.returncode == 0, done.stderr
    assert json.loads((env.home / "trust.json").read_text()) == {os.path.realpath(env.work): True}
    assert env.run("-p", *MOCK, "/hi").returncode == 0  # the real folder is the same project
    assert env.user_texts() == ["EXPANDED\n"]
    assert env.run("untrust", cwd=link).returncode == 0
    assert env.run("-p", *MOCK, "/hi", cwd=link).returncode == 0
    assert env.user_texts() == ["/hi"]


DECIDER = """
import json, os

def activate(pi):
    def decide(event, ctx):
        with open(os.environ["TRUST_LOG"], "a") as log:
            log.write(json.dumps({"who": NAME, "cwd": event.cwd, "found": event.found, "ui": ctx.has_ui}) + "\\n")
        return ANSWER

    pi.on("project_trust", decide)
"""


def _decider(tmp_path: Path, name: str, answer: Any) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(f"NAME = {name!r}\nANSWER = {answer!r}\n" + DECIDER)
    return path


def test_extensions_decide_first_yes_or_no_wins_and_may_remember(pi_env: Any, tmp_path: Path) -> None:
    env = pi_env(OK)
    env.write(".pi/prompts/hi.md", "EXPANDED\n")
    log = tmp_path / "trust-log.jsonl"
    undecided = _decider(tmp_path, "first", {"trusted": "undecided"})
    yes = _decider(tmp_path, "second", {"trusted": "yes"})
    no = _decider(tmp_path, "third", {"trusted": "no", "remember": True})
    run_env = {"TRUST_LOG": str(log)}
    done = env.run("-e", str(undecided), "-e", str(yes), "-e", str(no), "-p", *MOCK, "/hi", env=run_env)
    assert done.returncode == 0, done.stderr
    assert env.user_texts() == ["EXPANDED\n"]  # the second said yes; the third was not asked
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [c["who"] for c in calls] == ["first", "second"]
    assert calls[0] == {
        "who": "first",
        "cwd": os.path.realpath(env.work),
        "found": [".pi/prompts"],
        "ui": False,
    }
    assert not (env.home / "trust.json").exists()  # yes without remember: this run only
    env.trust(trusted=True)
    done = env.run("-e", str(no), "-p", *MOCK, "/hi", env=run_env)
    assert env.user_texts() == ["/hi"]  # an extension's no beats the saved yes...
    assert json.loads((env.home / "trust.json").read_text()) == {
        os.path.realpath(env.work): False
    }  # ...remembered
    done = env.run("-e", str(yes), "--no-approve", "-p", *MOCK, "/hi", env=run_env)
    assert env.user_texts() == ["/hi"]  # the command line comes before extensions
    assert [json.loads(line)["who"] for line in log.read_text().splitlines()][-1] == "third"


def test_a_bad_answer_is_reported_and_counts_as_undecided(pi_env: Any, tmp_path: Path) -> None:
    env = pi_env(OK)
    env.write(".pi/prompts/hi.md", "EXPANDED\n")
    env.trust()
    bad = _decider(tmp_path, "bad", {"trusted": True})
    done = env.run("-e", str(bad), "-p", *MOCK, "/hi", env={"TRUST_LOG": str(tmp_path / "log")})
    assert done.returncode == 0
    assert env.user_texts() == ["EXPANDED\n"]  # the saved decision applied
    assert 'project_trust must return {"trusted": "yes" | "no" | "undecided"}' in done.stderr


def test_a_project_extension_cannot_vote_on_its_own_trust(pi_env: Any, tmp_path: Path) -> None:
    env = pi_env(OK)
    env.write(".pi/extensions/self_trust.py", _decider(tmp_path, "project", {"trusted": "yes"}).read_text())
    log = tmp_path / "log"
    done = env.run("-p", *MOCK, "hi", env={"TRUST_LOG": str(log)})
    assert done.returncode == 0
    assert not log.exists()
    assert len(_notices(done.stderr)) == 1


def test_a_damaged_trust_file_trusts_nothing_says_so_and_is_kept(pi_env: Any) -> None:
    env = pi_env(OK)
    env.write(".pi/prompts/hi.md", "EXPANDED\n")
    damaged = env.home / "trust.json"
    for text in ("{not json", '{"/x": "yes"}', "[true]"):
        damaged.write_text(text)
        done = env.run("-p", *MOCK, "/hi", env={})
        assert done.returncode == 0, done.stderr
        assert env.user_texts() == ["/hi"]
        warnings = [line for line in done.stderr.splitlines() if "trust file" in line]
        assert len(warnings) == 1 and str(damaged) in warnings[0], done.stderr
        assert warnings[0].endswith("; every project counts as not trusted until it is fixed")
        assert len(_notices(done.stderr)) == 1
        refused = env.run("trust")
        assert refused.returncode == 1 and "fix or remove it before piko records a decision" in refused.stderr
        listed = env.run("trust", "--list")
        assert listed.returncode == 1 and str(damaged) in listed.stderr
        assert damaged.read_text() == text  # never overwritten
    assert env.run("--approve", "-p", *MOCK, "/hi").returncode == 0  # one run still may trust it
    assert env.user_texts() == ["EXPANDED\n"]


def test_rpc_and_json_runs_never_wait_and_say_it_once(pi_env: Any) -> None:
    env = pi_env(OK)
    env.write(".pi/prompts/hi.md", "EXPANDED\n")
    proc = subprocess.Popen(
        [PI, "--mode", "rpc", *MOCK, "--no-session"], cwd=env.work, env=env.environment(),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    out, err = proc.communicate(json.dumps({"id": "1", "type": "get_state"}) + "\n", timeout=60)
    assert json.loads(out.splitlines()[0])["success"] is True
    assert len(_notices(err)) == 1
    done = env.run("--mode", "json", *MOCK, "/hi")
    assert done.returncode == 0 and len(_notices(done.stderr)) == 1
    assert all(line.startswith("{") for line in done.stdout.splitlines())


HOOKIMPL_DECIDER = """
from piko import hookimpl


@hookimpl
def piko_project_trust(event, ctx):
    return {"trusted": "yes", "remember": True}
"""


def test_a_plugin_decides_through_the_hook_itself(pi_env: Any, tmp_path: Path) -> None:
    """``piko_project_trust`` as a plain ``@hookimpl`` (what an installed distribution writes)."""
    env = pi_env(OK)
    env.write(".pi/prompts/hi.md", "EXPANDED\n")
    plugin = tmp_path / "decides.py"
    plugin.write_text(HOOKIMPL_DECIDER)
    assert env.run("-e", str(plugin), "-p", *MOCK, "/hi").returncode == 0
    assert env.user_texts() == ["EXPANDED\n"]
    assert json.loads((env.home / "trust.json").read_text()) == {os.path.realpath(env.work): True}


CHECKS_TRUST = """
import os


def activate(pi):
    def started(event, ctx):
        with open(os.environ["TRUST_LOG"], "a") as log:
            log.write(str(ctx.is_project_trusted()) + "\\n")

    pi.on("session_start", started)
"""


def test_extensions_can_ask_whether_the_run_trusts_the_project(pi_env: Any, tmp_path: Path) -> None:
    env = pi_env(OK)
    env.write(".pi/prompts/hi.md", "EXPANDED\n")
    ext = tmp_path / "checks.py"
    ext.write_text(CHECKS_TRUST)
    log = tmp_path / "log"
    for flag in ("--no-approve", "--approve"):
        assert env.run(flag, "-e", str(ext), "-p", *MOCK, "hi", env={"TRUST_LOG": str(log)}).returncode == 0
    assert log.read_text().split() == ["False", "True"]


def test_subcommands_take_the_trust_flags_before_or_after_their_name(pi_env: Any) -> None:
    env = pi_env(OK)
    env.settings({"disabledPlugins": []}, project=True)
    for args in (["list", "-a"], ["-a", "list"], ["list", "--no-approve"]):
        done = env.run(*args)
        assert done.returncode == 0, (args, done.stderr)
        assert bool(_notices(done.stderr)) is ("-a" not in args), (args, done.stderr)


ASKS_THE_USER = """
import json, os

def activate(pi):
    async def decide(event, ctx):
        answers = [await ctx.ui.select("Trust?", ["yes", "no"]), await ctx.ui.confirm("Trust?", event.cwd),
                   await ctx.ui.input("Why?")]
        ctx.ui.notify("trust asker saw no UI", "warning")
        with open(os.environ["TRUST_LOG"], "a") as log:
            log.write(json.dumps({"ui": ctx.has_ui, "mode": ctx.mode, "answers": answers}) + "\\n")
        return {"trusted": "undecided"}

    pi.on("project_trust", decide)
"""


def test_handler_dialogs_answer_at_once_in_print_json_and_rpc(pi_env: Any, tmp_path: Path) -> None:
    """Outside the interactive mode a handler's dialogs give their cancel value without reading
    stdin (RPC commands on stdin are not eaten); the saved decision then applies."""
    env = pi_env(OK)
    env.write(".pi/prompts/hi.md", "EXPANDED\n")
    env.trust()
    ext = tmp_path / "asks.py"
    ext.write_text(ASKS_THE_USER)
    log = tmp_path / "log"
    run_env = {**env.environment(), "TRUST_LOG": str(log)}
    for mode in ("text", "json"):
        done = subprocess.run(
            [PI, "--mode", mode, "-e", str(ext), *MOCK, "-p", "/hi"], cwd=env.work, env=run_env,
            capture_output=True, text=True, timeout=60, input="1\n1\n",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "Warning: trust asker saw no UI" in done.stderr
        assert env.user_texts()[0].startswith("1\n1")  # piped stdin became the prompt, unread by the dialogs
    proc = subprocess.Popen(
        [PI, "--mode", "rpc", "-e", str(ext), *MOCK, "--no-session"], cwd=env.work, env=run_env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    out, err = proc.communicate(json.dumps({"id": "1", "type": "get_state"}) + "\n", timeout=60)
    assert json.loads(out.splitlines()[0])["success"] is True, err  # stdin reached the RPC mode
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    # ctx.mode is the run's mode, as pi 1.6 gives it (not a start-up placeholder)
    assert calls == [
        {"ui": False, "mode": mode, "answers": [None, False, None]} for mode in ("print", "json", "rpc")
    ]


PACKAGE_VOTER = """
import os

def activate(pi):
    with open(os.environ["TRUST_LOG"], "a") as log:
        log.write("loaded WHO\\n")

    def vote(event, ctx):
        with open(os.environ["TRUST_LOG"], "a") as log:
            log.write("vote WHO\\n")
        return {"trusted": "undecided"}

    pi.on("project_trust", vote)
"""


def test_user_packages_vote_and_project_packages_load_only_once_trusted(pi_env: Any, tmp_path: Path) -> None:
    """pi 1.6 (checked with the real pi): the extensions of packages in the user's settings take
    part in ``project_trust``; those of packages the project's settings configure load only once
    the project is trusted, after the decision, so they never vote on it."""
    env = pi_env(OK)
    for who in ("user", "project"):
        package = tmp_path / f"{who}-pkg"
        (package / "extensions").mkdir(parents=True)
        (package / "extensions" / f"{who}_voter.py").write_text(PACKAGE_VOTER.replace("WHO", who))
    env.settings({"packages": [str(tmp_path / "user-pkg")]})
    env.settings({"packages": [str(tmp_path / "project-pkg")]}, project=True)
    log = tmp_path / "log"

    def run(*flags: str) -> list[str]:
        log.unlink(missing_ok=True)
        done = env.run(*flags, "-p", *MOCK, "hi", env={"TRUST_LOG": str(log)})
        assert done.returncode == 0, done.stderr
        return log.read_text().splitlines()

    assert run() == ["loaded user", "vote user"]  # untrusted: the project's package never loads
    env.trust()
    assert run() == ["loaded user", "vote user", "loaded project"]  # trusted by the saved decision
    assert run("--approve") == ["loaded user", "loaded project"]  # the flag decides: no vote at all
