"""The OpenAPI document is the contract: it matches the committed snapshot, every operation has an
explicit snake_case id, and every request body carries examples that the API accepts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.routing import BaseRoute

from wheretorun import openapi
from wheretorun.api.admin_schemas import ImportCreate, OverrideCreate
from wheretorun.api.app import create_app
from wheretorun.api.inprocess import InProcessClient
from wheretorun.api.routers.scenarios import AnalysisRequest, CompareRequest
from wheretorun.db import create_db_engine
from wheretorun.scenarios.schemas import ScenarioCreate, ScenarioEvaluateRequest, ScenarioUpdate
from wheretorun.services.estimate_schemas import InferenceEstimateCreate, TrainingEstimateCreate
from wheretorun.services.recommendation_schemas import RecommendationCreate
from wheretorun.settings import Settings

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
WORKLOAD_FILES = sorted(EXAMPLES_DIR.glob("*.yaml"))
REQUEST_MODELS: list[type[BaseModel]] = [
    InferenceEstimateCreate,
    TrainingEstimateCreate,
    RecommendationCreate,
    ScenarioCreate,
    ScenarioUpdate,
    ScenarioEvaluateRequest,
    AnalysisRequest,
    CompareRequest,
    ImportCreate,
    OverrideCreate,
]
SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi.current_document()


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The schema itself, following a `$ref` (also inside an optional body's `anyOf`)."""
    refs = [schema] + [option for option in schema.get("anyOf", []) if "$ref" in option]
    for candidate in refs:
        if "$ref" in candidate:
            resolved: dict[str, Any] = document["components"]["schemas"][candidate["$ref"].split("/")[-1]]
            return resolved
    return schema


def test_the_committed_snapshot_is_the_live_document(document: dict[str, Any]) -> None:
    committed = openapi.SNAPSHOT.read_text(encoding="utf-8") if openapi.SNAPSHOT.exists() else ""
    changes = openapi.diff(committed, openapi.render(document))
    if changes:
        pytest.fail(
            f"{changes}\nThe OpenAPI document differs from openapi/openapi.json. If the change is "
            f"intended, run `{openapi.REGENERATE}` and commit the reviewed diff.",
            pytrace=False,
        )


def test_the_check_command_fails_on_a_stale_snapshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "openapi.json"
    assert openapi.main(["--write", "--path", str(stale)]) == 0
    assert openapi.main(["--check", "--path", str(stale)]) == 0
    stale.write_text(stale.read_text().replace('"list_models"', '"models_list"'))
    capsys.readouterr()
    assert openapi.main(["--check", "--path", str(stale)]) == 1
    report = capsys.readouterr().out
    removed = [line for line in report.splitlines() if line.startswith("-") and "operationId" in line]
    added = [line for line in report.splitlines() if line.startswith("+") and "operationId" in line]
    assert [line.split()[-1] for line in removed + added] == ['"models_list",', '"list_models",']
    assert openapi.REGENERATE in report


def _api_routes(routes: Iterable[BaseRoute]) -> Iterator[APIRoute]:
    """Every APIRoute, also inside included routers (FastAPI >= 0.16x nests them)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        elif (router := getattr(route, "original_router", None)) is not None:
            yield from _api_routes(router.routes)


def test_every_route_names_its_operation_id_explicitly(document: dict[str, Any]) -> None:
    """FastAPI would invent ids like `list_models_v1_models_get`, which change when a path does."""
    app = create_app(Settings(auto_seed=False), engine=create_db_engine("sqlite://"))
    routes = [route for route in _api_routes(app.routes) if route.include_in_schema]
    assert sum(len(route.methods) for route in routes) == len(_operations(document))
    implicit = [route.path for route in routes if route.operation_id is None]
    assert implicit == [], "give these routes an operation_id="


def test_operation_ids_are_snake_case_and_unique(document: dict[str, Any]) -> None:
    ids = [operation.get("operationId", "") for _, _, operation in _operations(document)]
    assert [i for i in ids if not SNAKE_CASE.match(i)] == []
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_every_json_request_body_has_examples(document: dict[str, Any]) -> None:
    missing = []
    for method, path, operation in _operations(document):
        content = operation.get("requestBody", {}).get("content", {})
        if "application/json" in content:
            schema = _resolve(document, content["application/json"]["schema"])
            if not schema.get("examples"):
                missing.append(f"{method} {path} ({schema.get('title')})")
    assert missing == [], "add json_schema_extra={'examples': [...]} to these request models"


def test_the_request_models_listed_here_are_all_the_request_bodies(document: dict[str, Any]) -> None:
    """So that the example checks below cover every request body, including new ones."""
    titles = set()
    for _, _, operation in _operations(document):
        content = operation.get("requestBody", {}).get("content", {})
        if "application/json" in content:
            titles.add(_resolve(document, content["application/json"]["schema"])["title"])
    assert titles == {model.__name__ for model in REQUEST_MODELS}


@pytest.mark.parametrize("model", REQUEST_MODELS, ids=lambda model: model.__name__)
def test_schema_examples_validate_against_their_model(model: type[BaseModel]) -> None:
    examples = model.model_json_schema()["examples"]
    assert examples
    for example in examples:
        model.model_validate(example)


@pytest.mark.parametrize("path", WORKLOAD_FILES, ids=lambda path: path.name)
def test_every_example_workload_file_is_a_valid_recommendation_request(path: Path) -> None:
    RecommendationCreate.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def test_recommendation_examples_are_copies_of_example_workload_files() -> None:
    """The schema's examples are literal dicts (the API does not read files); keep them equal."""
    files = [yaml.safe_load(path.read_text(encoding="utf-8")) for path in WORKLOAD_FILES]
    examples = RecommendationCreate.model_json_schema()["examples"]
    assert len(examples) >= 3
    assert {example["workload"]["kind"] for example in examples} == {"inference", "batch", "training"}
    assert [example for example in examples if example not in files] == []


def _examples(model: type[BaseModel]) -> list[dict[str, Any]]:
    examples: list[dict[str, Any]] = model.model_json_schema()["examples"]
    return examples


def test_the_examples_are_accepted_by_the_running_api(client: InProcessClient) -> None:
    """Validation is not enough: the catalog ids in the examples must exist and the plans price."""
    calls = [
        *[("/v1/estimates/inference", e) for e in _examples(InferenceEstimateCreate)],
        *[("/v1/estimates/training", e) for e in _examples(TrainingEstimateCreate)],
        *[("/v1/recommendations", e) for e in _examples(RecommendationCreate)],
        *[("/v1/scenarios/evaluate", e) for e in _examples(ScenarioEvaluateRequest)],
        *[("/v1/scenarios", e) for e in _examples(ScenarioCreate)],
    ]
    for path, example in calls:
        response = client.post(path, json=example)
        assert response.is_success, (path, response.text)
    saved = client.get("/v1/scenarios").json()["items"]
    for example in _examples(CompareRequest):
        body = {**example, "scenario_ids": [s["id"] for s in saved][: len(example["scenario_ids"])]}
        assert client.post("/v1/scenarios/compare", json=body).is_success
