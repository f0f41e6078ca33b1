"""Stops between two steps: Ctrl-C, or a notebook's interrupt, ends training where the agent is whole.

A KeyboardInterrupt raised wherever the interrupt lands could leave part of a step done: the environment stepped and
its transition not stored, a replay memory whose position moved on and whose size did not (a checkpoint saved then
would not load), an update round or an evaluation cut short. While `interrupts_noted` is active, the interrupt is
noted instead, and TD3.learn stops at the next step boundary, so that learn called again for the steps left goes on
as if it had never stopped; a second interrupt stops at once. The command line stops the same way on its own
signals (signals_handled).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def signals_handled(signals, handler: Callable) -> Iterator[None]:
    """While inside, `handler` receives each of `signals`; the previous handlers come back after."""
    previous = {number: signal.signal(number, handler) for number in signals}
    try:
        yield
    finally:
        for number, earlier in previous.items():
            signal.signal(number, earlier)


@contextlib.contextmanager
def interrupts_noted() -> Iterator[list[int]]:
    """While inside, a first SIGINT is appended to the list yielded, for the caller to stop at its next step
    boundary; a second raises KeyboardInterrupt at once. Where Python's own handler is not the one in place (a
    handler of the caller's, such as the command line's) or outside the main thread, which receives no signals,
    nothing changes."""
    noted: list[int] = []

    def note(number: int, _) -> None:
        if noted:
            raise KeyboardInterrupt
        noted.append(number)

    ours = threading.current_thread() is threading.main_thread() and (
        signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    with signals_handled((signal.SIGINT,), note) if ours else contextlib.nullcontext():
        yield noted
