"""A settled process (`heap.settle_once`): the young generation is collected less often, and a
cycle dropped afterwards is still freed without an explicit `gc.collect`. Run in a child process,
so this test process's collector is left as it is."""

from __future__ import annotations

import subprocess
import sys
import textwrap

_CHILD = textwrap.dedent(
    """
    import gc, weakref
    from wheretorun import heap

    class Node:
        pass

    def young_collections(allocations):
        seen = []
        def count(phase, info):
            if phase == "start" and info["generation"] == 0:
                seen.append(1)
        gc.callbacks.append(count)
        kept = [[] for _ in range(allocations)]  # tracked containers, alive throughout
        gc.callbacks.remove(count)
        del kept
        return len(seen)

    def dropped_cycle_is_freed():
        node = Node()
        node.itself = node
        freed = []
        watch = weakref.ref(node, lambda _: freed.append(1))
        del node
        kept = []  # the count a collection waits for is of tracked objects alive, not made
        while not freed and len(kept) < 4 * heap.YOUNG_COLLECTION_THRESHOLD:
            kept.append([])
        return bool(freed) and watch() is None

    before = young_collections(100_000)
    heap.settle_once("test")
    after = young_collections(100_000)
    print(before, after, dropped_cycle_is_freed())
    """
)


def test_a_settled_process_collects_the_young_generation_less_often_and_still_frees_cycles() -> None:
    result = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True)
    before, after, freed = result.stdout.split()
    # the default collects every 700 tracked allocations: ~140 times over 100,000
    assert int(before) >= 100
    assert 0 < int(after) <= 100_000 // 10_000 + 1
    assert freed == "True"
