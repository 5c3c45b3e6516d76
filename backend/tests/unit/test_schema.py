"""`/schema` documents a response shape for every JSON route, from the handlers' return types."""

from __future__ import annotations

from typing import Any

from quire.app import create_app

# Answers with no JSON body: a 204, a download whose body is the file itself, and the event
# streams (text/event-stream; each event's data is a JobOut, docs/api.md).
NO_JSON_BODY = {
    ("delete", "/ai-jobs/{job_id}"),
    ("get", "/ai-jobs/{job_id}/artifacts/{name}"),
    ("get", "/ai-jobs/stream"),
    ("get", "/ai-jobs/{job_id}/stream"),
}


def test_every_json_route_documents_its_response() -> None:
    schema: dict[str, Any] = create_app().openapi_schema.to_schema()
    undocumented = []
    routes = 0
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if (method, path) in NO_JSON_BODY:
                continue
            routes += 1
            success = [r for code, r in operation["responses"].items() if code.startswith("2")]
            content = [c for r in success for c in r.get("content", {}).values()]
            body = [c["schema"] for c in content if c.get("schema")]
            # A schema that says only "object" documents nothing a client can rely on.
            if not body or all(s.get("type") == "object" and not s.get("properties") for s in body):
                undocumented.append(f"{method.upper()} {path}")
    assert routes >= 8
    assert undocumented == []


def test_the_job_view_is_documented_key_by_key() -> None:
    schema: dict[str, Any] = create_app().openapi_schema.to_schema()
    job = schema["components"]["schemas"]["JobOut"]
    assert set(job["properties"]) >= {"job_id", "status", "artifact", "artifacts", "error", "errors", "events"}
    artifact = schema["components"]["schemas"]["ArtifactOut"]
    assert "url" in artifact["properties"]


def test_the_operators_json_view_is_documented_and_the_admin_pages_are_not() -> None:
    schema: dict[str, Any] = create_app().openapi_schema.to_schema()
    admin = [path for path in schema["paths"] if path.startswith("/admin")]
    assert admin == ["/admin/jobs/{job_id}/detail"]
    answer = schema["paths"]["/admin/jobs/{job_id}/detail"]["get"]["responses"]["200"]
    assert answer["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/OperatorJobOut"}
