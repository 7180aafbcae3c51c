"""/model, /scoped-models and /thinking against a real session: switches recorded in the session file and settings."""

from __future__ import annotations

from typing import Any

from icmd_harness import current
from icmd_harness import label
from icmd_harness import lines_of

from piko.models.resolver import ScopedModel
from piko.plugins.modes.interactive.commands import BUILTIN_COMMANDS
from piko.plugins.modes.interactive.commands import model_completions


def model_changes(session: Any) -> list[tuple[str, str]]:
    return [
        (e["provider"], e["modelId"]) for e in lines_of(session.session_file) if e["type"] == "model_change"
    ]


def test_model_with_an_exact_name_switches_directly(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context([{"blocks": [{"text": "hi"}]}])
        await session.prompt("hello")  # the session file is written from the first answer on
        await ctx.run("/model other/other-1")
        return session, ctx

    session, ctx = run(scenario())
    assert session.model.provider == "other" and session.model.id == "other-1"
    assert ctx.texts("info") == ["Model: other-1"]
    assert not ctx.pick_calls
    assert model_changes(session)[-1] == ("other", "other-1")
    assert world.settings()["defaultProvider"] == "other"
    assert world.settings()["defaultModel"] == "other-1"


def test_model_selector_marks_the_current_model_and_switches(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context()
        ctx.picks.append(label("mock-think"))
        await ctx.run("/model")
        return session, ctx

    session, ctx = run(scenario())
    title, items, opts = ctx.pick_calls[0]
    assert title.startswith("Select model")
    assert "Use /login to add providers" in title
    labels = [i.label for i in items]
    # the current model comes first, then by provider; catalog providers have no key and are not offered
    assert labels[0] == "mock-1 [mock]"
    assert set(labels) == {"mock-1 [mock]", "mock-think [mock]", "other-1 [other]"}
    assert [i.label for i in items if i.current] == ["mock-1 [mock]"]
    assert opts["initial"].id == "mock-1"
    assert session.model.id == "mock-think"
    assert ctx.texts("info") == ["Model: mock-think"]
    assert world.settings()["defaultModel"] == "mock-think"


def test_model_search_prefilters_and_cancel_changes_nothing(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context()
        ctx.picks.append(None)
        await ctx.run("/model mock")  # two matches: the selector opens on them
        await ctx.run("/model zzz-nothing")
        return session, ctx

    session, ctx = run(scenario())
    _title, items, _opts = ctx.pick_calls[0]
    assert {i.label for i in items} == {"mock-1 [mock]", "mock-think [mock]"}
    assert session.model.id == "mock-1"
    assert ctx.texts("error") == [
        'No model matches "zzz-nothing". Only showing models from configured providers. Use /login to add providers.'
    ]


def test_model_switch_without_credentials_is_an_error(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context()
        keyless = session.model_registry.find("groq", "openai/gpt-oss-120b")
        from piko.plugins.modes.interactive.commands.models import switch_model

        ok = await switch_model(ctx, keyless)
        return session, ctx, ok

    session, ctx, ok = run(scenario())
    assert ok is False
    assert session.model.id == "mock-1"
    assert ctx.texts("error") == ["No API key for groq/openai/gpt-oss-120b"]


def test_model_uses_the_scope_and_can_switch_to_all(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session()
        registry = session.model_registry
        session.models.scoped_models = [
            ScopedModel(registry.find("mock", "mock-1")),
            ScopedModel(registry.find("other", "other-1")),
        ]
        ctx = world.context(session)
        ctx.picks.extend([label("Scope: scoped"), label("mock-think")])
        await ctx.run("/model")
        return session, ctx

    session, ctx = run(scenario())
    first, second = ctx.pick_calls[0][1], ctx.pick_calls[1][1]
    assert [i.label for i in first[1:]] == ["mock-1 [mock]", "other-1 [other]"]
    assert "Scope: all" in second[0].label and len(second) == 4
    assert session.model.id == "mock-think"
    assert model_completions(session, "oth") == ["other/other-1"]


def test_model_completions_list_provider_and_id(world, run) -> None:
    session = run(world.session())
    assert model_completions(session, "think") == ["mock/mock-think"]
    assert set(model_completions(session, "")) == {"mock/mock-1", "mock/mock-think", "other/other-1"}


def test_thinking_sets_picks_and_refuses(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context(
            [{"blocks": [{"text": "hi"}]}], model="mock/mock-think"
        )
        await session.prompt("hello")
        await ctx.run("/thinking high")
        ctx.picks.append(label("low"))
        await ctx.run("/thinking")
        await ctx.run("/thinking ultra")
        ctx.picks.append(None)
        await ctx.run("/thinking")
        plain_ctx = world.context(session)
        await session.set_model(session.model_registry.find("mock", "mock-1"))
        await plain_ctx.run("/thinking")
        return session, ctx, plain_ctx

    session, ctx, plain_ctx = run(scenario())
    assert ctx.texts("info") == ["Thinking level: high", "Thinking level: low"]
    title, items, opts = ctx.pick_calls[0]
    assert title.startswith("Thinking Level")
    assert [i.label for i in items] == ["off", "minimal", "low", "medium", "high"]
    assert [i.label for i in items if i.current] == ["high"]
    assert items[2].detail == "Light reasoning (~2k tokens)"
    assert opts["filterable"] is False
    assert ctx.texts("error") == [
        'Invalid thinking level "ultra". Valid values: off, minimal, low, medium, high'
    ]
    levels = [
        e["thinkingLevel"] for e in lines_of(session.session_file) if e["type"] == "thinking_level_change"
    ]
    assert levels[-3:-1] == ["high", "low"]
    assert plain_ctx.texts("info") == ["Current model does not support thinking"]
    completions = next(c for c in BUILTIN_COMMANDS if c.name == "thinking").get_argument_completions
    assert completions is not None and completions("m") == ["minimal", "medium", "max"]  # pi 1.6 added max


def test_scoped_models_toggle_apply_to_the_session_and_save(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context()
        ctx.picks.extend([label("other-1"), label("mock-1"), label("Save to settings"), None])
        await ctx.run("/scoped-models")
        return session, ctx

    session, ctx = run(scenario())
    first_items = ctx.pick_calls[0][1]
    assert [i.label for i in first_items[:3]] == ["Save to settings", "Enable all", "Clear all"]
    assert "all enabled" in ctx.pick_calls[0][0]
    # the first toggle from "all enabled" keeps only that model; the next adds one
    second_items = ctx.pick_calls[1][1]
    assert second_items[3].label == "other-1 [other] ✓"
    assert "1/3 enabled" in ctx.pick_calls[1][0]
    assert [(s.model.provider, s.model.id) for s in session.models.scoped_models] == [
        ("other", "other-1"),
        ("mock", "mock-1"),
    ]
    assert world.settings()["enabledModels"] == ["other/other-1", "mock/mock-1"]
    assert "Model selection saved to settings" in ctx.texts("info")
    assert "unsaved" not in ctx.pick_calls[3][0]


def test_scoped_models_start_from_settings_and_enable_all_clears(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context(settings={"enabledModels": ["mock/mock-think"]})
        ctx.picks.extend([label("Enable all"), label("Save to settings"), None])
        await ctx.run("/scoped-models")
        return session, ctx

    session, ctx = run(scenario())
    first = ctx.pick_calls[0]
    assert "1/3 enabled" in first[0]
    assert first[1][3].label == "mock-think [mock] ✓"
    assert session.models.scoped_models == []
    assert "enabledModels" not in world.settings()


def test_current_marker_helper_matches_the_selected_model(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context()
        ctx.picks.append(current())
        await ctx.run("/model")
        return session, ctx

    session, ctx = run(scenario())
    assert session.model.id == "mock-1"
    assert ctx.texts("info") == ["Model: mock-1"]
