"""Battery: ``session_stop`` handlers answering at random (advice, refusals with and without a
reason, nothing, a raise, shapes that mean nothing), through a real extension file, the real
dispatcher and :class:`piko.engine.stop_hook.StopHook`.

Each try writes an extension with a few handlers, each following its own random script of
answers, and asks the hook until it lets the session stop. Checked against a model of the rules:
the session stops exactly when no refusal and no granted advice stand; a refusal outranks advice
and does not spend the allowance; at most 8 advisory continuations; each continuation's text is
the refusal's reason (or the diagnostic), or the advice's contexts joined in handler order. A
continuation the model expected and the hook did not give is a turn lost.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

from battery import Battery
from battery import Tally
from battery import both_sizes
from battery import run_seeded_tries
from battery import tries
from support.clean_env import boot_app

from piko.engine.session_services import SessionServices
from piko.engine.stop_hook import MAX_CONTINUATIONS
from piko.engine.stop_hook import NO_REASON
from piko.engine.stop_hook import StopHook

ANSWERS = ["none", "advice", "bare_advice", "refuse", "bare_refuse", "raise", "string", "number"]

FACTORY = """
import json
SCRIPTS = json.loads({scripts!r})

def answer(kind, handler, call):
    if kind == "advice":
        return {{"continue": True, "additionalContext": f"h{{handler}} c{{call}}"}}
    if kind == "bare_advice":
        return {{"continue": True}}
    if kind == "refuse":
        return {{"decision": "block", "reason": f"h{{handler}} refuses {{call}}"}}
    if kind == "bare_refuse":
        return {{"decision": "block"}}
    if kind == "raise":
        raise RuntimeError("broken stop handler")
    if kind == "string":
        return "continue"
    if kind == "number":
        return 8
    return None

def activate(pi):
    for index, script in enumerate(SCRIPTS):
        calls = [0]
        def handler(event, ctx, index=index, script=script, calls=calls):
            call = calls[0]
            calls[0] += 1
            return answer(script[call] if call < len(script) else "none", index, call)
        pi.on("session_stop", handler)
"""


def _expected(scripts: list[list[str]]) -> list[str]:
    """The continuation texts the rules give, in order, until the session may stop."""
    texts: list[str] = []
    granted = 0
    for call in range(max(len(s) for s in scripts) + 1):
        answers = [(h, s[call] if call < len(s) else "none") for h, s in enumerate(scripts)]
        refusal = next(((h, a) for h, a in answers if a in ("refuse", "bare_refuse")), None)
        if refusal is not None:
            h, kind = refusal
            texts.append(f"h{h} refuses {call}" if kind == "refuse" else NO_REASON)
            continue
        advice = [(h, a) for h, a in answers if a in ("advice", "bare_advice")]
        if not advice or granted >= MAX_CONTINUATIONS:
            return texts
        granted += 1
        contexts = [f"h{h} c{call}" for h, a in advice if a == "advice"]
        texts.append("\n\n".join(contexts) or "Continue.")
    return texts


def _try(root: Path, rng: random.Random, tally: Tally) -> None:
    scripts = [[rng.choice(ANSWERS) for _ in range(rng.randint(0, 12))] for _ in range(rng.randint(1, 3))]
    root.mkdir(parents=True)
    ext = root / "stopper.py"
    ext.write_text(FACTORY.format(scripts=json.dumps(scripts)))
    app = boot_app(root, [str(ext)])
    hook = StopHook(SessionServices(dispatcher=app.dispatcher, ctx=app.context(), session_id=lambda: "s"))

    async def ask() -> list[str]:
        got: list[str] = []
        for _ in range(64):  # far past any script: a hook that never lets go is a failure
            message = await hook.next_turn()
            if message is None:
                return got
            got.append(str(message.content))
        got.append("<never stopped>")
        return got

    got = asyncio.run(ask())
    want = _expected(scripts)
    if got != want:
        missing = max(0, len(want) - len(got))
        tally.lose(missing, f"scripts {scripts}: wanted {len(want)} continuations, got {len(got)}")
        if not missing:
            tally.fail(f"scripts {scripts}: got {got!r}, wanted {want!r}")
    if hook.continuations > MAX_CONTINUATIONS:
        tally.fail(f"{hook.continuations} advisory continuations granted")


@both_sizes
def test_stop_hook_follows_its_rules(battery: Battery, clean_tmp: Path, slow: bool) -> None:
    tally = battery.case("ext2 session_stop: advice, refusals, broken handlers")
    run_seeded_tries(tally, tries(15, 300, slow=slow), 1616, clean_tmp, _try)
