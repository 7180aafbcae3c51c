"""``/login [provider]`` and ``/logout [provider]``: subscriptions (OAuth) and API keys stored in ``auth.json``.

The credential library is the ``providers.auth`` plugin's (reached through
:mod:`.auth_bridge`). The OAuth flow of the library is synchronous; it runs in a worker thread
whose callbacks come back to the event loop for every dialog: the URL is shown (and a browser
opened), then the user either completes the login in the browser (the callback server catches
the redirect) or pastes the redirect URL or code, whichever happens first.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Coroutine
from typing import Any

from piko.plugins.modes.interactive.command_api import InteractiveContext
from piko.plugins.modes.interactive.command_api import PickItem
from piko.plugins.modes.interactive.commands.auth_bridge import auth_library_or_none
from piko.plugins.modes.interactive.commands.common import error_text
from piko.plugins.modes.interactive.commands.common import warn

SUBSCRIPTION = "Use a subscription"
API_KEY = "Use an API key"
PASTE_PROMPT = "Paste redirect URL below, or complete login in browser:"
NO_STORED = (
    "No stored credentials to remove. /logout only removes credentials saved by /login; "
    "environment variables and models.json config are unchanged."
)
BEDROCK = "amazon-bedrock"
# Providers pi 0.73.1 offers API-key login for among its built-in ones.
API_KEY_BUILTINS = frozenset(
    {
        "anthropic", "amazon-bedrock", "azure-openai-responses", "cerebras", "cloudflare-ai-gateway",
        "cloudflare-workers-ai", "deepseek", "fireworks", "google", "google-vertex", "groq", "huggingface",
        "kimi-coding", "mistral", "minimax", "minimax-cn", "moonshotai", "moonshotai-cn", "opencode",
        "opencode-go", "openai", "openrouter", "vercel-ai-gateway", "xai", "zai", "xiaomi",
        "xiaomi-token-plan-cn", "xiaomi-token-plan-ams", "xiaomi-token-plan-sgp",
    }
)  # fmt: skip


class LoginCancelledError(Exception):
    """The user closed a login dialog."""

    def __init__(self) -> None:
        super().__init__("Login cancelled")


# ---------------------------------------------------------------------------
# Which providers, and how
# ---------------------------------------------------------------------------


def is_api_key_provider(name: str, config: Any, oauth_ids: set[str]) -> bool:
    """pi's rule: its built-in API-key providers, and custom providers that are not OAuth ones.

    Catalog providers pi 0.73.1 did not know take keys when they read a ``*_API_KEY`` variable.
    """
    if name in API_KEY_BUILTINS:
        return True
    if config is None or config.extra.get("explicitOnly"):
        return False
    if config.plugin == "providers.catalog":
        return any(env.endswith("_API_KEY") for env in config.env_keys)
    return name not in oauth_ids


def provider_options(app: Any, library: Any, auth_type: str | None = None) -> list[tuple[str, str, str]]:
    """``(provider id, display name, "oauth" | "api_key")`` one may log in to, sorted by name."""
    registry = app.model_registry.load()
    oauth = list(library.oauth_providers())
    oauth_ids = {p.id for p in oauth}
    options = [(p.id, str(getattr(p, "name", p.id) or p.id), "oauth") for p in oauth]
    for name, config in registry.providers.items():
        if is_api_key_provider(name, config, oauth_ids):
            options.append((name, registry.display_name(name), "api_key"))
    if auth_type is not None:
        options = [o for o in options if o[2] == auth_type]
    return sorted(options, key=lambda o: o[1].lower())


def _status(app: Any, library: Any, provider: str, auth_type: str) -> str:
    """pi's status of a provider in the login list (``✓ configured``, ``• unconfigured``...)."""
    credential = library.get_storage().get(provider)
    if credential is not None:
        if credential.get("type") == auth_type:
            return "✓ configured"
        return "• subscription configured" if credential.get("type") == "oauth" else "• API key configured"
    if auth_type != "api_key":
        return "• unconfigured"
    registry = app.model_registry
    if provider in registry.runtime_api_keys:
        return "✓ runtime API key"
    config = registry.provider(provider)
    for env in config.env_keys if config is not None else []:
        if os.environ.get(env):
            return f"✓ env: {env}"
    if config is not None and config.api_key:
        return "✓ command in models.json" if config.api_key.startswith("!") else "✓ key in models.json"
    return "• unconfigured"


def _with_credential_store(
    run: Callable[[InteractiveContext, str, Any], Awaitable[None]],
) -> Callable[[InteractiveContext, str], Awaitable[None]]:
    """A command that needs the credential store: run with it, or refused with the reason when none."""

    @functools.wraps(run)
    async def command(ctx: InteractiveContext, args: str) -> None:
        library = auth_library_or_none(ctx.app, ctx.show_error)
        if library is not None:
            await run(ctx, args, library)

    return command


# ---------------------------------------------------------------------------
# /login
# ---------------------------------------------------------------------------


@_with_credential_store
async def login_command(ctx: InteractiveContext, args: str, library: Any) -> None:
    """``/login [provider]``: choose the way (subscription or API key) and the provider, then sign in."""
    app = ctx.app
    wanted = args.strip()
    if wanted:
        options = [o for o in provider_options(app, library) if o[0] == wanted]
        if not options:
            ctx.show_error(f"Unknown provider: {wanted} (see /model and models.json)")
            return
        if len(options) > 1:
            method = await _choose_method(ctx)
            if method is None:
                return
            options = [o for o in options if o[2] == method]
        await _login(ctx, library, *options[0])
        return
    while True:
        method = await _choose_method(ctx)
        if method is None:
            return
        options = provider_options(app, library, method)
        if not options:
            ctx.show_info(
                "No subscription providers available."
                if method == "oauth"
                else "No API key providers available."
            )
            return
        items = [
            PickItem(label=name, value=(pid, name, kind), detail=_status(app, library, pid, kind))
            for pid, name, kind in options
        ]
        chosen = await ctx.pick("Select provider to configure:", items)
        if chosen is None:
            continue  # back to the choice of method, as pi
        await _login(ctx, library, *chosen)
        return


async def _choose_method(ctx: InteractiveContext) -> str | None:
    items = [PickItem(label=SUBSCRIPTION, value="oauth"), PickItem(label=API_KEY, value="api_key")]
    chosen = await ctx.pick("Select authentication method:", items, filterable=False)
    return None if chosen is None else str(chosen)


async def _login(ctx: InteractiveContext, library: Any, provider: str, name: str, kind: str) -> None:
    previous_model = ctx.session.model
    if kind == "oauth":
        path = await _oauth_login(ctx, library, provider, name)
    elif provider == BEDROCK:
        _bedrock_info(ctx, name)
        return
    else:
        path = await _api_key_login(ctx, library, provider, name)
    if path is not None:
        await complete_authentication(ctx, provider, name, kind, previous_model, path)


def _bedrock_info(ctx: InteractiveContext, name: str) -> None:
    from rich.text import Text

    text = Text()
    text.append(f"{name} setup\n", style="bold")
    text.append("Amazon Bedrock uses AWS credentials instead of a single API key.\n")
    text.append("Configure an AWS profile, IAM keys, bearer token, or role-based credentials.\n")
    text.append(
        "piko reads AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_BEARER_TOKEN_BEDROCK "
        "and the container or web-identity credentials, as pi does.",
        style="dim",
    )
    ctx.show(text)


async def _masked_input(ctx: InteractiveContext, title: str) -> str | None:
    """``ctx.ui.input`` with the typed text hidden where the UI supports ``password=True``."""
    try:
        value = await ctx.ui.input(title, None, password=True)
    except TypeError:
        value = await ctx.ui.input(title)
    return None if value is None else str(value)


async def _api_key_login(ctx: InteractiveContext, library: Any, provider: str, name: str) -> str | None:
    key = await _masked_input(ctx, f"Login to {name}\nEnter API key:")
    if key is None:
        return None
    try:
        path = await asyncio.to_thread(library.save_api_key, provider, key)
    except Exception as exc:
        ctx.show_error(f"Failed to save API key for {name}: {error_text(exc)}")
        return None
    return str(path)


def _open_browser(url: str) -> None:
    import threading
    import webbrowser

    def run() -> None:
        with contextlib.suppress(Exception):
            webbrowser.open(url)

    threading.Thread(target=run, name="open-browser", daemon=True).start()


def _show_auth(ctx: InteractiveContext, name: str, url: str, instructions: str) -> None:
    from rich.text import Text

    text = Text()
    text.append(f"Login to {name}\n\n", style="bold cyan")
    text.append(url, style=f"cyan link {url}")
    text.append("\n")
    hint = "Cmd+click to open" if sys.platform == "darwin" else "Ctrl+click to open"
    text.append(hint, style=f"dim link {url}")
    if instructions:
        text.append("\n\n")
        text.append(instructions, style="yellow")
    ctx.show(text)


async def _race_paste(ctx: InteractiveContext, server: Any) -> str | None:
    """Wait for a pasted redirect URL/code or for the browser's redirect, whichever comes first."""
    from piko.lib.abort import AbortController

    controller = AbortController()

    async def ask() -> Any:
        try:
            return await ctx.ui.input(PASTE_PROMPT, None, signal=controller.signal)
        except TypeError:  # a UI without dialog options
            return await ctx.ui.input(PASTE_PROMPT)

    paste = asyncio.ensure_future(ask())
    redirect = asyncio.ensure_future(asyncio.to_thread(server.done.wait))
    try:
        await asyncio.wait({paste, redirect}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if paste.done():
            server.cancel()  # wakes the thread waiting for the redirect
        else:
            controller.abort()
            paste.cancel()
        with contextlib.suppress(BaseException):
            await paste
        await redirect
    value = paste.result() if paste.done() and not paste.cancelled() and paste.exception() is None else None
    if value is None and getattr(server, "result", None) is None:
        raise LoginCancelledError()
    return str(value) if value else None


async def _oauth_login(ctx: InteractiveContext, library: Any, provider: str, name: str) -> str | None:
    loop = asyncio.get_running_loop()

    def on_loop(coroutine: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    async def show_auth(url: str, instructions: str) -> None:
        _show_auth(ctx, name, url, instructions)

    async def show_progress(message: str) -> None:
        ctx.show_info(message)

    def on_auth(url: str, instructions: str = "", *_rest: Any) -> None:
        on_loop(show_auth(url, instructions or ""))
        _open_browser(url)

    def on_prompt(message: str, *_rest: Any, **_options: Any) -> str:
        value = on_loop(ctx.ui.input(message))
        if value is None:
            raise LoginCancelledError()
        return str(value)

    def on_progress(message: str) -> None:
        on_loop(show_progress(message))

    def wait_for_input(server: Any) -> str | None:
        result: str | None = on_loop(_race_paste(ctx, server))
        return result

    callbacks: dict[str, Any] = {"on_auth": on_auth, "on_prompt": on_prompt, "on_progress": on_progress}
    oauth = next((p for p in library.oauth_providers() if p.id == provider), None)
    if getattr(oauth, "uses_callback_server", False):
        callbacks["wait_for_input"] = wait_for_input
    try:
        path = await asyncio.to_thread(library.login_oauth, provider, **callbacks)
    except LoginCancelledError:
        ctx.show_info("Login cancelled")
        return None
    except Exception as exc:
        ctx.show_error(f"Failed to login to {name}: {error_text(exc)}")
        return None
    return str(path)


async def complete_authentication(
    ctx: InteractiveContext, provider: str, name: str, kind: str, previous_model: Any, path: str
) -> None:
    """Say where the credentials went; with no model chosen yet, select the provider's default one."""
    from piko.models.resolver import DEFAULT_MODEL_PER_PROVIDER
    from piko.plugins.modes.interactive.commands.models import maybe_warn_anthropic_subscription

    session = ctx.session
    action = f"Logged in to {name}" if kind == "oauth" else f"Saved API key for {name}"
    selected = None
    problem = None
    if previous_model is None:
        models = [m for m in session.model_registry.available_models() if m.provider == provider]
        default_id = DEFAULT_MODEL_PER_PROVIDER.get(provider)
        if default_id is None:
            problem = (
                f'{action}, but no default model is configured for provider "{provider}". '
                "Use /model to select a model."
            )
        elif not models:
            problem = (
                f"{action}, but no models are available for that provider. Use /model to select a model."
            )
        else:
            selected = next((m for m in models if m.id == default_id), None)
            if selected is None:
                problem = f'{action}, but its default model "{default_id}" is not available. Use /model to select a model.'
            else:
                try:
                    await session.set_model(selected)
                except Exception as exc:
                    problem = (
                        f"{action}, but selecting its default model failed: {error_text(exc)}. "
                        "Use /model to select a model."
                    )
                    selected = None
    if selected is not None:
        ctx.show_info(f"{action}. Selected {selected.id}. Credentials saved to {path}")
        await maybe_warn_anthropic_subscription(ctx, selected)
        return
    ctx.show_info(f"{action}. Credentials saved to {path}")
    if problem:
        ctx.show_error(problem)
    else:
        await maybe_warn_anthropic_subscription(ctx)


# ---------------------------------------------------------------------------
# /logout
# ---------------------------------------------------------------------------


@_with_credential_store
async def logout_command(ctx: InteractiveContext, args: str, library: Any) -> None:
    """``/logout [provider]``: remove a credential ``/login`` stored (not environment variables)."""
    app = ctx.app
    storage = library.get_storage()
    registry = app.model_registry
    stored = []
    for provider in storage.list():
        credential = storage.get(provider)
        if credential is not None:
            stored.append(
                (provider, registry.display_name(provider), str(credential.get("type") or "api_key"))
            )
    if not stored:
        ctx.show_info(NO_STORED)
        return
    wanted = args.strip()
    if wanted:
        match = next((s for s in stored if s[0] == wanted), None)
        if match is None:
            ctx.show_error(f"No stored credentials for {wanted}.")
            return
    else:
        stored.sort(key=lambda s: s[1].lower())
        items = [
            PickItem(
                label=name, value=(pid, name, kind), detail="subscription" if kind == "oauth" else "API key"
            )
            for pid, name, kind in stored
        ]
        match = await ctx.pick("Select provider to logout:", items)
        if match is None:
            return
    provider, name, kind = match
    try:
        await asyncio.to_thread(library.logout, provider)
    except Exception as exc:
        ctx.show_error(f"Logout failed: {error_text(exc)}")
        return
    if kind == "oauth":
        ctx.show_info(f"Logged out of {name}")
    else:
        ctx.show_info(
            f"Removed stored API key for {name}. Environment variables and models.json config are unchanged."
        )
    if ctx.session.model is not None and ctx.session.model.provider == provider:
        if not registry.has_auth(provider):
            warn(
                ctx, f"The current model {ctx.session.model.id} has no credentials now. Use /login or /model."
            )
