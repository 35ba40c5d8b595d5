import pytest

from kube.selectors import matches, parse_pairs, parse_selector


@pytest.mark.parametrize("text, expected", [
    ("", {}),
    ("app=web", {"app": "web"}),
    (" pool = batch , zone=a ,", {"pool": "batch", "zone": "a"}),
    ("app==web", {"app": "web"}),
    ("empty=", {"empty": ""}),
])
def test_parse(text, expected):
    assert parse_selector(text) == expected


@pytest.mark.parametrize("bad", ["app", "app!=x", "=x", "a=1,b"])
def test_selector_is_equality_only(bad):
    with pytest.raises(ValueError, match="is not key=value"):
        parse_selector(bad)


@pytest.mark.parametrize("labels, selector, expected", [
    ({"pool": "batch", "zone": "a"}, {"pool": "batch"}, True),
    ({"pool": "batch"}, {"pool": "batch", "zone": "a"}, False),
    ({"pool": "web"}, {"pool": "batch"}, False),
    (None, {}, True),
    (None, {"pool": "batch"}, False),
])
def test_matches(labels, selector, expected):
    assert matches(labels, selector) is expected


def test_pairs_keep_order_and_repeats_and_name_the_bad_term():
    assert parse_pairs(" b=2 ,a = 1,,b=3") == [("b", "2"), ("a", "1"), ("b", "3")]
    with pytest.raises(ValueError, match=r"^profile entry 'cpu' is not key=value$"):
        parse_pairs("mem=1,cpu", what="profile entry")
    with pytest.raises(ValueError, match=r"^'x' is not key=value$"):
        parse_pairs("x")
