"""The py4j-transport baseline's Python end: the real gateway (handshake, lean connection, auth token,
TCP_NODELAY) in front of a service that answers every request with a constant empty schedule
reply, so the round trip is py4j and nothing of the core."""
from __future__ import annotations

import sys
import threading

from yarn_bridge import protocol
from yarn_bridge.gateway import start_gateway
from yarn_bridge.token_file import read_token

REPLY = protocol.schedule_reply(0, [], [], None)


class ConstantService:
    def handle(self, text: str) -> str:
        return REPLY


def main() -> None:
    port, token_file = int(sys.argv[1]), sys.argv[2]
    start_gateway(ConstantService(), port, read_token(token_file, "token file"))
    threading.Event().wait()


if __name__ == "__main__":
    main()
