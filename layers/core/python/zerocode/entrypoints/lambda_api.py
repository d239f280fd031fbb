"""The API as the Lambda function serves it: one uvicorn server behind Lambda Web Adapter.

Everything is built once per container, at start-up (cold start), and reused by every
invocation: the platform's clients, the tokenizer, the model key from Secrets Manager.
Lambda Web Adapter waits for /api/health before sending the first request.
"""

from __future__ import annotations

import os

import uvicorn

from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.http.app import create_app
from zerocode.memory.tokens import o200k
from zerocode.observability import configure_logging


def main() -> None:
    configure_logging()
    settings = Settings()
    platform = wiring.platform(settings)
    o200k()
    port = int(os.environ.get("AWS_LWA_PORT") or os.environ.get("PORT") or 8080)
    uvicorn.run(
        create_app(platform), host="127.0.0.1", port=port, log_config=None, timeout_keep_alive=900
    )


if __name__ == "__main__":
    main()
