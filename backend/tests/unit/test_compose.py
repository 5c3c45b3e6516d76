"""docker-compose.yml describes a runnable deployment: checked by Compose where it exists, by structure always."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]


def _compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


def test_compose_validates_with_docker_compose_where_available() -> None:
    docker = shutil.which("docker")
    has_compose = (
        docker is not None and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    )
    if has_compose:
        result = subprocess.run(
            [docker, "compose", "config", "-q"], cwd=ROOT, capture_output=True, env={"QUIRE_SECRET_KEY": "x"}
        )
        assert result.returncode == 0, result.stderr
    # The structure is checked in every case.
    assert {"postgres", "redis", "minio", "bucket", "migrate", "web", "worker"} <= set(_compose()["services"])


def test_services_are_wired_for_production() -> None:
    services = _compose()["services"]
    redis_command = " ".join(services["redis"]["command"])
    assert "--appendonly yes" in redis_command
    assert "--maxmemory-policy noeviction" in redis_command
    assert services["migrate"]["command"] == ["quire", "migrate"]
    assert services["web"]["command"][:2] == ["quire", "web"]
    assert services["worker"]["command"][:2] == ["quire", "worker"]
    for name in ("postgres", "redis", "minio", "web", "worker"):
        assert services[name]["healthcheck"]["test"], name
    assert "mc mb --ignore-existing store/quire" in " ".join(services["bucket"]["command"])
    for name in ("web", "worker"):
        # Migrations and the bucket are ready before web and worker start.
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert services[name]["depends_on"]["bucket"]["condition"] == "service_completed_successfully"
        # They share PostgreSQL, Redis and the bucket, and no volume: any container can run anywhere.
        assert "volumes" not in services[name]
        env = services[name]["environment"]
        assert env["QUIRE_ENV"] == "production"
        assert env["QUIRE_DATABASE_URL"].startswith("postgresql+psycopg://")
        assert env["QUIRE_REDIS_URL"].startswith("redis://redis:")
        assert env["QUIRE_STORAGE_URL"] == "s3://quire/files"
        assert env["QUIRE_S3_ENDPOINT_URL"] == "http://minio:9000"
    assert "ports" not in services["worker"], "workers scale, so they publish no port"
    assert "/readyz" in " ".join(services["web"]["healthcheck"]["test"])
