"""``to_wire`` of a subclass of a data-model class: written as the class it extends.

A streaming block (``piko.data.stream_blocks``) is such a subclass, and ``piko.data.wire`` does
not list the streaming classes (it would import them on every start); a plugin's own subclass of
a block or a message is written the same way, in pi's camelCase form.
"""

from __future__ import annotations

import attrs

from piko.data.messages import TextContent
from piko.data.messages import ToolCall
from piko.data.messages import UserMessage
from piko.data.stream_blocks import StreamingTextContent
from piko.data.stream_blocks import StreamingThinkingContent
from piko.data.stream_blocks import StreamingToolCall
from piko.data.wire import get_converter
from piko.data.wire import to_wire


def test_streaming_blocks_are_written_as_the_blocks_they_settle_into() -> None:
    text = StreamingTextContent(text="hel")
    text.text += "lo"
    call = StreamingToolCall(id="c1", name="read", arguments={"path": "a.txt"})
    thinking = StreamingThinkingContent(thinking="hmm", thinking_signature="sig")
    assert to_wire(text) == to_wire(TextContent(text="hello")) == {"type": "text", "text": "hello"}
    assert to_wire(call) == to_wire(ToolCall(id="c1", name="read", arguments={"path": "a.txt"}))
    assert to_wire(thinking)["type"] == "thinking" and to_wire(thinking)["thinkingSignature"] == "sig"


@attrs.define(kw_only=True, slots=True, repr=False, eq=False)
class LabelledText(TextContent):
    """A plugin's own block: one more field."""

    label: str = ""


def test_a_plugin_subclass_is_written_in_pi_s_form_with_its_fields() -> None:
    block = LabelledText(text="hi", text_signature="s1", label="mine")
    assert to_wire(block) == {"type": "text", "text": "hi", "textSignature": "s1", "label": "mine"}
    message = UserMessage(content=[block], timestamp=1)
    assert to_wire(message)["content"] == [to_wire(block)]
    # the shared cattrs converter takes the same path
    assert get_converter().unstructure(block) == to_wire(block)
