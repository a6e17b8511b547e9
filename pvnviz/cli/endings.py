"""How ``python -m pvnviz`` ends on Ctrl-C (SIGINT) and SIGTERM: one line on stderr, exit status 130 or 143.

Only the standard library: ``pvnviz.__main__`` calls ``install`` before it imports anything heavy (torch,
numpy, gymnasium, mujoco, ray), so a signal during the imports ends as cleanly as one during a run.

The rules, at any moment of the process:
- the first signal raises ``Interrupted`` (a ``KeyboardInterrupt``) where the main thread is; every later
  one is only recorded, so the clean-up and the ending line are never cut by a second exception;
- once the CLI has chosen its ending (``hold``), signals are only recorded;
- ``finish`` ends the process: Python's exit work (non-daemon threads, ``atexit`` callbacks such as Ray's
  shutdown) runs under ``hold``, then the last ``atexit`` callback, with both signals blocked, flushes the
  streams and calls ``os._exit``. A signal that came after a successful ending still ends with 130 or 143
  and its one line; an ending already written (an error line) stands.
- the first signal is not raised inside a library whose C++ calls back into Python (torch, mujoco: a
  ``KeyboardInterrupt`` raised in such a callback reaches pybind11, which ends the process with
  ``std::terminate``, status -6 and no line; seen once in CI, during a run's first torch calls): while any frame
  of the main thread's stack is that library's Python code, the handler looks again every ``RETRY_S`` seconds
  (SIGALRM) and raises as soon as the main thread is back in other code;
- "Exception ignored in ..." reports of half-closed files collected after a signal are dropped
  (``sys.unraisablehook``); ``PVN_DEBUG=1`` keeps them.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys

# Nothing heavier: typing, contextlib and threading would add ~15 ms before the handlers are in place.

STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}  # 128 + the signal's number, as shells report it
NAMES = {signal.SIGINT: "interrupted (Ctrl-C)", signal.SIGTERM: "terminated (SIGTERM)"}


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM, raised where the main thread is, so either ends as cleanly as Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(NAMES.get(signum, f"signal {signum}"))
        self.signum = signum


class _State:
    installed = False
    raising = True  # False once a signal was raised or the ending is chosen
    signum: int | None = None  # the first signal received
    status: int | None = None  # set by ``finish``: the status the process ends with


_state = _State()


RETRY_S = 0.05  # how soon a signal deferred out of a native library's Python code is looked at again
NATIVE = (f"{os.sep}torch{os.sep}", f"{os.sep}mujoco{os.sep}")  # libraries whose C++ calls Python code


def _in_native_library(frame) -> bool:
    """Whether a frame of this stack is Python code of a library in ``NATIVE`` (its C++ may be the caller)."""
    while frame is not None:
        if any(part in frame.f_code.co_filename for part in NATIVE):
            return True
        frame = frame.f_back
    return False


def _on_signal(signum: int, frame) -> None:
    if _state.signum is None:
        _state.signum = signum
    if _state.raising:
        if _in_native_library(frame):
            signal.setitimer(signal.ITIMER_REAL, RETRY_S)  # look again soon (``_on_retry``)
            return
        _state.raising = False
        raise Interrupted(signum)


def _on_retry(signum: int, frame) -> None:
    """SIGALRM after a signal was deferred out of a native library: raise it now if the stack allows."""
    if _state.signum is not None:
        _on_signal(_state.signum, frame)


def _unraisable(unraisable) -> None:
    if _state.signum is None or os.environ.get("PVN_DEBUG"):
        sys.__unraisablehook__(unraisable)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 - e.g. a closed pipe
            pass


def _last_word() -> None:
    """The last ``atexit`` callback (registered first): the one ending line if a signal came late, then exit."""
    if _state.status is None:
        return  # ``finish`` was not reached: Python's own ending
    signal.pthread_sigmask(signal.SIG_BLOCK, set(STATUS))  # a signal from here on stays pending, unhandled
    _flush()  # before the last look at what is pending: after it, only a comparison and the exit are left
    pending = [s for s in STATUS if s in signal.sigpending()]
    signum = _state.signum if _state.signum is not None else (pending[0] if pending else None)
    status = _state.status
    if signum is not None and status == 0:  # the work was done, then a signal came before the process ended
        status = STATUS[signum]
        line = f"error: {NAMES[signum]} as the CLI was exiting; its work was done (a run it wrote is whole)."
        try:
            print(line, file=sys.stderr)
        except Exception:  # noqa: BLE001, S110 - a closed stderr cannot take the line
            pass
        _flush()
    os._exit(status)


def install() -> None:
    """Handle SIGINT and SIGTERM by the rules above, for the rest of the process (``python -m pvnviz``)."""
    atexit.register(_last_word)  # registered first, so it runs last
    sys.unraisablehook = _unraisable
    for signum in STATUS:
        signal.signal(signum, _on_signal)
    signal.signal(signal.SIGALRM, _on_retry)
    _state.installed = True


class handled:  # noqa: N801 - used as ``with endings.handled():``, like a function of contextlib
    """Within: signals as ``install`` handles them. A no-op after ``install``; else (``main()`` called in a
    process of its own, e.g. a test) the handlers are set here, main thread only, and restored after."""

    def __enter__(self) -> None:
        import threading

        self.previous = {}
        if _state.installed or threading.current_thread() is not threading.main_thread():
            return
        _state.raising, _state.signum = True, None
        self.previous = {signum: signal.signal(signum, _on_signal) for signum in STATUS}
        self.previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, _on_retry)

    def __exit__(self, *exc_info) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)


class deferred:  # noqa: N801 - used as ``with endings.deferred():``
    """Within: a signal is recorded, not raised; at the end the first one is raised as it would have been. For code
    that calls back into Python from C++ (``torch.save``'s writer calls the file's ``write``): an exception raised
    in such a callback reaches pybind11, which ends the process with ``std::terminate`` (status -6, no line)."""

    def __enter__(self) -> None:
        self.raising, _state.raising = _state.raising, False

    def __exit__(self, exc_type, *rest) -> None:
        _state.raising = self.raising
        if exc_type is None and _state.raising and _state.signum is not None:
            _state.raising = False
            raise Interrupted(_state.signum)


def reclaim() -> None:
    """Set the handlers again where a library replaced them (``ray.init`` sets SIGTERM to ``sys.exit(15)``)."""
    import threading

    if _state.installed and threading.current_thread() is threading.main_thread():
        for signum in STATUS:
            signal.signal(signum, _on_signal)


def hold() -> None:
    """The ending is chosen: from now on signals are recorded, never raised."""
    _state.raising = False


def received() -> int | None:
    """The first signal received (SIGINT or SIGTERM), or None."""
    return _state.signum


def finish(status: int) -> None:
    """End the process with ``status`` (see the module docstring); never returns."""
    hold()
    _state.status = status
    sys.exit(status)
