"""Start asyncio without the ``ssl`` module, and give it ``ssl`` the moment anything needs TLS.

``import asyncio`` imports ``ssl`` (``asyncio.base_events``, ``selector_events`` and ``sslproto``
each ``try: import ssl``), and ``ssl`` loads OpenSSL: 29 M of the 254 M instructions of
``python -c "import asyncio"`` (callgrind, ``PYTHONHASHSEED=0``), about 4 ms of every ``pi``
start. A ``pi -p`` turn against a plain-``http`` server and an RPC start never use TLS, so the
``pi`` command calls :func:`defer_ssl` first thing, which puts a finder on ``sys.meta_path`` for the
first ``import asyncio`` (so ``pi --help``, which never imports asyncio, pays nothing):

1. asyncio is imported while ``import ssl`` fails, so its modules take the branch CPython has
   for builds without ``ssl`` (their ``ssl`` global is ``None``); the failure is lifted right
   after, so any other ``import ssl`` works as always;
2. those ``ssl`` globals are set to a stand-in that imports the real module on first use, so
   asyncio code that reaches for TLS without anyone having imported ``ssl`` (``open_connection
   (host, 443, ssl=True)`` in an extension) still gets it;
3. a finder on ``sys.meta_path`` watches the first real ``import ssl`` (httpx's, an https
   provider's, the stand-in's) and, once the module has run, puts it into asyncio's modules and
   runs ``asyncio.sslproto`` again so that what it defines only with ``ssl`` exists. From then on
   asyncio is exactly as if ``ssl`` had been imported with it.

Nothing here runs for library users of :mod:`piko` (the SDK): only the ``pi`` command asks.
``tests/kernel/test_deferred_ssl.py`` checks an https request through httpx and asyncio TLS
connections with and without an earlier ``import ssl``; ``tests/kernel/test_startup_imports.py``
that a ``pi -p`` turn against a plain-``http`` server and an RPC start do not load ``ssl``.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

_ASYNCIO_MODULES_WITH_SSL = ("asyncio.base_events", "asyncio.selector_events", "asyncio.sslproto")


class _NoSocketIsTls:
    """``ssl.SSLSocket`` while ``ssl`` is not imported: no socket can be one."""


class _SslOnFirstUse:
    """What asyncio's modules hold as ``ssl`` until the real module is imported: any attribute
    read imports it (and the finder then replaces this stand-in everywhere), except the check
    every plain socket call makes (``isinstance(sock, ssl.SSLSocket)``, asyncio refusing TLS
    sockets in ``sock_connect`` and the like), which is answered without ``ssl``."""

    def __getattr__(self, name: str) -> Any:
        if name == "SSLSocket" and "ssl" not in sys.modules:
            return _NoSocketIsTls
        return getattr(importlib.import_module("ssl"), name)

    def __repr__(self) -> str:
        return "<ssl, imported on first use>"


class _WrappedLoader:
    """Runs a module with the loader the other finders found, with something around it (a loader
    by duck typing: ``importlib.abc`` would import ``importlib.resources``, 15 ms of
    ``-X importtime``)."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)  # type: ignore[no-any-return]

    def _run(self, module: ModuleType) -> None:
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)


class _WithoutSslLoader(_WrappedLoader):
    """Runs ``asyncio`` (and its modules that look for ``ssl``) while ``import ssl`` fails, then
    gives them the stand-in and starts watching for the real ``ssl``."""

    def exec_module(self, module: ModuleType) -> None:
        sys.modules["ssl"] = None  # type: ignore[assignment]  # ``import ssl`` raises ImportError
        try:
            self._run(module)
            importlib.import_module("asyncio.sslproto")  # not every Python's asyncio imports it
        finally:
            del sys.modules["ssl"]
        _replace_asyncio_ssl(lambda held: held is None, _SslOnFirstUse())
        sys.meta_path.insert(0, _ssl_watcher)


class _HandOverLoader(_WrappedLoader):
    """Runs the real ``ssl`` module, then gives it to asyncio."""

    def exec_module(self, module: ModuleType) -> None:
        self._run(module)
        _hand_over(module)


class _FirstImportWatcher:
    """Finds one module as the other finders would, once, with a loader wrapped around theirs."""

    def __init__(self, name: str, wrapper: Callable[[Any], _WrappedLoader]) -> None:
        self._name = name
        self._wrapper = wrapper

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self._name:
            return None
        _stop_watching(self)
        if self is _asyncio_watcher and "ssl" in sys.modules:
            return None  # ``ssl`` came first: nothing to defer, asyncio imports as always
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = self._wrapper(spec.loader)  # type: ignore[assignment]
        return spec


_asyncio_watcher = _FirstImportWatcher("asyncio", _WithoutSslLoader)
_ssl_watcher = _FirstImportWatcher("ssl", _HandOverLoader)


def _stop_watching(watcher: _FirstImportWatcher) -> None:
    try:
        sys.meta_path.remove(watcher)
    except ValueError:
        pass


def _replace_asyncio_ssl(replaces: Callable[[Any], bool], value: Any) -> None:
    """Set the ``ssl`` global of asyncio's modules to ``value`` where ``replaces`` accepts what it
    holds (a module without that global is left alone)."""
    for name in _ASYNCIO_MODULES_WITH_SSL:
        module = sys.modules.get(name)
        namespace = vars(module) if module is not None else {}
        if "ssl" in namespace and replaces(namespace["ssl"]):
            namespace["ssl"] = value


def _hand_over(ssl_module: ModuleType) -> None:
    """Put ``ssl`` where asyncio's modules looked for it, and define what ``sslproto`` defines
    only with it (``SSLAgainErrors`` in CPython 3.11 to 3.13) by running that module again."""
    _replace_asyncio_ssl(lambda held: isinstance(held, _SslOnFirstUse), ssl_module)
    sslproto = sys.modules.get("asyncio.sslproto")
    if sslproto is not None:
        importlib.reload(sslproto)


def defer_ssl() -> None:
    """From now on, the first ``import asyncio`` leaves ``ssl`` for later (see the module's
    docstring). Does nothing when asyncio or ``ssl`` is already imported; costs nothing when
    asyncio is never imported (``pi --help``)."""
    if "asyncio" in sys.modules or "ssl" in sys.modules or _asyncio_watcher in sys.meta_path:
        return
    sys.meta_path.insert(0, _asyncio_watcher)
