import pytest

from recordkit.durations import parse_duration


def test_unknown_unit_message():
    with pytest.raises(ValueError, match=r"invalid duration: '5x'"):
        parse_duration("5x")
