"""The floor of ``pi -p`` with piko's libraries: one streamed chat-completions turn, nothing else.

It imports what every ``-p`` turn of piko needs from its chosen libraries (attrs, pluggy, orjson,
h11, asyncio), sends one request over asyncio streams with h11 framing to the server at
``sys.argv[1]`` (a base URL such as ``http://127.0.0.1:8000/v1``; without one, the first
provider's ``baseUrl`` in ``$PI_CODING_AGENT_DIR/models.json``, as the benchmarks set it up) and
prints the answer's text.
No settings, plugins, session or tools: what it costs is what any Python program built on these
libraries pays before doing piko's own work (``bench_instructions.py --floor``).
"""

import asyncio
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import attrs  # noqa: F401  (imported for its cost: the data model is attrs classes)
import h11
import orjson
import pluggy  # noqa: F401  (imported for its cost: the plugin manager)


async def turn(base_url: str) -> str:
    url = urlsplit(base_url)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    body = orjson.dumps({"model": "m1", "stream": True, "messages": [{"role": "user", "content": "say hi"}]})
    connection = h11.Connection(h11.CLIENT)
    request = h11.Request(
        method="POST",
        target=f"{url.path}/chat/completions",
        headers=[
            ("Host", url.netloc),
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
        ],
    )
    writer.write(
        connection.send(request) + connection.send(h11.Data(data=body)) + connection.send(h11.EndOfMessage())
    )
    text: list[str] = []
    pending = b""
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(await reader.read(65536))
        elif isinstance(event, h11.Data):
            pending += bytes(event.data)
            while b"\n\n" in pending:
                chunk, pending = pending.split(b"\n\n", 1)
                data = chunk.removeprefix(b"data: ")
                if data != b"[DONE]":
                    for choice in orjson.loads(data).get("choices", []):
                        text.append((choice.get("delta") or {}).get("content") or "")
        elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
            break
    writer.close()
    return "".join(text)


def base_url() -> str:
    if len(sys.argv) > 1 and sys.argv[1].startswith("http"):
        return sys.argv[1]
    models = orjson.loads((Path(os.environ["PI_CODING_AGENT_DIR"]) / "models.json").read_bytes())
    return str(next(iter(models["providers"].values()))["baseUrl"])


if __name__ == "__main__":
    print(asyncio.run(turn(base_url())))
