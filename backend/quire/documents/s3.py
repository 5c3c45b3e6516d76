"""S3-compatible object storage (AWS S3, MinIO, Ceph, Garage, ...) through boto3.

`QUIRE_STORAGE_URL=s3://bucket/prefix`; `QUIRE_S3_ENDPOINT_URL` names a server that is not AWS;
credentials and region come from boto3's standard chain (the AWS_* variables, a profile, an
instance role). An object is written with one PUT of the whole file and its sha256
(`ChecksumSHA256`, which the server checks before it stores anything), so a bucket never holds
half an upload: the bytes of a streamed upload are spooled to a local temporary file as they
arrive, with the size limit enforced there, and sent only once they are all in.
"""

from __future__ import annotations

import base64
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from quire.documents.objects import CHUNK, PendingObject, Writes, check_key
from quire.errors import StorageUnavailable

# A request that cannot connect fails within seconds (then boto3 tries twice more), so a web
# upload answers 503 and a worker's attempt is retried later rather than hanging.
# The body is not signed (read once more, 1 MB at a time, to hash it again): the sha256 sent as
# ChecksumSHA256 is in the signed headers and the server checks the body against it.
CLIENT_CONFIG = Config(
    connect_timeout=3,
    read_timeout=30,
    retries={"max_attempts": 3, "mode": "standard"},
    signature_version="s3v4",
    s3={"payload_signing_enabled": False},
)
MISSING = {"NoSuchKey", "404", "NotFound"}
DELETE_BATCH = 1000  # the most keys one DeleteObjects request takes


def _raise(exc: Exception, key: str) -> NoReturn:
    """A missing object is `FileNotFoundError`; a server that is down or failing is transient."""
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        if code in MISSING:
            raise FileNotFoundError(key) from exc
        if status >= 500 or code in {"SlowDown", "ServiceUnavailable", "RequestTimeout"}:
            raise StorageUnavailable(f"The file storage failed ({code or status}).") from exc
        raise exc
    raise StorageUnavailable("The file storage could not be reached.") from exc


class S3Storage(Writes):
    """Objects in one bucket, under an optional key prefix."""

    def __init__(
        self, bucket: str, prefix: str, spool_dir: Path, endpoint_url: str | None = None, presign_s: int = 60
    ) -> None:
        self.bucket = bucket
        self.prefix = f"{prefix}/" if prefix else ""
        self.spool_dir = spool_dir
        self.presign_s = presign_s
        # A client per process (clients are thread-safe; a session is not, so it is not shared).
        self.client: Any = boto3.session.Session().client("s3", endpoint_url=endpoint_url, config=CLIENT_CONFIG)

    def _key(self, key: str) -> str:
        return self.prefix + check_key(key)

    def begin(self, key: str, max_bytes: int | None = None) -> PendingObject:
        self.spool_dir.mkdir(parents=True, exist_ok=True)
        return PendingObject(key, tempfile.TemporaryFile(dir=self.spool_dir), max_bytes, self._publish)

    def _publish(self, pending: PendingObject) -> None:
        pending.file.seek(0)
        try:
            self.client.put_object(
                Bucket=self.bucket,
                Key=self._key(pending.key),
                Body=pending.file,
                ContentLength=pending.size,
                ChecksumSHA256=base64.b64encode(pending.digest.digest()).decode(),
            )
        except (BotoCoreError, ClientError) as exc:
            _raise(exc, pending.key)

    def _get(self, key: str) -> Any:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"]
        except (BotoCoreError, ClientError) as exc:
            _raise(exc, key)

    def read_bytes(self, key: str) -> bytes:
        body = self._get(key)
        try:
            return bytes(body.read())
        except BotoCoreError as exc:
            _raise(exc, key)
        finally:
            body.close()

    def iter_bytes(self, key: str) -> Iterator[bytes]:
        return self._chunks(self._get(key), key)

    def _chunks(self, body: Any, key: str) -> Iterator[bytes]:
        try:
            yield from body.iter_chunks(CHUNK)
        except BotoCoreError as exc:
            _raise(exc, key)
        finally:
            body.close()

    def exists(self, key: str) -> bool:
        try:
            self.client.head_object(Bucket=self.bucket, Key=self._key(key))
        except (BotoCoreError, ClientError) as exc:
            try:
                _raise(exc, key)
            except FileNotFoundError:
                return False
        return True

    def delete_tree(self, prefix: str) -> None:
        name = self._key(prefix)
        try:
            keys = [name]
            pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=f"{name}/")
            keys += [item["Key"] for page in pages for item in page.get("Contents", [])]
            for start in range(0, len(keys), DELETE_BATCH):
                batch = [{"Key": k} for k in keys[start : start + DELETE_BATCH]]
                answer = self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})
                if answer.get("Errors"):
                    raise StorageUnavailable(f"The file storage kept {len(answer['Errors'])} objects under {prefix}.")
        except (BotoCoreError, ClientError) as exc:
            _raise(exc, prefix)

    def reachable(self) -> bool:
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except (BotoCoreError, ClientError):
            return False
        return True

    def download_url(self, key: str, filename: str, content_type: str) -> str:
        params = {
            "Bucket": self.bucket,
            "Key": self._key(key),
            "ResponseContentDisposition": f'attachment; filename="{filename}"',
            "ResponseContentType": content_type,
        }
        url: str = self.client.generate_presigned_url("get_object", Params=params, ExpiresIn=self.presign_s)
        return url
