"""The watch's DictWatch gives the client's event shape (type, object, raw_object) from one decode, and tracks the
resourceVersion to resume from exactly where the client's own Watch does."""

import json

from kubernetes import watch

from extender.kube import dict_watch_class

DictWatch = dict_watch_class()

POD = {"metadata": {"name": "p", "namespace": "ns", "resourceVersion": "42"}, "spec": {"nodeName": "n1"},
       "status": {"phase": "Running"}}


def test_an_event_is_a_dict_with_the_clients_shape_and_moves_the_resource_version():
    w = DictWatch()
    line = json.dumps({"type": "MODIFIED", "object": POD})
    event = w.unmarshal_event(line, None)
    reference = watch.Watch(return_type="object").unmarshal_event(line, "object")
    assert event == reference and event["raw_object"] == POD and w.resource_version == "42"


def test_bookmarks_move_the_resource_version_and_errors_do_not():
    w = DictWatch()
    w.unmarshal_event(json.dumps({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "77"}}}), None)
    assert w.resource_version == "77"
    error = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old resource version"}}
    event = w.unmarshal_event(json.dumps(error), None)
    assert event["raw_object"]["code"] == 410 and w.resource_version == "77"


def test_blank_and_garbage_lines_are_skipped():
    w = DictWatch()
    assert w.unmarshal_event("", None) is None
    assert w.unmarshal_event("  \n", None) is None
    assert w.unmarshal_event("{not json", None) is None
