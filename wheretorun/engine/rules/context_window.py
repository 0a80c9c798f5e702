"""A request longer than the model takes (`exceeds_context_window`): input plus output tokens
beyond a hosted API's published window, or beyond the open model's maximum context.

It applies before sizing: no hardware makes a model read past its window.
"""

from __future__ import annotations

from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["hosted_window", "model_context"]


def hosted_window(context_tokens: int, window_tokens: int | None) -> Rejection | None:
    """A hosted API's published window (an unpublished one passes, with a risk)."""
    if window_tokens is not None and window_tokens < context_tokens:
        return Rejection(
            RejectReason.EXCEEDS_CONTEXT_WINDOW,
            f"{context_tokens} tokens exceed its {window_tokens}-token window",
        )
    return None


def model_context(context_tokens: int, max_context: int) -> Rejection | None:
    """An open model's maximum context."""
    if context_tokens > max_context:
        return Rejection(
            RejectReason.EXCEEDS_CONTEXT_WINDOW,
            f"{context_tokens} tokens exceed its {max_context}-token context",
        )
    return None
