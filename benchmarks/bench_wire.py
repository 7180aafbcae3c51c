"""Writing messages to the wire: piko's generated functions against cattrs' own generated ones.

``piko.data.wire`` compiles one ``unstructure`` function per data-model class (``exec`` of a
generated body) instead of using cattrs' ``make_dict_unstructure_fn``. This measures both on the
same 20,000 assistant messages (text and a tool call, usage with cost), cattrs configured with
the same key renames and ``None`` omission. cattrs' result still lacks what pi's format needs
and piko's functions write in the same pass (the ``type``/``role`` tags, unknown keys kept in
``extra`` written last, integral floats written as JavaScript writes them), so its time is a
lower bound. No target: the figure backs the module docstring's reason.

    .venv/bin/python benchmarks/bench_wire.py [--messages 20000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

LINE = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "hello world"},
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.txt"}},
    ],
    "api": "openai-completions",
    "provider": "p",
    "model": "m",
    "usage": {
        "input": 10, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 30,
        "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3},
    },
    "stopReason": "toolUse",
    "timestamp": 1,
}  # fmt: skip


def cattrs_converter() -> object:
    import attrs
    import cattrs
    from cattrs.gen import make_dict_unstructure_fn
    from cattrs.gen import override

    from piko.data import messages
    from piko.data.wire import camel

    converter = cattrs.Converter()
    for cls in (
        messages.TextContent,
        messages.ToolCall,
        messages.Usage,
        messages.Cost,
        messages.AssistantMessage,
    ):
        renames = {
            f.name: override(rename=camel(f.name), omit_if_default=f.default is None)
            for f in attrs.fields(cls)
            if f.name != "extra"
        }
        converter.register_unstructure_hook(
            cls, make_dict_unstructure_fn(cls, converter, extra=override(omit=True), **renames)
        )
    return converter


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from piko.data.wire import message_from_wire
    from piko.data.wire import to_wire

    messages = [message_from_wire(LINE) for _ in range(args.messages)]
    converter = cattrs_converter()
    ours, theirs = [], []
    for _ in range(args.runs):
        start = time.perf_counter()
        for message in messages:
            to_wire(message)
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        for message in messages:
            converter.unstructure(message)  # type: ignore[attr-defined]
        theirs.append(time.perf_counter() - start)
    print(f"piko.data.wire.to_wire:           {statistics.median(ours) * 1000:6.0f} ms")
    print(f"cattrs make_dict_unstructure_fn:  {statistics.median(theirs) * 1000:6.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
