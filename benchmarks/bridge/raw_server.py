"""The raw-socket baseline's Python end: length-prefixed frames over loopback TCP with
TCP_NODELAY; decodes each request to str (as py4j does) and answers a short reply."""
from __future__ import annotations

import socket
import struct
import sys

REPLY = b'{"v":1,"ok":true,"seq":0,"assignments":[]}'


def main() -> None:
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", int(sys.argv[1])))
    srv.listen(1)
    print("ready", flush=True)
    conn, _ = srv.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    stream = conn.makefile("rb")
    frame = struct.pack(">I", len(REPLY)) + REPLY
    while True:
        head = stream.read(4)
        if len(head) < 4:
            return
        stream.read(struct.unpack(">I", head)[0]).decode()
        conn.sendall(frame)


if __name__ == "__main__":
    main()
