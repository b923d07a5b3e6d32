"""The command-line toolkit (`marl_bgs_eval.console`): one error line, `--version`, tables, the
shared `--mode` option and the `--maps` grammar. No JAX compiles: the apps here are built in
the test."""

from __future__ import annotations

import io
import sys
from typing import Annotated

import pandas as pd
import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from marl_bgs import ConfigError
from marl_bgs_eval import console as ui
from marl_bgs_eval.cli import app as eval_app
from marl_bgs_eval.errors import EvalError

runner = CliRunner()


def _app(*errors: ui.ErrorType, single: bool = False) -> typer.Typer:
    """An app whose `boom` command raises what `--kind` names; `maps` parses `--maps`."""
    app = ui.App("marl-bgs-eval", errors=errors)
    kinds = {"eval": EvalError, "config": ConfigError, "key": KeyError, "runtime": RuntimeError}

    @app.command()
    def boom(
        kind: Annotated[str, typer.Option()] = "eval",
        text: Annotated[str, typer.Option()] = "bad [bold]x[/] value",
    ) -> None:
        raise kinds[kind](text)

    if not single:

        @app.command()
        def maps(
            mode: ui.Mode = "tdm",
            maps: Annotated[str, typer.Option()] = "test",
            files: Annotated[bool, typer.Option()] = False,
        ) -> None:
            print(mode, ui.layouts(maps, mode, files=files))

    return app


@pytest.mark.parametrize("kind", ["eval", "config"])
def test_an_error_is_one_escaped_line_on_stderr_and_exit_code_2(kind: str) -> None:
    result = runner.invoke(_app(), ["boom", "--kind", kind])
    assert result.exit_code == ui.EXIT_ERROR == 2
    assert result.stdout == ""
    assert result.stderr == "error: bad [bold]x[/] value\n"  # the markup shown, not rendered


def test_a_long_message_over_lines_stays_one_line() -> None:
    text = "first line\n  second " + "word " * 60 + "[/]"
    result = runner.invoke(_app(), ["boom", "--text", text])
    assert result.stderr.splitlines() == [f"error: first line second {'word ' * 59}word [/]"]


def test_only_the_named_error_types_are_reported() -> None:
    result = runner.invoke(_app(), ["boom", "--kind", "runtime"])
    assert isinstance(result.exception, RuntimeError)  # a bug keeps its traceback
    keyed = runner.invoke(_app(KeyError), ["boom", "--kind", "key"])
    assert (keyed.exit_code, keyed.stderr) == (2, "error: 'bad [bold]x[/] value'\n")


def test_an_error_named_by_a_module_not_loaded_imports_nothing() -> None:
    assert "marl_bgs_test_absent" not in sys.modules
    assert not ui.is_reported(ValueError("x"), ["marl_bgs_test_absent:Error"])
    assert "marl_bgs_test_absent" not in sys.modules
    assert ui.is_reported(ConfigError("x"), ui.ERRORS)
    assert not ui.is_reported(ValueError("x"), ui.ERRORS)


def test_fail_prints_and_exits_with_the_code_given(capsys) -> None:
    with pytest.raises(typer.Exit) as stop:
        ui.fail("refused [red]", code=1)
    assert stop.value.exit_code == 1
    assert capsys.readouterr().err == "error: refused [red]\n"


@pytest.mark.parametrize("single", [False, True])
def test_version_is_answered_at_the_top_level_only(single: bool) -> None:
    app = _app(single=single)
    shown = runner.invoke(app, ["--version"])
    assert shown.exit_code == 0
    assert shown.stdout == ui.version_text("marl-bgs-eval") + "\n"
    assert shown.stdout.startswith("marl-bgs-eval ")
    assert "(marl-bgs-engine " in shown.stdout
    assert "--version" in runner.invoke(app, ["--help"]).stdout
    if not single:
        assert runner.invoke(app, ["boom", "--version"]).exit_code == 2  # no such option
    assert ui.version_text("marl-bgs-engine").count("marl-bgs-engine") == 1


def test_the_eval_command_line_keeps_the_promises() -> None:
    ui.check_app(eval_app, "marl-bgs-eval", ["systems", "--plugin", ui.MARKUP])


def test_mode_takes_ids_and_aliases_and_lists_them_when_unknown() -> None:
    shown = runner.invoke(_app(), ["maps", "--mode", "two-bridge", "--maps", "V2_Base,V1"])
    assert shown.stdout == "two-bridge-v1 [3, 0, 1, 2]\n"
    assert runner.invoke(_app(), ["maps", "--maps", "47"]).stdout == "tdm-v2 [47]\n"
    bad = runner.invoke(_app(), ["maps", "--mode", "tdmm"])
    assert bad.exit_code == 2
    assert bad.stderr == (
        "error: mode: unknown mode 'tdmm' (did you mean 'tdm'?); allowed ['tdm-v2', "
        "'two-bridge-v1', 'tdm', 'two-bridge']\n"
    )


@pytest.mark.parametrize(
    ("text", "picked"),
    [
        ("47,48", [47, 48]),
        ("0-3,test", [0, 1, 2, 3, 47, 48, 49, 50, 51]),
        ("validation", [42, 43, 44, 45, 46]),
        ("test,48,test", [47, 48, 49, 50, 51]),
        ("Open Arena", [0]),
    ],
)
def test_maps_go_through_the_mode_kits_grammar(text: str, picked: list[int]) -> None:
    assert ui.layouts(text) == picked
    assert len(ui.layouts("all")) == 52


def test_map_files_stay_files_only_when_asked() -> None:
    assert ui.layouts("47,a/b.JSON", files=True) == [47, "a/b.JSON"]
    bad = runner.invoke(_app(), ["maps", "--maps", "47,a.json"])
    assert bad.stderr.startswith("error: --maps: map_id: unknown 'a.json'; allowed ['all', ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--maps", "tset"], "--maps: map_id: unknown 'tset' (did you mean 'test'?); allowed"),
        (["--maps", "50-60"], "--maps: map_id: '50-60' is outside 0-51"),
        (["--maps", "²"], "--maps: map_id: unknown '²'"),
        (["--maps", "0,"], "--maps: map_id: expected e.g. '0,3', '0-9', 'all' or a name, got ''"),
        (["--mode", "two-bridge", "--maps", "V4"], "--maps: variant: unknown 'V4'"),
    ],
)
def test_bad_maps_are_one_error_line_naming_the_option(args: list[str], message: str) -> None:
    bad = runner.invoke(_app(), ["maps", *args])
    assert bad.exit_code == 2
    assert bad.stderr.startswith(f"error: {message}"), bad.stderr


def test_one_layout_is_one() -> None:
    assert ui.layout("Open Arena") == 0
    assert ui.layout("m.json", files=True) == "m.json"
    with pytest.raises(typer.Exit):
        ui.layout("47,48")


def test_a_table_aligns_numbers_and_formats_floats() -> None:
    df = pd.DataFrame({"system": ["a [b]"], "games": [12], "elo": [1234.567]})
    shown = ui.table(df, "[i]title", floats=".2f")
    assert [c.justify for c in shown.columns] == ["left", "right", "right"]
    console = Console(width=60, record=True, file=io.StringIO())
    console.print(shown)
    lines = console.export_text().splitlines()
    assert lines[0].strip() == "[i]title"  # text, not markup
    assert lines[-2].split("│")[1:4] == [" a [b]  ", "    12 ", " 1234.57 "]
