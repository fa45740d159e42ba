from recordkit.cache import memoize


def test_cache_info_reports_configured_maxsize():
    @memoize(maxsize=3)
    def f(x):
        return x

    for x in range(5):
        f(x)
    info = f.cache_info()
    assert info.maxsize == 3
    assert info.currsize == 3
    assert info.misses == 5
