"""Scripts are command-line glue over the packages: none imports another, and no code loads one by its path.

Why: ``from readme_tables import ...`` inside ``scripts/`` works only because a script's own folder is
``sys.path[0]`` when it runs, and ``importlib.util.spec_from_file_location`` on a script hides a dependency
from every tool that reads imports. Shared logic lives in a package module (``policy.comparison`` for the
result tables) that scripts, ``results/`` reports and tests import by name.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))
REPORTS = sorted((ROOT / "results").rglob("*.py"))


def _imported(path: Path) -> set[str]:
    """The top-level names of every module ``path`` imports, anywhere in its body."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_script_or_report_imports_a_script():
    scripts = {p.stem for p in SCRIPTS}
    assert {"readme_tables", "calibrated_world", "size_table"} <= scripts
    for path in [*SCRIPTS, *REPORTS]:
        assert not _imported(path) & scripts, f"{path.relative_to(ROOT)} imports {_imported(path) & scripts}"


def test_no_code_loads_a_script_or_report_by_its_path():
    for path in [*SCRIPTS, *REPORTS, *sorted((ROOT / "policy").rglob("*.py")),
                 *sorted((ROOT / "tests" / "unit").glob("test_*.py")),
                 *sorted((ROOT / "tests" / "unit" / "policy").rglob("test_*.py"))]:
        if path != Path(__file__).resolve():
            assert "spec_from_file_location" not in path.read_text(), f"{path.relative_to(ROOT)} loads a file by path"


def test_the_import_reader_sees_imports():
    assert {"policy", "argparse"} <= _imported(ROOT / "scripts" / "readme_tables.py")
