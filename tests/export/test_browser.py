"""The export in a real browser: headless Chromium renders it offline, runs its script, shows it all.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it). Each test loads the page
from a ``file://`` URL with the network cut off (every host name resolves to nothing), dumps the
DOM after the page's script ran, and takes screenshots in the light and the dark scheme, kept
in ``tests/export/screenshots/`` (git-ignored) for a person to look at. A local HTTP server
proves that nothing in the page tries to load anything, even where the session names URLs.
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from export_helpers import RICH
from export_helpers import SAMPLES
from export_helpers import SessionFile
from export_helpers import call
from export_helpers import png_base64
from export_helpers import text
from support.http_servers import QuietHandler
from support.http_servers import serving

from piko.data.events import ExportRequest
from piko.plugins.export.html import export_html

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND"


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: .ci/run installs Debian's chromium package")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return path


def run_chromium(chromium: str, tmp_path: Path, url: str, *args: str, timeout: float = 90) -> str:
    """Run headless Chromium once on ``url``; its stdout."""
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        *args,
        url,
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    assert process.returncode == 0, err.decode("utf-8", "replace")[-2000:]
    return out.decode("utf-8", "replace")


def screenshot(chromium: str, tmp_path: Path, page: Path, name: str, *args: str) -> Any:
    from PIL import Image

    SCREENSHOTS.mkdir(exist_ok=True)
    target = SCREENSHOTS / name
    target.unlink(missing_ok=True)
    run_chromium(
        chromium, tmp_path, page.as_uri(), OFFLINE, f"--screenshot={target}", "--window-size=1200,2000", *args
    )
    assert target.exists()
    return Image.open(target).convert("RGB")


def assert_not_blank(image: Any, background: tuple[int, int, int]) -> None:
    """Many colours, the scheme's background, panels that differ from it a little, text that differs a lot."""
    from PIL import Image
    from PIL import ImageChops

    assert image.size == (1200, 2000)
    colours = image.getcolors(maxcolors=1200 * 2000)
    assert colours is not None and len(colours) > 50, "the page looks blank"
    counts = dict((c, n) for n, c in colours)
    total = 1200 * 2000
    assert counts.get(background, 0) > total * 0.05, "the page background is not the scheme's"
    difference = ImageChops.difference(image, Image.new("RGB", image.size, background)).convert("L")
    histogram = difference.histogram()
    assert sum(histogram[5:]) > total * 0.10, "no panels, sidebar or boxes"
    assert sum(histogram[60:]) > total * 0.005, "no text or pictures"


def showcase(path: Path, server: str) -> Path:
    """A session with every kind of content, naming a local server's URLs in several places."""
    s = SessionFile(path)
    s.add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    s.add("session_info", name="Browser showcase")
    s.user(
        [
            text(
                f'Why does the build fail? See ![log]({server}/md-image.png) and <img src="{server}/raw.png">'
            ),
            {"type": "image", "data": png_base64(64, 40, (30, 120, 220)), "mimeType": "image/png"},
        ]
    )
    s.assistant(
        {"type": "thinking", "thinking": "The adder subtracts. I should fix calc.py."},
        text(
            "The **adder** is wrong:\n\n```python\ndef add(a, b):\n    return a - b\n```\n\n| file | status |\n|---|---|\n| calc.py | broken |"
        ),
        call("b1", "bash", command="python -m pytest -q"),
        call("e1", "edit", path="calc.py", edits=[{"oldText": "a - b", "newText": "a + b"}]),
        call("r1", "read", path="/home/alice/screen.png"),
    )
    s.tool_result("b1", "bash", "F\n1 failed in 0.02s\n\nCommand exited with code 1", error=True)
    s.tool_result(
        "e1",
        "edit",
        "Successfully replaced 1 block(s) in calc.py.",
        details={
            "diff": " 1 def add(a, b):\n-2     return a - b\n+2     return a + b",
            "firstChangedLine": 2,
        },
    )
    s.tool_result("r1", "read", "Read image file [image/png]", images=[png_base64(48, 48, (40, 180, 90))])
    s.assistant(text(f"Fixed. More in [the docs]({server}/docs)."))
    s.message(
        {
            "role": "bashExecution",
            "command": "git diff --stat",
            "output": " calc.py | 2 +-\n",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
    )
    return s.write()


class Recorder(QuietHandler):
    requests: list[str] = []

    def do_GET(self) -> None:
        Recorder.requests.append(self.path)
        self.reply(404)


@pytest.fixture
def local_server() -> Iterator[str]:
    Recorder.requests = []
    with serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)) as address:
        yield f"http://{address}"


def test_the_page_renders_offline_with_its_script(chromium: str, tmp_path: Path, local_server: str) -> None:
    page = tmp_path / "showcase.html"
    export_html(
        ExportRequest(
            session_file=str(showcase(tmp_path / "showcase.jsonl", local_server)), output_path=str(page)
        )
    )

    dom = run_chromium(chromium, tmp_path, page.as_uri(), OFFLINE, "--dump-dom")
    # the page's own script ran (the CSP hash admitted it) and the conversation is all there
    assert '<html lang="en" class="js">' in dom and 'data-ready="1"' in dom
    for expected in (
        "Why does the build fail?",
        "The adder subtracts.",
        "<strong>adder</strong>",
        "1 failed in 0.02s",
        '<span class="add">+2     return a + b</span>',
        "Read image file [image/png]",
        "git diff --stat",
        "Browser showcase",
        "9 of 9 entries on the shown branch",
    ):
        assert expected in dom, expected
    assert dom.count('src="data:image/png;base64,') == 2

    light = screenshot(chromium, tmp_path, page, "showcase-light.png")
    assert_not_blank(light, (245, 246, 248))
    dark = screenshot(chromium, tmp_path, page, "showcase-dark.png", "--force-dark-mode")
    assert_not_blank(dark, (17, 20, 24))
    # the two schemes differ where the page background shows (right margin, bottom)
    assert light.getpixel((1150, 1950)) == (245, 246, 248) and dark.getpixel((1150, 1950)) == (17, 20, 24)
    # the user's image and the read tool's image are drawn: their colours appear on screen
    colours = {c for _n, c in light.getcolors(maxcolors=1200 * 2000) or []}
    assert (30, 120, 220) in colours and (40, 180, 90) in colours

    # nothing was fetched, although the session names the server in an image, raw HTML and a link
    assert Recorder.requests == []


def test_nothing_is_fetched_even_with_the_network_up(
    chromium: str, tmp_path: Path, local_server: str
) -> None:
    page = tmp_path / "online.html"
    export_html(
        ExportRequest(session_file=str(showcase(tmp_path / "s.jsonl", local_server)), output_path=str(page))
    )
    dom = run_chromium(chromium, tmp_path, page.as_uri(), "--dump-dom")
    assert "Fixed. More in" in dom
    assert Recorder.requests == []
    # the control: a page that does load from the server is seen doing so
    control = tmp_path / "control.html"
    control.write_text(f'<!DOCTYPE html><img src="{local_server}/control.png">')
    run_chromium(chromium, tmp_path, control.as_uri(), "--dump-dom")
    assert Recorder.requests == ["/control.png"]


def test_pi_sessions_render(chromium: str, tmp_path: Path) -> None:
    rich = tmp_path / "rich.html"
    export_html(ExportRequest(session_file=str(RICH), output_path=str(rich)))
    dom = run_chromium(chromium, tmp_path, rich.as_uri(), OFFLINE, "--dump-dom")
    assert 'data-ready="1"' in dom and "Thought it through." in dom and "Fixture session renamed" in dom
    assert_not_blank(screenshot(chromium, tmp_path, rich, "pi-rich-light.png"), (245, 246, 248))
    # a link to an entry of the other branch: the script shows that branch instead
    other = run_chromium(chromium, tmp_path, rich.as_uri() + "#e-fc99b334", OFFLINE, "--dump-dom")
    assert re.search(r'class="entry user( highlight)?" id="e-fc99b334"', other)  # "run a tool", first branch
    assert 'class="entry branch-summary off" id="e-e0899d91"' in other
    assert 'class="entry user off" id="e-0a52d65b"' in other  # the current branch's question, hidden
    assert "entries on the shown branch" in other and "12 of 29" not in other

    tools = tmp_path / "tools.html"
    export_html(
        ExportRequest(session_file=str(SAMPLES / "c-tools-json" / "session.jsonl"), output_path=str(tools))
    )
    assert_not_blank(screenshot(chromium, tmp_path, tools, "pi-tools-light.png"), (245, 246, 248))
