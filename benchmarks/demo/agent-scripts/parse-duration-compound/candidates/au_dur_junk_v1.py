import pytest

from recordkit.durations import parse_duration


@pytest.mark.parametrize("text", ["1h, 30m", "about 1h", " 1h ", "1h30m!"])
def test_text_that_is_not_components_is_rejected(text):
    with pytest.raises(ValueError):
        parse_duration(text)
