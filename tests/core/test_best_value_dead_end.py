"""``best_value`` on a decision with no legal action: a clear error, not a ``None`` value.

Found by mypy: the maximum over no actions was left ``None``, memoised and returned as the state's value.
"""

from __future__ import annotations

import pytest
from toy import DuelGame

from engine.core import best_value


def test_best_value_refuses_a_decision_with_no_legal_action() -> None:
    state = DuelGame(bonuses=()).new_initial_state()
    assert state.current_player() == 0 and state.legal_actions() == []
    with pytest.raises(ValueError, match="not terminal has no legal action"):
        best_value(state)
