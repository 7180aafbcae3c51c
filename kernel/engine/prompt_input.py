"""What a prompt's text goes through before a run: extension commands, the ``input`` hook, expansion, ``before_agent_start``."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

from piko.data.events import BeforeAgentStartEvent
from piko.data.events import InputEvent
from piko.data.messages import CustomMessage
from piko.data.messages import ImageContent
from piko.engine.extension_reach import ExtensionReach
from piko.engine.session_services import SessionServices
from piko.lib.abort import AbortController

_inside_input: contextvars.ContextVar[bool] = contextvars.ContextVar("piko_inside_input", default=False)
"""True in what an ``input`` handler runs or starts: a message it sends does not come back to it."""


class PromptInput(ExtensionReach):
    """The extension side of a prompt, through ``dispatcher`` with ``ctx``.

    ``/name args`` runs an extension command of ``app``'s registries (even while the agent
    streams); the text it returns is prompted with ``prompt(text)``, its failure reported as an
    extension error. ``input`` handlers may transform or handle the text; ``/skill:name args``
    and ``/template args`` expand from ``resources()``; ``before_agent_start`` handlers may add
    messages and replace the system prompt. A preparation's ``signal`` aborted while a handler
    runs (:meth:`abort`) ends it with ``Operation aborted``.
    """

    def __init__(
        self,
        app: Any,
        services: SessionServices,
        *,
        resources: Callable[[], Any],
        prompt: Callable[[str], Awaitable[None]],
    ) -> None:
        super().__init__(services)
        self._app = app
        self._resources = resources
        self._prompt = prompt
        self._preparations: set[AbortController] = set()

    @contextlib.contextmanager
    def preparation(self) -> Iterator[Any]:
        """The abort signal of one prompt's preparation, while it lasts."""
        controller = AbortController()
        self._preparations.add(controller)
        try:
            yield controller.signal
        finally:
            self._preparations.discard(controller)

    def abort(self) -> None:
        """Abort the preparations under way (their ``input`` and ``before_agent_start`` handlers)."""
        for preparation in list(self._preparations):
            preparation.abort()

    async def run_command(self, text: str) -> bool:
        """Run the extension command ``text`` names; False when it names none."""
        name, _, args = text[1:].partition(" ")
        command = self._app.registries.commands.get(name)
        if command is None or command.handler is None:
            return False
        try:
            result = command.handler(args, self._ctx)
            if hasattr(result, "__await__"):
                result = await result
            if isinstance(result, str) and result:
                await self._prompt(result)
        except Exception as exc:
            from piko.platform.dispatch import Handler

            await self._dispatcher.report(
                Handler(command.plugin, f"command:{name}", lambda e, c: None), "command", exc
            )
        return True

    def refuse_queued_command(self, text: str) -> None:
        """Raise when ``text`` is an extension command, which cannot wait in a queue."""
        if text.startswith("/"):
            name = text[1:].split(" ", 1)[0]
            if name in self._app.registries.commands:
                raise RuntimeError(
                    f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command when not streaming.'
                )

    async def transform(
        self, text: str, images: list[ImageContent] | None, *, source: str, signal: Any = None
    ) -> tuple[str, list[ImageContent] | None] | None:
        """The text and images after the ``input`` handlers; None when one handled the prompt or
        nothing is left to send."""
        if not self._dispatcher.has_handlers("input") or _inside_input.get():
            return text, images  # a message an input handler sent does not re-enter the handlers
        token = _inside_input.set(True)
        try:
            result = await self._fire(
                "input", InputEvent(text=text, images=images, source=source), signal=signal
            )
        finally:
            _inside_input.reset(token)
        _raise_if_aborted(signal)
        if result["action"] == "handled":
            return None
        text, images = result["text"], result["images"]
        if not text and not images:
            return None
        return text, images

    def expand(self, text: str) -> str:
        """``/skill:name args`` and ``/template args`` expanded (unknown names pass through)."""
        from piko.engine.expansion import expand_prompt_template
        from piko.engine.expansion import expand_skill_command

        resources = self._resources()
        text = expand_skill_command(text, resources.skills, self._skill_unreadable)
        return expand_prompt_template(text, resources.prompt_templates)

    def _skill_unreadable(self, skill: Any, error: OSError) -> None:
        """Report a skill file that cannot be read, as pi does: an extension error of the skill."""
        import errno

        from piko.extensions.context import schedule
        from piko.platform.dispatch import Handler

        code = errno.errorcode.get(error.errno or 0, "EIO")
        # worded as Node words it, as pi reports it: ENOENT: no such file or directory, open '...'
        reason = OSError(f"{code}: {(error.strerror or str(error)).lower()}, open '{skill.file_path}'")
        handler = Handler("skills", skill.file_path, lambda event, ctx: None)
        schedule(self._dispatcher.report(handler, "skill_expansion", reason))

    async def before_agent_start(
        self,
        text: str,
        images: list[ImageContent] | None,
        *,
        system_prompt: str,
        system_prompt_options: Any,
        signal: Any = None,
    ) -> tuple[list[CustomMessage], str | None]:
        """The messages ``before_agent_start`` handlers add to the prompt, and the system prompt
        they put in place of ``system_prompt`` (None: keep it)."""
        if not self._dispatcher.has_handlers("before_agent_start"):
            return [], None
        event = BeforeAgentStartEvent(
            prompt=text,
            images=images,
            system_prompt=system_prompt,
            system_prompt_options=system_prompt_options,
        )
        result = await self._fire("before_agent_start", event, signal=signal)
        _raise_if_aborted(signal)
        if not result:
            return [], None
        from piko.engine.extension_messages import custom_message_from

        extra = [custom_message_from(m) for m in result.get("messages") or []]
        return extra, result.get("system_prompt") or None


def _raise_if_aborted(signal: Any) -> None:
    """``Operation aborted`` once the prompt's preparation was aborted."""
    if signal is not None and signal.aborted:
        from piko.lib.abort import AbortError

        raise AbortError("Operation aborted")
