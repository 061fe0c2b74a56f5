"""The machine's mail relay, for the sandbox's alert check (support/sandbox/checks.py): an
SMTP server on 127.0.0.1:25, where deploy/alertmanager/alertmanager.yml's smtp_smarthost
points (Debian's exim4 or postfix on a real machine), that keeps every message it is
given instead of sending it on. Standard library only: it runs on the machine's
python3."""

from __future__ import annotations

import socketserver
import threading
import time
from email import message_from_bytes
from email.message import Message

RECEIVED: list[tuple[float, list[str], Message]] = []


class Session(socketserver.StreamRequestHandler):
    def reply(self, line: str) -> None:
        self.wfile.write(f"{line}\r\n".encode())

    def handle(self) -> None:
        self.reply("220 drill-relay ESMTP")
        recipients: list[str] = []
        while line := self.rfile.readline():
            verb = line.decode(errors="replace").strip().split(" ", 1)[0].upper()
            if verb == "EHLO":
                self.reply("250-drill-relay")
                self.reply("250 8BITMIME")
            elif verb == "HELO":
                self.reply("250 drill-relay")
            elif verb == "MAIL":
                recipients = []
                self.reply("250 OK")
            elif verb == "RCPT":
                address = line.decode().split(":", 1)[1].strip().strip("<>")
                recipients.append(address.split(">", 1)[0])
                self.reply("250 OK")
            elif verb == "DATA":
                self.reply("354 end with <CRLF>.<CRLF>")
                body = bytearray()
                while (chunk := self.rfile.readline()) not in (b".\r\n", b".\n", b""):
                    body += chunk[1:] if chunk.startswith(b"..") else chunk
                RECEIVED.append((time.monotonic(), recipients, message_from_bytes(bytes(body))))
                self.reply("250 OK: kept")
            elif verb == "QUIT":
                self.reply("221 bye")
                return
            elif verb in ("RSET", "NOOP"):
                self.reply("250 OK")
            else:
                self.reply("502 not implemented")


class Relay(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def start(port: int = 25) -> Relay:
    relay = Relay(("127.0.0.1", port), Session)
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    return relay
