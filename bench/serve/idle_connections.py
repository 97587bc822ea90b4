"""Opens N connections to an HTTP server, sends one GET /healthz on each (kept alive, HTTP/1.1's
default) and holds them open, idle, until stdin closes. Prints one JSON line when they are all
open: how many connected, how many got their answer, and how long that took.
Usage: python3 idle_connections.py HOST PORT N [SECONDS_TO_WAIT_FOR_ANSWERS=30]
Needs `ulimit -n` above N."""
import json
import selectors
import socket
import sys
import time

host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
wait_s = float(sys.argv[4]) if len(sys.argv) > 4 else 30.0
request = f"GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
sel = selectors.DefaultSelector()
socks, answered, connected = [], 0, 0
start = time.monotonic()
for _ in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.connect_ex((host, port))
    socks.append(s)
    sel.register(s, selectors.EVENT_WRITE, {"sent": False, "got": b""})
    # Keep the accept backlog from overflowing: let the server take what is pending now and then.
    if len(socks) % 500 == 0:
        for key, _ in sel.select(timeout=0):
            pass
deadline = time.monotonic() + wait_s
while time.monotonic() < deadline and answered < n:
    for key, events in sel.select(timeout=0.5):
        s, state = key.fileobj, key.data
        if events & selectors.EVENT_WRITE and not state["sent"]:
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                sel.unregister(s)
                continue
            connected += 1
            s.send(request)
            state["sent"] = True
            sel.modify(s, selectors.EVENT_READ, state)
        elif events & selectors.EVENT_READ:
            try:
                chunk = s.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:
                sel.unregister(s)
                continue
            state["got"] += chunk
            if b"ok\n" in state["got"]:
                answered += 1
                sel.unregister(s)
print(json.dumps({"opened": n, "connected": connected, "answered": answered, "seconds": round(time.monotonic() - start, 2)}), flush=True)
sys.stdin.read()  # hold them open until told
for s in socks:
    s.close()
