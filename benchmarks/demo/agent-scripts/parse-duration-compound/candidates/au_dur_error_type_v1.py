import pytest

from recordkit.durations import parse_duration


@pytest.mark.parametrize("text", ["", "5x", "10"])
def test_raises_plain_value_error(text):
    with pytest.raises(ValueError) as info:
        parse_duration(text)
    assert type(info.value) is ValueError
