"""The assertion rules are data: the shipped file loads, a unit's own copy is used when named, and a bad file stops
the card stage with the file and the fault named (never a stage that runs on half its rules)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tcccd.kit.plugin import PluginError
from tcccd.kit.testing import PluginHarness
from tcccd.plugins.card.context_rules import ContextRules, ContextRulesError
from tests.support.card_said import Medic
from tests.support.card_scenarios import CARD_PLUGIN

SHIPPED = Path(__file__).resolve().parents[3] / "profiles" / "card" / "context.yaml"


def test_the_shipped_rules_load_with_every_category_ranked_and_each_note_status_defined() -> None:
    rules = ContextRules.load()
    assert set(rules.priority) >= {"absent", "question", "plan", "request", "conditional", "failed", "removed",
                                   "withheld", "scheduled", "allergy", "someone_else", "hypothetical", "history"}
    assert rules.notes == {"retracted", "absent", "failed", "removed", "withheld"} and rules.marks == {"?": "question"}
    assert rules.shouted == {"!": "request"}


def test_a_unit_s_own_copy_extends_the_rules(tmp_path: Path) -> None:
    raw = yaml.safe_load(SHIPPED.read_text())
    raw["categories"]["plan"].append({"words": ["queue up"], "direction": "forward"})
    own = tmp_path / "context.yaml"
    own.write_text(yaml.safe_dump(raw))
    with PluginHarness(CARD_PLUGIN, {}, tmp_path / "shipped") as shipped:
        assert Medic(shipped).says("Queue up TXA one gram IV.").events != []
    with PluginHarness(CARD_PLUGIN, {"context_rules": str(own)}, tmp_path / "own") as extended:
        assert Medic(extended).says("Queue up TXA one gram IV.").events == []


@pytest.mark.parametrize("change, fault", [
    (lambda r: r["categories"].pop("plan"), "`priority` and `categories` must name the same categories"),
    (lambda r: r["categories"]["absent"].append({"pattern": "(unclosed"}), "pattern is not a regular expression"),
    (lambda r: r["categories"]["absent"].append({"words": ["x"], "direction": "sideways"}), "direction"),
    (lambda r: r.update(notes=["absent", "ignored"]), "not defined: ['ignored']"),
    (lambda r: r.update(shouted={"!": "yelled"}), "not defined: ['yelled']")])
def test_a_bad_rules_file_is_refused_with_the_file_and_the_fault(tmp_path: Path, change, fault: str) -> None:
    raw = yaml.safe_load(SHIPPED.read_text())
    change(raw)
    bad = tmp_path / "context.yaml"
    bad.write_text(yaml.safe_dump(raw))
    with pytest.raises(ContextRulesError) as refused:
        ContextRules.load(bad)
    assert str(bad) in str(refused.value) and fault in str(refused.value)
    with pytest.raises(PluginError, match=fault.replace("[", r"\[").replace("`", ".")), \
            PluginHarness(CARD_PLUGIN, {"context_rules": str(bad)}, tmp_path / "stage"):
        pass


def test_a_key_said_twice_in_the_rules_file_is_refused_not_silently_dropped(tmp_path: Path) -> None:
    text = SHIPPED.read_text().replace("  removed:\n", "  removed:\n    - words: [yanked]\n      direction: forward\n"
                                       "      direction: backward\n", 1)
    bad = tmp_path / "context.yaml"
    bad.write_text(text)
    with pytest.raises(ContextRulesError, match="key 'direction' given twice"):
        ContextRules.load(bad)
