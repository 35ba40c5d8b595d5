"""``pod_requests`` remembers its answer by the bytes of the spec fields it reads: for any spec the remembered
answer is the one computed afresh (or the same ``QuantityError``), read-only, whichever pod asks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kube.errors import QuantityError
from kube.objects import _requests_of_spec, pod_requests

QUANTITIES = st.sampled_from(["100m", "0.5", "1", "2Gi", "128Mi", " 1 ", "1e3", "garbage", "", 1, 0.25, 3,
                              float("nan"), float("inf"), -1, True, None, 2**70, [], {}])
REQUESTS = st.dictionaries(st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), QUANTITIES, max_size=3)
CONTAINER = st.one_of(
    st.fixed_dictionaries({"name": st.just("c"), "resources": st.fixed_dictionaries({"requests": REQUESTS})},
                          optional={"restartPolicy": st.sampled_from(["Always", "Never", None]),
                                    "image": st.just("busybox")}),
    st.sampled_from([None, "not a container", {}, {"resources": None}, {"resources": {"requests": None}}]))
SPEC = st.fixed_dictionaries({}, optional={
    "containers": st.one_of(st.lists(CONTAINER, max_size=3), st.sampled_from([None, "x", {}])),
    "initContainers": st.one_of(st.lists(CONTAINER, max_size=3), st.none()),
    "overhead": st.one_of(REQUESTS, st.none()),
    "resources": st.one_of(st.fixed_dictionaries({"requests": REQUESTS}), st.none(), st.just({})),
    "nodeName": st.sampled_from(["n1", "n2"]),
})


def _answer(fn, arg):
    try:
        return fn(arg).tobytes()
    except QuantityError as exc:
        return str(exc)


@settings(max_examples=400, deadline=None)
@given(spec=SPEC)
def test_the_remembered_answer_is_the_fresh_one(spec):
    fresh = _answer(_requests_of_spec, spec)
    assert _answer(pod_requests, {"spec": spec}) == fresh
    assert _answer(pod_requests, {"metadata": {"name": "other"}, "spec": spec}) == fresh  # remembered now


def test_the_answer_is_read_only_and_shared_by_pods_with_one_template():
    spec = {"containers": [{"name": "main", "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}]}
    a, b = pod_requests({"metadata": {"name": "a"}, "spec": spec}), pod_requests({"metadata": {"name": "b"},
                                                                                  "spec": dict(spec)})
    assert a.tolist() == [0.25, 0.0625] and b.tolist() == a.tolist()
    with pytest.raises(ValueError):
        a += 1


def test_a_changed_spec_is_read_again():
    spec = {"containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}]}
    assert pod_requests({"spec": spec}).tolist() == [1.0, 0.0]
    spec["containers"][0]["resources"]["requests"]["cpu"] = "2"  # the same dict, resized in place
    assert pod_requests({"spec": spec}).tolist() == [2.0, 0.0]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2**70, None])
def test_values_that_would_not_survive_the_json_key_are_computed_every_time(value):
    spec = {"containers": [{"name": "main", "resources": {"requests": {"cpu": value}}}]}
    assert _answer(pod_requests, {"spec": spec}) == _answer(_requests_of_spec, spec)
