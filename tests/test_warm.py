"""``python -m engine.warm`` (run by ``make install``) calls every numba kernel a page calls."""

from __future__ import annotations

from engine.warm import main, warm


def test_warm_calls_each_kernel_a_page_uses(capsys):
    done = warm()
    assert [what for what, _ in done] == ["Man-Kzin Wars advisor and running odds (fast and paired rollouts)",
                                          "Man-Kzin Wars expert advisor", "Man-Kzin Wars expert games"]
    assert all(seconds >= 0 for _, seconds in done)
    assert main() == 0 and capsys.readouterr().out.count("compiled (or loaded from the cache)") == 3
