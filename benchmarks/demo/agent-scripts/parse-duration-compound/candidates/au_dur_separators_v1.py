import pytest

from recordkit.durations import parse_duration


@pytest.mark.parametrize("text", ["1h, 30m", "1h+30m", "1h and 30m", "1h;30m"])
def test_only_whitespace_separates_components(text):
    with pytest.raises(ValueError):
        parse_duration(text)
