"""Many ``export_html`` commands at once in one RPC session: each answers, each page is whole."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

SESSION_ARGS = ["--mode", "rpc", "--provider", "mock", "--model", "mock-1"]
PAGES = 24


def _check_pages(process: Any, requests: list[dict[str, Any]]) -> None:
    for request in requests:
        process.send(request)
    wanted = {r["id"] for r in requests}
    deadline = time.monotonic() + 120
    while True:
        responses = [r for r in process.records if r.get("type") == "response" and r.get("id") in wanted]
        if len(responses) == len(wanted) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(responses) == len(wanted), f"{len(wanted) - len(responses)} exports never answered"
    failed = [r for r in responses if not r["success"]]
    assert not failed, failed[:3]
    for response in responses:
        page = (process.work / response["data"]["path"]).read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
        assert "answer to export" in page
    assert not [p.name for p in process.work.iterdir() if p.name.endswith(".tmp")]


def test_concurrent_exports_to_one_path_each_write_a_whole_page(rpc: Any) -> None:
    process = rpc([{"blocks": [{"text": "answer to export"}]}], args=SESSION_ARGS)
    process.request({"id": "p", "type": "prompt", "message": "hello"})
    process.wait_for(lambda r: r.get("type") == "agent_end")
    same = [{"id": f"e{n}", "type": "export_html", "outputPath": "page.html"} for n in range(PAGES)]
    _check_pages(process, same)
    assert process.close() == 0


def test_concurrent_exports_to_many_paths_each_write_a_whole_page(rpc: Any) -> None:
    process = rpc([{"blocks": [{"text": "answer to export"}]}], args=SESSION_ARGS)
    process.request({"id": "p", "type": "prompt", "message": "hello"})
    process.wait_for(lambda r: r.get("type") == "agent_end")
    many = [{"id": f"e{n}", "type": "export_html", "outputPath": f"page{n}.html"} for n in range(PAGES)]
    _check_pages(process, many)
    assert sorted(Path(process.work).glob("page*.html")) and json.dumps(many)
    assert process.close() == 0
