import pytest

from recordkit.merge import deep_merge


def test_unknown_strategy_message():
    with pytest.raises(ValueError, match="unknown list strategy 'prepend'"):
        deep_merge({}, {}, lists="prepend")
