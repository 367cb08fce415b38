"""Retry timing, HTTP error classification, completion parsing and image preparation."""

from __future__ import annotations

import asyncio
import email.utils
import io
import random

import pytest
from PIL import Image

from crystalbench.inference.backends.base import BackendError, Completion, GenerationRequest
from crystalbench.inference.backends.openai_compat import (
    classify_status,
    error_message,
    parse_completion,
)
from crystalbench.inference.images import PreparedImage, sniff_mime
from crystalbench.inference.records import GenerationSettings
from crystalbench.inference.retry import RetryPolicy, complete_with_retries, parse_retry_after


# --- Retry-After --------------------------------------------------------------------------
def test_retry_after_seconds_fractions_and_milliseconds():
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"RETRY-AFTER": " 0.25 "}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5


def test_retry_after_http_date():
    now = 1_700_000_000.0
    header = email.utils.formatdate(now + 42, usegmt=True)
    assert parse_retry_after({"Retry-After": header}, now=now) == pytest.approx(42.0)
    past = email.utils.formatdate(now - 10, usegmt=True)
    assert parse_retry_after({"Retry-After": past}, now=now) == 0.0


@pytest.mark.parametrize("value", ["soon", "-3", "nan", "inf", ""])
def test_unusable_retry_after_is_ignored(value):
    assert parse_retry_after({"Retry-After": value}) is None


# --- backoff ------------------------------------------------------------------------------
def test_backoff_doubles_within_jitter_bounds_and_is_capped():
    policy = RetryPolicy(base_delay=0.5, max_delay=4.0)
    rng = random.Random(1)
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 4.0), (12, 4.0)]:
        draws = [policy.delay(attempt, None, rng) for _ in range(200)]
        assert min(draws) >= ceiling / 2
        assert max(draws) <= ceiling
        assert max(draws) - min(draws) > ceiling / 4  # really jittered


def test_server_retry_after_wins_and_is_capped():
    policy = RetryPolicy(base_delay=10.0, max_retry_after=30.0)
    assert policy.delay(1, retry_after=0.2) == 0.2
    assert policy.delay(3, retry_after=0.0) == 0.0
    assert policy.delay(1, retry_after=1e6) == 30.0


def test_downscale_steps():
    policy = RetryPolicy(downscale_sides=(1024, 512))
    assert policy.next_side(None, 2000) == 1024
    assert policy.next_side(1024, 2000) == 512
    assert policy.next_side(512, 2000) is None
    assert policy.next_side(None, 1024) == 512  # already at 1024: go straight to 512
    assert policy.next_side(None, 300) is None


# --- HTTP errors ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("status", "message", "has_image", "kind", "retryable", "fatal", "too_large"),
    [
        (408, "timeout", True, "timeout", True, False, False),
        (409, "conflict", True, "conflict", True, False, False),
        (429, "slow down", True, "rate_limit", True, False, False),
        (429, "You exceeded your current quota", True, "quota", False, True, False),
        (500, "boom", True, "server_error", True, False, False),
        (502, "bad gateway", False, "server_error", True, False, False),
        (503, "overloaded", False, "server_error", True, False, False),
        (
            400,
            "Image too large: 3000x3000 exceeds the maximum",
            True,
            "image_too_large",
            False,
            False,
            True,
        ),
        (413, "Request Entity Too Large", True, "image_too_large", False, False, True),
        (
            400,
            "This model's maximum context length is 4096 tokens",
            True,
            "image_too_large",
            False,
            False,
            True,
        ),
        (400, "Image too large", False, "bad_request", False, False, False),
        (400, "temperature must be >= 0", True, "bad_request", False, False, False),
        (401, "invalid api key", True, "auth", False, True, False),
        (403, "forbidden", True, "auth", False, True, False),
        (404, "The model `x` does not exist", True, "not_found", False, True, False),
    ],
)
def test_status_classification(status, message, has_image, kind, retryable, fatal, too_large):
    error = classify_status(status, message, {}, has_image=has_image, endpoint="http://e/v1")
    assert (error.kind, error.retryable, error.fatal, error.image_too_large) == (
        kind,
        retryable,
        fatal,
        too_large,
    )
    assert error.status == status
    assert "http://e/v1" in str(error)
    assert f"HTTP {status}" in str(error)


def test_retry_after_travels_with_the_error():
    error = classify_status(503, "busy", {"Retry-After": "3"}, has_image=False)
    assert error.retry_after == 3.0


def test_error_messages_from_both_layouts():
    assert error_message({"object": "error", "message": "vllm says"}, "-") == "vllm says"
    assert error_message({"error": {"message": "openai says"}}, "-") == "openai says"
    assert error_message("plain text body", "-") == "plain text body"
    assert error_message({}, "fallback") == "fallback"


# --- completion bodies --------------------------------------------------------------------
def test_completion_with_reasoning_and_content_parts():
    body = (
        b'{"choices": [{"message": {"content": [{"type": "text", "text": "Ans"},'
        b' {"type": "text", "text": "wer: B"}], "reasoning_content": "thinking"},'
        b' "finish_reason": "length"}]}'
    )
    completion = parse_completion(body, endpoint="e")
    assert completion.text == "Answer: B"
    assert completion.reasoning == "thinking"
    assert completion.finish_reason == "length"
    assert completion.prompt_tokens is None
    assert completion.completion_tokens is None
    assert completion.endpoint == "e"


def test_null_content_is_an_empty_answer_not_a_failure():
    completion = parse_completion(b'{"choices": [{"message": {"content": null}}]}')
    assert completion.text == ""


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (b"", "bad_response"),
        (b"<html>502</html>", "bad_response"),
        (b'{"choices": [', "bad_response"),
        (b"[1, 2]", "bad_response"),
        (b'{"choices": []}', "bad_response"),
        (b'{"error": {"message": "engine died"}}', "server_error"),
    ],
)
def test_garbage_bodies_are_retryable_errors(body, kind):
    with pytest.raises(BackendError) as info:
        parse_completion(body)
    assert info.value.kind == kind
    assert info.value.retryable


# --- images -------------------------------------------------------------------------------
def encoded(size, fmt="PNG", mode="RGB"):
    buffer = io.BytesIO()
    Image.new(mode, size, "white" if mode == "RGB" else 255).save(buffer, fmt)
    return buffer.getvalue()


def decode_url(url):
    import base64

    header, payload = url.split(",", 1)
    return header, Image.open(io.BytesIO(base64.b64decode(payload)))


def test_data_urls_are_memoised_per_size():
    image = PreparedImage(encoded((1500, 600)))
    full = image.data_url()
    assert image.data_url() is full
    assert image.data_url(4000) is full  # already small enough: same bytes
    small = image.data_url(1000)
    assert image.data_url(1000) is small
    assert image.encodes == 2
    header, decoded = decode_url(small)
    assert header == "data:image/png;base64"
    assert decoded.size == (1000, 400)


def test_jpeg_stays_jpeg_and_unusual_formats_become_png():
    jpeg = PreparedImage(encoded((800, 800), "JPEG"))
    assert jpeg.mime == "image/jpeg"
    header, decoded = decode_url(jpeg.data_url(200))
    assert header == "data:image/jpeg;base64"
    assert decoded.size == (200, 200)

    bmp = PreparedImage(encoded((30, 20), "BMP"))
    assert bmp.mime is None
    header, decoded = decode_url(bmp.data_url())
    assert header == "data:image/png;base64"
    assert decoded.size == (30, 20)
    assert sniff_mime(encoded((4, 4), "WEBP")) == "image/webp"


def test_undecodable_bytes_raise_value_error():
    with pytest.raises(ValueError, match="cannot decode"):
        _ = PreparedImage(b"\x89PNG\r\n\x1a\nnot really").size


def test_a_completion_budget_complaint_is_not_an_image_problem():
    error = classify_status(
        400,
        "max_tokens is too large: 100000. This model supports at most 16384 completion tokens",
        {},
        has_image=True,
    )
    assert error.kind == "bad_request"
    assert not error.image_too_large


# --- the one retry loop (inference engine and references engines) -------------------------
class _Failing:
    """An async backend that raises the scripted errors in turn, then answers."""

    name, model, max_in_flight = "scripted", "m", 1

    def __init__(self, *errors):
        self.errors = list(errors)
        self.sides = []

    async def complete(self, request):
        self.sides.append(request.image_max_side)
        if self.errors:
            raise self.errors.pop(0)
        return Completion(text="ok")

    async def aclose(self):
        pass


def _request(image=None):
    return GenerationRequest(item_id="a", prompt="p", image=image, settings=GenerationSettings())


def _attempt(backend, request, **policy):
    policy = RetryPolicy(base_delay=0.0, max_delay=0.0, **policy)
    return asyncio.run(complete_with_retries(backend, request, policy, random.Random(0)))


def test_retryable_errors_are_retried_until_the_policy_gives_up():
    busy = BackendError("rate_limit", "slow down", retryable=True)
    answered = _attempt(_Failing(busy, busy), _request(), max_attempts=3)
    assert (answered.completion.text, answered.error, answered.attempts) == ("ok", None, 3)
    given_up = _attempt(_Failing(busy, busy, busy), _request(), max_attempts=3)
    assert (given_up.completion, given_up.error, given_up.attempts) == (None, busy, 3)


def test_fatal_and_unexpected_errors_end_the_loop_at_once():
    fatal = BackendError("auth", "bad key", retryable=True, fatal=True)
    assert _attempt(_Failing(fatal), _request()).attempts == 1
    bug = KeyError("choices")
    outcome = _attempt(_Failing(bug), _request())
    assert (outcome.error, outcome.attempts) == (bug, 1)


def test_a_too_large_image_is_resent_at_each_smaller_side_then_fails():
    buffer = io.BytesIO()
    Image.new("RGB", (1500, 300)).save(buffer, "PNG")
    large = BackendError("image", "too large", image_too_large=True)
    backend = _Failing(large, large, large)
    outcome = _attempt(backend, _request(PreparedImage(buffer.getvalue(), max_side=4096)))
    assert backend.sides == [None, 1024, 512]
    assert (outcome.error, outcome.attempts) == (large, 3)
