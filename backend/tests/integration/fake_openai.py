"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat completions API, for tests.

The document text picks the behaviour with a line `openai-scenario: NAME`: valid, malformed,
refusal, rate_limited, rate_limited_long (Retry-After: an hour), server_error, unauthorized,
hang, echo (a valid summary that repeats every redaction placeholder it was sent). A request
without the expected API key gets 401, as a real provider would answer.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

API_KEY = "sk-test-never-log-this-4e1f"
VALID_SUMMARY = {
    "title": "Model title",
    "summary": "A summary written by the model.",
    "key_points": ["First point."],
    "keywords": ["model"],
    "language": "en",
    "word_count": 42,
    "page_count": None,
}


class FakeOpenAI:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                if self.headers.get("Authorization") != f"Bearer {API_KEY}":
                    return self.reply(401, {"error": {"message": "Incorrect API key provided"}})
                text = body["messages"][-1]["content"]
                match = re.search(r"openai-scenario: (\w+)", text)
                scenario = match.group(1) if match else "valid"
                if scenario == "hang":
                    time.sleep(3)
                    return self.reply(200, completion(json.dumps(VALID_SUMMARY)))
                if scenario == "rate_limited":
                    return self.reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "1"})
                if scenario == "rate_limited_long":
                    return self.reply(429, {"error": {"message": "come back later"}}, {"Retry-After": "3600"})
                if scenario == "server_error":
                    return self.reply(500, {"error": {"message": "boom"}})
                if scenario == "unauthorized":
                    return self.reply(401, {"error": {"message": "no"}})
                if scenario == "refusal":
                    return self.reply(200, completion(None, refusal="I can't help with that."))
                if scenario == "echo":
                    placeholders = re.findall(r"\[[A-Z]+_\d+\]", text)
                    summary = "Details: " + " ".join(placeholders) + "."
                    answer = {**VALID_SUMMARY, "summary": summary, "key_points": placeholders[:10]}
                    return self.reply(200, completion(json.dumps(answer)))
                if scenario == "malformed":
                    return self.reply(200, completion('{"title": "cut off'))
                return self.reply(200, completion(json.dumps(VALID_SUMMARY)))

            def reply(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def completion(content: str | None, refusal: str | None = None) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, "refusal": refusal}
    return {"id": "chatcmpl-test", "object": "chat.completion", "choices": [{"index": 0, "message": message}]}
