"""Kubernetes quantity parsing: a table of apimachinery forms."""

import pytest

from kube.errors import QuantityError
from kube.quantity import cpu_cores, mem_gib, parse_quantity, rate_mbps


@pytest.mark.parametrize("text, expected", [
    ("500m", 0.5), ("2", 2.0), ("0.1", 0.1), (".5", 0.5), ("1.", 1.0), ("+3", 3.0),
    ("1Ki", 1024.0), ("1Mi", 2**20), ("1Gi", 2**30), ("1.5Gi", 1.5 * 2**30), ("2Ti", 2 * 2**40),
    ("1Pi", 2**50), ("1Ei", 2**60), ("128974848", 128974848.0), ("129e6", 129e6), ("129M", 129e6),
    ("1e3", 1000.0), ("1E3", 1000.0), ("1e-3", 0.001), ("1e+2", 100.0), ("100n", 1e-7), ("5u", 5e-6),
    ("1k", 1000.0), ("1G", 1e9), ("1T", 1e12), ("1P", 1e15), ("1E", 1e18), (" 2 ", 2.0), ("0", 0.0),
    (2, 2.0), (0.25, 0.25),
])
def test_parse(text, expected):
    assert parse_quantity(text) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("text", ["", "abc", "1Gb", "1 Gi", "1ki", "--1", "-1", "1.2.3", "Gi", "1e", "1e3Gi",
                                  "1.5.Gi", "0x10", True, None, [], "1e999", float("nan"), -1, float("inf")])
def test_refused(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_error_names_value():
    with pytest.raises(QuantityError, match="'3GB'"):
        parse_quantity("3GB")


@pytest.mark.parametrize("fn, text, expected", [
    (cpu_cores, "250m", 0.25), (mem_gib, "512Mi", 0.5), (mem_gib, "1073741824", 1.0),
    (rate_mbps, "60M", 60.0), (rate_mbps, "1Gi", 1073.741824),
])
def test_units(fn, text, expected):
    assert fn(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["500m", " 2 ", "1.5Gi", "1e3", "3GB", "-1", ""])
def test_a_remembered_string_parses_as_it_did_the_first_time(text):
    """Strings are parsed once and remembered (``_parse_text``); a refused one raises every time."""
    from kube.quantity import _parse_text

    def fresh():
        try:
            return _parse_text.__wrapped__(text)
        except QuantityError as exc:
            return str(exc)

    def served():
        try:
            return parse_quantity(text)
        except QuantityError as exc:
            return str(exc)

    assert served() == served() == fresh()
