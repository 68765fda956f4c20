"""The S3 source (``type = "s3"``): the objects of a bucket (under a prefix) of any
S3-compatible store, versioned by their ETags.

A sync lists the bucket (a listing costs one request per 1,000 objects and transfers no
object); only objects whose ETag differs from the checkpoint's are downloaded, each with
``If-Match`` on the listed ETag, so an object replaced between the listing and the download
fails (and is fetched next time) instead of being stored under the wrong version. A listing
that ran to its end is complete: an object missing from it is deleted from the index.

Settings: ``bucket`` (required), ``prefix`` (""), ``endpoint_url`` (for MinIO, Ceph, R2 and
the like), ``region`` ("us-east-1"), ``max_bytes`` (50 MB), ``principals``; the keys as secrets
``access_key_id`` and ``secret_access_key`` (``*_env`` or ``*_file``; without them, boto3's
own chain: ``AWS_*`` variables, ``~/.aws/credentials``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from ragwright.errors import ConfigError, MissingDependencyError, SourceError
from ragwright.ports import Checkpoint, ListingOutcome, SourceItem
from ragwright.sources.settings import SourceSettings


class S3Source:
    def __init__(
        self,
        bucket: str,
        *,
        prefix: str = "",
        client: Any,
        max_bytes: int = 50 * 1024 * 1024,
        principals: tuple[str, ...] = (),
    ) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self.client = client
        self.max_bytes = max_bytes
        self.principals = principals

    @property
    def scopes(self) -> tuple[str, ...]:
        """Its objects' document sources all start so (`ScopedSource`)."""
        return (self._source(self.prefix),)

    def close(self) -> None:
        self.client.close()

    def list_items(self, checkpoint: Checkpoint, outcome: ListingOutcome) -> Iterator[SourceItem]:
        from botocore.exceptions import BotoCoreError, ClientError

        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix
        )
        try:
            for page in pages:
                for found in page.get("Contents", []):
                    key, size = str(found["Key"]), int(found["Size"])
                    if key.endswith("/"):
                        continue  # a folder marker
                    if size > self.max_bytes:
                        reason = f"{size:,} bytes, over max_bytes ({self.max_bytes:,})"
                        outcome.failures.append((self._source(key), reason))
                        continue
                    yield SourceItem(
                        key=key,
                        version=str(found["ETag"]).strip('"'),
                        document_source=self._source(key),
                        name=PurePosixPath(key).name,
                        principals=self.principals,
                        metadata={"s3_key": key, "size": size},
                    )
        except (BotoCoreError, ClientError) as error:
            raise SourceError(
                f"listing s3://{self.bucket}/{self.prefix} failed: {error}"
            ) from error

    def fetch(self, item: SourceItem) -> bytes:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            found = self.client.get_object(Bucket=self.bucket, Key=item.key, IfMatch=item.version)
            body: bytes = found["Body"].read(self.max_bytes + 1)
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            if code in {"PreconditionFailed", "412"}:
                raise SourceError(f"{item.document_source} changed while syncing") from error
            raise SourceError(f"{item.document_source}: {error}") from error
        except BotoCoreError as error:
            raise SourceError(f"{item.document_source}: {error}") from error
        if len(body) > self.max_bytes:
            raise SourceError(f"{item.document_source} is larger than max_bytes")
        return body

    def _source(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"


def open_s3(settings: SourceSettings) -> S3Source:
    try:
        import boto3
        from botocore.config import Config as BotoConfig
    except ImportError:
        raise MissingDependencyError("the s3 source", "pip install 'ragwright[s3]'") from None
    bucket = settings.required("bucket")
    key_id = settings.secret("access_key_id", required=False)
    secret = settings.secret("secret_access_key", required=False)
    if (key_id is None) != (secret is None):
        raise ConfigError(f"{settings.where}: give both access_key_id and secret_access_key")
    client = boto3.session.Session().client(
        "s3",
        endpoint_url=settings.string("endpoint_url"),
        region_name=settings.string("region", "us-east-1"),
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        config=BotoConfig(retries={"max_attempts": 3, "mode": "standard"}),
    )
    return S3Source(
        bucket,
        prefix=settings.string("prefix", "") or "",
        client=client,
        max_bytes=settings.integer("max_bytes", 50 * 1024 * 1024, minimum=1),
        principals=tuple(settings.strings("principals")),
    )
