"""``GET /metrics`` on a real server, read with prometheus-client's own text parser: requests
by method, route template and status, latency histograms, search and ask counts; a read key
when the server has keys; the route label never the raw path."""

from __future__ import annotations

from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from ragwright.server import ServerSettings
from ragwright.server.keys import ApiKey, Scope, digest_of, new_secret
from server_helpers import build_index, serve


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_requests_searches_and_asks_are_counted_by_route_and_status(tmp_path: Path) -> None:
    with build_index(tmp_path) as index, serve(index) as url:
        for _ in range(2):
            assert httpx.post(f"{url}/v1/search", json={"query": "install"}).status_code == 200
        assert httpx.post(f"{url}/v1/search", json={"query": ""}).status_code == 422
        scoped = httpx.post(f"{url}/v1/collections/default/search", json={"query": "filters"})
        assert scoped.status_code == 200
        assert httpx.post(f"{url}/v1/ask", json={"question": "how to install?"}).status_code == 200
        assert httpx.get(f"{url}/v1/documents/no-such-doc-123").status_code == 404
        assert httpx.get(f"{url}/no/such/path/42").status_code == 404
        response = httpx.get(f"{url}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    found = samples(response.text)

    def requests(method: str, route: str, status: int) -> float:
        key = (("method", method), ("route", route), ("status", str(status)))
        return found.get(("ragwright_http_requests_total", key), 0.0)

    assert requests("POST", "/v1/search", 200) == 2
    assert requests("POST", "/v1/search", 422) == 1
    assert requests("POST", "/v1/collections/{collection}/search", 200) == 1
    assert requests("POST", "/v1/ask", 200) == 1
    assert requests("GET", "/v1/documents/{document}", 404) == 1
    assert requests("GET", "other", 404) == 1  # no label per unknown URL
    assert not any("no-such-doc" in str(key) or "/no/such" in str(key) for key in found)
    search_latency = (("method", "POST"), ("route", "/v1/search"))
    assert found[("ragwright_http_request_duration_seconds_count", search_latency)] == 3
    assert found[("ragwright_http_request_duration_seconds_sum", search_latency)] > 0
    assert found[("ragwright_searches_total", (("status", "200"),))] == 3
    assert found[("ragwright_searches_total", (("status", "422"),))] == 1
    assert found[("ragwright_asks_total", (("status", "200"),))] == 1


def test_metrics_need_a_read_key_when_the_server_has_keys(tmp_path: Path) -> None:
    secret = new_secret()
    settings = ServerSettings(keys=(ApiKey("scraper", Scope.READ, digest_of(secret)),))
    with build_index(tmp_path) as index, serve(index, settings) as url:
        refused = httpx.get(f"{url}/metrics")
        wrong = httpx.get(f"{url}/metrics", headers={"Authorization": "Bearer nope"})
        allowed = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {secret}"})
    assert refused.status_code == wrong.status_code == 401
    assert allowed.status_code == 200 and "ragwright_http_requests_total" in allowed.text
    # The refusals themselves were counted.
    assert 'route="/metrics",status="401"' in allowed.text
