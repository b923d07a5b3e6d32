"""Mode kits: registration through the entry-point group, the layout grammar, part registries."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

import marl_bgs
from marl_bgs import ConfigError, Layouts, ModeKit, PartRegistry
from marl_bgs.core import kits


def test_the_engine_modes_come_from_the_public_entry_point_group():
    names = {ep.name: ep.value for ep in entry_points(group=kits.GROUP)}
    assert names["tdm"] == "marl_bgs.tdm.kit:KIT"
    assert names["two-bridge"] == "marl_bgs.two_bridge.kit:KIT"
    assert marl_bgs.kit("tdm").id == "tdm-v2"
    assert marl_bgs.kit("two-bridge-v1").alias == "two-bridge"
    assert marl_bgs.MODES["tdm-v2"] is marl_bgs.kit("tdm").build


def test_layout_grammar_picks_indices_splits_ranges_and_names():
    tdm = marl_bgs.kit("tdm").layouts
    assert tdm.select("47,48") == [47, 48]
    assert tdm.select("0-3, test") == [0, 1, 2, 3, 47, 48, 49, 50, 51]
    assert tdm.select("validation") == [42, 43, 44, 45, 46]
    assert tdm.select("all") == list(range(52))
    assert tdm.select(tdm.names[5]) == [5]
    bridge = marl_bgs.kit("two-bridge").layouts
    assert bridge.select("V2_Base,V1") == [3, 0, 1, 2]
    assert bridge.shape_groups(bridge.select("V1_Base,V3_Base,V1_Combat")) == [[0, 1], [6]]
    assert tdm.shape_groups([3, 1]) == [[3, 1]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tset", "map_id: unknown 'tset' (did you mean 'test'?)"),
        ("50-60", "map_id: '50-60' is outside 0-51"),
        ("9-3", "map_id: '9-3' is outside 0-51"),
        ("", "map_id: expected e.g."),
    ],
)
def test_layout_grammar_refuses_what_it_cannot_pick(text, message):
    with pytest.raises(
        ConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")
    ):
        marl_bgs.kit("tdm").layouts.select(text)


def test_a_kit_checks_its_fields_and_ids_are_not_taken_twice():
    build = lambda **settings: None  # noqa: E731
    with pytest.raises(ConfigError, match="results: expected one of"):
        ModeKit(id="odd-v1", build=build, outcomes=("running", "x"), results=("", "maybe"))
    with pytest.raises(ConfigError, match="controlled_teams: expected 1 or 2"):
        ModeKit(id="odd-v1", build=build, controlled_teams=3)
    with pytest.raises(ConfigError, match="mode: 'tdm-v2' is already registered"):
        marl_bgs.register_kit(ModeKit(id="tdm-v2", build=build))
    with pytest.raises(ConfigError, match="alias: 'tdm' already names 'tdm-v2'"):
        marl_bgs.register_kit(ModeKit(id="other-v1", build=build, alias="tdm"))


def test_a_part_registry_resolves_aliases_and_names_the_modes_that_have_a_part():
    parts: PartRegistry[str] = PartRegistry("marl_bgs_test.nothing", "test part")
    parts.register("tdm", "tdm part")
    assert parts.get("tdm-v2") == "tdm part"
    assert parts.modes() == ["tdm-v2"]
    with pytest.raises(
        ConfigError, match=r"'two-bridge-v1' has no test part .*modes with one: \['tdm-v2'\]"
    ):
        parts.get("two-bridge")
    with pytest.raises(ConfigError, match="mode: unknown mode 'chess'"):
        parts.register("chess", "x")
    assert Layouts("variant", lambda: ("a", "b")).select("b,a,b") == [1, 0]
