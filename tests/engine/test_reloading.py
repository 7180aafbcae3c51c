"""``/reload`` (``piko.engine.reloading``): resources read again, extensions told, what was loaded."""

from __future__ import annotations

import json
from typing import Any

from piko.engine.reloading import ReloadSummary

LIFECYCLE = """
import json, os

def activate(pi):
    def log(name):
        def handler(event, ctx):
            with open(os.path.join(os.environ["HOME"], "lifecycle.jsonl"), "a") as fh:
                fh.write(json.dumps([name, event.reason]) + "\\n")
        return handler

    pi.on("session_start", log("session_start"))
    pi.on("session_shutdown", log("session_shutdown"))
"""


def test_reload_reads_resources_again_and_tells_extensions(rig, run) -> None:
    ext = rig.write_extension("lifecycle", LIFECYCLE)

    async def scenario() -> Any:
        session = await rig.session([], extensions=[ext])
        before = len(session.resources.prompt_templates)
        rig.write_prompt_template("review", "Review $1.\n")
        return session, before, await session.reload()

    session, before, summary = run(scenario())
    assert isinstance(summary, ReloadSummary)
    assert (before, summary.prompt_templates) == (0, 1)
    assert summary.prompt_templates == len(session.resources.prompt_templates)
    assert session.model.id == "faux-1" and session.get_active_tools() == ["read", "bash"]
    log = [json.loads(line) for line in (rig.root / "home" / "lifecycle.jsonl").read_text().splitlines()]
    assert log == [["session_start", "startup"], ["session_shutdown", "reload"], ["session_start", "reload"]]
