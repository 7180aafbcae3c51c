"""Custom model: pick a known model by name, or describe one (a local OpenAI-compatible server)."""

from __future__ import annotations

import asyncio
import os

import piko

LOCAL_URL = os.environ.get("LOCAL_LLM_URL", "http://127.0.0.1:8080/v1")


async def main() -> None:
    # A model the registry knows (models.json, the catalog, plugins), with a thinking level.
    async with await piko.create_agent_session(
        model=os.environ.get("PIKO_MODEL", "anthropic/claude-sonnet-4-5"), thinking_level="low"
    ) as session:
        assert session.model is not None
        print("known model:", session.model.key, session.thinking_level)

    # A model described in code: it joins this session's registry as a provider of its own.
    local = piko.Model(id="local-7b", provider="local", api="openai-completions", base_url=LOCAL_URL)
    async with await piko.create_agent_session(
        model=local, api_key=os.environ.get("LOCAL_LLM_KEY", "none"), tools=[]
    ) as session:
        await session.prompt("Say hello.")
        print("local model:", session.get_last_assistant_text())


if __name__ == "__main__":
    asyncio.run(main())
