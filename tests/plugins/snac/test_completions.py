"""Streaming Orpheus tokens from an OpenAI-compatible completions endpoint (a loopback stand-in for llama.cpp)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from tcccd.kit.testing import PluginHarness
from tcccd.wire.protocol import Message

from .test_snac_plugin import FRAME, pcm, token_messages
from .test_tokens import random_tokens

TOKENS = random_tokens(6, seed=21)


class _CompletionsHandler(BaseHTTPRequestHandler):
    """Answers POST /v1/completions with SSE events the way llama.cpp's server streams them."""

    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        if self.path != "/v1/completions":
            self.send_error(404, "no such endpoint")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        text = "<custom_token_3>" + "".join(f"<custom_token_{n}>" for n in TOKENS) + "<custom_token_2>"
        for start in range(0, len(text), 23):  # pieces cut through the middle of tokens
            event = {"choices": [{"text": text[start: start + 23], "index": 0}]}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _CompletionsHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def snac(snac_weights_dir: Path, server: str, tmp_path_factory: pytest.TempPathFactory):
    params = {"weights_dir": str(snac_weights_dir), "noise": False, "threads": 2,
              "completions_url": f"{server}/v1/completions", "completions_model": "orpheus-3b",
              "connect_timeout_s": 2.0, "read_timeout_s": 5.0}
    with PluginHarness("snac", params, tmp_path_factory.mktemp("snac")) as harness:
        yield harness


def test_prompt_streams_tokens_from_the_endpoint_and_decodes_them(snac: PluginHarness) -> None:
    replies = snac.request(Message("speak.tokens", data={"prompt": "tara: Tourniquet time logged."}, final=True))
    assert replies[-1].type == "audio" and replies[-1].final
    assert replies[-1].data["frames"] == 6
    sent = _CompletionsHandler.requests[-1]
    assert sent["prompt"] == "tara: Tourniquet time logged." and sent["stream"] is True
    assert sent["model"] == "orpheus-3b"
    direct = snac.stream(token_messages(TOKENS, per_message=7, request_id="direct"))
    assert len(pcm(replies)) == 6 * FRAME
    assert np.array_equal(pcm(replies), pcm(direct))


def test_wrong_path_is_reported_with_the_http_status(snac: PluginHarness, server: str) -> None:
    data = {"prompt": "hello", "completions_url": f"{server}/v1/nothing"}
    [reply] = snac.request(Message("speak.tokens", data=data, final=True))
    assert reply.type == "error" and reply.data["code"] == "upstream_error" and "HTTP 404" in reply.data["message"]


def test_unreachable_endpoint_is_a_clear_error(snac: PluginHarness) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed_port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{closed_port}/v1/completions"
    [reply] = snac.request(Message("speak.tokens", data={"prompt": "hello", "completions_url": url}, final=True))
    assert reply.type == "error" and reply.data["code"] == "upstream_unreachable"
    assert url in reply.data["message"] and "completions_url" in reply.data["message"]


def test_prompt_must_be_a_single_final_message(snac: PluginHarness) -> None:
    [reply] = snac.request(Message("speak.tokens", data={"prompt": "hello"}, final=False))
    assert reply.type == "error" and "final=true" in reply.data["message"]
