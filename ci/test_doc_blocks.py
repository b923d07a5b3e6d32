"""Every code block of README.md, docs/*.md and packages/*/README.md is claimed exactly once, and
what the docs' setup commands name exists (`nox -s ci-checks`; no JAX: the engine's page reader
is loaded from its file). See docs/testing.md, "Code blocks in the docs"."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_SPEC = importlib.util.spec_from_file_location(
    "doc_blocks", ROOT / "packages" / "marl-bgs-engine" / "src" / "marl_bgs" / "doc_blocks.py"
)
assert _SPEC is not None
assert _SPEC.loader is not None
db = importlib.util.module_from_spec(_SPEC)
sys.modules["doc_blocks"] = db
_SPEC.loader.exec_module(db)

PYPROJECTS = {
    tomllib.loads(p.read_text())["project"]["name"]: tomllib.loads(p.read_text())
    for p in sorted(ROOT.glob("packages/*/pyproject.toml"))
}
PACKAGES = sorted(PYPROJECTS)
SCRIPTS = {s: name for name, t in PYPROJECTS.items() for s in t["project"].get("scripts", {})}


def _nox_sessions() -> set[str]:
    """The session names noxfile.py defines (`@nox.session`, its `name=` if given)."""
    names = set()
    for node in ast.parse((ROOT / "noxfile.py").read_text()).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            call = deco if isinstance(deco, ast.Call) else None
            target = call.func if call else deco
            if ast.unparse(target) == "nox.session":
                named = [k.value for k in (call.keywords if call else []) if k.arg == "name"]
                names.add(ast.literal_eval(named[0]) if named else node.name)
    return names


def _workspace_needs(package: str) -> set[str]:
    """The workspace packages `package` depends on, directly or not."""
    needs, todo = set(), [package]
    while todo:
        for dep in PYPROJECTS[todo.pop()]["project"].get("dependencies", []):
            name = re.match(r"[\w.-]+", dep)[0]  # type: ignore[index]
            if name in PYPROJECTS and name not in needs:
                needs.add(name)
                todo.append(name)
    return needs


def _bash_commands() -> list[tuple[object, object]]:
    return [(block, command) for block in db.all_blocks(ROOT) if block.lang == "bash"
            for command in db.commands(block.text)]  # fmt: skip


# --- the project's own pages ----------------------------------------------------------------------


def test_every_block_is_claimed_exactly_once() -> None:
    found = db.problems(ROOT, PACKAGES)
    assert not found, "docs code blocks (see docs/testing.md):\n" + "\n".join(found)


def test_every_package_has_the_test_module_that_runs_its_blocks() -> None:
    claimed = {c.package for b in db.all_blocks(ROOT) for c in b.claims if c.kind == "runs-in"}
    for package in PACKAGES:
        module = ROOT / "packages" / package / "tests" / "test_doc_blocks.py"
        assert module.is_file() or package not in claimed, f"{package} claims blocks: {module}"


def test_nox_sessions_the_docs_name_exist() -> None:
    sessions = _nox_sessions()
    assert {"demo", "tests", "ci-checks", "bench-train"} <= sessions  # the reader reads them
    named = 0
    for block, command in _bash_commands():
        if command.program != "nox":
            continue
        args = list(command.argv[1:])
        for i, arg in enumerate(args):
            if arg in ("-s", "--session", "--sessions"):
                for name in args[i + 1 :]:
                    if name.startswith("-"):
                        break
                    named += 1
                    assert name.split("(")[0] in sessions, f"{block.where}: no nox session {name}"
    assert named >= 5


def test_pip_installs_name_real_folders_with_what_they_need() -> None:
    """Nothing is on PyPI yet: every `pip install ./packages/X` also installs X's siblings."""
    checked = 0
    for block, command in _bash_commands():
        if not db.is_setup(command) or "venv" in command.argv:
            continue
        by_name = [a for a in command.argv[2:] if re.match(r"[\w.-]+", a)
                   and re.match(r"[\w.-]+", a)[0] in PYPROJECTS]  # fmt: skip
        assert not by_name or "--find-links" in command.argv, (
            f"{block.where}: `pip install {' '.join(by_name)}` looks on PyPI, where the packages "
            "are not: install ./packages/NAME folders (or use --find-links)"
        )
        local = [a for a in command.argv if a.startswith(("./packages/", "packages/"))]
        folders = {}
        for arg in local:
            folder, extras = re.fullmatch(
                r"(?:\./)?packages/([\w.-]+)(?:\[([\w,-]+)\])?", arg
            ).groups()  # type: ignore[union-attr]
            assert folder in PYPROJECTS, f"{block.where}: no package folder {arg}"
            offered = PYPROJECTS[folder]["project"].get("optional-dependencies", {})
            for extra in (extras or "").split(","):
                assert not extra or extra in offered, f"{block.where}: {folder} has no [{extra}]"
            folders[folder] = True
        for folder in folders:
            missing = _workspace_needs(folder) - set(folders)
            assert not missing, f"{block.where}: installs {folder} without {sorted(missing)}"
        checked += bool(local)
    assert checked >= 5


def test_programs_and_modules_the_docs_run_exist() -> None:
    sources = [ROOT / "packages" / p / "src" for p in PACKAGES]
    for block, command in _bash_commands():
        argv = command.argv
        if command.program.startswith("marl-bgs"):
            assert command.program in SCRIPTS, f"{block.where}: no console script {argv[0]}"
        if command.program.startswith("python") and argv[1:2] == ("-m",):
            parts = argv[2].split(".")
            if parts[0].startswith("marl_bgs"):
                homes = [s.joinpath(*parts) for s in sources]
                assert any(h.with_suffix(".py").is_file() or (h / "__main__.py").is_file()
                           for h in homes), f"{block.where}: no module {argv[2]}"  # fmt: skip
        elif command.program.startswith("python") and argv[1:2] and argv[1].endswith(".py"):
            assert (ROOT / argv[1]).is_file(), f"{block.where}: no file {argv[1]}"


def test_run_blocks_hold_only_commands_the_tests_can_run() -> None:
    """A run bash block holds the packages' console scripts (run in the test's process) and
    install steps (skipped there)."""
    for block in db.all_blocks(ROOT):
        if block.lang != "bash" or not any(c.kind == "runs-in" for c in block.claims):
            continue
        for command in db.commands(block.text):
            runnable = command.program in SCRIPTS or db.is_setup(command)
            assert runnable, f"{block.where}: the tests cannot run {command.argv[0]}"


# --- the reader itself, on pages written here -----------------------------------------------------

PAGE = """# A page

<!-- runs-in: pkg-a -->
```python
x = make(num_envs=1024, games_per_map = 8)
```

<!-- illustrative: needs a server -->
~~~bash
server --port 8000
~~~

1. A list item:

   <!-- runs-in: pkg-b, saved as my_map.json -->
   ```json
   {"id": 0}
   ```

```text
no marker
```

<!-- runs-in: pkg-a -->
<!-- illustrative: twice -->
```python
pass
```

<!-- illustrative: -->
```bash
empty reason
```

<!-- runs-in: nowhere -->
```python
pass
```

<!-- runs-in: pkg-a -->
```text
a picture
```

<!-- illustrative: left behind -->

Some prose.

<!-- illustrative: the marker syntax -->
```text
<!-- illustrative: a marker shown inside a block is text -->
and so is this line
```
"""


@pytest.fixture
def page(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(PAGE)
    return tmp_path


def test_blocks_and_their_claims_are_read(page: Path) -> None:
    blocks = db.read_blocks(page, Path("docs/page.md"))
    assert [(b.line, b.lang) for b in blocks] == [
        (4, "python"), (9, "bash"), (16, "json"), (20, "text"), (26, "python"), (31, "bash"),
        (36, "python"), (41, "text"), (50, "text"),
    ]  # fmt: skip
    assert blocks[0].claims == (db.Claim("runs-in", "pkg-a"),)
    assert blocks[0].text == "x = make(num_envs=1024, games_per_map = 8)\n"
    assert blocks[1].claims == (db.Claim("illustrative", reason="needs a server"),)
    assert blocks[2].claims == (db.Claim("runs-in", "pkg-b", "my_map.json"),)
    assert blocks[2].text == '{"id": 0}\n'  # the list item's indent is not part of the file
    assert len(blocks[4].claims) == 2
    assert blocks[5].bad_markers == ("<!-- illustrative: -->",)
    assert list(db.claimed_by(page, "pkg-a")) == ["docs/page.md"]
    assert [b.line for b in db.claimed_by(page, "pkg-a")["docs/page.md"]] == [4, 26, 41]


def test_every_fault_of_a_page_is_reported(page: Path) -> None:
    found = db.problems(page, ["pkg-a", "pkg-b"])
    assert found == [
        "docs/page.md:45: a marker with no code block right below it",
        "docs/page.md:20: no marker: add <!-- runs-in: PACKAGE --> or <!-- illustrative: "
        "REASON --> on the line above the fence",
        "docs/page.md:26: claimed 2 times; keep one marker",
        "docs/page.md:31: marker does not parse: <!-- illustrative: -->",
        "docs/page.md:36: runs-in 'nowhere' is not a package; one of pkg-a, pkg-b",
        "docs/page.md:41: a text block cannot run; use ```python or ```bash, 'saved as FILE', "
        "or illustrative",
    ]


def test_a_well_marked_page_has_no_problems(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("<!-- runs-in: pkg-a -->\n```bash\nmarl-bgs-x run\n```\n")
    assert db.problems(tmp_path, ["pkg-a"]) == []
    assert db.problems(tmp_path, ["pkg-b"]) != []


def test_tiny_sizes_replace_python_keywords_and_options() -> None:
    assert (
        db.tiny("make(num_envs=1024, games_per_map = 8)") == "make(num_envs=4, games_per_map = 2)"
    )
    assert db.tiny("calibrate --tournaments 500 --bootstrap=1000 --games-per-map 2.5e3") == (
        "calibrate --tournaments 2 --bootstrap=20 --games-per-map 2"
    )
    assert db.tiny("scan(f, c, length=128); max_length=9; n == 3") == (
        "scan(f, c, length=3); max_length=9; n == 3"
    )
    assert db.tiny("steps = jax.random.split(key, n)") == "steps = jax.random.split(key, n)"


def test_commands_are_split_like_a_shell_would() -> None:
    text = (
        "python3 -m venv .t && .t/bin/pip install -q uv  # set up\n"
        'MARL_X=0 .t/bin/nox -s "tests(a)" -- -x; marl-bgs-eval play \\\n'
        '    "llm:m@http://h:1/v1?slots=16" b --out r.parquet\n'
    )
    got = db.commands(text)
    assert [c.argv for c in got] == [
        ("python3", "-m", "venv", ".t"),
        (".t/bin/pip", "install", "-q", "uv"),
        (".t/bin/nox", "-s", "tests(a)", "--", "-x"),
        ("marl-bgs-eval", "play", "llm:m@http://h:1/v1?slots=16", "b", "--out", "r.parquet"),
    ]
    assert got[2].env == (("MARL_X", "0"),)
    assert got[2].program == "nox"
    assert [db.is_setup(c) for c in got] == [True, True, False, False]
    with pytest.raises(ValueError, match="shell syntax '\\|'"):
        db.commands("marl-bgs-eval systems | head\n")
