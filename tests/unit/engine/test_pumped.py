"""engine/page_checks.py's Pumped: the suite's events kept while the turn waits for the
runtime check, its error told after them, its work cancelled where it waits when given up."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from zerocode.engine.page_checks import Pumped


def test_items_come_in_order_and_the_sources_error_after_them() -> None:
    async def source() -> AsyncIterator[int]:
        yield 1
        yield 2
        raise ValueError("the store failed")

    async def main() -> list[int]:
        pumped = Pumped(source())
        await asyncio.sleep(0)  # it runs on its own meanwhile
        got = []
        with pytest.raises(ValueError, match="the store failed"):
            async for item in pumped.items():
                got.append(item)
        await pumped.stop()  # after its end: nothing to stop, its error not raised again
        return got

    assert asyncio.run(main()) == [1, 2]


def test_stop_cancels_the_source_where_it_waits_and_waits_for_its_end() -> None:
    ended: list[str] = []

    async def source() -> AsyncIterator[int]:
        try:
            yield 1
            await asyncio.Event().wait()  # a check that never ends
            yield 2
        finally:
            await asyncio.sleep(0)  # its cleanup awaits too, and is waited for
            ended.append("cleaned up")

    async def main() -> None:
        pumped = Pumped(source())
        await asyncio.sleep(0.01)
        await asyncio.wait_for(pumped.stop(), 5)  # cancelled, not waited out
        assert ended == ["cleaned up"]

    asyncio.run(main())
