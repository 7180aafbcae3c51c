"""Battery: while answers stream in a real terminal (tmux), every screen keeps the editor and the
footer, in both tui modes, and every block of every answer ends up in the output exactly once.

Each round starts piko in a private tmux server and streams scripted answers of different shapes
(paragraphs, a code block taller than the terminal, long lists, a tool call between texts). The
screen is sampled as fast as tmux answers: a sample without the editor's rules or the footer is
a failure when they do not come back within a few seconds. (tmux 3.3 has no synchronized
updates and reads a frame of more than a few KB in parts, so on a busy machine a sample, or two,
may catch a frame half drawn: about 1 in 500 samples in the regular mode while a block taller
than the terminal streams; the battery counts an editor that stays away.) After the answers, the regular mode's scrollback, and the fullscreen mode's exit output
(the transcript printed into the normal screen), must hold each numbered line once: a line
missing or printed twice counts as lost.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from battery import Battery
from battery import both_sizes
from battery import tries

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interactive"))

from tmux_terminal import TMUX
from tmux_terminal import Terminal

RULE = re.compile(r"^─{100}$", re.M)
COME_BACK_S = 5.0  # a half-drawn frame is complete long before this


def _whole(screen: str) -> bool:
    return bool(RULE.search(screen)) and "(auto)" in screen


def _shapes(round_number: int) -> list[tuple[str, list[str]]]:
    """(answer text, the marker lines it must leave once) for one round."""
    tag = f"r{round_number}"
    paragraphs = [f"Paragraph {tag}-{i}: " + "lorem ipsum dolor sit amet " * 3 for i in range(25)]
    code = [f"code_{tag}_{i:02d} = {i}" for i in range(45)]
    items = [f"- item {tag}-{i} of the list" for i in range(35)]
    return [
        ("\n\n".join(paragraphs), [p.split(":")[0] for p in paragraphs]),
        (
            "```python\n" + "\n".join(code) + f"\n```\n\nAfter the code {tag}.",
            [*code, f"After the code {tag}."],
        ),
        ("\n".join(items) + f"\n\nEnd of list {tag}.", [i[2:] for i in items] + [f"End of list {tag}."]),
    ]


def _round(tmp: Path, tui_mode: str, round_number: int) -> tuple[int, list[str], int, list[str]]:
    """One terminal, the answers of one round: (screens sampled, broken screens, lines lost, reasons)."""
    shapes = _shapes(round_number)
    turns: list[Any] = [{"blocks": [{"text": text}]} for text, _markers in shapes]
    terminal = Terminal(tmp, turns=turns, tui_mode=tui_mode, tokens_per_second=1500, name=f"tui-{tui_mode}")
    terminal.start()
    sampled, broken, reasons = 0, [], []
    lost = 0
    try:
        terminal.wait_ready()
        for number, (_text, markers) in enumerate(shapes):
            terminal.submit(f"question {number}")
            last = markers[-1]
            while True:
                screen = terminal.screen()
                sampled += 1
                if not _whole(screen):
                    try:
                        terminal.wait_for(_whole, timeout=COME_BACK_S)
                    except AssertionError:
                        broken.append(screen)
                if last in screen and "Working" not in screen:
                    break
                if sampled > 20000:
                    reasons.append(f"answer {number} never finished")
                    break
        if tui_mode == "fullscreen":
            terminal.keys("C-d")
            output = terminal.wait_for(r"\[piko exited", scrollback=True, timeout=30)
        else:
            output = terminal.history()
        for _text, markers in shapes:
            for marker in markers:
                count = len(re.findall(rf"(?<![\w-]){re.escape(marker)}(?![\w-])", output))
                if count != 1:
                    lost += 1
                    reasons.append(f"{marker!r} {count} times")
    finally:
        terminal.close()
    return sampled, broken, lost, reasons


@both_sizes
@pytest.mark.parametrize("tui_mode", ["regular", "fullscreen"])
@pytest.mark.timeout(900)
def test_tui_screens_keep_the_editor_and_every_line_once(
    battery: Battery, tmp_path: Path, tui_mode: str, slow: bool
) -> None:
    if TMUX is None:
        pytest.fail("tmux is not installed (apt-get install -y tmux)")
    screens = battery.case(f"tui {tui_mode}: streamed screens keep editor and footer")
    lines = battery.case(f"tui {tui_mode}: every answer line once in the output")
    for round_number in range(tries(1, 4, slow=slow)):
        sampled, broken, lost, reasons = _round(tmp_path / f"round{round_number}", tui_mode, round_number)
        screens.tries += sampled
        for screen in broken:
            screens.fail("no editor or footer:\n" + screen)
        lines.tries += sum(len(markers) for _t, markers in _shapes(round_number))
        lines.lose(lost, "; ".join(reasons[:3]))
        for reason in reasons:
            if "never finished" in reason:
                lines.fail(reason)
