"""A TCP proxy that cuts connections mid-stream: the peer "dies" (or, with `stall`, falls
silent while its socket stays open) at a chosen byte.

`CutProxy(target_host, target_port, cuts=[n1, n2, ...])` listens on 127.0.0.1; the k-th
connection through it is cut (both sockets closed abruptly) after `cuts[k]` bytes have
gone from the peer to the client (`direction="down"`) or from the client to the peer
(`"up"`); connections past the list pass everything. Runs in its own thread.

A cut resets both sockets (RST), the way a crashed peer looks; with `fin=True` it ends
both streams instead (FIN), the way a peer or a load balancer closing the connection
looks: what either side still sends is read and dropped, and each socket is closed once
its side has closed too.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType

from tests.peers.net import free_port


class CutProxy:
    def __init__(self, host: str, port: int, cuts: list[int], direction: str = "up",
                 stall: bool = False, stall_on: bytes | None = None, fin: bool = False) -> None:
        self.fin = fin  # at the cut, FIN both sides rather than reset them
        self.stall = stall  # at the cut, stop forwarding but keep both sockets open
        self.stall_on = stall_on  # with stall: also stall where these bytes first pass
        self.target = (host, port)
        self.cuts = list(cuts)
        self.direction = direction
        self.port = free_port()
        self.connections = 0
        self.cut_count = 0
        self._lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._lsock.bind(("127.0.0.1", self.port))
        self._lsock.listen(16)
        self._stop = False
        self._threads: list[threading.Thread] = []
        self._socks: list[socket.socket] = []
        self._accepter = threading.Thread(target=self._accept, daemon=True)
        self._accepter.start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self._lsock.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            limit = self.cuts[self.connections] if self.connections < len(self.cuts) else None
            self.connections += 1
            self._socks += [client, upstream]
            state = {"left": limit, "closed": False, "fin": False}
            lock = threading.Lock()
            for src, dst, counted in ((client, upstream, self.direction == "up"),
                                      (upstream, client, self.direction == "down")):
                t = threading.Thread(target=self._pipe,
                                     args=(src, dst, counted, state, lock, client, upstream),
                                     daemon=True)
                t.start()
                self._threads.append(t)

    def _pipe(self, src: socket.socket, dst: socket.socket, counted: bool,
              state: dict[str, object], lock: threading.Lock,
              a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if state["fin"]:
                    continue  # cut with a FIN: dropped until this side closes too
                if counted and self.stall and self.stall_on and self.stall_on in data:
                    dst.sendall(data[:data.index(self.stall_on)])
                    self.cut_count += 1
                    self._swallow(src)
                    return
                if counted and state["left"] is not None:
                    with lock:
                        left = int(state["left"])  # type: ignore[call-overload]
                        if len(data) >= left:
                            dst.sendall(data[:left])
                            self.cut_count += 1
                            if self.stall:
                                state["left"] = None
                                self._swallow(src)
                                return
                            if self.fin:
                                state["fin"] = True
                                self._end(a, b)
                                continue
                            self._kill(a, b, state)
                            return
                        state["left"] = left - len(data)
                dst.sendall(data)
        except OSError:
            pass
        if state["fin"]:
            # (a write racing the cut failed on its shut socket: drop the rest all the same)
            self._swallow(src)
            src.close()
            return
        self._kill(a, b, state)

    @staticmethod
    def _swallow(src: socket.socket) -> None:
        """Read and drop everything: the peer looks alive to TCP but says nothing."""
        try:
            while src.recv(65536):
                pass
        except OSError:
            pass

    @staticmethod
    def _end(a: socket.socket, b: socket.socket) -> None:
        """FIN both sides: nothing more goes to either."""
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    @staticmethod
    def _kill(a: socket.socket, b: socket.socket, state: dict[str, object]) -> None:
        if state["closed"]:
            return
        state["closed"] = True
        for s in (a, b):
            try:
                # RST rather than FIN: the way a crashed peer looks.
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                # Wake the thread reading it, if any (it sends nothing): until that read
                # returns, the close below leaves the socket open, so a client that is only
                # waiting for the peer (a browse) would not see the cut.
                s.shutdown(socket.SHUT_RD)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass

    def close(self) -> None:
        self._stop = True
        self._lsock.close()
        for s in self._socks:
            try:
                s.close()
            except OSError:
                pass

    def __enter__(self) -> CutProxy:  # noqa: PYI034 - no typing_extensions.Self needed here
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
