"""docs/scenarios.md is what the scenario files generate (marl-bgs-clients tests the pictures);
the page writer is the docs tool `ci/docs_pages/scenarios_page.py`, outside the wheel."""

from __future__ import annotations

from pathlib import Path

import pytest

import marl_bgs
from marl_bgs.tdm.scenarios import shipped

DOC = Path(__file__).parents[3] / "docs" / "scenarios.md"


@pytest.fixture
def report(docs_pages):
    return docs_pages("scenarios_page")


@pytest.mark.skipif(not DOC.exists(), reason="docs/ is not beside this checkout")
def test_page_matches_the_scenario_files(report) -> None:
    """Replays every line and variant once (one compiled program per controller)."""
    text = report.markdown(shipped().values(), "scenarios")
    assert text == DOC.read_text(encoding="utf-8"), (
        "docs/scenarios.md is out of date: run python ci/docs_pages/scenarios_page.py "
        "--doc docs/scenarios.md"
    )


def test_check_reports_a_stale_page(
    report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "markdown", lambda *args, **kwargs: "# page\n")
    page = tmp_path / "scenarios.md"
    assert report.main(["--check", str(page)]) == 1  # missing
    page.write_text("# old page\n", encoding="utf-8")
    assert report.main(["--check", str(page)]) == 1
    page.write_text("# page\n", encoding="utf-8")
    assert report.main(["--check", str(page)]) == 0


def test_doc_writes_the_page_alone(report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report, "markdown", lambda _, image_dir, __: f"# page {image_dir}\n")
    page = tmp_path / "docs" / "scenarios.md"
    assert report.main(["--doc", str(page), "--images", str(tmp_path / "docs" / "pics")]) == 0
    assert page.read_text(encoding="utf-8") == "# page pics\n"  # links relative to the page
    assert [p.name for p in page.parent.iterdir()] == ["scenarios.md"]  # no pictures drawn


def test_the_page_writers_are_not_in_the_wheel() -> None:
    # The engine ships no documentation-page code: the writers live in ci/docs_pages/.
    root = Path(marl_bgs.__file__).parent
    assert not (root / "tdm" / "scenarios" / "report.py").exists()
    assert not (root / "tdm" / "maps" / "report.py").exists()
    from marl_bgs.tdm.scenarios import search

    assert not hasattr(search, "search_page")
    with pytest.raises(SystemExit):
        search.main(["--doc", "docs/scenarios/search.md"])  # names the docs tool instead
