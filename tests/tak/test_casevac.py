"""The CASEVAC built from the cards: the 9-line lines said and a ZMIST per casualty, nothing doubted, no default."""

from __future__ import annotations

import time

from tcccd.tak.casevac import casevac, request_uid
from tcccd.tak.cot import to_xml
from tcccd.tak.sendable import sendable
from tcccd.wire.card import Card, CardSet
from tcccd.wire.card_events import Review
from tests.tak.conftest import medevac, projector_of

# What ATAK's CASEVAC tool fills by hand and tcccd must never fill by default.
NEVER = {"freq", "security", "hlz_marking", "marked_by", "equipment_none", "equipment_other", "hoist",
         "extraction_equipment", "ventilator", "us_military", "us_civilian", "nonus_military", "nonus_civilian",
         "epw", "child", "terrain_none", "terrain_slope", "terrain_rough", "terrain_loose", "terrain_other",
         "zone_prot_selection", "casevac", "obstacles", "winds_are_from", "friendlies", "enemy", "hlz_remarks"}


def entries(card: Card) -> int:
    found = 0
    for value in card.model_dump(exclude={"casualty", "version", "rejected"}).values():
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict) and "status" in item and "event" in item:
                found += 1
            elif isinstance(item, dict):
                stack += list(item.values())
            elif isinstance(item, list):
                stack += item
    return found


def test_two_casualties_carry_their_precedence_litter_and_zmist_and_nothing_the_medic_did_not_say(tmp_path, point):
    cards = projector_of("blast_two_casualties", tmp_path).cards()
    xml = to_xml(casevac(cards, 1, "tcccd-kit"), point, time.time(), 3600)
    root, node, mists = medevac(xml)
    assert root.get("type") == "b-r-f-h-c" and root.get("how") == "m-g"
    counts = {k: v for k, v in node.attrib.items() if k not in ("title", "medline_remarks")}
    assert counts == {"urgent": "1", "priority": "1", "ambulatory": "1"}  # casualty one's mobility was not said
    assert not NEVER & set(node.attrib)
    assert set(mists) == {"ZMIST1", "ZMIST2"}
    one, two = mists["ZMIST1"], mists["ZMIST2"]
    assert "z" not in one and "z" not in two  # no battle roster number or last four was said
    assert one["m"] == "IED" and two["m"] == "blast"
    assert one["i"].split("\n") == ["right lower leg: amputation", "left lower leg: amputation"]
    assert two["i"].split("\n") == ["right arm: shrapnel wound", "face: shrapnel wound"]
    assert one["s"].split("\n") == ["Pulse 140 (logged 1005)", "BP 90/50 (logged 1005)", "AVPU Pain (logged 1005)"]
    assert "TQ right leg: 0958" in one["t"] and "analgesic: ketamine 50 mg IM logged 1007" in one["t"]
    assert "NPA" in one["t"] and "NPA" not in two["t"]  # "Nasopharyngeal airway placed" followed casualty one
    assert "awaiting" not in node.get("medline_remarks")  # nothing was doubted
    assert root.find("point").attrib == {"lat": "34.0522", "lon": "-118.2437", "hae": "71.0", "ce": "4.5", "le": "7.0"}


def test_unconfirmed_entries_are_withheld_and_counted_negations_never_sent(tmp_path, point):
    projector = projector_of("negations_corrections", tmp_path)
    request = casevac(projector.cards(), 1, "tcccd-kit")
    _, node, mists = medevac(to_xml(request, point, time.time(), 3600))
    z = mists["ZMIST1"]
    assert request.withheld == 2  # the TXA heard uncertainly and the pulse of 700
    assert "2 entries awaiting the medic's check not sent." in node.get("medline_remarks")
    assert "TXA" not in z["t"] and "ketamine 50 mg IM" in z["t"]
    # the latest pulse (700) is doubted: the pulse line is withheld whole, the older 110 never stands in for it
    assert z["s"].split("\n") == ["BP 110/70 (logged 1303)"]
    assert node.get("routine") == "1" and "urgent" not in node.attrib  # "Not urgent, routine."
    everything = " ".join(z.values()).lower()
    assert "tourniquet" not in everything and "pain" not in everything and "nka" not in everything

    txa = next(e for e in projector.cards().cards[0].f_medications.medications if e.event.what.name == "TXA")
    projector.review(Review(event=txa.event.id, action="confirm", ts=time.time(), by="medic"))
    confirmed = casevac(projector.cards(), 1, "tcccd-kit")
    assert confirmed.withheld == 1 and "TXA 1 g IV" in confirmed.zmists[0].t


def test_confirmed_only_sends_reviewed_entries_alone(tmp_path, point):
    projector = projector_of("gsw_limb_tourniquet_txa", tmp_path)
    cards = projector.cards()
    strict = casevac(cards, 1, "tcccd-kit", confirmed_only=True)
    assert strict.counts == {} and all(not z.values() for z in strict.zmists)
    default = sendable(cards.cards[0])
    assert default.withheld == () and strict.withheld == entries(default.card) > 5  # every one waits for a review
    first = cards.cards[0].b_injury.mechanisms[0]
    projector.review(Review(event=first.event.id, action="confirm", ts=time.time(), by="medic"))
    assert casevac(projector.cards(), 1, "tcccd-kit", confirmed_only=True).zmists[0].m == first.event.what.mechanism


def test_what_the_medic_said_is_escaped_never_markup(tmp_path, point):
    cards = projector_of("gsw_limb_tourniquet_txa", tmp_path).cards()
    card = cards.cards[0]
    entry = card.b_injury.injuries[0]
    evil = '"><detail><_medevac_ freq="121.5"/>&amp; <!--'
    what = entry.event.what.model_copy(update={"region": evil})
    hacked = card.model_copy(update={"b_injury": card.b_injury.model_copy(update={"injuries": [
        entry.model_copy(update={"event": entry.event.model_copy(update={"what": what})})]})})
    root, node, mists = medevac(to_xml(casevac(CardSet(cards=[hacked]), 1, "tcccd-kit"), point, time.time(), 60))
    assert mists["ZMIST1"]["i"].startswith(evil + ": ")
    assert "freq" not in node.attrib and len(root.findall(".//_medevac_")) == 1


def test_a_request_keeps_its_uid_so_a_resend_updates_the_marker():
    assert request_uid("kit", 1, None) == request_uid("kit", 1, None)
    assert len({request_uid("kit", 1, None), request_uid("kit", 1, 2), request_uid("kit", 2, None),
                request_uid("other", 1, None)}) == 4
    assert request_uid("kit", 1, None).startswith("kit.casevac.")
