from recordkit.cache import memoize


def test_small_cache_statistics():
    @memoize(maxsize=1)
    def f(x):
        return x * 2

    f(1)
    f(2)
    f(2)
    assert f.cache_info() == (1, 2, 1, 1)
