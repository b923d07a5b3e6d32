"""The command-line toolkit every MARL-BattleGrounds command line is built with.

- `App`: a typer app whose commands turn the packages' input errors into one `error:` line on
  stderr (rich markup escaped) and exit code `EXIT_ERROR`, and whose top level answers
  `--version` (the package's and the engine's).
- `fail(err)`: that one error line and exit, for what a command refuses itself.
- `out` and `table(df)`: results on stdout; a DataFrame as a rich table.
- `Mode` and `layouts(text, mode)`: the shared `--mode` option and the `--maps` grammar of the
  mode's kit (`47,48`, `0-39`, `train`, `validation`, `test`, `all`, layout names).
- Progress of long work is `marl_bgs_eval.progress` (one owner).

Only typer, click and rich are imported here; JAX, pandas and the engine load when a command
needs them, so `--help` stays instant.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.metadata import version
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, NoReturn, cast

import typer
import typer.main
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    import pandas as pd

EXIT_ERROR = 2  # bad input, as click's own usage errors
ENGINE = "marl-bgs-engine"
# The input errors every command line reports (module:class, looked up only once that module is
# loaded, so naming the engine's error imports no JAX).
ERRORS = ("marl_bgs_eval.errors:EvalError", "marl_bgs.core.errors:ConfigError")

out = Console(width=None if sys.stdout.isatty() else 120)  # results; a pipe or a log: 120 wide
_err = Console(stderr=True, highlight=False)


def fail(error: str | BaseException, code: int = EXIT_ERROR) -> NoReturn:
    """End the command: `error: <message>` on stderr in one line (markup escaped), exit `code`."""
    message = " ".join(str(error).split())
    _err.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(code)


ErrorType = str | type[BaseException]


def is_reported(err: BaseException, errors: Sequence[ErrorType]) -> bool:
    """Whether `err` is one of `errors` (classes, or "module:Class" names of loaded modules)."""
    for kind in errors:
        if isinstance(kind, str):
            module, _, name = kind.partition(":")
            loaded = sys.modules.get(module)
            if loaded is None:
                continue  # not imported: nothing raised can be an instance of it
            kind = getattr(loaded, name)
        if isinstance(err, kind):
            return True
    return False


def version_text(package: str) -> str:
    """`<package> <version>`, with the engine's version beside it."""
    text = f"{package} {version(package)}"
    return text if package == ENGINE else f"{text} ({ENGINE} {version(ENGINE)})"


def _show_version(ctx: typer.Context, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        typer.echo(version_text(getattr(ctx.command, "package", ENGINE)))
        raise typer.Exit()


def _version_option() -> Any:
    """A fresh `--version` option (eager: it answers before anything else is parsed)."""
    probe = typer.Typer(add_completion=False)

    @probe.command()
    def _(
        version: Annotated[
            bool, typer.Option("--version", is_eager=True, callback=_show_version,
                               help="Show the version and exit.")
        ] = False,
    ) -> None: ...  # fmt: skip

    [option] = typer.main.get_command(probe).params
    option.expose_value = False  # the commands never see it
    return option


class _Reporting:
    """Shared by the command and group classes of an `App`: reports `errors` in the one style;
    at the top level, adds `--version`."""

    package: ClassVar[str] = ENGINE
    errors: ClassVar[tuple[ErrorType, ...]] = ERRORS
    params: list[Any]

    def make_context(
        self, info_name: str | None, args: list[str], parent: typer.Context | None = None,
        **extra: Any,
    ) -> typer.Context:  # fmt: skip
        if parent is None and not any(p.name == "version" for p in self.params):
            self.params.append(_version_option())
        try:
            return cast(Any, super()).make_context(info_name, args, parent, **extra)
        except Exception as err:
            if is_reported(err, self.errors):
                fail(err)
            raise

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return cast(Any, super()).invoke(ctx)
        except Exception as err:
            if is_reported(err, self.errors):
                fail(err)
            raise


class App(typer.Typer):
    """A typer app of `package` (its distribution name, for `--version`) whose commands report
    `ERRORS` and `errors` (classes or "module:Class" names) in the one style."""

    def __init__(self, package: str, *, errors: Sequence[ErrorType] = (), **settings: Any) -> None:
        fields = {"package": package, "errors": (*ERRORS, *errors)}
        self._command_cls = type("Command", (_Reporting, TyperCommand), fields)
        group = type("Group", (_Reporting, TyperGroup), fields)
        super().__init__(cls=group, **settings)

    def command(self, name: str | None = None, *, cls: Any = None, **settings: Any) -> Any:
        """`typer.Typer.command`, with this app's error reporting (and `--version` when it is
        the app's only command)."""
        return super().command(name, cls=cls or self._command_cls, **settings)


def table(df: pd.DataFrame | Any, title: str | None = None, floats: str = ".1f") -> Table:
    """A DataFrame as a rich table: numbers right-aligned, floats formatted with `floats`, every
    text shown as it is (no markup: a System name may hold brackets)."""
    shown = Table(title=None if title is None else Text(title))
    for col in df.columns:
        justify = "right" if df[col].dtype.kind in "iuf" else "left"
        shown.add_column(Text(str(col)), justify=justify)
    for row in df.itertuples(index=False):
        shown.add_row(*(Text(format(v, floats) if isinstance(v, float) else str(v)) for v in row))
    return shown


def _mode(value: str) -> str:
    """`--mode`: the versioned id of a mode id or alias (ConfigError listing them otherwise)."""
    from marl_bgs.core.kits import resolve

    return resolve(value)


Mode = Annotated[
    str,
    typer.Option(
        "--mode", callback=_mode, help="Game mode: a mode id or alias (tdm, two-bridge, ...)"
    ),
]


def layouts(text: str, mode: str = "tdm", field: str = "--maps", files: bool = False) -> list[Any]:
    """The layout indices (maps, variants) `text` picks in `mode`, through the mode kit's
    grammar: comma-separated indices, ranges (`0-39`), split names, `all`, layout names.
    With `files`, items ending in `.json` stay as they are (map files). Bad text ends the
    command with the one error line, naming `field`."""
    from marl_bgs import ConfigError
    from marl_bgs.core.kits import kit

    picked: list[Any] = []
    try:
        grammar = kit(mode).layouts
        if grammar is None:
            raise ConfigError(f"mode: {mode!r} has no layouts to choose")
        for item in text.split(","):  # one at a time: an empty item is named as such
            if files and item.strip().lower().endswith(".json"):
                picked.append(item.strip())
            else:
                picked += grammar.select(item)
    except ConfigError as err:
        fail(f"{field}: {err}")
    return list(dict.fromkeys(picked))


def layout(text: str, mode: str = "tdm", field: str = "--map", files: bool = False) -> Any:
    """The one layout `text` names (`layouts`' grammar), else the one error line."""
    picked = layouts(text, mode, field, files)
    if len(picked) != 1:
        fail(f"{field}: expected one layout, got {len(picked)} from {text!r}")
    return picked[0]


MARKUP = "[bold]x[/]"  # rich markup a user may type; an error line must show it as it is


def check_app(app: typer.Typer, package: str, bad_args: Sequence[str]) -> None:
    """What every command line promises, for its tests: `--version` prints `version_text`;
    `bad_args` (holding `MARKUP`) end with exactly one `error:` line on stderr that shows the
    markup unrendered, nothing on stdout, and exit code `EXIT_ERROR`."""
    from typer.testing import CliRunner

    runner = CliRunner()
    shown = runner.invoke(app, ["--version"])
    assert (shown.exit_code, shown.stdout) == (0, version_text(package) + "\n"), shown.output
    assert any(MARKUP in a for a in bad_args), bad_args
    bad = runner.invoke(app, list(bad_args))
    assert bad.exit_code == EXIT_ERROR, (bad.output, bad.exception)
    assert bad.stdout == "", bad.stdout
    [line] = bad.stderr.splitlines()
    assert line.startswith("error: "), line
    assert MARKUP in line, line
