"""Enough of IAM's policy evaluation to hold configs/aws-head-policy.json to what Ray's autoscaler and
bmn's driver ask of AWS: Allow statements, `*` and `?` in actions and resources, and the condition
operators the policy uses (StringEquals, StringLike; a key the request lacks never matches). With
no Deny statements, a request is allowed when one statement allows it.

And what AWS takes an S3 request for (its action, resource and condition keys), so that the
requests a real run makes against moto's server can be checked against the policy."""

from __future__ import annotations

import fnmatch
import json
import re
import urllib.parse
from pathlib import Path

OPERATORS = {
    "StringEquals": lambda value, pattern: value == pattern,
    "StringLike": lambda value, pattern: fnmatch.fnmatchcase(value, pattern),
}


def load(path: Path, **placeholders: str) -> dict:
    text = path.read_text()
    for name, value in placeholders.items():
        text = text.replace(name, value)
    policy = json.loads(text)
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow", "the evaluator knows Allow statements only"
        for operator in statement.get("Condition", {}):
            assert operator in OPERATORS, f"the evaluator does not know {operator}"
    return policy


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def _conditions_hold(condition: dict, context: dict) -> bool:
    for operator, keys in condition.items():
        test = OPERATORS[operator]
        for key, patterns in keys.items():
            value = context.get(key)
            if value is None or not any(test(value, p) for p in _as_list(patterns)):
                return False
    return True


def allows(policy: dict, action: str, resource: str, context: dict | None = None) -> bool:
    context = context or {}
    for statement in policy["Statement"]:
        if not any(fnmatch.fnmatchcase(action, a) for a in _as_list(statement["Action"])):
            continue
        if not any(fnmatch.fnmatchcase(resource, r) for r in _as_list(statement["Resource"])):
            continue
        if _conditions_hold(statement.get("Condition", {}), context):
            return True
    return False


def s3_authorizations(method: str, path: str, query: str, headers: dict, body: bytes) -> list[tuple]:
    """[(action, resource ARN, condition context)] that S3 checks for one path-style request."""
    bucket, _, key = urllib.parse.unquote(path).lstrip("/").partition("/")
    params = urllib.parse.parse_qs(query, keep_blank_values=True)
    bucket_arn = f"arn:aws:s3:::{bucket}"
    if not key:
        if method in ("GET", "HEAD") and "location" in params:
            return [("s3:GetBucketLocation", bucket_arn, {})]
        if method == "GET" and not set(params) - {"list-type", "prefix", "delimiter", "max-keys",
                                                  "continuation-token", "start-after", "encoding-type",
                                                  "fetch-owner", "marker"}:
            context = {"s3:prefix": params["prefix"][0]} if "prefix" in params else {}
            return [("s3:ListBucket", bucket_arn, context)]
        if method == "HEAD":  # HeadBucket is authorized as ListBucket, with no prefix
            return [("s3:ListBucket", bucket_arn, {})]
        if method == "POST" and "delete" in params:
            keys = re.findall(rb"<Key>(.*?)</Key>", body)
            return [("s3:DeleteObject", f"{bucket_arn}/{k.decode()}", {}) for k in keys]
        if method == "PUT" and not params:
            return [("s3:CreateBucket", bucket_arn, {})]
        raise AssertionError(f"an S3 request the evaluator does not know: {method} {path}?{query}")
    object_arn = f"{bucket_arn}/{key}"
    if method in ("GET", "HEAD"):
        return [("s3:GetObject", object_arn, {})]
    if method == "DELETE":
        return [("s3:AbortMultipartUpload" if "uploadId" in params else "s3:DeleteObject", object_arn, {})]
    if method in ("PUT", "POST"):
        checks = [("s3:PutObject", object_arn, {})]
        source = headers.get("x-amz-copy-source")
        if source:
            checks.append(("s3:GetObject", f"arn:aws:s3:::{urllib.parse.unquote(source).lstrip('/')}", {}))
        return checks
    raise AssertionError(f"an S3 request the evaluator does not know: {method} {path}?{query}")
