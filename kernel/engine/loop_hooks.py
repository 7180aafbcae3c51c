"""How the agent loop is set up for a run: the model's stream function, and the extension hooks on the context sent, the assistant message, each tool call and its result."""

from __future__ import annotations

import copy
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from piko.data.events import AssistantMessageEvent
from piko.data.events import ContextEvent
from piko.data.events import ContextWithSystemEvent
from piko.data.events import ToolCallEvent
from piko.data.events import ToolResultEvent
from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.data.messages import ToolCall
from piko.data.streaming import StreamOptions
from piko.engine.extension_reach import ExtensionReach
from piko.engine.llm_messages import convert_to_llm
from piko.engine.loop import LoopConfig


class LoopHooks(ExtensionReach):
    """The loop's callbacks that reach extensions through ``dispatcher`` (with ``ctx`` and the
    run's abort ``signal()``); each costs nothing when no extension handles its event."""

    def config(
        self,
        model: Model | None,
        *,
        make_options: Callable[[Any], Awaitable[StreamOptions]],
        steering: Callable[[], Awaitable[list[Any]]],
        follow_ups: Callable[[], Awaitable[list[Any]]],
    ) -> LoopConfig:
        """The loop's configuration for a run with ``model``, with these hooks and the tools' ``ctx``;
        raises when there is no model or no provider API streams it."""
        if model is None:
            from piko.models.guidance import no_model_selected_message

            raise RuntimeError(no_model_selected_message())
        stream_fn = self._services.registry.stream_function(model)
        if stream_fn is None:
            raise RuntimeError(
                f'No provider API "{model.api}" is registered for {model.provider}/{model.id} '
                "(is its plugin installed and not blocked? see `pi plugins`)"
            )
        return LoopConfig(
            model=model,
            stream_fn=stream_fn,
            make_options=make_options,
            convert_to_llm=self.convert_to_llm,
            tool_ctx=self._ctx,
            transform_context=self.transform_context,
            transform_request=self.transform_request,
            on_assistant_message=self.on_assistant_message,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            get_steering=steering,
            get_follow_up=follow_ups,
        )

    def convert_to_llm(self, messages: list[Any]) -> list[Any]:
        """The messages as the model sees them (images left out when ``images.blockImages`` is set)."""
        converted = convert_to_llm(messages)
        if self._services.settings.get("images.blockImages"):
            from piko.engine.llm_messages import block_images

            converted = block_images(converted)
        return converted

    async def transform_context(self, messages: list[Any]) -> list[Any]:
        """``context`` handlers may change (a copy of) the messages of the next request."""
        if not self._dispatcher.has_handlers("context"):
            return messages
        event = ContextEvent(messages=copy.deepcopy(messages))
        return list(await self._fire("context", event))

    async def transform_request(self, system_prompt: str, messages: list[Any]) -> tuple[str, list[Any]]:
        """``context_with_system`` handlers, after the ``context`` ones, may change the system
        prompt and (a copy of) the messages of the next request together."""
        if not self._dispatcher.has_handlers("context_with_system"):
            return system_prompt, messages
        event = ContextWithSystemEvent(system_prompt=system_prompt, messages=copy.deepcopy(messages))
        prompt, changed = await self._fire("context_with_system", event)
        return prompt, list(changed)

    async def on_assistant_message(self, message: AssistantMessage) -> AssistantMessage:
        """``assistant_message`` handlers may replace the finished assistant message."""
        if not self._dispatcher.has_handlers("assistant_message"):
            return message
        result = await self._fire("assistant_message", AssistantMessageEvent(message=message), signal=None)
        return result if isinstance(result, AssistantMessage) else message

    async def before_tool_call(self, call: ToolCall, args: dict[str, Any]) -> Any:
        """``tool_call`` handlers may block a call or change its input."""
        if not self._dispatcher.has_handlers("tool_call"):
            return None
        event = ToolCallEvent(tool_call_id=call.id, tool_name=call.name, input=args)
        verdict = await self._fire("tool_call", event)
        if verdict and verdict.get("block"):
            return verdict
        answer: dict[str, Any] = {}
        if event.input is not args:
            answer["input"] = event.input
        if verdict and verdict.get("additional_context"):
            answer["additional_context"] = list(verdict["additional_context"])
        return answer or None

    async def after_tool_call(self, call: ToolCall, args: dict[str, Any], result: Any, is_error: bool) -> Any:
        """``tool_result`` handlers may change a tool's result."""
        if not self._dispatcher.has_handlers("tool_result"):
            return None
        event = ToolResultEvent(
            tool_call_id=call.id,
            tool_name=call.name,
            input=args,
            content=list(result.content),
            details=result.details,
            is_error=is_error,
            structured_content=result.structured_content,
        )
        return await self._fire("tool_result", event)
