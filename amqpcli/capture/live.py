"""Live capture and TLS decryption through tshark (pyshark): the slow paths.

Both feed the same `FlowTracker` as the file reader, so callers get the same events
(`Opened`, `Data`, `Gap`, `Closed`).

* `live_capture(interface, bpf_filter)`: packets from a live interface (tshark's dumpcap
  needs capture rights: root or the wireshark group); each frame's raw bytes go through
  our own decoder and reassembler.
* `dumpcap_capture(interface, bpf_filter)`: the same events, but dumpcap writes pcapng
  into a pipe that the file reader reads: the fast way to watch a busy interface.
* `read_stream(stream)`: the same path for a capture someone else writes into a pipe (a
  named pipe, standard input), each event as soon as its packet is read.
* `decrypt_tls(source, keylog_file)`: a capture file (or, with `interface=`, a live
  interface) and a key log file (the `SSLKEYLOGFILE` format); tshark decrypts and
  reassembles the TLS records of every TLS flow, found by its handshake on any port, and
  the plaintext bytes of each direction are handed on as a flow whose protocol is
  detected from the decrypted bytes (so an AMQP connection over TLS shows as "amqp-1.0"
  or "amqp-sasl"). Flows that are not TLS are handed on as they are, and TLS flows
  without keys as TLS.

pyshark runs tshark in a subprocess and parses its JSON: thousands of packets a second,
not hundreds of thousands. Use the file reader (`read_capture`) for capture files.

The live sources take `on_capturing`: it is called once, before any capture process
starts, with the function that ends the capture (`CaptureProcesses.end`): gently (the
capture processes stop capturing and write out what they hold, which is still read to
its end), or with `now=True` at once (nothing more is wanted); a capture process that
starts after it was called is ended as it starts. It returns False once the capture is
over. That is how Ctrl-C ends a live dump without losing the packets already captured,
and how `amqp tui --live` ends its capture when it quits, from another thread than the
one reading. The capture processes (dumpcap, tshark) run in sessions of their own, so a
terminal's Ctrl-C, sent to the whole foreground process group, reaches only us: so we
end them, at the latest when the program exits (see `_end_at_exit`). On Linux each also
gets SIGTERM if we die without ending them (SIGKILL, a crash): see `ended_with_us`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import functools
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Collection, Iterator
from contextlib import AbstractContextManager, nullcontext
from functools import partial
from typing import IO, Any, Protocol, cast

from amqpcli.aio import wait_within
from amqpcli.capture.decode import ACK, FIN, PSH, RST, SYN, PacketDecoder
from amqpcli.capture.detect import AMQP_TLS, NEEDED, TLS, detect, is_client_hello
from amqpcli.capture.files import CaptureError, PipeStream, read_packets
from amqpcli.capture.tcp import Event, FlowTracker
from amqpcli.errors import Exit, UserError

# first layer tshark shows → pcap link type our decoder understands
_LINK_BY_LAYER = {"eth": 1, "null": 0, "loop": 0, "raw": 101, "ip": 101, "ipv6": 101}


def _time_ns(stamp: str) -> int:
    """tshark's "seconds.fraction" epoch time, exactly, in nanoseconds."""
    sec, _, frac = stamp.partition(".")
    return int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])


def _linktype(pkt: Any) -> int:
    first = pkt.layers[0].layer_name
    if first == "sll":
        return 276 if "ifindex" in pkt.layers[0].field_names else 113
    try:
        return _LINK_BY_LAYER[first]
    except KeyError:
        raise UserError(f"live capture: link layer {first!r} is not supported",
                        Exit.USAGE) from None


class _OwnSessionLoop(asyncio.SelectorEventLoop):
    """An event loop whose subprocesses each start in a session of their own.

    pyshark starts tshark (and the dumpcap whose output tshark reads) on this loop (see
    `_ensure_loop`), so a terminal's Ctrl-C, which goes to the whole foreground process
    group, reaches only us, and we end the capture gently (`CaptureProcesses.end`), as
    `dumpcap_capture` does with its dumpcap; stopped by the terminal's signal at once,
    they lost what the kernel's capture buffer still held.

    pyshark joins dumpcap to tshark with a pipe of its own (`os.pipe()`), hands its ends
    over as descriptors and never closes ours. Held open here, the pipe never ended for
    tshark: a tshark started after its dumpcap was ended (a stop while the capture was
    starting) waited for packets forever, and so did the reading. Our copies of a pipe
    handed to a subprocess are closed once it has started (the subprocess has its own)."""

    async def subprocess_exec(self, protocol_factory: Any, program: Any, *args: Any,
                              **kwargs: Any) -> Any:
        kwargs.setdefault("start_new_session", True)
        kwargs.setdefault("preexec_fn", ended_with_us())
        handed = [fd for fd in (kwargs.get("stdin"), kwargs.get("stdout"))
                  if isinstance(fd, int) and fd >= 0 and _is_pipe(fd)]
        try:
            return await super().subprocess_exec(protocol_factory, program, *args, **kwargs)
        finally:
            for fd in handed:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


# Linux's prctl(2) option: the signal a process gets when the thread that started it ends
_PR_SET_PDEATHSIG = 1


@functools.cache
def _prctl() -> Any:
    """libc's prctl (looked up once, in the parent: the child must not load anything),
    or None where there is none."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                      ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


def ended_with_us() -> Callable[[], None] | None:
    """A `preexec_fn` that has the capture process (Linux only; None elsewhere) get
    SIGTERM when we die without ending it: a SIGKILL, a crash. (Its own session keeps
    the terminal's signals from it, and `_end_at_exit` needs us alive.) dumpcap then
    writes out what it holds and exits; tshark ends its own dumpcap and exits.

    The signal comes when the *thread* that started the process ends: each capture's
    processes are started by the thread reading them, which outlives them (the
    capture's generator reaps them before that thread is done with it). Linux drops the
    setting as it runs a program with more rights than its user's (a dumpcap given
    capture capabilities, or setuid, for users who are not root): such a dumpcap ends
    at the next packet it captures, when it finds no one reading its pipe.

    A `preexec_fn` runs between fork and exec, in a copy of a process that may have
    threads: it only calls a function looked up beforehand and the system, taking no
    lock another thread could have held at the fork (no import, no logging)."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()
    sigterm = int(signal.SIGTERM)

    def in_child() -> None:
        if prctl(_PR_SET_PDEATHSIG, sigterm, 0, 0, 0) == 0 and os.getppid() != parent:
            os._exit(1)  # we died before the setting took: no signal will come
    return in_child


_thread_loop = threading.local()


def _ensure_loop() -> None:
    """pyshark runs its processes on the thread's current event loop (a worker thread has
    none by default): make it an `_OwnSessionLoop`, the same one for every capture in the
    thread. (pyshark takes the current loop rather than one passed as its `eventloop`
    because then, in the main thread, it also sets up the child watcher that notices
    tshark's exit before it cleans up.)"""
    loop = getattr(_thread_loop, "loop", None)
    if loop is None or loop.is_closed():
        loop = _thread_loop.loop = _OwnSessionLoop()
    asyncio.set_event_loop(loop)


def _saved_signal_state() -> Callable[[], None]:
    """Call before a pyshark capture starts; the function it returns, once the capture is
    over, undoes what pyshark did to the process's signal handling.

    In the main thread pyshark installs a child watcher of its own (asyncio's
    `SafeChildWatcher`) on our loop: a SIGCHLD handler of the loop's, which points the
    signal wakeup fd at the loop's self-pipe. Left in place, every later exit of any
    child process wrote a byte into that pipe, which nobody reads once the loop no longer
    runs, until it was full ("Exception ignored when trying to write to the signal
    wakeup fd: BlockingIOError" at each signal after); and asyncio refused subprocesses
    on other loops (the watcher's loop is not running). So the child watcher, the SIGCHLD
    handler and the wakeup fd are put back as they were. (In other threads pyshark
    leaves them alone.)"""
    get_watcher = getattr(asyncio, "get_child_watcher", None)
    if threading.current_thread() is not threading.main_thread() or get_watcher is None:
        return lambda: None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (Python 3.12 on)
        watcher = get_watcher()
    sigchld = signal.getsignal(signal.SIGCHLD)
    wakeup_fd = signal.set_wakeup_fd(-1)  # (read by setting another: there is no getter)
    signal.set_wakeup_fd(wakeup_fd)

    def restore() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            # (pyshark's watcher, which this closes, may still wait for a process killed
            # as its capture failed: no one is left to be told of its exit)
            warnings.simplefilter("ignore", RuntimeWarning)
            asyncio.set_child_watcher(watcher)
        signal.signal(signal.SIGCHLD, sigchld)
        signal.set_wakeup_fd(wakeup_fd)
    return restore


def _failed(what: str, e: Exception) -> UserError:
    """tshark's failures (missing tshark, unknown interface, no capture rights, bad
    options) come as many exception types; the user gets their first line."""
    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return UserError(f"{what} failed: {first}", Exit.USAGE)


def check_capture_filter(interface: str, bpf_filter: str, dumpcap_path: str | None = None) -> None:
    """Compile the capture filter for the interface (`dumpcap -d`) before capturing: with
    a filter it cannot compile, dumpcap stops at once but tshark, reading its pipe, waits
    for packets forever. dumpcap exits 0 either way; what it says on stderr tells. Where
    there is no dumpcap the capture itself reports what is wrong."""
    path = dumpcap_path or shutil.which("dumpcap")
    if path is None:
        return
    try:
        p = subprocess.run([path, "-i", interface, "-f", bpf_filter, "-d"], check=False,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return
    said = [x.strip() for x in p.stderr.decode(errors="replace").splitlines()
            if x.strip().startswith("dumpcap:")]
    if said:
        raise UserError(f"live capture on {interface} failed: {said[0]}", Exit.USAGE)


def _track_tasks(cap: Any) -> weakref.WeakSet[asyncio.Future[Any]]:
    """Every task pyshark starts on its event loop from now on (for `_close`)."""
    tasks: weakref.WeakSet[asyncio.Future[Any]] = weakref.WeakSet()
    loop = getattr(cap, "eventloop", None)
    if loop is None:
        return tasks
    previous = loop.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Future[Any]:
        task = (previous(loop, coro, **kwargs) if previous is not None
                else asyncio.Task(coro, loop=loop, **kwargs))
        tasks.add(task)
        return task

    loop.set_task_factory(factory)
    cap._amqp_task_factory = previous
    return tasks


def _close(cap: Any, packets: Any, tasks: weakref.WeakSet[asyncio.Future[Any]]) -> None:
    """Stop tshark and leave pyshark's event loop with no task exception unretrieved.

    A Ctrl-C (or SIGTERM) while pyshark waits for the next packet leaves its read task
    pending; stopping tshark (in pyshark's own cleanup, or here) ends that task with an
    EOFError nobody retrieves, which asyncio prints as "Task exception was never
    retrieved" and a traceback at exit. Every task pyshark started is finished (cancelled
    if tshark's end did not finish it) and whatever it ended with is retrieved."""
    loop = getattr(cap, "eventloop", None)
    # (pyshark forgets its processes as it kills them; their pipes stay open until
    # collected, and closing them then, on a loop already closed, printed "Event loop is
    # closed" tracebacks: they are closed here, while the loop runs)
    processes = list(getattr(cap, "_running_processes", ()))
    try:
        cap.close()
    except Exception:
        # pyshark stops at the first process whose end it takes for a crash: the
        # others are ended here
        for proc in getattr(cap, "_running_processes", ()):
            if proc.returncode is None:
                with contextlib.suppress(Exception):
                    proc.kill()
        raise
    finally:
        # (forgotten: else pyshark's __del__ tried again later, on a closed loop)
        getattr(cap, "_running_processes", set()).clear()
        close = getattr(packets, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()  # pyshark's own generator: its cleanup finds tshark gone
        started = list(tasks)
        unfinished = [t for t in started if not t.done()]
        if unfinished and loop is not None and not loop.is_closed() and not loop.is_running():
            for task in unfinished:
                task.cancel()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.gather(*unfinished, return_exceptions=True))
        for task in started:
            if task.done() and not task.cancelled():
                task.exception()  # retrieved: asyncio stays quiet about it
        _close_pipes(processes, loop)
        if loop is not None and hasattr(cap, "_amqp_task_factory"):
            loop.set_task_factory(cap._amqp_task_factory)


def _close_pipes(processes: list[Any], loop: Any) -> None:
    """Close the subprocess transports of `processes` (asyncio `Process` objects) and let
    the loop run their closing callbacks."""
    for proc in processes:
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            with contextlib.suppress(Exception):
                transport.close()
    if processes and loop is not None and not loop.is_closed() and not loop.is_running():
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.sleep(0))


class EndCapture(Protocol):
    """Ends a live capture (see the module's docstring): gently, or at once with `now`;
    False once the capture is over."""

    def __call__(self, now: bool = False) -> bool: ...


# dumpcap reads the kernel's capture buffer every 250 ms: packets that were on the wire
# before Ctrl-C may still wait there, and dumpcap stopped at once would lose them
_CAPTURE_GRACE = 0.5


def _interrupt_later(send_signal: Callable[[int], None]) -> None:
    """SIGINT through `send_signal` (the process object's own: it does nothing once the
    process is gone, so never reaches a process that took over its pid) once the capture
    had `_CAPTURE_GRACE` to take up what is in flight (a timer: this runs in a signal
    handler, which must not wait)."""
    def interrupt() -> None:
        with contextlib.suppress(OSError):  # ProcessLookupError included
            send_signal(signal.SIGINT)
    timer = threading.Timer(_CAPTURE_GRACE, interrupt)
    timer.daemon = True
    timer.start()


def _interrupt(send_signal: Callable[[int], None]) -> None:
    with contextlib.suppress(OSError):  # ProcessLookupError included: it is gone
        send_signal(signal.SIGINT)


class CaptureProcesses:
    """The processes of one live capture (dumpcap; or tshark and the dumpcap it reads),
    and the one way they are ended: `end` (the capture's `EndCapture`).

    Each process is told by `started` as it starts (a `subprocess.Popen` or an asyncio
    `Process`: anything with `send_signal`). SIGINT ends each of them gently: dumpcap
    writes out what it captured and exits, tshark stops its own dumpcap, hands out what
    it read and exits; the reading then comes to the end of their output, and the
    capture's generator, ending, reaps them. `end` may be called from any thread (a
    signal handler, the TUI's), before, while or after the processes start: one that
    starts after `end` is ended as it starts, so a stop while tshark is still starting
    (it starts its processes one after the other, at the first packet asked for) ends
    them all. Until the capture's generator is over (`over`), `_end_at_exit` ends what
    still runs when the program exits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: list[Any] = []
        self._ending = False
        self._over = False
        _running.add(self)

    @property
    def ending(self) -> bool:
        """`end` was called: the capture processes are ending (or end as they start)."""
        return self._ending

    @property
    def idle_and_ended(self) -> bool:
        """`end` was called before any capture process started: none need start."""
        with self._lock:
            return self._ending and not self._procs

    def started(self, proc: Any) -> None:
        with self._lock:
            self._procs.append(proc)
            ending = self._ending
        if ending:  # (it captured nothing before the end was asked for)
            _interrupt(proc.send_signal)

    def end(self, now: bool = False) -> bool:
        """SIGINT to every capture process, at once with `now`, otherwise after
        `_CAPTURE_GRACE` (what is still in flight is captured); False once the capture
        is over (then nothing more will come of it)."""
        with self._lock:
            if self._over:
                return False
            self._ending = True
            procs = list(self._procs)
        for proc in procs:
            if now:
                _interrupt(proc.send_signal)
            else:
                _interrupt_later(proc.send_signal)
        return True

    def over(self) -> None:
        """The capture's generator is done with its processes (they were reaped)."""
        with self._lock:
            self._over = True
            self._procs.clear()
        _running.discard(self)


# the live captures whose generators are not over (`CaptureProcesses`)
_running: weakref.WeakSet[CaptureProcesses] = weakref.WeakSet()


@atexit.register
def _end_at_exit() -> None:
    """The capture processes run in sessions of their own: nothing ends them with us. A
    capture still running when the program exits (its reading thread a daemon, blocked
    waiting for the next packet; a generator never closed) is ended here, at once."""
    for procs in list(_running):
        procs.end(now=True)


# how long a capture process that is ending on its own is given to exit before pyshark
# kills it
_EXIT_WAIT = 5.0


def _watch_processes(cap: Any, procs: CaptureProcesses) -> None:
    """Tell `procs` of every process pyshark's capture `cap` starts, and let one that is
    ending on its own end before pyshark's cleanup kills it (pyshark has no public hooks:
    each process it starts goes through `_created_new_process`, each it stops through
    `_cleanup_subprocess`).

    pyshark kills tshark as soon as its output ends, when tshark is exiting anyway (we
    ended it, or its dumpcap ended). A kill (`Popen.send_signal`) first polls the process,
    and that poll could take tshark's exit status before asyncio's child watcher did: the
    watcher then reported 255 ("Unknown child process"), which pyshark took for a crash
    (an error instead of the capture's end, and its cleanup left half done). So a process
    that ends on its own is waited for, through the watcher, before that kill. And one we
    ended (`CaptureProcesses.end`) did not crash, whatever its exit status: tshark ended
    before its capture began exits with 1, which pyshark takes for a crash."""
    created = cap._created_new_process
    cleanup = cap._cleanup_subprocess

    def created_new_process(parameters: Any, process: Any, *args: Any, **kwargs: Any) -> Any:
        procs.started(process)
        return created(parameters, process, *args, **kwargs)

    async def cleanup_subprocess(process: Any) -> Any:
        if process.returncode is None and (procs.ending or getattr(cap, "_eof_reached", False)):
            with contextlib.suppress(asyncio.TimeoutError):
                await wait_within(process.wait(), _EXIT_WAIT)
        if procs.ending and process.returncode is not None:
            return None  # we ended it: how it exited is no crash (see above)
        return await cleanup(process)

    cap._created_new_process = created_new_process
    cap._cleanup_subprocess = cleanup_subprocess


def _drain(tracker: FlowTracker) -> Iterator[Event]:
    out = tracker.events
    if out:
        yield from out
        out.clear()


def live_capture(interface: str = "lo", bpf_filter: str = "tcp", *,
                 ports: Collection[int] = (), all_flows: bool = False,
                 packet_count: int | None = None, tshark_path: str | None = None,
                 waiting: AbstractContextManager[Any] | None = None,
                 on_capturing: Callable[[EndCapture], None] | None = None) -> Iterator[Event]:
    """Events of the TCP flows seen live on `interface` (a BPF `bpf_filter` limits what is
    captured). Runs until `packet_count` packets were seen, until the capture is ended
    (see `on_capturing` above), or until the caller stops iterating (closing the
    generator stops tshark); open flows are then closed with how="end". Every wait for
    the next packet is inside `waiting` (see `amqpcli.capture.files`)."""
    import pyshark

    check_capture_filter(interface, bpf_filter)
    _ensure_loop()
    tracker = FlowTracker(ports, all_flows=all_flows)
    dec = PacketDecoder()
    restore_signals = _saved_signal_state()
    try:
        cap = pyshark.LiveCapture(interface=interface, bpf_filter=bpf_filter, use_json=True,
                                  include_raw=True, tshark_path=tshark_path)
        tasks = _track_tasks(cap)
        packets = cap.sniff_continuously(packet_count=packet_count)
    except Exception as e:  # noqa: BLE001 - see _failed
        restore_signals()
        raise _failed(f"live capture on {interface}", e) from None
    procs = CaptureProcesses()
    _watch_processes(cap, procs)
    if on_capturing is not None:
        on_capturing(procs.end)
    wait = waiting if waiting is not None else nullcontext()
    try:
        while not procs.idle_and_ended:
            try:
                with wait:
                    pkt = next(packets)
            except StopIteration:
                break
            except Exception as e:  # noqa: BLE001 - see _failed
                raise _failed(f"live capture on {interface}", e) from None
            seg = dec.decode(_linktype(pkt), memoryview(pkt.get_raw_packet()))
            if seg is not None:
                tracker.feed(_time_ns(pkt.sniff_timestamp), *seg)
                yield from _drain(tracker)
    finally:
        try:
            _close(cap, packets, tasks)
        finally:
            procs.over()
            restore_signals()
    tracker.finish()
    yield from _drain(tracker)


def dumpcap_capture(interface: str = "lo", bpf_filter: str = "tcp", *,
                    ports: Collection[int] = (), all_flows: bool = False,
                    packet_count: int | None = None, dumpcap_path: str = "dumpcap",
                    waiting: AbstractContextManager[Any] | None = None,
                    on_capturing: Callable[[EndCapture], None] | None = None,
                    ) -> Iterator[Event]:
    """Like `live_capture`, but dumpcap streams pcapng through a pipe into the file
    reader: no JSON, no per-packet dissection, so it keeps up with busy links. Runs until
    `packet_count` packets were captured, until the capture is ended (`on_capturing`),
    or until the caller stops iterating (closing the generator stops dumpcap). Every read
    of the pipe is inside `waiting`."""
    cmd = [dumpcap_path, "-q", "-i", interface, "-f", bpf_filter, "-w", "-"]
    if packet_count is not None:
        cmd[1:1] = ["-c", str(packet_count)]
    procs = CaptureProcesses()
    if on_capturing is not None:
        on_capturing(procs.end)
    if procs.idle_and_ended:
        procs.over()
        return
    try:
        # its own session: a terminal's Ctrl-C reaches only us, and we end it gently
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                bufsize=0, start_new_session=on_capturing is not None,
                                preexec_fn=ended_with_us())  # noqa: PLW1509 - see there
    except OSError as e:
        procs.over()
        raise UserError(f"live capture on {interface} failed: cannot run {dumpcap_path}: "
                        f"{e.strerror}", Exit.USAGE) from None
    assert proc.stdout is not None
    # (dumpcap flushes what it captured and exits: the pipe then ends)
    procs.started(proc)
    tracker = FlowTracker(ports, all_flows=all_flows)
    try:
        try:
            yield from stream_events(proc.stdout, tracker, waiting=waiting)
        except CaptureError:
            pass  # dumpcap stopped (mid-record, or before writing anything): see below
        # the pipe ended: dumpcap is exiting
        try:
            rc = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = None
        if rc:
            err = (proc.stderr.read() if proc.stderr else b"").decode(errors="replace")
            lines = [x.strip() for x in err.splitlines() if x.strip()]
            said = [x for x in lines if x.startswith("dumpcap:")] or lines or ["dumpcap exited"]
            raise UserError(f"live capture on {interface} failed: {said[0]}", Exit.USAGE)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        procs.over()
        for f in (proc.stdout, proc.stderr):
            if f is not None:
                f.close()
    tracker.finish()
    yield from _drain(tracker)


def stream_events(source: IO[bytes] | PipeStream, tracker: FlowTracker, *,
                  waiting: AbstractContextManager[Any] | None = None) -> Iterator[Event]:
    """The events of a pcap or pcapng stream (dumpcap's pipe, a named pipe, standard
    input) as its packets come: the file reader's packets through our decoder into
    `tracker`, which is left open (its caller finishes it once the stream is done with).
    A damaged stream raises its `CaptureError` after the events of the packets before
    the damage. Every read is inside `waiting`."""
    dec = PacketDecoder()
    # (a PipeStream reads as a binary stream does)
    for ts, linktype, data in read_packets(cast("IO[bytes]", source), waiting=waiting):
        seg = dec.decode(linktype, data)
        if seg is not None:
            tracker.feed(ts, *seg)
            yield from _drain(tracker)


def read_stream(source: IO[bytes] | PipeStream, *, ports: Collection[int] = (),
                all_flows: bool = False,
                waiting: AbstractContextManager[Any] | None = None) -> Iterator[Event]:
    """`read_capture` of a capture someone is still writing (a named pipe, standard
    input: `tcpdump -U -w - | …`), through the path `dumpcap_capture` reads its pipe by:
    each event as soon as its packet is read. At the end of the stream the flows still
    open are closed (how="end"); a damaged stream (cut short, not a capture) raises its
    `CaptureError` after every event before the damage and those closes, as
    `read_capture` does."""
    tracker = FlowTracker(ports, all_flows=all_flows)
    error: CaptureError | None = None
    try:
        yield from stream_events(source, tracker, waiting=waiting)
    except CaptureError as e:
        error = e
    tracker.finish()
    yield from _drain(tracker)
    if error is not None:
        raise error


def _values(layer: Any, name: str) -> list[str]:
    try:
        v = layer.get_field(name)
    except AttributeError:  # (pyshark's JSON layers raise for a field they lack)
        return []
    if v is None:
        return []
    if isinstance(v, list):
        return [str(x) for x in v]
    fields = getattr(v, "all_fields", None)
    if fields and len(fields) > 1:
        return [str(f.get_default_value()) for f in fields]
    return [str(v)]


def _hex(layer: Any, name: str) -> bytes:
    """The bytes of a field tshark shows as colon-separated hex ("16:03:01"), or b""."""
    return b"".join(bytes.fromhex(v.replace(":", "")) for v in _values(layer, name))


def _holds(tree: Any, key: str) -> bool:
    """Whether tshark's JSON tree of a layer (dicts and lists) has the field `key`."""
    if isinstance(tree, dict):
        return key in tree or any(_holds(v, key) for v in tree.values())
    if isinstance(tree, list):
        return any(_holds(v, key) for v in tree)
    return False


def _decrypted(pkt: Any) -> bytes:
    """What tshark decrypted from the packet: its "data" layers (see `decrypt_tls`), one
    a record. pyshark gives the first of a packet's records as its layer and the others
    in that layer's `duplicate_layers` (a segment of a busy stream, or of loopback's
    64 KiB, ends several records)."""
    return b"".join(_hex(part, "data") for layer in pkt.layers if layer.layer_name == "data"
                    for part in (layer, *getattr(layer, "duplicate_layers", ())))


def _undecrypted(pkt: Any) -> bool:
    """Whether the packet carries TLS application data records (`tls.app_data`: what a
    TLS 1.3 record that could not be decrypted shows as, its handshake too). A packet
    whose records were decrypted carries their plaintext as well, in "data" layers."""
    for layer in pkt.layers:
        if layer.layer_name == "tls":
            for part in (layer, *getattr(layer, "duplicate_layers", ())):
                if _holds(getattr(part, "_all_fields", None), "tls.app_data"):
                    return True
    return False


def endpoint(ip: str, port: int) -> str:
    """"ip:port", "[ipv6]:port"."""
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


# the labels of the key log lines tshark reads (NSS key log format; RSA and
# PMS_CLIENT_RANDOM are Wireshark's): a label, a client random (or encrypted
# pre-master secret) and a secret, both in hex
_KEY_LINE = re.compile(rb"(CLIENT_RANDOM|RSA|PMS_CLIENT_RANDOM|[A-Z_]+_SECRET(_[0-9]+)?)"
                       rb"[ \t]+[0-9A-Fa-f]+[ \t]+[0-9A-Fa-f]+")
_KEYLOG_SCAN = 16 << 20  # a key log has its first key within this many bytes


def _no_keylog_file(path: str) -> UserError:
    """The usage error for a key log `path` that is no regular file."""
    if not os.path.exists(path):
        return UserError(f"{path}: no such key log file", Exit.USAGE)
    if os.path.isdir(path):
        return UserError(f"--tls-keylog {path}: a directory, not a TLS key log file", Exit.USAGE)
    # a device (/dev/null), a pipe: tshark reads the key log by its name, as a file
    return UserError(f"--tls-keylog {path}: not a regular file, so it holds no TLS session "
                     "keys (give the file SSLKEYLOGFILE writes)", Exit.USAGE)


def check_keylog(path: str, *, may_grow: bool = False) -> None:
    """A usage error unless `path` is a TLS key log (the SSLKEYLOGFILE format) holding at
    least one key. `may_grow` (a live capture: the clients write their keys as they
    connect) lets a file with nothing in it yet, or only comments, pass. Never says what
    is in the file: secrets."""
    if not os.path.isfile(path):
        raise _no_keylog_file(path)
    content = False
    try:
        with open(path, "rb") as f:
            for line in f:
                text = line.strip()
                if _KEY_LINE.fullmatch(text):
                    return
                if text and not text.startswith(b"#"):
                    content = True
                if f.tell() > _KEYLOG_SCAN:
                    break
    except OSError as e:
        raise UserError(f"{path}: cannot read the key log: {e.strerror}", Exit.USAGE) from None
    if may_grow and not content:
        return
    what = "not a TLS key log" if content else "holds no TLS keys"
    raise UserError(f"--tls-keylog {path}: {what} (no CLIENT_RANDOM or *_TRAFFIC_SECRET "
                    "lines, as SSLKEYLOGFILE writes them)", Exit.USAGE)


class TlsFlows:
    """What `decrypt_tls` made of the TLS flows it read, filled in as it reads:
    `decrypted` and `encrypted` (not decrypted: no keys for them) list each flow's client
    and server ("ip:port"); `packets` counts the packets read, `packet` is the number
    (tshark's frame number) of the packet whose events are being handed out."""

    def __init__(self) -> None:
        self.packets = 0
        self.packet = 0
        self.decrypted: list[tuple[str, str]] = []
        self.encrypted: list[tuple[str, str]] = []


# what a connection is known to be (`_Conn.state`)
_PENDING = 0  # no payload yet: its packets wait
_PLAIN = 1  # not TLS: its TCP segments go to the tracker as they are
_TLS = 2  # TLS, not known yet whether tshark decrypts it: its packets wait
_DECRYPTED = 3  # TLS that tshark decrypts: its plaintext goes to the tracker
_ENCRYPTED = 4  # TLS that tshark could not decrypt: its TLS records go to the tracker


# (time, src, sport, dst, dport, seq, ack, flags, TCP payload, plaintext)
_Packet = tuple[int, str, int, str, int, int, int, int, bytes, bytes]


_AMQP_TLS_HEADER = b"AMQP\x02"  # (the header of AMQP over TLS, protocol id 2: its first bytes)


class _Conn:
    __slots__ = ("client", "fins", "held", "nxt", "server", "state")

    def __init__(self) -> None:
        self.state = _PENDING
        self.held: list[_Packet] = []
        self.nxt: dict[tuple[str, int, str, int], int] = {}  # plaintext offsets
        self.client: tuple[str, int] | None = None
        self.server: tuple[str, int] | None = None
        self.fins: set[tuple[str, int]] = set()  # senders of a FIN


class _Decryption:
    """Sorts the packets tshark hands over into the tracker, connection by connection.

    A connection is TLS when its first bytes (either way) are a TLS handshake record, on
    whatever port (tshark is told every port may carry TLS: see `decrypt_tls`), or the
    AMQP TLS header (protocol id 2) that comes before TLS on the connection; any other
    connection goes to the tracker as the file reader would give it, its TCP segments as
    they are, so plain AMQP reads the same with a key log as without. A TLS connection's
    packets wait until tshark either decrypts a record of it (then its plaintext goes on,
    at offsets of its own, as a flow whose protocol the plaintext tells) or shows an
    application data record it could not decrypt, or the connection ends, with nothing
    decrypted (then its TLS records go on as they are: a TLS flow, reported as encrypted
    like one read without a key log)."""

    def __init__(self, tracker: FlowTracker, report: TlsFlows) -> None:
        self.tracker = tracker
        self.report = report
        self.conns: dict[tuple[str, int, str, int], _Conn] = {}

    def packet(self, ts: int, src: str, sport: int, dst: str, dport: int, seq: int, ack: int,
               flags: int, payload: bytes, plaintext: Callable[[], bytes],
               undecrypted: Callable[[], bool]) -> None:
        """One packet: its TCP segment, and (asked only of TLS) the plaintext tshark
        decrypted from it and whether it holds records tshark could not decrypt."""
        k = (src, sport, dst, dport) if (src, sport) <= (dst, dport) else (dst, dport, src,
                                                                           sport)
        c = self.conns.get(k)
        if c is not None and flags & SYN and not flags & ACK and c.state != _PENDING:
            self._settle(c)  # the 4-tuple is taken by a new connection
            c = None
        if c is None:
            c = self.conns[k] = _Conn()
        plain = plaintext() if c.state in (_PENDING, _TLS, _DECRYPTED) else b""
        if payload[:5] == _AMQP_TLS_HEADER and plain[:5] == _AMQP_TLS_HEADER:
            # the AMQP TLS header, which the TLS dissector passes on as it is: no plaintext
            plain = plain[8:]
        pkt: _Packet | None = (ts, src, sport, dst, dport, seq, ack, flags, payload, plain)
        if c.state == _PENDING:
            c.held.append((ts, src, sport, dst, dport, seq, ack, flags, payload, plain))
            if flags & SYN and not flags & ACK:
                c.client, c.server = (src, sport), (dst, dport)
            if payload:
                kind = detect(payload[:NEEDED])
                if kind == TLS:
                    c.state = _TLS
                    if is_client_hello(payload):
                        c.client, c.server = (src, sport), (dst, dport)
                    elif c.client is None:
                        c.client, c.server = (dst, dport), (src, sport)
                elif kind == AMQP_TLS:
                    # the AMQP TLS header (protocol id 2) both ways, then TLS on the same
                    # connection: decrypted, its plaintext is the AMQP that follows (the
                    # headers, no TLS record, give none); else it goes on as it is
                    c.state = _TLS
                    if c.client is None:
                        c.client, c.server = (src, sport), (dst, dport)
                else:
                    self._become(c, _PLAIN)
                    return
            elif flags & (FIN | RST):
                self._become(c, _PLAIN)  # nothing in it: as the file reader sees it
                return
            else:
                return
            pkt = None  # (held)
        if c.state == _TLS:
            if pkt is not None:
                c.held.append(pkt)
            if flags & FIN:
                c.fins.add((src, sport))
            if plain:
                self._become(c, _DECRYPTED)
            elif undecrypted() or flags & RST or len(c.fins) == 2:
                self._become(c, _ENCRYPTED)
            return
        if c.state == _DECRYPTED:
            self._plaintext(c, pkt)
        else:
            self.tracker.feed(ts, src, sport, dst, dport, seq, ack, flags, payload)

    def finish(self) -> None:
        """End of the capture: what still waits goes on (TLS with nothing decrypted: as
        encrypted)."""
        for c in self.conns.values():
            self._settle(c)
        self.conns.clear()

    def _settle(self, c: _Conn) -> None:
        if c.state == _TLS:
            self._become(c, _ENCRYPTED)
        elif c.state == _PENDING:
            self._become(c, _PLAIN)

    def _become(self, c: _Conn, state: int) -> None:
        c.state = state
        held, c.held = c.held, []
        if state in (_DECRYPTED, _ENCRYPTED) and c.client is not None and c.server is not None:
            ends = (endpoint(*c.client), endpoint(*c.server))
            (self.report.decrypted if state == _DECRYPTED else self.report.encrypted).append(ends)
        for pkt in held:
            if state == _DECRYPTED:
                self._plaintext(c, pkt)
            else:
                self.tracker.feed(*pkt[:9])

    def _plaintext(self, c: _Conn, pkt: _Packet | None) -> None:
        if pkt is None:
            return
        ts, src, sport, dst, dport, _seq, _ack, flags, _payload, plain = pkt
        key = (src, sport, dst, dport)
        # sequence numbers of our own: tshark put each direction's plaintext in order
        if flags & SYN:
            c.nxt[key] = 0
            self.tracker.feed(ts, src, sport, dst, dport, 0xFFFFFFFF, 0, flags & (SYN | ACK),
                              b"")
        elif plain or flags & (FIN | RST):
            seq = c.nxt.get(key, 0)
            c.nxt[key] = (seq + len(plain)) & 0xFFFFFFFF
            self.tracker.feed(ts, src, sport, dst, dport, seq, 0,
                              (flags & (FIN | RST)) | (PSH if plain else 0), plain)


def decrypt_tls(source: str | None, keylog_file: str | None, *,
                interface: str | None = None,
                bpf_filter: str = "tcp",
                ports: Collection[int] = (), all_flows: bool = False,
                packet_count: int | None = None, tshark_path: str | None = None,
                waiting: AbstractContextManager[Any] | None = None,
                on_capturing: Callable[[EndCapture], None] | None = None,
                report: TlsFlows | None = None) -> Iterator[Event]:
    """Events of the TCP flows in capture file `source` (or, with `source=None` and
    `interface`, a live interface), their TLS flows decrypted with the TLS session keys
    in `keylog_file` (None: only the keys a pcapng file carries in its decryption secrets
    blocks). TLS is found by its handshake, on any port; the other flows are given as the
    file reader gives them (see `_Decryption`). A decrypted flow's `Data` offsets count
    plaintext bytes; a TLS flow tshark could not decrypt (no keys for it) is a "tls"
    flow, as without a key log. `report` (a `TlsFlows`) is told which TLS flows were
    decrypted and which not. Every wait for the next packet is inside `waiting` (see
    `amqpcli.capture.files`); `on_capturing` as for `live_capture` (live only)."""
    import pyshark

    if keylog_file is not None and not os.path.isfile(keylog_file):
        raise _no_keylog_file(keylog_file)
    _ensure_loop()
    common: dict[str, Any] = {
        "use_json": True,
        "override_prefs": {"tls.keylog_file": keylog_file} if keylog_file else {},
        # every port may carry TLS, and its plaintext goes to the "data" dissector, which
        # shows it whole (left alone, heuristic dissectors may claim it and hide the
        # bytes). Plain flows are dissected as TLS too, to no harm: their bytes are taken
        # from TCP (`tcp.payload`), not from what tshark makes of them
        "decode_as": {"tcp.port==1-65535": "tls", "tls.port==1-65535": "data"},
        "disable_protocol": "amqp",
        "tshark_path": tshark_path,
    }
    what = f"TLS decryption of {source or interface}"
    procs = CaptureProcesses()
    restore_signals = _saved_signal_state()
    try:
        if source is not None:
            cap = pyshark.FileCapture(source, keep_packets=False, **common)
            tasks = _track_tasks(cap)
            _watch_processes(cap, procs)
            packets = iter(cap)
        elif interface is not None:
            check_capture_filter(interface, bpf_filter)
            cap = pyshark.LiveCapture(interface=interface, bpf_filter=bpf_filter, **common)
            tasks = _track_tasks(cap)
            packets = cap.sniff_continuously(packet_count=packet_count)
            _watch_processes(cap, procs)
            if on_capturing is not None:
                on_capturing(procs.end)
        else:
            raise UserError("decrypt_tls needs a capture file or an interface", Exit.USAGE)
    except UserError:
        procs.over()
        restore_signals()
        raise
    except Exception as e:  # noqa: BLE001 - see _failed
        procs.over()
        restore_signals()
        raise _failed(what, e) from None
    tracker = FlowTracker(ports, all_flows=all_flows)
    sorter = _Decryption(tracker, report if report is not None else TlsFlows())
    wait = waiting if waiting is not None else nullcontext()
    try:
        while not procs.idle_and_ended:
            try:
                with wait:
                    pkt = next(packets)
            except StopIteration:
                break
            except Exception as e:  # noqa: BLE001 - see _failed
                raise _failed(what, e) from None
            sorter.report.packets += 1
            sorter.report.packet = int(getattr(pkt, "number", 0) or 0)
            tcp = getattr(pkt, "tcp", None)
            net = getattr(pkt, "ip", None) or getattr(pkt, "ipv6", None)
            if tcp is None or net is None:
                continue
            seq = _values(tcp, "seq_raw")
            if not seq:
                continue
            ack = _values(tcp, "ack_raw")
            sorter.packet(_time_ns(pkt.sniff_timestamp), str(net.src), int(tcp.srcport),
                          str(net.dst), int(tcp.dstport), int(seq[0]),
                          int(ack[0]) if ack else 0, int(str(tcp.flags), 16),
                          _hex(tcp, "payload"), partial(_decrypted, pkt),
                          partial(_undecrypted, pkt))
            yield from _drain(tracker)
    finally:
        try:
            _close(cap, packets, tasks)
        finally:
            procs.over()
            restore_signals()
    sorter.finish()
    yield from _drain(tracker)
    tracker.finish()
    yield from _drain(tracker)
