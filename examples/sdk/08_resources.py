"""Resources: replace or filter what was found (skills, prompt templates, context files, system prompt)."""

from __future__ import annotations

import asyncio

import piko


def only_project_rules(found: list[piko.ContextFile]) -> list[piko.ContextFile]:
    """Keep the context files found, then add one that exists only in memory."""
    return [*found, piko.ContextFile(path="<service>/RULES.md", content="Answer in one sentence.")]


async def main() -> None:
    review = piko.PromptTemplate(
        name="review", description="Review a file", content="Review $1 for bugs.", file_path="<memory>"
    )
    overrides = piko.ResourceOverrides(
        system_prompt="You are a careful code reviewer.",
        append_system_prompt=["Never change files."],
        context_files=only_project_rules,
        prompt_templates=[review],
        skills=[],  # no skills at all
    )
    async with await piko.create_agent_session(resources=overrides, tools=["read"]) as session:
        print(session.system_prompt.splitlines()[0])
        await session.prompt("/review calc.py")  # the template expands before the model sees it
        print(session.get_last_assistant_text())


if __name__ == "__main__":
    asyncio.run(main())
