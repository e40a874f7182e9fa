"""The virtual-time loop: timers fire in order at their virtual times, at once in real time;
a thread still wakes it."""

import asyncio
import contextlib
import threading
import time

from tests import virtual_time


def test_timers_fire_in_order_at_their_virtual_times_without_waiting():
    fired = []

    async def main():
        loop = asyncio.get_running_loop()

        async def after(seconds, name):
            await asyncio.sleep(seconds)
            fired.append((name, loop.time()))

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.Event().wait(), 7200)
        fired.append(("deadline", loop.time()))
        await asyncio.gather(after(3600, "hour"), after(0.5, "half"), after(60, "minute"))
        return loop.time()

    began = time.monotonic()
    end = virtual_time.run(main())
    assert fired == [("deadline", 7200), ("half", 7200.5), ("minute", 7260), ("hour", 10800)]
    assert end == 10800
    assert time.monotonic() - began < 60  # 3 virtual hours; a test deadline, not a window


def test_a_thread_wakes_the_loop_while_no_timer_is_due():
    async def main():
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        threading.Timer(0.05, loop.call_soon_threadsafe, (done.set_result, "woken")).start()
        return await done, loop.time()

    assert virtual_time.run(main()) == ("woken", 0.0)
