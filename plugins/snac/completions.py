"""A streaming client for an OpenAI-compatible /v1/completions endpoint.

This is how llama.cpp's server (and vLLM, and others) run an Orpheus model: the
generated `<custom_token_N>` text arrives as server-sent events, one `data:`
line per piece. Only the standard library is used; the endpoint is on the same
kit, so there is no TLS, proxy or retry logic to carry.
"""

from __future__ import annotations

import http.client
import json
import urllib.parse
from collections.abc import Iterator
from typing import Any

from tcccd.kit.plugin import PluginError


def stream_completion(url: str, body: dict[str, Any], connect_timeout_s: float,
                      read_timeout_s: float) -> Iterator[str]:
    """The text pieces of one streamed completion, as they arrive."""
    conn = _connect(url, connect_timeout_s)
    try:
        response = _post(conn, url, body, read_timeout_s)
        yield from _events(response, url, read_timeout_s)
    finally:
        conn.close()


def _connect(url: str, timeout_s: float) -> http.client.HTTPConnection:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PluginError(f"completions_url {url!r} is not an http(s) URL; expected e.g. "
                          f"http://127.0.0.1:8080/v1/completions", code="bad_request")
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return cls(parts.hostname, parts.port, timeout=timeout_s)


def _post(conn: http.client.HTTPConnection, url: str, body: dict[str, Any],
          read_timeout_s: float) -> http.client.HTTPResponse:
    parts = urllib.parse.urlsplit(url)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    try:
        conn.request("POST", path, body=json.dumps({**body, "stream": True}),
                     headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
        if conn.sock is not None:
            conn.sock.settimeout(read_timeout_s)
        response = conn.getresponse()
    except (OSError, http.client.HTTPException) as exc:
        raise PluginError(f"cannot reach the completions endpoint {url} ({exc}); start the model server "
                          f"(e.g. llama.cpp's llama-server with an Orpheus model) or set completions_url",
                          code="upstream_unreachable") from None
    if response.status != 200:
        detail = response.read(300).decode("utf-8", "replace")
        raise PluginError(f"the completions endpoint {url} answered HTTP {response.status}: {detail}",
                          code="upstream_error")
    return response


def _events(response: http.client.HTTPResponse, url: str, read_timeout_s: float) -> Iterator[str]:
    while True:
        try:
            raw = response.readline()
        except TimeoutError:
            raise PluginError(f"the completions endpoint {url} sent nothing for {read_timeout_s:g} s "
                              f"(read_timeout_s)", code="upstream_timeout") from None
        except (OSError, http.client.HTTPException) as exc:
            raise PluginError(f"the completions stream from {url} broke off: {exc}",
                              code="upstream_error") from None
        if not raw:
            return
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[len("data:"):].strip()
        if data == "[DONE]":
            return
        yield _event_text(data, url)


def _event_text(data: str, url: str) -> str:
    try:
        event = json.loads(data)
    except json.JSONDecodeError:
        raise PluginError(f"the completions endpoint {url} sent an event that is not JSON: {data[:120]!r}",
                          code="upstream_error") from None
    if isinstance(event, dict) and "error" in event:
        raise PluginError(f"the completions endpoint {url} reported an error: {event['error']}",
                          code="upstream_error")
    try:
        return str(event["choices"][0].get("text") or "")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise PluginError(f"the completions endpoint {url} sent an event without choices[0].text: {data[:120]!r}",
                          code="upstream_error") from None
