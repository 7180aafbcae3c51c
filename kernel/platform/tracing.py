"""``PIKO_TRACE``: a line per hook call, to stderr (``PIKO_TRACE=1``) or a file (``PIKO_TRACE=path``).

stdout is never used: it belongs to print and RPC output. Every line goes through
:func:`piko.lib.redaction.redact`, and the result of a hook that answers with a credential
(``piko_resolve_api_key``) is registered as a secret before its line is written.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any
from typing import TextIO

from piko.lib.redaction import CREDENTIAL_HOOKS
from piko.lib.redaction import redact
from piko.lib.redaction import register_secret


class Tracer:
    """Writes ``[piko-trace] +12.3ms hook plugin -> result`` lines."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.t0 = time.perf_counter()

    @classmethod
    def from_environment(cls) -> Tracer | None:
        target = os.environ.get("PIKO_TRACE", "").strip()
        if not target or target == "0":
            return None
        if target in ("1", "true", "yes", "stderr"):
            return cls(sys.stderr)
        return cls(open(target, "a", encoding="utf-8", buffering=1))

    def line(self, text: str) -> None:
        elapsed = (time.perf_counter() - self.t0) * 1000
        try:
            self.stream.write(f"[piko-trace] +{elapsed:.1f}ms {redact(text)}\n")
        except (OSError, ValueError):
            pass

    def event(self, name: str, plugin: str, result: Any, started: float) -> None:
        took = (time.perf_counter() - started) * 1000
        self.line(f"event {name} -> {plugin} ({took:.2f}ms): {_short(result)}")

    def attach(self, pm: Any) -> None:
        """Trace pluggy-level hook calls (bootstrap and registration hooks).

        ``pm.tracer`` is set too: code that calls implementations one by one (the registries)
        traces through it.
        """
        pm.tracer = self

        def before(hook_name: str, impls: Any, kwargs: Any) -> None:
            names = ", ".join(i.plugin_name for i in impls)
            self.line(f"hook {hook_name} [{names}] args={_short(kwargs)}")

        def after(outcome: Any, hook_name: str, impls: Any, kwargs: Any) -> None:
            try:
                result = outcome.get_result()
            except BaseException as exc:  # pluggy re-raises it to the caller
                result = f"raised {type(exc).__name__}: {exc}"
            else:
                if hook_name in CREDENTIAL_HOOKS:
                    register_secret(result)
            self.line(f"hook {hook_name} done: {_short(result)}")

        pm.add_hookcall_monitoring(before, after)


def _short(value: Any, limit: int = 160) -> str:
    """``repr(value)``, redacted before it is cut to ``limit`` (a cut must not split a secret)."""
    try:
        text = repr(value)
    except Exception:
        text = object.__repr__(value)
    text = redact(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
