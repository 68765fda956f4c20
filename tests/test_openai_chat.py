"""The OpenAI-compatible routes of `ragwright serve` (``/v1/chat/completions``, ``/v1/models``),
driven by the official ``openai`` client against a real server process: answers whole and
streamed with their citations, the model naming the collection and mode, keys bound to
principals, and errors in OpenAI's shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from cli_helpers import runner
from ragwright import Index
from ragwright.cli import app as cli
from ragwright.config import Config
from ragwright.testing import HashingEmbedder
from server_helpers import serve_process

SECRET = "The vault code is 4711."
RULES = {"permissions": [{"path": "vault/**", "principals": ["group:vault"]}]}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index (collections ``default`` and ``notes``) and ``ragwright.toml`` with two keys,
    whose secrets are in ``secrets.json``."""
    root = tmp_path_factory.mktemp("chat")
    docs = root / "docs"
    (docs / "vault").mkdir(parents=True)
    (docs / "open.md").write_text("The vault is in the cellar. The porter keeps the key.\n")
    (docs / "vault" / "code.md").write_text(f"{SECRET} The vault opens at nine.\n")
    notes = root / "notes"
    notes.mkdir()
    (notes / "kepler.md").write_text("Kepler's third law relates orbital periods to distance.\n")
    with Index(root / "kb", embedder=HashingEmbedder(), config=Config(RULES)) as kb:
        kb.ingestion.name_sources_from(docs)
        assert kb.ingest(docs).ok
    with Index(root / "kb", collection="notes", embedder=HashingEmbedder()) as kb:
        assert kb.ingest(notes).ok
    config = root / "ragwright.toml"
    secrets = {}
    for name, bound in (("admin", []), ("outsider", ["group:x"])):
        flags = [arg for p in bound for arg in ("--principal", p)]
        added = runner.invoke(cli, ["keys", "add", name, *flags, "--config", str(config)])
        assert added.exit_code == 0, added.output
        secrets[name] = added.stdout.strip().splitlines()[-1]
    (root / "secrets.json").write_text(json.dumps(secrets))
    return root


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """The index served by a ``ragwright serve`` process, and the keys' secrets."""
    secrets = json.loads((root / "secrets.json").read_text())
    with serve_process(str(root / "kb"), root, "--config", str(root / "ragwright.toml")) as base:
        yield base, secrets


def client(server: tuple[str, dict[str, str]], key: str = "admin") -> openai.OpenAI:
    base, secrets = server
    return openai.OpenAI(base_url=f"{base}/v1", api_key=secrets.get(key, key), max_retries=0)


def extra(model: Any, name: str) -> Any:
    assert model.model_extra is not None, "no extra fields"
    return model.model_extra[name]


def test_models_name_each_collection_in_each_mode_it_can_serve(
    server: tuple[str, dict[str, str]],
) -> None:
    names = [model.id for model in client(server).models.list()]
    assert names[:2] == ["ragwright", "ragwright:bm25"]
    assert {"ragwright:hybrid", "ragwright/notes", "ragwright/notes:vector"} <= set(names)
    # No entity graph, no community reports, no sparse weights: no model offers those modes.
    assert not any(name.endswith((":graph", ":global", ":sparse")) for name in names)
    assert client(server).models.retrieve("ragwright/notes:bm25").id == "ragwright/notes:bm25"
    assert [m.id for m in client(server, "outsider").models.list()] == names


def test_a_completion_cites_exact_spans_in_the_text_and_an_extra_field(
    server: tuple[str, dict[str, str]],
) -> None:
    completion = client(server).chat.completions.create(
        model="ragwright",
        messages=[
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Where is the vault?"},
        ],
        temperature=0.2,  # accepted, ignored
    )
    assert completion.object == "chat.completion" and completion.model == "ragwright"
    content = completion.choices[0].message.content or ""
    assert completion.choices[0].finish_reason == "stop"
    citations = extra(completion, "citations")
    assert citations and "[1]" in content and "\n\nSources:\n[1] " in content
    assert {c["source"] for c in citations} <= {"open.md", "vault/code.md"}
    for citation in citations:
        assert f"[{citation['number']}] {citation['source']}" in content
        assert citation["char_end"] > citation["char_start"] >= 0
    assert extra(completion, "content_trust") == "untrusted"
    assert completion.usage is not None and completion.usage.total_tokens == 0  # extractive


def test_a_stream_writes_the_same_answer_then_the_citations_and_usage(
    server: tuple[str, dict[str, str]],
) -> None:
    ask: dict[str, Any] = {
        "model": "ragwright/notes:bm25",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Kepler's law?"}]}],
    }
    whole = client(server).chat.completions.create(**ask)
    chunks = list(
        client(server).chat.completions.create(
            **ask, stream=True, stream_options={"include_usage": True}
        )
    )
    assert all(chunk.object == "chat.completion.chunk" for chunk in chunks)
    assert len({chunk.id for chunk in chunks}) == 1
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content and "kepler.md" in text
    ending = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    assert len(ending) == 1 and extra(ending[0], "citations") == extra(whole, "citations")
    assert chunks[-1].choices == [] and chunks[-1].usage is not None


def test_a_key_bound_to_principals_learns_nothing_it_cannot_read(
    server: tuple[str, dict[str, str]],
) -> None:
    question = [{"role": "user", "content": "What is the vault code?"}]
    admin = client(server).chat.completions.create(model="ragwright:bm25", messages=question)
    assert "4711" in (admin.choices[0].message.content or "")
    for stream in (False, True):
        answer = client(server, "outsider").chat.completions.create(
            model="ragwright:bm25", messages=question, stream=stream
        )
        if stream:
            pieces = [c.model_dump_json() for c in answer]  # type: ignore[union-attr]
            text = "".join(pieces)
        else:
            text = answer.model_dump_json()  # type: ignore[union-attr]
        assert "4711" not in text and "vault/code.md" not in text


def test_errors_come_in_openai_shape(server: tuple[str, dict[str, str]]) -> None:
    ask = [{"role": "user", "content": "Where is the vault?"}]
    with pytest.raises(openai.AuthenticationError) as unauthorized:
        client(server, "not-a-key").chat.completions.create(model="ragwright", messages=ask)
    with pytest.raises(openai.NotFoundError) as unknown:
        client(server).chat.completions.create(model="gpt-4o", messages=ask)
    with pytest.raises(openai.NotFoundError) as no_collection:
        client(server).chat.completions.create(model="ragwright/nope", messages=ask)
    with pytest.raises(openai.NotFoundError) as no_mode:
        client(server).models.retrieve("ragwright:sideways")
    with pytest.raises(openai.BadRequestError) as no_question:
        client(server).chat.completions.create(
            model="ragwright", messages=[{"role": "system", "content": "hi"}]
        )
    with pytest.raises(openai.UnprocessableEntityError) as two:
        client(server).chat.completions.create(model="ragwright", messages=ask, n=2)
    for raised, code in (
        (unauthorized, "unauthorized"),
        (unknown, "model_not_found"),
        (no_collection, "model_not_found"),
        (no_mode, "model_not_found"),
        (no_question, "invalid_request"),
        (two, "invalid_request"),
    ):
        error = raised.value
        assert error.code == code and error.type and error.message, error.body
        assert isinstance(error.body, dict) and "param" in error.body
    assert unauthorized.value.type == "authentication_error"
    assert "sideways" in no_mode.value.message


def test_a_federation_serves_one_model_answered_from_every_member(root: Path) -> None:
    kb = root / "kb"
    federation = (
        f'\n[federation]\nmembers = ["main={kb}", '
        f'{{ name = "notes", index = "{kb}", collection = "notes" }}]\n'
    )
    config = root / "federation.toml"
    config.write_text((root / "ragwright.toml").read_text() + federation)
    secrets = json.loads((root / "secrets.json").read_text())
    with serve_process(str(kb), root, "--config", str(config)) as base:
        served = (base, secrets)
        names = [model.id for model in client(served).models.list()]
        assert names[:2] == ["ragwright", "ragwright:bm25"] and "/" not in "".join(names)
        ask = [{"role": "user", "content": "What does Kepler's third law relate?"}]
        reply = client(served).chat.completions.create(model="ragwright:bm25", messages=ask)
        cited = extra(reply, "citations")
        assert cited and cited[0]["index"] == "notes" and cited[0]["source"].endswith("kepler.md")
        secret = [{"role": "user", "content": "What is the vault code?"}]
        outsider = client(served, "outsider").chat.completions.create(
            model="ragwright:bm25", messages=secret
        )
        assert "4711" not in outsider.model_dump_json()
        with pytest.raises(openai.NotFoundError):
            client(served).chat.completions.create(model="ragwright/notes", messages=ask)
