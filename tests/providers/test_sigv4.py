"""SigV4 signing against the AWS Signature Version 4 test suite's documented vectors.

The vectors use the suite's credentials (``AKIDEXAMPLE`` / ``wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY``),
region ``us-east-1``, service ``service`` and time ``20150830T123600Z``; expected signatures are
the published ones (get-vanilla, get-vanilla-query-order-key-case, post-vanilla, get-utf8) and the
derived signing key the suite documents. The Bedrock case was computed with the AWS SDK for
JavaScript's own signer (``@smithy/signature-v4`` from pi's node_modules).
"""

from __future__ import annotations

import datetime as dt

import pytest

from piko.plugins.providers.aws_sigv4 import Credentials
from piko.plugins.providers.aws_sigv4 import canonical_path
from piko.plugins.providers.aws_sigv4 import canonical_query
from piko.plugins.providers.aws_sigv4 import escape
from piko.plugins.providers.aws_sigv4 import sign
from piko.plugins.providers.aws_sigv4 import signing_key

SUITE = Credentials(access_key_id="AKIDEXAMPLE", secret_access_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
BASE_HEADERS = {"host": "example.amazonaws.com", "x-amz-date": "20150830T123600Z"}


def suite_sign(method: str, url: str, body: bytes | None = None) -> str:
    signed = sign(
        method,
        url,
        BASE_HEADERS,
        body,
        SUITE,
        region="us-east-1",
        service="service",
        add_content_sha256=False,
    )
    return signed.headers["authorization"]


@pytest.mark.parametrize(
    ("name", "method", "url", "signature"),
    [
        (
            "get-vanilla",
            "GET",
            "https://example.amazonaws.com/",
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        ),
        (
            "get-vanilla-query-order-key-case",
            "GET",
            "https://example.amazonaws.com/?Param2=value2&Param1=value1",
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
        ),
        (
            "post-vanilla",
            "POST",
            "https://example.amazonaws.com/",
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
        ),
        (
            "get-utf8",
            "GET",
            "https://example.amazonaws.com/\u1234",
            "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85",
        ),
    ],
)
def test_aws_test_suite_vectors(name: str, method: str, url: str, signature: str) -> None:
    assert suite_sign(method, url) == (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        f"SignedHeaders=host;x-amz-date, Signature={signature}"
    )


def test_derived_signing_key() -> None:
    key = signing_key(SUITE.secret_access_key, "20150830", "us-east-1", "service")
    assert key.hex() == "938127b5336810ddb6a5d6af445fcac9e371f9ed418ed386b022aed82901be75"


def test_canonical_request_of_get_vanilla() -> None:
    signed = sign("GET", "https://example.amazonaws.com/", BASE_HEADERS, None, SUITE, region="us-east-1", service="service",
                  add_content_sha256=False)  # fmt: skip
    assert signed.canonical_request == (
        "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    assert signed.string_to_sign.splitlines()[:3] == [
        "AWS4-HMAC-SHA256",
        "20150830T123600Z",
        "20150830/us-east-1/service/aws4_request",
    ]


def test_bedrock_request_matches_the_aws_sdk_signer() -> None:
    signed = sign(
        "POST",
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3%3A0/converse-stream",
        {"content-type": "application/json"},
        b'{"a":1}',
        Credentials(access_key_id="AK", secret_access_key="SK", session_token="TOK"),
        region="us-east-1",
        service="bedrock",
        now=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
    )
    assert (
        signed.headers["x-amz-content-sha256"]
        == "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
    )
    assert signed.headers["x-amz-security-token"] == "TOK"
    assert signed.headers["authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AK/20240101/us-east-1/bedrock/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, "
        "Signature=d0a2f0f2c60a4cbc1b793bb725f93c0aef7f85542e5334103b88ce2bec6e741e"
    )
    # the model id's escaped colon is escaped again in the canonical path (non-S3 services)
    assert signed.canonical_request.splitlines()[1] == "/model/anthropic.claude-3%253A0/converse-stream"


def test_canonical_parts() -> None:
    assert escape("a b/~*") == "a%20b%2F~%2A"
    assert canonical_path("/a/./b/../c/") == "/a/c/"
    assert canonical_path("/x%3Ay", double_escape=False) == "/x%3Ay"
    assert canonical_query("b=2&a=1&A=0&c") == "A=0&a=1&b=2&c="
    assert canonical_query("q=a+b") == "q=a%20b"


def test_unsignable_headers_are_left_out() -> None:
    signed = sign("GET", "https://h/", {"user-agent": "x", "x-custom": "  a   b "}, None, SUITE, region="r", service="s",
                  now=dt.datetime(2020, 1, 1, tzinfo=dt.UTC))  # fmt: skip
    assert signed.signed_headers == "host;x-amz-content-sha256;x-amz-date;x-custom"
    assert "x-custom:a b\n" in signed.canonical_request
