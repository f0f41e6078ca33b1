"""td3_steps.stops: Ctrl-C and SIGTERM noted during a step, handlers put back, the main thread only."""

import signal
import threading

import pytest

from td3_steps.stops import interrupts_noted, signals_handled


def test_the_previous_handlers_come_back_even_after_an_error_inside():
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}

    def handler(*_):
        pass

    with signals_handled((signal.SIGINT, signal.SIGTERM), handler):
        assert signal.getsignal(signal.SIGTERM) is handler and signal.getsignal(signal.SIGINT) is handler
    assert {number: signal.getsignal(number) for number in before} == before
    with pytest.raises(RuntimeError, match="inside"), signals_handled((signal.SIGINT, signal.SIGTERM), handler):
        raise RuntimeError("inside")
    assert {number: signal.getsignal(number) for number in before} == before


def test_interrupts_noted_changes_nothing_outside_the_main_thread():
    """signal.signal raises ValueError outside the main thread: learn in a worker thread must still run."""
    outcome = []

    def run():
        try:
            with interrupts_noted() as noted:
                outcome.append(noted)
        except Exception as error:  # noqa: BLE001
            outcome.append(error)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, as in a notebook
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert outcome == [[]]


def test_interrupts_noted_notes_a_first_interrupt_and_raises_at_a_second():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with interrupts_noted() as noted:
            handler = signal.getsignal(signal.SIGINT)
            handler(signal.SIGINT, None)
            assert noted == [signal.SIGINT]
            with pytest.raises(KeyboardInterrupt):
                handler(signal.SIGINT, None)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)
