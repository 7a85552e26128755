"""How a child program reports to its test: ``result(**kw)`` prints the ``RESULT:`` line that
conftest.child_result reads; ``result_of_error(call)`` reports the message of the RuntimeError a
call raises (the preludes of tests/children re-export both)."""

from __future__ import annotations

import json
from typing import Any, Callable


def result(**kw: Any) -> None:
    print("RESULT:" + json.dumps(kw))


def result_of_error(call: Callable[[], Any], key: str = "msg") -> None:
    """Run ``call()`` and report its RuntimeError's message under ``key`` (None if it raised none)."""
    try:
        call()
    except RuntimeError as err:
        result(**{key: str(err)})
        return
    result(**{key: None})
