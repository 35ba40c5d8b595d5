"""Cache keys and the index of harness.images: pure functions over a checkout, no build tools needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.images.spec import IMAGES, ImageSpec, SpecError, copy_sources, image_key, project_version
from harness.images.store import BuiltImage, read_index, write_index

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("dockerfile", "sources"),
    [
        ("FROM x\nCOPY a/ /app/a/\n", ["a/"]),
        ("FROM x\nCOPY --chown=1:1 a b /app/\n", ["a", "b"]),
        ("FROM x AS b\nFROM x\nCOPY --from=b /opt/venv /opt/venv\n", []),
        ("FROM x\nADD \\\n   c.tar /\n", ["c.tar"]),
        ("FROM x\nRUN echo COPY a b\n", []),
    ],
)
def test_copy_sources_reads_context_paths_only(dockerfile, sources):
    assert copy_sources(dockerfile) == sources


def _checkout(tmp_path: Path) -> tuple[Path, ImageSpec]:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1.2.3"\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("A = 1\n")
    (tmp_path / "other.py").write_text("B = 1\n")
    (tmp_path / "pkg" / "Dockerfile").write_text("FROM base\nCOPY pkg/ /app/pkg/\n")
    return tmp_path, ImageSpec("pkg", "pkg/Dockerfile", "65534:65534")


def test_key_follows_copied_files_and_dockerfile_but_not_other_files(tmp_path):
    root, spec = _checkout(tmp_path)
    first = image_key(root, spec, base_key="b1")
    (root / "other.py").write_text("B = 2\n")
    (root / "pkg" / "__pycache__").mkdir()
    (root / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    assert image_key(root, spec, base_key="b1") == first
    (root / "pkg" / "mod.py").write_text("A = 2\n")
    second = image_key(root, spec, base_key="b1")
    assert second != first
    assert image_key(root, spec, base_key="b2") != second
    (root / "pkg" / "Dockerfile").write_text("FROM base\nCOPY pkg/ /srv/pkg/\n")
    third = image_key(root, spec, base_key="b1")
    assert third != second
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.ruff]\nline-length = 99\n")  # no image copies it
    assert image_key(root, spec, base_key="b1") == third
    pyproject.write_text(pyproject.read_text().replace('version = "1.2.3"', 'version = "1.2.4"'))  # the tag does
    assert image_key(root, spec, base_key="b1") != third


def test_missing_copy_source_is_a_spec_error(tmp_path):
    root, spec = _checkout(tmp_path)
    (root / "pkg" / "Dockerfile").write_text("FROM base\nCOPY nowhere/ /app/\n")
    with pytest.raises(SpecError, match="nowhere"):
        image_key(root, spec, base_key="b")


def test_version_comes_from_pyproject(tmp_path):
    root, spec = _checkout(tmp_path)
    assert project_version(root) == "1.2.3"
    assert spec.tag("1.2.3") == "localhost/drsched/pkg:1.2.3"


def test_shipped_dockerfiles_copy_what_each_component_imports():
    sources = {spec.name: copy_sources((REPO / spec.dockerfile).read_text()) for spec in IMAGES}
    assert sources["extender"] == ["harness/images/constraints.txt", "policy/", "kube/", "extender/"]
    assert sources["monitor"] == ["harness/images/constraints.txt", "monitor/", "kube/__init__.py", "kube/logs.py",
                                  "kube/asgi.py"]
    assert sources["migration"] == ["harness/images/constraints.txt", "policy/", "kube/", "workloads/", "migration/"]
    assert sources["workloads"] == ["harness/images/constraints.txt", "workloads/", "kube/__init__.py",
                                    "kube/atomic.py", "kube/logs.py"]
    for spec in IMAGES:
        assert len(image_key(REPO, spec, base_key="b")) == 64


def test_index_round_trips_and_ignores_other_schemas(tmp_path):
    image = BuiltImage(name="monitor", tag="localhost/drsched/monitor:0.1.0", archive=tmp_path / "monitor.tar",
                       archive_bytes=10, archive_sha256="sha256:ab", image_id="sha256:cd", user="65534:65534",
                       key="k", built_s=1.0)  # fmt: skip
    write_index(tmp_path / "images.json", {"monitor": image})
    assert read_index(tmp_path / "images.json") == {"monitor": image}
    assert read_index(tmp_path / "images.json")["monitor"].as_reused().reused
    (tmp_path / "images.json").write_text('{"schema": 1, "images": []}')
    assert read_index(tmp_path / "images.json") == {}
    (tmp_path / "images.json").write_text("not json")
    assert read_index(tmp_path / "missing.json") == {} == read_index(tmp_path / "images.json")
