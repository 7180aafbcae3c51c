"""Battery: extensions registering with pi's option objects in every spelling, with unknown keys
and unknown events, as extensions written for another runtime version do.

Each try writes an extension file whose factory makes a random mix of ``register_tool({...})``,
``register_command(name, {...})``, ``register_flag``, ``register_shortcut`` and ``pi.on(...)``
calls (camelCase or snake_case keys, option dicts or keywords, extra keys piko does not know,
event names of the reference and made-up ones), then boots a real App with it. The extension
must load; every registration must be in its registry (one missing is data lost); every
registration with unknown keys gives exactly one warning, every unknown event name one.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from battery import Battery
from battery import Tally
from battery import both_sizes
from battery import run_seeded_tries
from battery import tries
from support.clean_env import boot_app

from piko.lib.text import camel

REFERENCE_EVENTS = ["session_start", "tool_call", "input", "agent_settled", "plan_review_requested",
                    "session_before_branch", "session.compacting", "todo_reminder", "user_python"]  # fmt: skip
TOOL_KEYS = {
    "label": "A label",
    "description": "what it does",
    "parameters": {"type": "object", "properties": {"x": {"type": "string"}}},
    "prompt_snippet": "one line",
    "prompt_guidelines": ["use it well"],
    "hidden": False,
    "default_inactive": False,
    "deferrable": True,
    "approval": "exec",
    "load_mode": "discoverable",
    "strict": True,
    "mcp_server_name": "srv",
}


def _spell(key: str, rng: random.Random) -> str:
    return camel(key) if rng.random() < 0.5 else key


def _plan(rng: random.Random) -> dict[str, Any]:
    """What one extension registers, as data the factory reads."""
    plan: dict[str, Any] = {"tools": [], "commands": [], "flags": [], "shortcuts": [], "events": []}
    for index in range(rng.randint(1, 4)):
        keys = rng.sample(sorted(TOOL_KEYS), rng.randint(0, len(TOOL_KEYS)))
        options = {_spell(k, rng): TOOL_KEYS[k] for k in keys}
        unknown = [f"future{n}Field" for n in range(rng.randint(0, 2))]
        options.update({key: rng.choice([1, "x", None, [1], {"a": 1}]) for key in unknown})
        plan["tools"].append({"name": f"tool_{index}", "options": options, "unknown": bool(unknown)})
    for index in range(rng.randint(0, 3)):
        unknown = rng.random() < 0.3
        options = {"description": "a command"}
        if unknown:
            options["someNewOption"] = True
        plan["commands"].append({"name": f"cmd-{index}", "options": options, "unknown": unknown,
                                 "keywords": rng.random() < 0.3 and not unknown})  # fmt: skip
    for index in range(rng.randint(0, 2)):
        plan["flags"].append({"name": f"flag-{index}", "options": {"description": "f", "type": "boolean",
                                                                     "default": rng.random() < 0.5}})  # fmt: skip
    for index in range(rng.randint(0, 2)):
        plan["shortcuts"].append({"key": f"ctrl+alt+{'abcdefgh'[index]}", "options": {"description": "s"}})
    plan["events"] = rng.sample(REFERENCE_EVENTS, rng.randint(0, 3)) + [
        f"made_up_event_{n}" for n in range(rng.randint(0, 2))
    ]
    return plan


FACTORY = """
import json
PLAN = json.loads({plan!r})

def activate(pi):
    for tool in PLAN["tools"]:
        pi.register_tool({{"name": tool["name"], "execute": lambda *a: "ok", **tool["options"]}})
    for command in PLAN["commands"]:
        if command["keywords"]:
            pi.register_command(command["name"], handler=lambda args, ctx: None, **command["options"])
        else:
            pi.register_command(command["name"], {{"handler": lambda args, ctx: None, **command["options"]}})
    for flag in PLAN["flags"]:
        pi.register_flag(flag["name"], flag["options"])
    for shortcut in PLAN["shortcuts"]:
        pi.register_shortcut(shortcut["key"], {{"handler": lambda ctx: None, **shortcut["options"]}})
    for name in PLAN["events"]:
        pi.on(name, lambda event, ctx: None)
"""


def _try(root: Path, rng: random.Random, tally: Tally) -> None:
    plan = _plan(rng)
    root.mkdir(parents=True)
    ext = root / "shapes.py"
    ext.write_text(FACTORY.format(plan=json.dumps(plan)))
    app = boot_app(root, [str(ext)])
    info = app.pm.infos.get("shapes")
    if info is None or info.error:
        tally.fail(f"the extension did not load: {info.error if info else 'not listed'}")
        return
    registries = app.registries
    missing = [t["name"] for t in plan["tools"] if t["name"] not in registries.tools]
    missing += [c["name"] for c in plan["commands"] if c["name"] not in registries.commands]
    missing += [f["name"] for f in plan["flags"] if f["name"] not in registries.flags]
    tally.lose(len(missing), f"registrations missing: {missing}")
    mine = [d for d in app.diagnostics() if "extension 'shapes'" in d]
    expected = sum(1 for t in plan["tools"] if t["unknown"]) + sum(
        1 for c in plan["commands"] if c["unknown"]
    )
    expected += len({n for n in plan["events"] if n.startswith("made_up_event_")})
    if len(mine) != expected:
        tally.fail(f"{len(mine)} warnings for {expected} unknown keys or events: {mine}")
    for tool in plan["tools"]:
        definition = registries.tools.get(tool["name"])
        if definition is not None and definition.description != tool["options"].get("description", ""):
            tally.fail(f"tool {tool['name']}: description {definition.description!r}")


@both_sizes
def test_registration_shapes_always_load(battery: Battery, clean_tmp: Path, slow: bool) -> None:
    tally = battery.case("ext registration shapes: option objects, unknown keys and events")
    run_seeded_tries(tally, tries(12, 200, slow=slow), 16, clean_tmp, _try)
