"""The fixtures' resource scenarios: skills and prompt templates an extension brings, as an RPC
client sees them (``get_commands``, as the capture of ``dynamic-resources`` asked)."""

from __future__ import annotations

from typing import Any

from ext_conformance_kit import golden
from ext_conformance_kit import port
from ext_conformance_kit import scenario


def commands(pi: Any) -> list[dict[str, Any]]:
    return list(pi.request({"id": "cmd-1", "type": "get_commands"})["data"]["commands"])


def test_dynamic_resources_from_resources_discover(port_rpc: Any) -> None:
    item = scenario("scn-dynamic-resources-001")
    assert item["event_name"] == "resources_discover"
    mine = {
        c["name"]: c for c in commands(port_rpc("dynamic-resources")) if c["source"] in ("prompt", "skill")
    }
    captured = golden(item)[0]["data"]["commands"]
    assert sorted(mine) == sorted(c["name"] for c in captured)
    for theirs in captured:
        ours = mine[theirs["name"]]
        # the capture's pi (pi-mono of February 2026) put the template's origin after its
        # description and called the source "template"; pi 0.73.1 does neither (checked), nor piko
        assert ours["description"] == theirs["description"].removesuffix(" (path:dynamic)")
        assert ours["source"] == {"template": "prompt"}.get(theirs["source"], theirs["source"])
        assert ours["sourceInfo"]["path"] == str(port("dynamic-resources") / theirs["path"].rsplit("/", 1)[1])
    returns = item["expect"]["returns_contains"]
    files = {ours["sourceInfo"]["path"].rsplit("/", 1)[1] for ours in mine.values()}
    assert set(returns["promptPaths"]) | set(returns["skillPaths"]) == files


def test_dynamic_resources_offers_a_theme(piko_session: Any) -> None:
    """The theme of ``themePaths``, which ``get_commands`` does not show: the handler's answer as
    piko collects it from ``resources_discover``."""
    import asyncio

    from piko.data.events import ResourcesDiscoverEvent

    returns = scenario("scn-dynamic-resources-001")["expect"]["returns_contains"]
    app = piko_session.boot(extensions=[port("dynamic-resources")])
    found = asyncio.run(app.dispatcher.emit("resources_discover", ResourcesDiscoverEvent(cwd=str(app.cwd))))
    names = {key: [path.rsplit("/", 1)[1] for path, _source in found[key]] for key in found}
    assert names == {
        "skill_paths": returns["skillPaths"],
        "prompt_paths": returns["promptPaths"],
        "theme_paths": returns["themePaths"],
    }


def package_commands(port_rpc: Any, piko_home: Any, ext_id: str) -> list[dict[str, Any]]:
    """The commands of an RPC ``pi`` whose settings list the port as a package (``path:``)."""
    piko_home.write_settings({"packages": [f"path:{port(ext_id)}"]})
    return commands(port_rpc("hello"))


def test_minimal_resources_package_bundles_a_prompt_and_a_skill(port_rpc: Any, piko_home: Any) -> None:
    expect = scenario("scn-minimal-resources-001")["expect"]
    found = package_commands(port_rpc, piko_home, "minimal_resources")
    prompts = {c["name"] for c in found if c["source"] == "prompt"}
    skills = {c["name"].removeprefix("skill:") for c in found if c["source"] == "skill"}
    assert set(expect["prompts_contain"]) <= prompts
    assert set(expect["skills_contain"]) <= skills


def test_minimal_template_package_bundles_a_template(port_rpc: Any, piko_home: Any) -> None:
    expect = scenario("scn-minimal-template-001")["expect"]
    found = package_commands(port_rpc, piko_home, "minimal_template")
    assert set(expect["templates_contain"]) <= {c["name"] for c in found if c["source"] == "prompt"}
