"""The read tool: streamed line windows equal pi's whole-file algorithm, paths, errors, images, abort."""

from __future__ import annotations

import base64
import io
import math
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from tool_harness import aborted_signal
from tool_harness import make_app
from tool_harness import run_tool
from tool_harness import run_unprivileged

from piko.lib.abort import AbortController
from piko.lib.abort import AbortError
from piko.plugins.tools import line_reader
from piko.plugins.tools import read as read_module
from piko.plugins.tools.node_compat import js_string
from piko.plugins.tools.truncate import format_size
from piko.plugins.tools.truncate import truncate_head

# ---------------------------------------------------------------------------
# Streaming equals pi's whole-file algorithm
# ---------------------------------------------------------------------------


def _js_slice(items: list[str], start: float, end: float | None = None) -> list[str]:
    n = len(items)

    def clamp(value: float) -> int:
        value = math.trunc(value)
        return max(n + value, 0) if value < 0 else min(value, n)

    return items[clamp(start) : n if end is None else clamp(end)]


def pi_read_text(
    data: bytes, path: str, offset: Any, limit: Any, max_lines: int, max_bytes: int
) -> tuple[str, Any]:
    """pi's read.js text branch, transcribed on the whole decoded file."""
    all_lines = data.decode("utf-8", "replace").split("\n")
    total = len(all_lines)
    start = max(0, offset - 1) if offset else 0
    start_display = start + 1
    if start >= total:
        raise ValueError(f"Offset {js_string(offset)} is beyond end of file ({total} lines total)")
    user_limited = None
    if limit is not None:
        end = min(start + limit, total)
        selected = "\n".join(_js_slice(all_lines, start, end))
        user_limited = end - start
    else:
        selected = "\n".join(_js_slice(all_lines, start))
    tr = truncate_head(selected, max_lines=max_lines, max_bytes=max_bytes)
    if tr.first_line_exceeds_limit:
        size = format_size(len(all_lines[math.trunc(start)].encode("utf-8")))
        text = (
            f"[Line {js_string(start_display)} is {size}, exceeds {format_size(max_bytes)} limit. "
            f"Use bash: sed -n '{js_string(start_display)}p' {path} | head -c {max_bytes}]"
        )
        return text, {"truncation": tr.to_details()}
    if tr.truncated:
        end_display = start_display + tr.output_lines - 1
        shown = f"{js_string(start_display)}-{js_string(end_display)} of {total}"
        if tr.truncated_by == "lines":
            notice = f"[Showing lines {shown}. Use offset={js_string(end_display + 1)} to continue.]"
        else:
            notice = f"[Showing lines {shown} ({format_size(max_bytes)} limit). Use offset={js_string(end_display + 1)} to continue.]"
        return f"{tr.content}\n\n{notice}", {"truncation": tr.to_details()}
    if user_limited is not None and start + user_limited < total:
        remaining = total - (start + user_limited)
        next_offset = start + user_limited + 1
        return (
            f"{tr.content}\n\n[{js_string(remaining)} more lines in file. Use offset={js_string(next_offset)} to continue.]",
            None,
        )
    return tr.content, None


PIECES = [
    b"a",
    b"bc",
    b"\n",
    b"\n",
    b"\xc3\xa9",
    b"\xe2\x82",
    b"\xff",
    b"\xf0\x9f\x98\x80",
    b"\r",
    b" ",
    b"xyz" * 5,
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join),
    offset=st.one_of(st.none(), st.integers(-2, 14), st.sampled_from([0.5, 2.5, 3.0])),
    limit=st.one_of(st.none(), st.integers(-3, 12), st.sampled_from([1.5, 2.0])),
    max_lines=st.integers(1, 6),
    max_bytes=st.integers(1, 24),
    chunk=st.integers(1, 9),
)
def test_streamed_read_equals_whole_file_algorithm(
    tmp_path_factory: pytest.TempPathFactory,
    data: bytes,
    offset: Any,
    limit: Any,
    max_lines: int,
    max_bytes: int,
    chunk: int,
) -> None:
    path = tmp_path_factory.mktemp("r") / "f.txt"
    path.write_bytes(data)
    try:
        expected: Any = pi_read_text(data, "f.txt", offset, limit, max_lines, max_bytes)
    except ValueError as exc:
        expected = ("error", str(exc))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(line_reader, "CHUNK_SIZE", chunk)
        mp.setattr(read_module, "DEFAULT_MAX_LINES", max_lines)
        mp.setattr(read_module, "DEFAULT_MAX_BYTES", max_bytes)
        options = read_module._ReadOptions(offset=offset, limit=limit, auto_resize=True, image_note=None)
        try:
            with open(path, "rb") as stream:
                result = read_module._read_text(stream, "f.txt", options)
            observed: Any = (result.content[0].text, result.details)
        except ValueError as exc:
            observed = ("error", str(exc))
    assert observed == expected


@given(data=st.lists(st.sampled_from(PIECES), max_size=30).map(b"".join), chunk=st.integers(1, 7))
def test_count_lines_matches_split(data: bytes, chunk: int) -> None:
    assert line_reader.count_lines(io.BytesIO(data), chunk) == len(
        data.decode("utf-8", "replace").split("\n")
    )


def test_window_of_a_huge_line_keeps_only_its_size(tmp_path: Path) -> None:
    path = tmp_path / "one-line.txt"
    path.write_bytes(b"x" * 3_000_000 + b"\nnext")
    with open(path, "rb") as stream:
        window = line_reader.read_line_window(
            stream, 0, None, keep_lines=2000, keep_bytes=51200, chunk_size=65536
        )
    assert window.lines == []
    assert (window.first_line_bytes, window.window_lines, window.total_lines) == (3_000_000, 2, 2)
    assert window.window_bytes == 3_000_005


# ---------------------------------------------------------------------------
# The tool through a real App
# ---------------------------------------------------------------------------


def test_reads_relative_to_ctx_cwd_not_process_cwd(
    work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "a.txt").write_text("from cwd", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert run_tool("read", {"path": "a.txt"}, work).text == "from cwd"


def test_tilde_expands_to_home(work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.md").write_text("home notes", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    assert run_tool("read", {"path": "~/notes.md"}, work).text == "home notes"
    assert run_tool("read", {"path": "@~/notes.md"}, work).text == "home notes"


def test_missing_file_error_is_nodes(work: Path) -> None:
    run = run_tool("read", {"path": "nope.txt"}, work)
    assert not run.ok
    assert run.text == f"ENOENT: no such file or directory, access '{work / 'nope.txt'}'"


def test_directory_error(work: Path) -> None:
    (work / "d").mkdir()
    assert run_tool("read", {"path": "d"}, work).text == "EISDIR: illegal operation on a directory, read"


def test_permission_denied(work: Path) -> None:
    """A file the process may not read (root loses its override capabilities in a child)."""
    secret = work / "secret.txt"
    secret.write_text("hidden", encoding="utf-8")
    secret.chmod(0o000)
    outcome = run_unprivileged("tool_harness:run_tool_outcome", "read", {"path": "secret.txt"}, str(work))
    assert outcome == {"ok": False, "text": f"EACCES: permission denied, access '{secret}'", "errno": 13}


def test_offset_beyond_end_counts_lines(work: Path) -> None:
    (work / "t.txt").write_text("a\nb\n", encoding="utf-8")
    run = run_tool("read", {"path": "t.txt", "offset": 10}, work)
    assert run.text == "Offset 10 is beyond end of file (3 lines total)"


def test_float_offset_from_json_prints_like_javascript(work: Path) -> None:
    (work / "t.txt").write_text("a\nb\nc", encoding="utf-8")
    assert (
        run_tool("read", {"path": "t.txt", "offset": 9.0}, work).text
        == "Offset 9 is beyond end of file (3 lines total)"
    )
    assert run_tool("read", {"path": "t.txt", "offset": 2.0, "limit": 1.0}, work).text == (
        "b\n\n[1 more lines in file. Use offset=3 to continue.]"
    )


def test_already_aborted_signal(work: Path) -> None:
    (work / "t.txt").write_text("x", encoding="utf-8")
    assert run_tool("read", {"path": "t.txt"}, work, signal=aborted_signal()).text == "Operation aborted"


def _png(size: tuple[int, int]) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, (1, 2, 3)).save(out, "PNG")
    return out.getvalue()


def test_small_image_is_returned_unchanged(work: Path) -> None:
    data = _png((3, 2))
    (work / "p.png").write_bytes(data)
    run = run_tool("read", {"path": "p.png"}, work)
    assert run.text == "Read image file [image/png]"
    image = run.result.content[1]
    assert (image.mime_type, base64.b64decode(image.data)) == ("image/png", data)


def test_image_note_for_a_model_without_vision(work: Path) -> None:
    from piko.data.messages import Model

    (work / "p.png").write_bytes(_png((3, 2)))
    app = make_app(work)

    class Host:
        cwd = str(work)
        model = Model(id="text-only", input=["text"])

    run = run_tool("read", {"path": "p.png"}, work, app=app, ctx=app.context(host=Host()))
    assert run.text == (
        "Read image file [image/png]\n"
        "[Current model does not support images. The image will be omitted from this request.]"
    )
    assert len(run.result.content) == 2


def test_image_too_large_even_when_scaled_down_falls_back_to_jpeg(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Noise does not compress: a 2000x2000 PNG is over the limit, so a JPEG is sent instead."""
    from PIL import Image

    from piko.lib import images

    noise = Image.frombytes("RGB", (2000, 2000), os.urandom(2000 * 2000 * 3))
    out = io.BytesIO()
    noise.save(out, "PNG")
    (work / "noise.png").write_bytes(out.getvalue())
    run = run_tool("read", {"path": "noise.png"}, work)
    assert run.text == (
        "Read image file [image/jpeg]\n[Image: original 2000x2000, displayed at 2000x2000. "
        "Multiply coordinates by 1.00 to map to original image.]"
    )
    assert len(base64.b64encode(base64.b64decode(run.result.content[1].data))) < images.MAX_BASE64_BYTES
    # With an impossibly small budget nothing fits: pi's omission note, no image block.
    monkeypatch.setattr(images, "MAX_BASE64_BYTES", 10)
    run = run_tool("read", {"path": "noise.png"}, work)
    assert run.text == (
        "Read image file [image/png]\n[Image omitted: could not be resized below the inline image size limit.]"
    )
    assert len(run.result.content) == 1


def test_images_auto_resize_setting_off_sends_the_original(work: Path) -> None:
    data = _png((2500, 100))
    (work / "wide.png").write_bytes(data)
    app = make_app(work, settings={"images.autoResize": False})
    run = run_tool("read", {"path": "wide.png"}, work, app=app)
    assert run.text == "Read image file [image/png]"
    assert base64.b64decode(run.result.content[1].data) == data


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"\xff\xd8\xff\xf7jpeg-ls", None),
        (b"GIF89a....", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"RIFF\x00\x00\x00\x00AVI LIST", None),
        (b"\xef\xbb\xbfGIF89a", "image/gif"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + b"\x00" * 17 + b"\x00\x00\x00\x00IDAT", "image/png"),
        (
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + b"\x00" * 17 + b"\x00\x00\x00\x08acTL" + b"\x00" * 12,
            None,
        ),
        # a chunk header ending exactly at the end of the sniffed bytes is not looked at (as in pi)
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + b"\x00" * 17 + b"\x00\x00\x00\x08acTL", "image/png"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\x05JUNK!", None),
        (b"plain text", None),
        (b"", None),
    ],
)
def test_image_detection_by_magic_bytes(head: bytes, expected: str | None) -> None:
    from piko.lib.images import detect_image_mime_type

    assert detect_image_mime_type(head) == expected


def test_image_sizes_from_headers() -> None:
    from PIL import Image

    from piko.lib.images import image_size

    for fmt, mime in (
        ("PNG", "image/png"),
        ("GIF", "image/gif"),
        ("JPEG", "image/jpeg"),
        ("WEBP", "image/webp"),
    ):
        for lossless in (False, True) if fmt == "WEBP" else (False,):
            out = io.BytesIO()
            Image.new("RGB", (37, 21), (9, 9, 9)).save(out, fmt, **({"lossless": True} if lossless else {}))
            assert image_size(out.getvalue(), mime) == (37, 21), (fmt, lossless)


def test_a_fifo_is_refused_instead_of_blocking_in_open(work: Path) -> None:
    """A FIFO with no writer used to block open() in the worker thread for ever."""
    import asyncio

    from tool_harness import run_tool_async

    os.mkfifo(work / "pipe")
    run = asyncio.run(asyncio.wait_for(run_tool_async("read", {"path": "pipe"}, work), 10))
    assert run.text == f"Cannot read {work / 'pipe'}: it is a FIFO (named pipe), not a regular file"


def test_abort_stops_the_reading_thread_not_only_the_answer(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio
    import threading

    from tool_harness import run_tool_async

    (work / "big.txt").write_bytes(b"x\n" * 300_000)
    monkeypatch.setattr(line_reader, "CHUNK_SIZE", 1)  # a read of many small steps
    outcome: list[BaseException | object] = []
    finished = threading.Event()
    real_read_file = read_module.read_file

    def recording_read_file(*args: Any) -> Any:
        try:
            result = real_read_file(*args)
        except BaseException as exc:
            outcome.append(exc)
            raise
        else:
            outcome.append(result)
            return result
        finally:
            finished.set()

    monkeypatch.setattr(read_module, "read_file", recording_read_file)
    controller = AbortController()

    async def scenario() -> Any:
        asyncio.get_running_loop().call_later(0.1, controller.abort)
        return await run_tool_async("read", {"path": "big.txt"}, work, signal=controller.signal)

    run = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert run.text == "Operation aborted"
    assert finished.wait(30)
    assert isinstance(outcome[0], AbortError) and str(outcome[0]) == "Operation aborted"


@pytest.mark.parametrize("limit", [-1, -2.5])
def test_a_negative_limit_is_refused(work: Path, limit: float) -> None:
    run = run_tool("read", {"path": "notes.txt", "limit": limit}, work)
    shown = js_string(limit)
    assert run.text == f"Invalid limit {shown}: the number of lines to read cannot be negative"


def test_a_path_with_a_nul_byte_gets_nodes_message(work: Path) -> None:
    run = run_tool("read", {"path": "no\x00tes.txt"}, work)
    assert run.text == (
        "The argument 'path' must be a string, Uint8Array, or URL without null bytes. "
        f"Received '{work}/no\\x00tes.txt'"
    )


def test_a_proc_file_without_size_is_read_and_one_that_never_ends_is_capped(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from piko.plugins.tools import file_kinds

    status = run_tool("read", {"path": "/proc/self/status", "limit": 1}, work)
    assert status.ok and status.text.startswith("Name:")
    monkeypatch.setattr(file_kinds, "PSEUDO_FILE_MAX_BYTES", 64)
    capped = run_tool("read", {"path": "/proc/self/status"}, work)
    assert capped.ok
    body, notice = capped.text.rsplit("\n\n", 1)
    assert len(body.encode()) <= 64
    assert notice == "[Read stopped after 64B: this file reports no size and may not end]"


def test_path_resolution_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    from piko.plugins.tools.paths import expand_path
    from piko.plugins.tools.paths import resolve_path

    monkeypatch.setenv("HOME", "/home/someone")
    assert resolve_path("~", "/w") == "/home/someone"
    assert resolve_path("~/a", "/w") == "/home/someone/a"
    assert resolve_path("~other/a", "/w") == "/w/~other/a"  # only the user's own home expands
    assert resolve_path("@src/../lib/./x.py", "/w/p") == "/w/p/lib/x.py"
    assert resolve_path("/abs/../kept", "/w") == "/abs/../kept"  # absolute paths are taken as given
    assert resolve_path("a\u202fb\u3000c", "/w") == "/w/a b c"
    assert expand_path("@@x") == "@x"  # one leading @ only
