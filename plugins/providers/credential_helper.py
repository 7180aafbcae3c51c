"""Plugin ``providers.credential-helper``: a provider's API key from a command, for keys a vault
issues for a short time.

A provider names its command in ``models.json`` (``"apiKeyCommand"`` in the provider entry) or in
settings (``"apiKeyCommands": {"<provider>": ...}``, which wins); either takes a command line or
``{"command": ..., "cacheSeconds": 300, "timeoutSeconds": 10}``. The key is the command's first
line of output, kept for ``cacheSeconds``. When the provider answers HTTP 401 the cached key is
dropped and the request is retried once with a fresh one (``piko_classify_error``). The command's
output is never logged; a failure names the provider and the exit status. pi's ``!command``
``apiKey`` values keep working beside this (they run on every request).

The cached keys belong to the app that fetched them: they are kept in a weak mapping keyed by the
app and dropped when it is unconfigured (an SDK session closed), so a later app never meets them.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any

from piko import hookimpl
from piko.data.messages import AssistantMessage
from piko.data.messages import Model

DEFAULT_CACHE_SECONDS = 300.0
DEFAULT_TIMEOUT_SECONDS = 10.0


class KeyCommandError(RuntimeError):
    """The key command failed; the message names the provider, never the command's output."""


class KeyCommand:
    """One provider's command, its cached key and when that key was fetched."""

    def __init__(self, provider: str, command: str, cache_seconds: float, timeout_seconds: float) -> None:
        self.provider = provider
        self.command = command
        self.cache_seconds = cache_seconds
        self.timeout_seconds = timeout_seconds
        self._key: str | None = None
        self._fetched = 0.0
        self._lock = threading.Lock()
        self.refreshed_after_401 = False

    def key(self) -> str:
        with self._lock:
            if self._key is not None and time.monotonic() - self._fetched < self.cache_seconds:
                return self._key
            self._key = self._run()
            self._fetched = time.monotonic()
            return self._key

    def forget(self) -> None:
        with self._lock:
            self._key = None

    def _run(self) -> str:
        import subprocess  # here, not at the top: every start imports this plugin

        try:
            done = subprocess.run(
                self.command, shell=True, capture_output=True, text=True, timeout=self.timeout_seconds,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise KeyCommandError(
                f"apiKeyCommand of provider {self.provider} did not finish within {self.timeout_seconds:g} s"
            ) from None
        except OSError as exc:
            raise KeyCommandError(
                f"apiKeyCommand of provider {self.provider} could not run: {exc.strerror}"
            ) from None
        key = done.stdout.strip().splitlines()[0].strip() if done.stdout.strip() else ""
        if done.returncode != 0 or not key:
            why = f"exited with status {done.returncode}" if done.returncode else "printed no key"
            raise KeyCommandError(f"apiKeyCommand of provider {self.provider} {why}")
        from piko.lib.redaction import register_secret

        register_secret(key)
        return key


# app -> provider -> its key command; an entry goes with its app (weakly held, and dropped when
# the app is unconfigured)
_commands: weakref.WeakKeyDictionary[Any, dict[str, KeyCommand]] = weakref.WeakKeyDictionary()


def _live_commands(provider: str) -> list[KeyCommand]:
    """The key commands of ``provider`` in every app still running (a hook without the app)."""
    return [c for commands in list(_commands.values()) if (c := commands.get(provider)) is not None]


def _spec(app: Any, provider: str) -> Any:
    from_settings = app.settings.get("apiKeyCommands") if getattr(app, "settings", None) is not None else None
    if isinstance(from_settings, dict) and provider in from_settings:
        return from_settings[provider]
    registry = getattr(app, "model_registry", None)
    config = registry.providers.get(provider) if registry is not None else None
    return config.extra.get("apiKeyCommand") if config is not None else None


def key_command(app: Any, provider: str) -> KeyCommand | None:
    """The provider's key command (one per app and provider, so its cache lives as long as the app)."""
    spec = _spec(app, provider)
    if not spec:
        return None
    if isinstance(spec, str):
        spec = {"command": spec}
    if not isinstance(spec, dict) or not isinstance(spec.get("command"), str):
        raise KeyCommandError(
            f"apiKeyCommand of provider {provider} must be a command line or an object with 'command'"
        )
    commands = _commands.setdefault(app, {})
    known = commands.get(provider)
    if known is None or known.command != spec["command"]:
        known = KeyCommand(
            provider, spec["command"],
            float(spec.get("cacheSeconds", DEFAULT_CACHE_SECONDS)), float(spec.get("timeoutSeconds", DEFAULT_TIMEOUT_SECONDS)),
        )  # fmt: skip
        commands[provider] = known
    return known


@hookimpl
def piko_unconfigure(config: Any) -> None:
    """The app is done: its cached keys go with it."""
    _commands.pop(config, None)


@hookimpl(tryfirst=True)
def piko_resolve_api_key(provider: str, app: Any, check_only: bool) -> str | None:
    command = key_command(app, provider)
    if command is None:
        return None
    return "apiKeyCommand" if check_only else command.key()


@hookimpl(tryfirst=True)
def piko_classify_error(message: AssistantMessage, model: Model | None) -> str | None:
    """A 401 from a provider whose key comes from a command: fetch a new key and try once more."""
    if model is None or not (message.error_message or "").lstrip().startswith("401"):
        return None
    commands = _live_commands(model.provider)
    if not commands:
        return None
    if all(command.refreshed_after_401 for command in commands):
        for command in commands:
            command.refreshed_after_401 = False
        return None  # the fresh key was refused as well: let the others decide
    for command in commands:
        command.forget()
        command.refreshed_after_401 = True
    return "retryable"


@hookimpl
def piko_message_end(event: Any) -> None:
    """A provider answered: a later 401 may again be worth one fresh key."""
    message = event.message
    if getattr(message, "ROLE", "") == "assistant" and message.stop_reason != "error":
        for command in _live_commands(message.provider):
            command.refreshed_after_401 = False
