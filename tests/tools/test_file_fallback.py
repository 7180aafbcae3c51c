"""The file write/delete fallback seams, exercised with real denials.

Denials used: EPERM from the immutable flag (``chattr +i``, as root) or EACCES from file modes
(as any other user); EACCES for root too, in a child process stripped of the capabilities that
override file modes (``setpriv``); EROFS from a read-only tmpfs mounted in a private mount
namespace (``unshare``, root only).
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tool_harness import is_root
from tool_harness import make_app
from tool_harness import run_tool
from tool_harness import run_tool_async
from tool_harness import run_unprivileged
from tool_harness import unprivileged_prefix

from piko import hookimpl
from piko.plugins.tools import file_fallback

# ---------------------------------------------------------------------------
# Denials
# ---------------------------------------------------------------------------


def _can_chattr() -> bool:
    return is_root() and shutil.which("chattr") is not None


@contextmanager
def denied(path: Path) -> Iterator[int]:
    """Make writes into (or to) ``path`` fail for this process; yields the errno they fail with."""
    if _can_chattr():
        subprocess.run(["chattr", "+i", str(path)], check=True)
        try:
            yield errno.EPERM
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    elif not is_root():
        mode = path.stat().st_mode
        path.chmod(0o500 if path.is_dir() else 0o400)
        try:
            yield errno.EACCES
        finally:
            path.chmod(mode)
    else:
        pytest.skip("root without chattr: no in-process way to deny a write")


@contextmanager
def lifted(path: Path) -> Iterator[None]:
    """What a privileged broker does: lift the denial for one operation."""
    if _can_chattr():
        subprocess.run(["chattr", "-i", str(path)], check=True)
        try:
            yield
        finally:
            subprocess.run(["chattr", "+i", str(path)], check=True)
    else:
        mode = path.stat().st_mode
        path.chmod(0o700 if path.is_dir() else 0o600)
        try:
            yield
        finally:
            path.chmod(mode)


def _code(number: int) -> str:
    return errno.errorcode[number]


_MESSAGES = {
    errno.EPERM: "operation not permitted",
    errno.EACCES: "permission denied",
    errno.EROFS: "read-only file system",
}


# ---------------------------------------------------------------------------
# Handlers (plugins)
# ---------------------------------------------------------------------------


class Broker:
    """A write fallback handler; ``guard`` is the denied path it may lift to really write."""

    def __init__(
        self, answer: Any = True, guard: Path | None = None, fail: bool = False, log: list[str] | None = None
    ) -> None:
        self.answer = answer
        self.guard = guard
        self.fail = fail
        self.requests: list[Any] = []
        self.log = log if log is not None else []

    @hookimpl
    def piko_file_write_fallback(self, request: Any, ctx: Any) -> Any:
        self.requests.append(request)
        self.log.append(f"write:{self.answer}:{self.fail}")
        if self.fail:
            raise RuntimeError("broker is down")
        if self.answer is True and self.guard is not None:
            with lifted(self.guard):
                dst = Path(request.dst)
                dst.parent.mkdir(parents=True, exist_ok=True)
                data = (
                    request.content.encode("utf-8") if isinstance(request.content, str) else request.content
                )
                dst.write_bytes(data)
        return self.answer


class DeleteBroker:
    def __init__(self, guard: Path | None = None) -> None:
        self.guard = guard
        self.requests: list[Any] = []

    @hookimpl
    def piko_file_delete_fallback(self, request: Any, ctx: Any) -> Any:
        self.requests.append(request)
        if self.guard is not None:
            with lifted(self.guard):
                os.unlink(request.dst)
        return True


def _app_with(work: Path, *plugins: Any) -> Any:
    app = make_app(work)
    for i, plugin in enumerate(plugins):
        app.pm.register(plugin, f"broker-{i}")
    return app


@pytest.fixture
def locked(work: Path) -> Path:
    """An empty folder ``locked`` in the work folder, for a test to deny."""
    path = work / "locked"
    path.mkdir()
    return path


# ---------------------------------------------------------------------------
# write
# ---------------------------------------------------------------------------


def test_denied_write_without_handler_raises_pis_error(work: Path, locked: Path) -> None:
    with denied(locked) as code:
        run = run_tool("write", {"path": "locked/new.txt", "content": "x"}, work)
    assert not run.ok
    assert run.text == f"{_code(code)}: {_MESSAGES[code]}, open '{locked / 'new.txt'}'"
    assert not (locked / "new.txt").exists()


def brokered_write(work: Path, locked: Path, path: str, content: str) -> tuple[Any, Any, int]:
    """``write`` into the denied ``locked`` folder with one broker that lifts the denial: the
    run, the one request the broker got, and the errno of the denial."""
    with denied(locked) as code:
        broker = Broker(guard=locked)
        run = run_tool("write", {"path": path, "content": content}, work, app=_app_with(work, broker))
    (request,) = broker.requests
    return run, request, code


def test_denied_write_is_finished_by_the_broker(work: Path, locked: Path) -> None:
    run, request, code = brokered_write(work, locked, "locked/new.txt", "héllo")
    assert run.text == "Successfully wrote 5 bytes to locked/new.txt"
    assert (locked / "new.txt").read_text(encoding="utf-8") == "héllo"
    assert request.dst == str(locked / "new.txt")
    assert request.content == "héllo"
    assert isinstance(request.cause, OSError) and request.cause.errno == code
    assert request.session_id is None


def test_first_true_wins_and_a_raising_handler_is_skipped(work: Path, locked: Path) -> None:
    log: list[str] = []
    raising, declining = Broker(fail=True, log=log), Broker(answer=False, log=log)
    accepting, unused = Broker(guard=locked, log=log), Broker(log=log)
    app = _app_with(work, raising, declining, accepting, unused)
    errors: list[Any] = []
    app.dispatcher.error_listeners.append(errors.append)
    with denied(locked):
        run = run_tool("write", {"path": "locked/a.txt", "content": "ok"}, work, app=app)
    assert run.text == "Successfully wrote 2 bytes to locked/a.txt"
    assert log == ["write:True:True", "write:False:False", "write:True:False"]
    assert [(e.event, e.error) for e in errors] == [("file_write_fallback", "broker is down")]


def test_when_every_handler_declines_the_original_error_stands(work: Path, locked: Path) -> None:
    brokers = [Broker(answer=False), Broker(answer=None), Broker(answer="yes")]  # only True counts
    with denied(locked) as code:
        run = run_tool("write", {"path": "locked/a.txt", "content": "x"}, work, app=_app_with(work, *brokers))
    assert run.text.startswith(f"{_code(code)}: ")
    assert all(len(b.requests) == 1 for b in brokers)


def test_other_errors_never_reach_handlers(work: Path) -> None:
    (work / "adir").mkdir()
    (work / "file.txt").write_text("x", encoding="utf-8")
    broker = Broker()
    app = _app_with(work, broker)
    run = run_tool("write", {"path": "adir", "content": "x"}, work, app=app)
    assert run.text == f"EISDIR: illegal operation on a directory, open '{work / 'adir'}'"
    run = run_tool("write", {"path": "file.txt/deeper/x.txt", "content": "x"}, work, app=app)
    assert run.text == f"ENOTDIR: not a directory, mkdir '{work / 'file.txt/deeper'}'"
    assert broker.requests == []


def test_denied_mkdir_reaches_the_handler_which_creates_the_parent(work: Path, locked: Path) -> None:
    run, request, code = brokered_write(work, locked, "locked/sub/deep/f.txt", "abc")
    assert run.text == "Successfully wrote 3 bytes to locked/sub/deep/f.txt"
    assert request.dst == str(locked / "sub/deep/f.txt")
    assert str(request.cause) == f"{_code(code)}: {_MESSAGES[code]}, mkdir '{locked / 'sub'}'"
    assert (locked / "sub/deep/f.txt").read_text(encoding="utf-8") == "abc"


def test_destination_is_symlink_resolved(work: Path, tmp_path: Path) -> None:
    elsewhere = (tmp_path / "elsewhere").resolve()
    elsewhere.mkdir()
    (work / "link").symlink_to(elsewhere)
    (elsewhere / "target.txt").write_text("old", encoding="utf-8")
    (work / "alias.txt").symlink_to(elsewhere / "target.txt")
    with denied(elsewhere):
        broker = Broker(answer=True)
        app = _app_with(work, broker)
        run_tool("write", {"path": "link/new.txt", "content": "1"}, work, app=app)
    assert [r.dst for r in broker.requests] == [str(elsewhere / "new.txt")]
    with denied(elsewhere / "target.txt"):
        run = run_tool("write", {"path": "alias.txt", "content": "2"}, work, app=app)
    assert run.ok
    assert [r.dst for r in broker.requests][-1] == str(elsewhere / "target.txt")


def test_no_handler_is_consulted_without_a_real_destination(work: Path, locked: Path) -> None:
    (locked / "dangling").symlink_to(locked / "missing.txt")
    broker = Broker()
    with denied(locked) as code:
        run = run_tool(
            "write", {"path": "locked/dangling", "content": "x"}, work, app=_app_with(work, broker)
        )
    assert run.text.startswith(f"{_code(code)}: ")
    assert broker.requests == []


def test_success_path_and_unhandled_denials_do_no_extra_work(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(work)
    calls: list[str] = []
    original = app.dispatcher.has_handlers
    # the workspace hooks' checks are the only other question asked (nothing listens to them here)
    monkeypatch.setattr(
        app.dispatcher,
        "has_handlers",
        lambda name: (name.startswith("workspace_") or calls.append(name) or True) and original(name),
    )
    resolved: list[str] = []
    monkeypatch.setattr(file_fallback, "resolve_write_destination", lambda p: resolved.append(p))
    assert run_tool("write", {"path": "ok.txt", "content": "x"}, work, app=app).ok
    (work / "e.txt").write_text("a", encoding="utf-8")
    assert run_tool("edit", {"path": "e.txt", "edits": [{"oldText": "a", "newText": "b"}]}, work, app=app).ok
    assert calls == ["file_write_fallback"]  # edit asks once, to know whether a denial may pass
    calls.clear()
    locked = work / "locked"
    locked.mkdir()
    with denied(locked):
        assert not run_tool("write", {"path": "locked/x.txt", "content": "x"}, work, app=app).ok
    assert calls == ["file_write_fallback"]
    assert resolved == []


def test_edit_of_a_protected_file_goes_through_the_broker(work: Path) -> None:
    target = work / "crlf.txt"
    target.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    broker = Broker(guard=target)
    with denied(target):
        run = run_tool(
            "edit",
            {"path": "crlf.txt", "edits": [{"oldText": "two", "newText": "2"}]},
            work,
            app=_app_with(work, broker),
        )
    assert run.text == "Successfully replaced 1 block(s) in crlf.txt."
    assert run.details == {"diff": " 1 one\n-2 two\n+2 2", "firstChangedLine": 2}
    assert target.read_bytes() == b"\xef\xbb\xbfone\r\n2\r\n"
    assert broker.requests[0].content == "\ufeffone\r\n2\r\n"


def test_edit_of_a_protected_file_without_handler_fails_as_pi(work: Path) -> None:
    target = work / "t.txt"
    target.write_text("a", encoding="utf-8")
    with denied(target) as code:
        run = run_tool("edit", {"path": "t.txt", "edits": [{"oldText": "a", "newText": "b"}]}, work)
    assert run.text == f"Could not edit file: t.txt. Error code: {_code(code)}."
    assert target.read_text(encoding="utf-8") == "a"


def test_request_carries_the_session_id(work: Path, locked: Path) -> None:
    broker = Broker(answer=True)
    app = _app_with(work, broker)

    class Sessions:
        def get_session_id(self) -> str:
            return "sess-42"

    class Host:
        cwd = str(work)

        def read_only_session_manager(self) -> Sessions:
            return Sessions()

    with denied(locked):
        run = run_tool(
            "write", {"path": "locked/x.txt", "content": "x"}, work, app=app, ctx=app.context(host=Host())
        )
    assert run.ok
    assert broker.requests[0].session_id == "sess-42"


def test_an_extension_file_registers_a_write_fallback(work: Path, tmp_path: Path, locked: Path) -> None:
    seen = tmp_path / "seen.txt"
    extension = tmp_path / "broker_ext.py"
    extension.write_text(
        "def activate(pi):\n"
        "    def first(request, ctx):\n"
        "        raise RuntimeError('first handler fails')\n"
        "    def second(request, ctx):\n"
        f"        open({str(seen)!r}, 'w').write(request.dst)\n"
        "        return True\n"
        "    pi.register_file_write_fallback(first)\n"
        "    pi.register_file_write_fallback(second)\n",
        encoding="utf-8",
    )
    app = make_app(work)
    app.pm.load_extension_file(extension, app.make_extension_api)
    with denied(locked):
        run = run_tool("write", {"path": "locked/x.txt", "content": "x"}, work, app=app)
    assert run.ok, run.text
    assert seen.read_text(encoding="utf-8") == str(locked / "x.txt")


# ---------------------------------------------------------------------------
# EACCES as root (child without override capabilities) and EROFS (read-only mount)
# ---------------------------------------------------------------------------


def child_write_scenario(work: str, with_broker: bool) -> dict[str, Any]:
    """Runs in a child: write into ``work/locked`` (mode 0500); report the outcome and requests."""
    broker = Broker(answer=True)
    app = _app_with(Path(work), broker) if with_broker else make_app(Path(work))
    run = run_tool("write", {"path": "locked/x.txt", "content": "data"}, work, app=app)
    return {
        "text": run.text,
        "requests": [{"dst": r.dst, "errno": r.cause.errno, "content": r.content} for r in broker.requests],
    }


def test_eacces_reaches_the_handler(work: Path) -> None:
    locked = work / "locked"
    locked.mkdir(mode=0o500)
    locked.chmod(0o500)
    try:
        plain = run_unprivileged("test_file_fallback:child_write_scenario", str(work), False)
        brokered = run_unprivileged("test_file_fallback:child_write_scenario", str(work), True)
    finally:
        locked.chmod(0o700)
    assert plain == {"text": f"EACCES: permission denied, open '{locked / 'x.txt'}'", "requests": []}
    assert brokered == {
        "text": "Successfully wrote 4 bytes to locked/x.txt",
        "requests": [{"dst": str(locked / "x.txt"), "errno": errno.EACCES, "content": "data"}],
    }


def test_erofs_reaches_the_handler(work: Path) -> None:
    if not is_root() or shutil.which("unshare") is None or unprivileged_prefix() is None:
        pytest.skip("a read-only mount needs root and unshare")
    mount_point = work / "ro"
    mount_point.mkdir()
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "from test_file_fallback import child_write_scenario\n"
        "from pathlib import Path\n"
        "Path(sys.argv[1], 'locked').mkdir(exist_ok=True)\n"
        "print(json.dumps([child_write_scenario(sys.argv[1], False), child_write_scenario(sys.argv[1], True)]))\n"
    )
    # A private mount namespace: the read-only tmpfs (with an empty 'locked' dir) vanishes with the child.
    shell = (
        'mount -t tmpfs -o size=1m tmpfs "$1" && mkdir "$1/locked" && mount -o remount,ro "$1" '
        '&& exec "$2" -c "$3" "$1"'
    )
    completed = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            shell,
            "sh",
            str(mount_point),
            sys.executable,
            script,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0 and "mount" in completed.stderr and "permission" in completed.stderr.lower():
        pytest.skip(f"mounting is not allowed here: {completed.stderr.strip()}")
    assert completed.returncode == 0, completed.stderr
    import json

    plain, brokered = json.loads(completed.stdout.strip().splitlines()[-1])
    target = mount_point / "locked" / "x.txt"
    assert plain == {"text": f"EROFS: read-only file system, open '{target}'", "requests": []}
    assert brokered["text"] == "Successfully wrote 4 bytes to locked/x.txt"
    assert brokered["requests"] == [{"dst": str(target), "errno": errno.EROFS, "content": "data"}]
    assert not mount_point.joinpath("locked").exists()  # the mount never left the namespace


# ---------------------------------------------------------------------------
# delete seam
# ---------------------------------------------------------------------------


def _unlink(app: Any, path: Path) -> BaseException | None:
    async def go() -> BaseException | None:
        try:
            await file_fallback.unlink_with_fallback(app.context(), str(path))
        except OSError as exc:
            return exc
        return None

    return asyncio.run(go())


def test_unlink_plain_file(work: Path) -> None:
    (work / "f.txt").write_text("x", encoding="utf-8")
    assert _unlink(make_app(work), work / "f.txt") is None
    assert not (work / "f.txt").exists()


def test_unlink_denied_without_handler_and_missing_files(work: Path, locked: Path) -> None:
    (locked / "f.txt").write_text("x", encoding="utf-8")
    write_broker, delete_broker = Broker(), DeleteBroker()
    app = _app_with(work, write_broker)
    with denied(locked) as code:
        error = _unlink(app, locked / "f.txt")
    assert str(error) == f"{_code(code)}: {_MESSAGES[code]}, unlink '{locked / 'f.txt'}'"
    assert write_broker.requests == []  # a write handler never sees a delete
    app.pm.register(delete_broker, "delete-broker")
    error = _unlink(app, work / "missing.txt")
    assert str(error) == f"ENOENT: no such file or directory, unlink '{work / 'missing.txt'}'"
    (work / "adir").mkdir()
    assert isinstance(_unlink(app, work / "adir"), OSError)
    assert delete_broker.requests == []


def test_unlink_denied_goes_to_the_delete_broker(work: Path, tmp_path: Path, locked: Path) -> None:
    (locked / "f.txt").write_text("x", encoding="utf-8")
    (locked / "link").symlink_to(tmp_path)
    broker = DeleteBroker(guard=locked)
    app = _app_with(work, broker)
    (work / "via").symlink_to(locked)
    with denied(locked) as code:
        assert _unlink(app, work / "via" / "f.txt") is None
        assert _unlink(app, locked / "link") is None
    assert not (locked / "f.txt").exists() and not (locked / "link").is_symlink()
    assert tmp_path.exists()  # the link was removed, not what it points at
    file_request, link_request = broker.requests
    assert (file_request.dst, file_request.confirmed_file) == (str(locked / "f.txt"), True)
    assert (link_request.dst, link_request.confirmed_file) == (str(locked / "link"), False)
    assert file_request.cause.errno == code


def test_resolve_write_destination(work: Path, tmp_path: Path) -> None:
    (work / "real").mkdir()
    (work / "ln").symlink_to(work / "real")
    (work / "loop").symlink_to(work / "loop")
    assert file_fallback.resolve_write_destination(str(work / "ln" / "a" / "b.txt")) == str(
        work / "real" / "a" / "b.txt"
    )
    assert file_fallback.resolve_write_destination(str(work / "loop")) is None
    assert file_fallback.resolve_write_destination(str(work / "loop" / "x")) is None


def test_concurrent_edits_of_one_file_are_serialised(work: Path) -> None:
    target = work / "t.txt"
    target.write_text("".join(f"line {i}\n" for i in range(50)), encoding="utf-8")
    app = make_app(work)

    async def both() -> list[Any]:
        calls = [
            run_tool_async(
                "edit",
                {"path": "t.txt", "edits": [{"oldText": f"line {i}\n", "newText": f"LINE {i}\n"}]},
                work,
                app=app,
            )
            for i in range(0, 50, 5)
        ]
        return list(await asyncio.gather(*calls))

    runs = asyncio.run(both())
    assert all(r.ok for r in runs), [r.text for r in runs]
    text = target.read_text(encoding="utf-8")
    assert all(f"LINE {i}\n" in text for i in range(0, 50, 5))
