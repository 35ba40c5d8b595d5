"""Wire types: any key casing in, exact PascalCase out; hypothesis round trips."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from extender.wire import (
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    HostPriorities,
    HostPriority,
)
from kube.cache import ClusterCache
from kube.objects import node_info

NODE_KW = {"net_annotation": "n", "disk_annotation": "d", "default_net_mbps": 1.0, "default_disk_mbps": 1.0}


def _cache(*names: str) -> ClusterCache:
    cache = ClusterCache()
    for name in names:
        cache.upsert_node(node_info({"metadata": {"name": name}, "status": {"allocatable": {"cpu": "1"}}},
                                    **NODE_KW))
    return cache


@pytest.mark.parametrize("key", ["NodeNames", "nodenames", "nodeNames", "NODENAMES"])
def test_any_casing(key):
    args = ExtenderArgs.model_validate({"pod": {"metadata": {"name": "p"}}, "NODES": None, key: ["a"]})
    assert args.NodeNames == ["a"] and args.Pod == {"metadata": {"name": "p"}} and args.Nodes is None


def test_exact_case_wins_over_other_casing():
    args = ExtenderArgs.model_validate({"nodenames": ["x"], "NodeNames": ["a"]})
    assert args.NodeNames == ["a"]
    args = ExtenderArgs.model_validate({"NodeNames": ["a"], "nodenames": ["x"]})
    assert args.NodeNames == ["a"]


def test_nested_casing_and_unknown_keys():
    args = ExtenderPreemptionArgs.model_validate(
        {"nodenametometavictims": {"n": {"pods": [{"uid": "u1"}], "numpdbviolations": 2}}, "Extra": 1})
    assert args.NodeNameToMetaVictims["n"].Pods[0].UID == "u1"
    assert args.NodeNameToMetaVictims["n"].NumPDBViolations == 2


def test_full_nodes_mode():
    args = ExtenderArgs.model_validate({"Pod": {}, "Nodes": {"metadata": {}, "items": [{"metadata": {"name": "n"}}]},
                                        "NodeNames": None})
    assert args.Nodes.items[0]["metadata"]["name"] == "n" and args.NodeNames is None


def test_filter_result_keys_exact():
    out = ExtenderFilterResult(NodeNames=["a"], FailedNodes={"b": "why"}).model_dump()
    assert list(out) == ["Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"]
    assert json.loads(json.dumps(out))["Nodes"] is None


@pytest.mark.parametrize("bad", [{"Host": "a", "Score": 11}, {"Host": "a", "Score": -1}, {"Score": 1}])
def test_host_priority_bounds(bad):
    with pytest.raises(ValidationError):
        HostPriority.model_validate(bad)


def test_binding_args_require_fields():
    with pytest.raises(ValidationError):
        ExtenderBindingArgs.model_validate({"PodName": "p"})
    b = ExtenderBindingArgs.model_validate({"podname": "p", "podnamespace": "ns", "poduid": "u", "node": "n"})
    assert (b.PodName, b.PodNamespace, b.PodUID, b.Node) == ("p", "ns", "u", "n")


def _recase(key: str, flips: list[bool]) -> str:
    return "".join(ch.swapcase() if f else ch for ch, f in zip(key, flips + [False] * len(key), strict=False))


names = st.lists(st.text(min_size=1, max_size=20), max_size=20)


@given(names=names, flips=st.lists(st.booleans(), max_size=12), flips2=st.lists(st.booleans(), max_size=12))
def test_property_casing_never_changes_meaning(names, flips, flips2):
    body = {_recase("NodeNames", flips): names, _recase("Pod", flips2): {"metadata": {"name": "x"}}}
    args = ExtenderArgs.model_validate(body)
    assert args.NodeNames == names and args.Pod == {"metadata": {"name": "x"}}


@given(st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.integers(), st.text(max_size=5),
                                                      st.lists(st.integers(), max_size=3)), max_size=6))
def test_property_arbitrary_objects_validate_or_raise_cleanly(body):
    try:
        args = ExtenderArgs.model_validate(body)
    except ValidationError:
        return
    assert args.NodeNames is None or all(isinstance(n, str) for n in args.NodeNames)


@given(st.lists(st.tuples(st.text(min_size=1, max_size=10), st.integers(0, 10)), max_size=30))
def test_property_host_priority_round_trip(pairs):
    out = [HostPriority(Host=h, Score=s).model_dump() for h, s in pairs]
    back = [HostPriority.model_validate(json.loads(json.dumps(o))) for o in out]
    assert [(b.Host, b.Score) for b in back] == pairs
    assert all(list(o) == ["Host", "Score"] and isinstance(o["Score"], int) for o in out)


def test_prioritize_reply_is_the_host_priorities_kube_scheduler_reads():
    cache, replies = _cache("b", 'c"q', "é"), HostPriorities()
    names = ["b", "zz", 'c"q', "é"]  # "zz": not in the cache, still answered
    raw = replies.reply(cache.view(), names, [3, 0, 10, 7])
    got = json.loads(raw)
    assert got == [{"Host": "b", "Score": 3}, {"Host": "zz", "Score": 0}, {"Host": 'c"q', "Score": 10},
                   {"Host": "é", "Score": 7}]
    assert [HostPriority.model_validate(h).Host for h in got] == names


@given(st.lists(st.tuples(st.sampled_from(["a", "b", 'c"q', "é", "zz", "n\\1"]), st.integers(0, 10)), max_size=12))
def test_property_the_reply_is_each_host_priority_joined_with_commas(pairs):
    """The reply is written in one join (prefix, score + "}," alternating); it is byte for byte the host
    priorities as JSON joined with commas, names escaped, for any list, the empty one included."""
    cache, replies = _cache("a", 'c"q', "é"), HostPriorities()
    names, scores = [n for n, _ in pairs], [s for _, s in pairs]
    want = "[" + ",".join(f'{{"Host":{json.dumps(n)},"Score":{s}}}' for n, s in pairs) + "]"
    assert bytes(replies.reply(cache.view(), names, scores)) == want.encode()
    assert bytes(replies.reply(cache.view(), names, scores)) == want.encode()  # the prefixes kept: the same


def test_prefixes_are_kept_while_the_list_and_node_set_stay():
    cache, replies = _cache("a", "b"), HostPriorities()
    first = replies.prefixes(cache.view(), ["a", "b", "junk"])
    cache.upsert_node(node_info({"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "2"}}}, **NODE_KW))
    assert replies.prefixes(cache.view(), ["a", "b", "junk"]) is first, "a new view of the same nodes: kept"
    assert replies.prefixes(cache.view(), ["b"]) == ['{"Host":"b","Score":']
    assert "junk" not in replies._known[1], "only the cache's nodes are remembered"
    cache.delete_node("b")
    again = replies.prefixes(cache.view(), ["a", "b", "junk"])
    assert again is not first and again == first and set(replies._known[1]) == {"a"}
