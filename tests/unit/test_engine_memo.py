"""The memo that remembers results by identity of large inputs, and the book merge that replays
a remembered step's rejections."""

from __future__ import annotations

import threading

from hypothesis import given
from hypothesis import strategies as st

from wheretorun.engine.memo import ClearedWhenFull, RecentResults
from wheretorun.engine.planning.rejections import RejectionBook
from wheretorun.engine.recommendation import RejectReason


def test_a_remembered_result_is_found_by_identity_and_equal_values() -> None:
    memo: RecentResults[str] = RecentResults(kept=2)
    catalog = (1, 2, 3)
    calls: list[str] = []

    def compute(tag: str) -> str:
        calls.append(tag)
        return tag

    assert memo.get((catalog,), "a", lambda: compute("first")) == "first"
    assert memo.get((catalog,), "a", lambda: compute("again")) == "first"
    equal_copy = tuple(range(1, 4))  # equal to the catalog, another object
    assert equal_copy == catalog
    assert memo.get((equal_copy,), "a", lambda: compute("equal copy")) == "equal copy"
    assert memo.get((catalog,), "b", lambda: compute("other values")) == "other values"
    assert calls == ["first", "equal copy", "other values"]


def test_the_least_recently_used_result_is_forgotten() -> None:
    memo: RecentResults[int] = RecentResults(kept=2)
    a, b, c = object(), object(), object()
    memo.get((a,), None, lambda: 1)
    memo.get((b,), None, lambda: 2)
    memo.get((a,), None, lambda: -1)  # a is used again: b is now the oldest
    memo.get((c,), None, lambda: 3)
    assert memo.get((a,), None, lambda: -1) == 1
    assert memo.get((b,), None, lambda: 22) == 22
    memo.clear()
    assert memo.get((a,), None, lambda: 11) == 11


def test_objects_match_only_all_of_them_in_their_order() -> None:
    memo: RecentResults[str] = RecentResults(kept=8)
    a, b = object(), object()
    assert memo.get((a, b), None, lambda: "a b") == "a b"
    assert memo.get((a,), None, lambda: "a") == "a"  # a prefix is another key
    assert memo.get((b, a), None, lambda: "b a") == "b a"  # so is another order
    assert memo.get((a, b, a), None, lambda: "a b a") == "a b a"
    assert memo.get((), None, lambda: "none") == "none"
    assert [memo.get(key, None, lambda: "new") for key in ((a, b), (a,), (b, a), (a, b, a), ())] == [
        "a b",
        "a",
        "b a",
        "a b a",
        "none",
    ]


_REJECTION = st.tuples(
    st.sampled_from(list(RejectReason)[:4]), st.text(min_size=1, max_size=5), st.integers(1, 9)
)


def _recorded(book: RejectionBook, rejections: list[tuple[RejectReason, str, int]]) -> None:
    for reason, example, count in rejections:
        book.reject(reason, example, count)


@given(st.lists(_REJECTION, max_size=12), st.lists(_REJECTION, min_size=1, max_size=12))
def test_merging_a_book_equals_recording_its_rejections_in_order(
    before: list[tuple[RejectReason, str, int]], step: list[tuple[RejectReason, str, int]]
) -> None:
    direct, merged, remembered = RejectionBook(), RejectionBook(), RejectionBook()
    _recorded(direct, before)
    _recorded(direct, step)
    _recorded(merged, before)
    _recorded(remembered, step)
    merged.merge(remembered)
    assert merged.groups() == direct.groups()
    assert merged.total == direct.total == sum(count for _, _, count in before + step)


def test_threads_sharing_a_memo_each_get_their_own_keys_result() -> None:
    """The API serves requests from a thread pool: with constant eviction (4 kept, 24 keys), every
    result must still be the one computed for its own key, and nothing may raise."""
    memo: RecentResults[tuple[int, str]] = RecentResults(kept=4)
    keys = [object() for _ in range(24)]
    wrong: list[tuple[int, object]] = []

    def work(seed: int) -> None:
        for step in range(3_000):
            index = (seed * 7 + step * 13) % len(keys)
            value = "even" if step % 2 == 0 else "odd"
            result = memo.get((keys[index],), value, lambda i=index, v=value: (i, v))
            if result != (index, value):
                wrong.append((index, result))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_a_memo_cleared_when_full_finds_by_key_and_starts_afresh_when_full() -> None:
    memo: ClearedWhenFull[int, str] = ClearedWhenFull(kept=2)
    held = [object(), object(), object()]
    assert memo.found(id(held[0])) is None
    assert memo.kept(id(held[0]), held[0], "result 0") == "result 0"
    assert memo.found(id(held[0])) == "result 0"
    memo.kept(id(held[1]), held[1], "result 1")
    assert memo.found(id(held[1])) == "result 1"
    memo.kept(id(held[2]), held[2], "result 2")  # full: all forgotten, then this one kept
    assert len(memo) == 1
    assert memo.found(id(held[0])) is None
    assert memo.found(id(held[2])) == "result 2"
    memo.clear()
    assert memo.found(id(held[2])) is None
