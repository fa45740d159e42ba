import pytest

from recordkit.durations import parse_duration


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_empty_or_blank_is_rejected(text):
    with pytest.raises(ValueError):
        parse_duration(text)
