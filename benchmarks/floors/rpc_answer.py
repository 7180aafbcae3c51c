"""The floor of an RPC start with piko's libraries: read one JSON command on the event loop, answer it.

It imports what every RPC start of piko needs from its chosen libraries (attrs, pluggy, orjson,
asyncio), reads one line from stdin through an asyncio stream, and writes a ``response`` line
for it. No settings, plugins, session or model registry (``bench_instructions.py --floor``).
"""

import asyncio
import sys

import attrs  # noqa: F401  (imported for its cost: the data model is attrs classes)
import orjson
import pluggy  # noqa: F401  (imported for its cost: the plugin manager)


async def answer_one() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    command = orjson.loads(await reader.readline())
    response = {"id": command.get("id"), "type": "response", "command": command.get("type"), "success": True}
    sys.stdout.buffer.write(orjson.dumps(response) + b"\n")
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(answer_one())
