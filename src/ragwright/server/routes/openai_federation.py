"""The OpenAI-compatible routes on a federation's server: one model, ``ragwright[:MODE]``,
listed in the modes every member can serve the caller, answered from every member's hits fused
by rank (each citation naming its member in ``index``). See
`ragwright.server.routes.openai_chat` for the shapes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from ragwright.errors import RagwrightError
from ragwright.federation import Federation
from ragwright.permissions import Caller
from ragwright.pipeline.search.request import SearchMode
from ragwright.server.routes._deps import ReadCaller, SearchDefaults
from ragwright.server.routes.openai_chat import (
    ChatModel,
    ChatRequest,
    answer_chat,
    model_json,
    no_model,
)

router = APIRouter(tags=["openai"])


def _federation(request: Request) -> Federation:
    federation: Federation = request.app.state.federation
    return federation


FederationDep = Annotated[Federation, Depends(_federation)]


@router.get("/models")
def list_federated_models(federation: FederationDep, caller: ReadCaller) -> dict[str, Any]:
    """``ragwright`` in each mode every member can serve the caller now."""
    models = [ChatModel(None, mode).name("") for mode in _federated_modes(federation, caller)]
    return {"object": "list", "data": [model_json(name) for name in models]}


@router.get("/models/{model:path}")
def get_federated_model(
    model: str, federation: FederationDep, caller: ReadCaller
) -> dict[str, Any]:
    chosen = _federated_model(model)
    if chosen.mode not in _federated_modes(federation, caller):
        raise no_model(model, f"not every index can serve {chosen.mode} search now")
    return model_json(chosen.name(""))


@router.post(
    "/chat/completions",
    responses={200: {"content": {"text/event-stream": {}}, "description": "JSON or SSE."}},
)
def federated_chat_completions(
    body: ChatRequest, federation: FederationDep, defaults: SearchDefaults, caller: ReadCaller
) -> Any:
    """As on one index, from every member's hits fused by rank."""
    model = _federated_model(body.model)
    return answer_chat(body, body.question(), federation, model, defaults, caller)


def _federated_model(name: str) -> ChatModel:
    model = ChatModel.parse(name)
    if model.collection is not None:
        raise no_model(name, "a federation serves one model, ragwright (with :MODE)")
    return model


def _federated_modes(federation: Federation, caller: Caller) -> list[str]:
    """The modes of `Searching.modes_for` that every member offers (in the first's order)."""
    offered = []
    for name in federation.names:
        try:
            offered.append(federation.member(name).searching.modes_for(caller))
        except RagwrightError:  # down now: left out, as its searches are
            continue
    first, *others = offered or [[SearchMode.AUTO.value]]
    return [mode for mode in first if all(mode in modes for modes in others)]
