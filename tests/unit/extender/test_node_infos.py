"""The Nodes-mode memo answers exactly what reading the node again would, and never remembers a failure."""

import copy

import orjson
import pytest

from extender.node_infos import NodeInfoMemo
from extender.raw_nodes import NotParsed
from kube.errors import QuantityError
from kube.objects import node_info

OPTIONS = {"net_annotation": "drsched.io/net-mbps", "disk_annotation": "drsched.io/disk-mbps",
           "default_net_mbps": 1250.0, "default_disk_mbps": 500.0}
NODE = {"metadata": {"name": "n1", "annotations": {"drsched.io/net-mbps": "100"}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}]}}


def test_equal_objects_read_the_same_and_changed_ones_are_read_again():
    memo = NodeInfoMemo(**OPTIONS)
    first = memo.read(copy.deepcopy(NODE))
    assert first == node_info(NODE, **OPTIONS)
    assert memo.read(copy.deepcopy(NODE)) is first  # a new dict with the same content: the remembered answer
    changed = copy.deepcopy(NODE)
    changed["status"]["conditions"][0]["status"] = "False"
    assert memo.read(changed) == node_info(changed, **OPTIONS) and not memo.read(changed).ready
    bigger = copy.deepcopy(NODE)
    bigger["status"]["allocatable"]["cpu"] = "16"
    assert memo.read(bigger).capacity[0] == 16.0


def test_a_bad_node_raises_every_time():
    memo = NodeInfoMemo(**OPTIONS)
    bad = {"metadata": {"name": "b"}, "status": {"allocatable": {"cpu": "lots"}}}
    for _ in range(2):
        with pytest.raises(QuantityError):
            memo.read(bad)


def test_the_request_bytes_of_a_node_read_as_its_object():
    memo = NodeInfoMemo(**OPTIONS)
    raw = orjson.dumps(NODE)
    memo.preload([raw])
    assert memo.read_raw(raw) == node_info(NODE, **OPTIONS)
    assert memo.read_raw(raw) is memo.read_raw(bytes(raw))


def test_preload_refuses_what_orjson_refuses_and_leaves_quantity_errors_to_the_read():
    memo = NodeInfoMemo(**OPTIONS)
    with pytest.raises(NotParsed):
        memo.preload([b'{"metadata": {"name": "x"}, "spec": {"big": 1e999}}'])
    bad = orjson.dumps({"metadata": {"name": "b"}, "status": {"allocatable": {"cpu": "lots"}}})
    memo.preload([bad])
    with pytest.raises(QuantityError):
        memo.read_raw(bad)
