"""Session events turned into transcript items, and a whole conversation printed again.

:class:`SessionEvents` follows the agent session (``message_start/update/end``,
``tool_execution_*``, ``queue_update``, ``compaction_*``, ``auto_retry_*``...): an assistant
message becomes markdown items (answer, thinking) and tool boxes in content order; a tool box
is completed by its execution events; aborted and failed responses end with pi's red line.
:meth:`SessionEvents.render_conversation` does the same for the messages of a session that is
continued, resumed or navigated.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import BashExecutionMessage
from piko.data.messages import BranchSummaryMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import CustomMessage
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UnknownMessage
from piko.data.messages import UserMessage
from piko.data.messages import text_of
from piko.extensions.extension_api import registered_displays
from piko.plugins.modes.interactive.footer import FooterData
from piko.plugins.modes.interactive.markdown_transformers import has_transformers
from piko.plugins.modes.interactive.markdown_transformers import transform
from piko.plugins.modes.interactive.screen import RETRYING
from piko.plugins.modes.interactive.screen import WORKING
from piko.plugins.modes.interactive.tool_view import ToolView
from piko.plugins.modes.interactive.transcript import BashItem
from piko.plugins.modes.interactive.transcript import MarkdownItem
from piko.plugins.modes.interactive.transcript import RenderContext
from piko.plugins.modes.interactive.transcript import StaticItem
from piko.plugins.modes.interactive.transcript import ThinkingExtrasItem
from piko.plugins.modes.interactive.transcript import ThinkingRenderContext
from piko.plugins.modes.interactive.transcript import ToolItem


def views() -> Any:
    """The message views (imported on first use: they need rich)."""
    from piko.plugins.modes.interactive import views as module

    return module


class _AssistantView:
    """The items of the assistant message being streamed, by content index."""

    def __init__(self) -> None:
        self.items: dict[int, Any] = {}
        self.has_tools = False


def abort_text(message: AssistantMessage, retry_attempt: int) -> str:
    """pi's line for an aborted or failed response."""
    if message.stop_reason == "aborted":
        if retry_attempt > 0:
            return f"Aborted after {retry_attempt} retry attempt{'s' if retry_attempt > 1 else ''}"
        if message.error_message and message.error_message != "Request was aborted":
            return message.error_message
        return "Operation aborted"
    return message.error_message or "Unknown error"


class SessionEvents:
    """Follows the session and fills the transcript."""

    def __init__(self, mode: Any) -> None:
        self.mode = mode
        self._assistant: _AssistantView | None = None
        self._tools: dict[str, ToolItem] = {}
        self.last_tools: list[ToolItem] = []  # the tool boxes of the latest response that had any

    def reset(self) -> None:
        """Forget the items of the conversation that was shown (it is being replaced)."""
        self._assistant = None
        self._tools = {}
        self.last_tools = []

    @property
    def transcript(self) -> Any:
        return self.mode.transcript

    def on_event(self, event: Any) -> None:
        handler = getattr(self, f"_on_{event.TYPE}", None)
        if handler is not None:
            handler(event)
        if event.TYPE == "message_update":
            self.mode.screen.refresh_soon()
        else:
            self.mode.screen.refresh()

    # -- the agent -------------------------------------------------------------------------------

    def _on_agent_start(self, event: Any) -> None:
        self.mode.screen.set_loader(WORKING)

    def _on_agent_end(self, event: Any) -> None:
        screen = self.mode.screen
        if screen.loader == WORKING:
            screen.set_loader(None)
        self._finish_assistant()
        for item in self._tools.values():
            item.done = True
        self._tools.clear()

    def _on_queue_update(self, event: Any) -> None:
        self.mode.queued = (list(event.steering), list(event.follow_up))

    def _on_session_info_changed(self, event: Any) -> None:
        self.mode.update_title()

    # -- messages --------------------------------------------------------------------------------

    def _on_message_start(self, event: Any) -> None:
        message = event.message
        if isinstance(message, UserMessage):
            text = text_of(message.content)
            if text:
                self.transcript.add(self.user_item(text))
        elif isinstance(message, CustomMessage):
            if message.display:
                self.transcript.add(self.custom_item(message))
        elif isinstance(message, AssistantMessage):
            self._finish_assistant()
            self._assistant = _AssistantView()
            self._sync(message)

    def _on_message_update(self, event: Any) -> None:
        message = event.message
        if not isinstance(message, AssistantMessage):
            return
        view = self._assistant
        if view is None:
            view = self._assistant = _AssistantView()
        change = event.assistant_message_event
        index = getattr(change, "content_index", None)
        item = view.items.get(index) if index is not None else None
        if item is not None and index is not None and index < len(message.content):
            # a block already shown grew: point its item at the block (cheap: nothing is read)
            self._follow(item, message.content[index])
        else:
            self._sync(message)

    def _on_message_end(self, event: Any) -> None:
        message = event.message
        if not isinstance(message, AssistantMessage):
            return
        if self._assistant is None:
            self._assistant = _AssistantView()
        self._sync(message)
        view = self._assistant
        for item in view.items.values():
            if isinstance(item, MarkdownItem):
                item.finish()
            elif isinstance(item, ToolItem):
                item.view.args_complete = True
        tools = [i for i in view.items.values() if isinstance(i, ToolItem)]
        if message.stop_reason in ("aborted", "error"):
            session = self.mode.session
            text = abort_text(message, session.retry.attempt if session else 0)
            if tools:
                for item in tools:
                    if not item.done:
                        self._fail_tool(item, text)
            else:
                prefix = message.stop_reason == "error"
                self.transcript.add(
                    StaticItem(lambda ctx: views().error_line(ctx.theme, text, prefix=prefix))
                )
        self._assistant = None

    def _fail_tool(self, item: ToolItem, text: str) -> None:
        item.view.set_result({"content": [{"type": "text", "text": text}]}, partial=False, is_error=True)
        item.done = True
        self._tools.pop(item.view.tool_call_id, None)

    def _sync(self, message: AssistantMessage) -> None:
        """Items for new content blocks (finishing the ones before), text and arguments updated."""
        view = self._assistant
        assert view is not None
        for index, block in enumerate(message.content):
            item = view.items.get(index)
            if item is None:
                if isinstance(block, TextContent):
                    item = self.markdown_item(thinking=False)
                elif isinstance(block, ThinkingContent):
                    item = self.markdown_item(thinking=True)
                elif isinstance(block, ToolCall):
                    item = self._tools.get(block.id)
                    if item is None:
                        item = self._tools[block.id] = ToolItem(
                            ToolView(tool_call_id=block.id, name=block.name, args_source=block)
                        )
                    if not view.has_tools:
                        view.has_tools = True
                        self.last_tools = []
                    self.last_tools.append(item)
                else:
                    continue
                for earlier in view.items.values():
                    if isinstance(earlier, MarkdownItem):
                        earlier.finish()
                view.items[index] = item
                if item not in self.transcript.items:
                    self.transcript.add(item)
                    if isinstance(block, ThinkingContent):
                        self._add_thinking_extras(item, message.content, index)
            self._follow(item, block)

    def _add_thinking_extras(self, item: Any, content: list[Any], index: int) -> None:
        """Extensions' thinking renderers below the thinking block ``content[index]``."""
        renderers = registered_displays(self.mode.app, "assistant_thinking_renderer")
        if not renderers:
            return
        thinking_index = sum(1 for b in content[:index] if isinstance(b, ThinkingContent))
        context = ThinkingRenderContext(item, index, thinking_index, self.mode.invalidate)
        self.transcript.add(ThinkingExtrasItem(item, renderers, context))

    @staticmethod
    def _follow(item: Any, block: Any) -> None:
        """Let ``item`` show ``block`` (its text or arguments are read when drawn)."""
        if isinstance(item, MarkdownItem):
            if isinstance(block, (TextContent, ThinkingContent)):
                item.follow(block)
        elif isinstance(item, ToolItem) and isinstance(block, ToolCall):
            item.view.args_source = block

    def _finish_assistant(self) -> None:
        if self._assistant is not None:
            for item in self._assistant.items.values():
                if isinstance(item, MarkdownItem):
                    item.finish()
            self._assistant = None

    # -- tools -----------------------------------------------------------------------------------

    def _tool(self, tool_call_id: str, name: str, args: Any) -> ToolItem:
        item = self._tools.get(tool_call_id)
        if item is None:
            item = self._tools[tool_call_id] = ToolItem(
                ToolView(tool_call_id=tool_call_id, name=name, args=args or {})
            )
            self.last_tools.append(item)
            self.transcript.add(item)
        return item

    def _on_tool_execution_start(self, event: Any) -> None:
        item = self._tool(event.tool_call_id, event.tool_name, event.args)
        item.view.args_complete = True
        item.view.started_at = time.monotonic()
        self.mode.screen.start_spinner()

    def _on_tool_execution_update(self, event: Any) -> None:
        item = self._tools.get(event.tool_call_id)
        if item is not None:
            item.view.set_result(event.partial_result, partial=True)

    def _on_tool_execution_end(self, event: Any) -> None:
        item = self._tool(event.tool_call_id, event.tool_name, None)
        item.view.set_result(event.result, partial=False, is_error=bool(event.is_error))
        item.done = True
        self._tools.pop(event.tool_call_id, None)

    # -- compaction and retries ------------------------------------------------------------------

    def _on_compaction_start(self, event: Any) -> None:
        hint = f"({self.mode.key_text('app.interrupt')} to cancel)"
        if event.reason == "manual":
            label = f"Compacting context... {hint}"
        else:
            prefix = "Context overflow detected, " if event.reason == "overflow" else ""
            label = f"{prefix}Auto-compacting... {hint}"
        self.mode.screen.set_loader(label)

    def _on_compaction_end(self, event: Any) -> None:
        mode = self.mode
        mode.screen.set_loader(WORKING if mode.session and mode.session.is_streaming else None)
        add = self.transcript.add
        if event.aborted:
            if event.reason == "manual":
                add(StaticItem(lambda ctx: views().error_line(ctx.theme, "Compaction cancelled")))
            else:
                add(StaticItem(lambda ctx: views().status_line(ctx.theme, "Auto-compaction cancelled")))
        elif event.result:
            result = event.result if isinstance(event.result, dict) else {}
            summary = str(result.get("summary", ""))
            tokens = int(result.get("tokensBefore") or 0)
            add(self.summary_item(summary, tokens))
            mode.footer_data = FooterData()
        elif event.error_message:
            manual = event.reason == "manual"
            error = str(event.error_message)
            add(StaticItem(lambda ctx: views().error_line(ctx.theme, error, prefix=manual)))
        if mode.compaction_queue:
            mode.spawn(self._flush_compaction_queue())

    async def _flush_compaction_queue(self) -> None:
        """Send what was typed while compacting: the first as a prompt, the rest queued behind it."""
        mode = self.mode
        queued, mode.compaction_queue = mode.compaction_queue, []
        session = mode.session
        for index, (text, kind) in enumerate(queued):
            if session.is_streaming or mode.run_active:
                await (session.follow_up(text) if kind == "followUp" else session.steer(text))
            elif index == 0:
                mode.start_run(text)
                await asyncio.sleep(0)
            else:
                await session.follow_up(text)

    def _on_auto_retry_start(self, event: Any) -> None:
        screen = self.mode.screen
        screen.retry_deadline = time.monotonic() + event.delay_ms / 1000.0
        screen.retry_attempt = (event.attempt, event.max_attempts)
        screen.set_loader(RETRYING, "warning")

    def _on_auto_retry_end(self, event: Any) -> None:
        mode = self.mode
        screen = mode.screen
        screen.retry_deadline = None
        if screen.loader == RETRYING:
            screen.set_loader(WORKING if mode.session and mode.session.is_streaming else None)
        if not event.success:
            text = f"Retry failed after {event.attempt} attempts: {event.final_error or 'Unknown error'}"
            self.transcript.add(StaticItem(lambda ctx: views().error_line(ctx.theme, text)))

    # -- items for messages ----------------------------------------------------------------------

    def _shown(self, kind: str, ctx: RenderContext) -> Any:
        """The transformers for surface ``kind`` as one ``text -> text`` function."""
        app = self.mode.app
        return lambda text: transform(app, text, kind, streaming=False, width=ctx.width)

    def markdown_item(self, *, thinking: bool) -> MarkdownItem:
        """An answer or thinking block, drawn through the extensions' markdown transformers."""
        app = self.mode.app
        if not has_transformers(app):
            return MarkdownItem(thinking=thinking)
        kind = "assistant-thinking" if thinking else "assistant"

        def shown(raw: str, streaming: bool) -> str:
            return transform(app, raw, kind, streaming=streaming, width=self.mode.screen.width)

        return MarkdownItem(thinking=thinking, transform=shown)

    def user_item(self, text: str) -> StaticItem:
        app = self.mode.app

        def shown(width: int) -> str:
            return (
                transform(app, text, "user", streaming=False, width=width) if has_transformers(app) else text
            )

        item = StaticItem(
            lambda ctx: views().user_message(
                ctx.theme, shown(ctx.width), expanded=ctx.expanded, expand_key=ctx.expand_key
            )
        )
        item.prompt = True
        return item

    def _entry_renderer(self, custom_type: str) -> Any:
        """The last entry renderer registered for ``custom_type`` (pi 1.6), or None."""
        found = [r for t, r in registered_displays(self.mode.app, "entry_renderer") if t == custom_type]
        return found[-1] if found else None

    def entry_item(self, entry: Any) -> StaticItem | None:
        """A ``custom`` entry drawn by its renderer (``None``: no renderer takes its type)."""
        renderer = self._entry_renderer(entry.custom_type)
        if renderer is None:
            return None

        def render(ctx: RenderContext) -> Any:
            try:
                drawn = renderer(entry, {"expanded": ctx.expanded}, ctx.theme)
            except Exception as exc:
                return views().error_line(ctx.theme, f"entry renderer failed: {exc}", prefix=False)
            return views().Text.from_ansi(drawn) if isinstance(drawn, str) else drawn

        return StaticItem(render)

    def on_custom_entry(self, data: Any) -> None:
        """An extension appended a ``custom`` entry: shown at once when a renderer takes it."""
        session = self.mode.session
        entry_id = data.get("id") if isinstance(data, dict) else None
        entry = session.session_manager.get_entry(entry_id) if session is not None and entry_id else None
        item = self.entry_item(entry) if entry is not None else None
        if item is not None:
            self.transcript.add(item)
            self.mode.screen.refresh()

    def _entries_after_messages(self, session: Any) -> dict[int, list[Any]]:
        """The ``custom`` entries a renderer takes, by the message entry before them (``id()`` of
        its message; 0: before any message)."""
        if not registered_displays(self.mode.app, "entry_renderer"):
            return {}
        placed: dict[int, list[Any]] = {}
        anchor = 0
        for entry in session.session_manager.get_branch():
            if getattr(entry, "type", "") == "message":
                anchor = id(entry.message)
            elif getattr(entry, "type", "") == "custom":
                item = self.entry_item(entry)
                if item is not None:
                    placed.setdefault(anchor, []).append(item)
        return placed

    def summary_item(self, summary: str, tokens_before: int | None = None) -> StaticItem:
        """A compaction's box (``tokens_before`` given) or a branch summary's, collapsed or
        expanded, the summary drawn through the extensions' transformers."""

        def render(ctx: RenderContext) -> Any:
            shown = self._shown("summary", ctx)(summary)
            if tokens_before is None:
                return views().branch_summary(
                    ctx.theme, shown, expanded=ctx.expanded, expand_key=ctx.expand_key
                )
            return views().compaction_summary(
                ctx.theme, shown, tokens_before, expanded=ctx.expanded, expand_key=ctx.expand_key
            )

        return StaticItem(render)

    def custom_item(self, message: Any) -> StaticItem:
        registry = self.mode.app.registries.message_renderers

        def render(ctx: RenderContext) -> Any:
            definition = registry.get(message.custom_type)
            renderer = definition.renderer if definition is not None else None
            return views().custom_message(
                ctx.theme,
                message,
                expanded=ctx.expanded,
                renderer=renderer,
                transform=self._shown("custom", ctx),
            )

        return StaticItem(render)

    def render_conversation(self) -> None:
        """The session's conversation as pi shows it after loading: every message, tools with results."""
        mode = self.mode
        session = mode.session
        add = self.transcript.add
        pending: dict[str, ToolItem] = {}
        anchored = self._entries_after_messages(session)
        for item in anchored.pop(0, []):
            add(item)
        previous: Any = None
        for message in session.session_manager.build_context().messages:
            for item in anchored.pop(id(previous), []) if anchored else []:  # after the message before
                add(item)
            previous = message
            if isinstance(message, AssistantMessage):
                tools: list[ToolItem] = []
                for position, block in enumerate(message.content):
                    if isinstance(block, (TextContent, ThinkingContent)):
                        text = block.text if isinstance(block, TextContent) else block.thinking
                        if text.strip():
                            item = self.markdown_item(thinking=isinstance(block, ThinkingContent))
                            item.set_text(text)
                            item.finish()
                            add(item)
                            if isinstance(block, ThinkingContent):
                                self._add_thinking_extras(item, message.content, position)
                    elif isinstance(block, ToolCall):
                        view = ToolView(
                            tool_call_id=block.id, name=block.name, args=block.arguments, args_complete=True
                        )
                        tools.append(ToolItem(view))
                        add(tools[-1])
                if message.stop_reason in ("aborted", "error"):
                    text = abort_text(message, 0)
                    for tool in tools:
                        self._fail_tool(tool, text)
                    if not tools:
                        error = message.stop_reason == "error"
                        add(
                            StaticItem(
                                lambda ctx, t=text, e=error: views().error_line(ctx.theme, t, prefix=e)
                            )
                        )
                else:
                    pending.update((t.view.tool_call_id, t) for t in tools)
                if tools:
                    self.last_tools = tools
            elif isinstance(message, ToolResultMessage):
                answered = pending.pop(message.tool_call_id, None)
                if answered is not None:
                    answered.view.set_result(message, partial=False, is_error=message.is_error)
                    answered.done = True
            elif isinstance(message, UserMessage):
                text = text_of(message.content)
                if text:
                    add(self.user_item(text))
            elif isinstance(message, BashExecutionMessage):
                bash = BashItem(message.command, exclude=bool(message.exclude_from_context))
                bash.append(message.output or "")
                bash.complete(message)
                add(bash)
            elif isinstance(message, CustomMessage):
                if message.display:
                    add(self.custom_item(message))
            elif isinstance(message, CompactionSummaryMessage):
                add(self.summary_item(message.summary, message.tokens_before))
            elif isinstance(message, BranchSummaryMessage):
                add(self.summary_item(message.summary))
            elif isinstance(message, UnknownMessage):
                pass  # pi 1.6's ``system`` records (prompt sections, tools) and other roles: nothing, as pi 1.6
        for item in anchored.pop(id(previous), []) if anchored else []:
            add(item)
        for tool in pending.values():
            tool.done = True
        entries = session.session_manager.get_entries()
        compactions = sum(1 for e in entries if getattr(e, "type", "") == "compaction")
        if compactions:
            times = "1 time" if compactions == 1 else f"{compactions} times"
            add(StaticItem(lambda ctx: views().status_line(ctx.theme, f"Session compacted {times}")))
        mode.footer_data = FooterData()
        mode.screen.refresh()
