"""Node watch events: the decoded node reads as the whole one, and a heartbeat is skipped only when skipping it is
exact (every reader would have held what it held before); anything the cache or the pod index reads is applied."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extender.kube import dict_watch_class
from extender.kube_index import IndexingWatcher
from extender.node_events import NodeDigests, decode_node_event, digest
from extender.pod_index import PodIndex
from extender.settings import build_settings
from extender.telemetry import Telemetry
from kube.cache import ClusterCache
from kube.errors import QuantityError
from kube.selectors import parse_selector

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from bench_watch import kwok_node  # noqa: E402  -- the KWOK node as the watch sends it, managedFields and all

SETTINGS = build_settings(None, log_level="WARNING")
NODE = kwok_node("bench-0001", 0)


def leaves(obj, path=()):
    """Every path into ``obj``, containers included (shared with the pod-event tests)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from leaves(v, (*path, i))
    yield path  # containers too: replacing or removing a whole member is a mutation


LEAVES = [p for p in leaves(NODE) if p and p != ("metadata", "name") and p[:3] != ("metadata", "managedFields", 1)]
"""Every member but the name; of managedFields the whole and the first entry (the rest is more of the same)."""
VALUE_LIST = (["0", "1", "2Gi", "True", "False", "Ready", "", "unknown", 7, 2.5, None, True, [], {},
                          {"type": "Ready"}, [{"type": "Ready", "status": "False"}], "NoSchedule",
                          [{"key": "k", "value": "v", "effect": "NoSchedule"}]])
VALUES = st.sampled_from(VALUE_LIST)


def with_value(obj: dict, path: tuple, value, *, delete: bool) -> dict:
    """A deep copy of ``obj`` with the member at ``path`` removed (``delete``) or set to a copy of ``value``
    (shared with the pod-event tests)."""
    out = copy.deepcopy(obj)
    parent = out
    for k in path[:-1]:
        parent = parent[k]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(value)
    return out


def _read(node: dict):
    """Everything the extender keeps of a node: its NodeInfo (or the error) and the pod index's maps."""
    from extender.kube import _node_info

    try:
        info = _node_info(node, SETTINGS)
    except QuantityError as exc:
        info = str(exc)
    index = PodIndex(selector={}, port=1)
    try:
        index.apply_node("MODIFIED", node)
    except (TypeError, AttributeError) as exc:  # a shape the apiserver never sends (addresses: 7): fails alike
        return info, repr(exc)
    return info, index.addresses(), index.not_ready()


MUTATION = st.tuples(st.sampled_from(LEAVES), VALUES, st.booleans())
START_LIST = [NODE, with_value(NODE, ("status", "conditions", 0, "status"), "False", delete=False),
              with_value(NODE, ("spec", "unschedulable"), True, delete=False)]
STARTS = st.sampled_from(START_LIST)
"""A ready node, a not-ready one (the pod index then reads its Ready condition's reason and times), a cordoned one."""


def mutated(obj: dict, mutations) -> dict:
    """``obj`` with each (path, value, delete) of ``mutations`` applied in turn by ``with_value``, skipping one whose
    path an earlier mutation removed or replaced (shared with the pod-event tests)."""
    for path, value, delete in mutations:
        try:
            obj = with_value(obj, path, value, delete=delete)
        except (KeyError, IndexError, TypeError):
            continue
    return obj


@settings(max_examples=500, deadline=None)
@given(start=STARTS, first=st.lists(MUTATION, max_size=2), then=st.lists(MUTATION, min_size=1, max_size=2))
def test_a_node_digest_changes_whenever_what_the_extender_reads_changes(start, first, then):
    before = mutated(start, first)  # a node as last applied (perhaps not ready, cordoned, odd)
    _check(before, mutated(before, then))  # and the next event of it


def _check(before: dict, node: dict) -> None:
    decoded = decode_node_event(orjson.dumps({"type": "MODIFIED", "object": node}))["object"]
    assert _read(decoded) == _read(node)  # the pruned node reads as the whole one
    assert digest(decoded) == digest(node)  # and a re-list's whole objects compare alike with events
    if digest(node) is not None and digest(node) == digest(before):
        assert _read(node) == _read(before)  # skipping it keeps what applying it would give


@pytest.mark.parametrize("start", range(len(START_LIST)))
def test_every_single_change_of_every_member_is_seen_or_changes_nothing_read(start):
    before = START_LIST[start]
    for path in LEAVES:
        _check(before, with_value(before, path, None, delete=True))
        for value in VALUE_LIST:
            _check(before, with_value(before, path, value, delete=False))


def _watcher():
    cache = ClusterCache()
    index = PodIndex(selector=parse_selector(SETTINGS.monitor_selector), port=SETTINGS.monitor_port)
    watcher = IndexingWatcher(None, cache, SETTINGS, store=None, telemetry=Telemetry(), index=index)
    for i in range(3):
        watcher._apply("nodes", "ADDED", kwok_node(f"bench-{i:04d}", 0))
    return watcher


def _event(node: dict) -> dict:
    return decode_node_event(orjson.dumps({"type": "MODIFIED", "object": node}))["object"]


def test_a_heartbeat_keeps_the_view_its_memos_and_the_index():
    watcher = _watcher()
    cache = watcher.cache
    view = cache.view()
    view.lookup(["bench-0000", "bench-0002"])
    memo, labels, pools = view.names_memo, view.labels, view.pools
    before, index_before = cache.last_change, watcher.index._addresses["bench-0001"]
    for beat in (1, 2, 3):
        watcher._apply("nodes", "MODIFIED", _event(kwok_node("bench-0001", beat)))
    after = cache.view()
    assert after is view and after.names_memo is memo and after.labels is labels and after.pools is pools
    assert watcher.index._addresses["bench-0001"] is index_before  # not even rebuilt
    assert cache.last_change >= before


CHANGES = {
    "allocatable": lambda n: n["status"]["allocatable"].update(cpu="3"),
    "taint": lambda n: n["spec"]["taints"].append({"key": "k", "value": "v", "effect": "NoExecute"}),
    "unschedulable": lambda n: n["spec"].update(unschedulable=True),
    "label": lambda n: n["metadata"]["labels"].update(zone="b"),
    "not ready": lambda n: n["status"]["conditions"][0].update(status="False", reason="KubeletNotReady"),
    "address": lambda n: n["status"]["addresses"][0].update(address="10.9.9.9"),
    "net annotation": lambda n: n["metadata"]["annotations"].update({SETTINGS.net_annotation: "100"}),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_in_a_heartbeat_s_shape_is_applied(change):
    watcher = _watcher()
    node = kwok_node("bench-0001", 1)
    CHANGES[change](node)
    watcher._apply("nodes", "MODIFIED", _event(node))
    fresh = _watcher()
    fresh._apply("nodes", "ADDED", node)  # the same node applied whole, on a fresh cache
    got, want = watcher.cache.view(), fresh.cache.view()
    i, j = got.index["bench-0001"], want.index["bench-0001"]
    assert (got.capacity[i] == want.capacity[j]).all() and got.ready[i] == want.ready[j]
    assert got.taints.get("bench-0001") == want.taints.get("bench-0001")
    assert got.labels.get("bench-0001") == want.labels.get("bench-0001")
    assert watcher.index.addresses() == fresh.index.addresses() and watcher.index.not_ready() == fresh.index.not_ready()
    assert _read(node) != _read(kwok_node("bench-0001", 1))  # the change is one a reader sees


def test_digests_follow_relists_deletes_and_additions():
    digests = NodeDigests()
    beat = kwok_node("bench-0001", 1)
    digests.replace([kwok_node("bench-0001", 0)])
    assert not digests.changes("MODIFIED", beat)
    assert digests.changes("ADDED", beat)  # an ADDED event is always applied
    assert digests.changes("DELETED", beat)
    assert digests.changes("MODIFIED", beat)  # a node the watch deleted comes back whole
    assert digests.changes("BOOKMARK", {"metadata": {"resourceVersion": "9"}})
    digests.replace([])
    assert digests.changes("MODIFIED", beat)


def test_the_node_watch_decodes_what_is_read_and_keeps_errors_and_odd_shapes_whole():
    w = dict_watch_class("nodes")()
    event = w.unmarshal_event(orjson.dumps({"type": "MODIFIED", "object": NODE}).decode(), None)
    assert "managedFields" not in event["object"]["metadata"] and event["raw_object"] is event["object"]
    assert "lastHeartbeatTime" not in event["object"]["status"]["conditions"][0]
    assert w.resource_version == NODE["metadata"]["resourceVersion"]
    error = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old resource version"}}
    assert w.unmarshal_event(orjson.dumps(error).decode(), None)["raw_object"] == error["object"]
    odd = with_value(NODE, ("status", "conditions", 0), "not an object", delete=False)
    assert w.unmarshal_event(orjson.dumps({"type": "MODIFIED", "object": odd}), None)["object"] == odd
    assert w.unmarshal_event("{not json", None) is None
