import pytest

from recordkit.durations import parse_duration


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_empty_or_blank_is_rejected(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_bare_zero_means_zero():
    assert parse_duration("0") == 0.0
