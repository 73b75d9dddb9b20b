"""Property: no card field is ever filled from words that are not in the event's own span of the transcript.

Hypothesis builds utterances from clinical phrases, near-misses ("our priority is the airway", "responds to
pain", "casualty collection point") and filler, joined in any order; Whisper's real writing steps make the
text; the card stage extracts events. Every value of every event must be backed by the words of its span: a
lexicon form that means it, or the number itself. And filler alone gives no event at all.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tcccd.plugins.card import lexicon as lx
from tcccd.plugins.card.context_rules import ContextRules
from tcccd.plugins.card.extract import CardReader
from tcccd.plugins.card.sentences import numbers_in
from tcccd.wire.card_events import Event
from tcccd.wire.card_stage import CardExtract
from tests.support.card_scenarios import scenarios, segment

CLINICAL = sorted({sentence.strip() for s in scenarios() for u in s.utterances
                   for sentence in re.split(r"(?<=[.!?])\s+", u.heard) if sentence.strip()})
NEAR_MISSES = ["Our priority is the airway.", "He responds to pain.", "Oxygen saturation ninety percent.",
               "Moving him to the casualty collection point.", "The BP dropped.", "Pulse ox is on his finger.",
               "Last four 1234.", "The IV bag is in the truck.", "No bleeding.", "Routine check of the kit.",
               "Put pressure on it.", "He is in pain.", "Alert the team.", "The blanket is wet."]
FILLER = ["Okay.", "Roger that.", "Stay with me.", "We are moving to the vehicle.", "Hold still, buddy.",
          "Two minutes out.", "Get me the bag.", "Copy, over.", "Keep talking to me.", "Almost there."]
SIDE_FORMS = {v: [k for k, w in lx.SIDES.items() if w == v] for v in set(lx.SIDES.values())}
READER = CardReader(ContextRules.load())


def _forms(table: dict[str, Any], value: Any, pick: Any = lambda v: v) -> list[str]:
    return [form for form, canonical in table.items() if pick(canonical) == value]


def _said(text: str, forms: list[str]) -> bool:
    return any(re.search(r"(?<![\w-])" + re.escape(f).replace(r"\ ", r"\s+") + r"(?![\w-])", text) for f in forms)


def _number_said(text: str, value: float) -> bool:
    return any(n.value == value for n in numbers_in(text, 0, len(text)))


def _digits_said(text: str, digits: str) -> bool:
    """The digits written, or said one by one ('five five six seven'), inside one run of digits."""
    runs, run = [], ""
    for word in re.findall(r"[\w']+", text):
        digit = lx.DIGIT_WORDS.get(word, word if word.isdigit() else None)
        if digit is None:
            runs.append(run)
            run = ""
        else:
            run += digit
    return any(digits in r for r in [*runs, run])


def _region_said(text: str, region: str) -> bool:
    *side, part = region.split(" ", 1) if region.split(" ", 1)[0] in ("left", "right") else ["", region]
    sides = SIDE_FORMS[side[0]] + SIDE_FORMS["both"] if side and side[0] else [""]
    parts = _forms(lx.BODY_PARTS, part)
    return any(_said(text, [f"{s} {p}".strip() for p in parts]) or (s and _said(text, [s]) and _said(text, parts))
               for s in sides)


def _limb_said(text: str, limb: str) -> bool:
    side, limb_name = limb.split(" ")
    parts = [p for p, canonical in lx.BODY_PARTS.items() if lx.LIMB_OF_PART.get(canonical) == limb_name]
    return _said(text, SIDE_FORMS[side] + SIDE_FORMS["both"]) and _said(text, parts)


CHECKS = {
    ("evacuation", "category"): lambda t, v: _said(t, _forms(lx.EVAC_CATEGORIES, v)),
    ("mobility", "mobility"): lambda t, v: _said(t, _forms(lx.MOBILITY, v)),
    ("mechanism", "mechanism"): lambda t, v: _said(t, _forms(lx.MECHANISMS, v)),
    ("injury", "injury"): lambda t, v: _said(t, _forms(lx.INJURIES, v.removeprefix("suspected "))) and (
        not v.startswith("suspected ") or _said(t, list(lx.HEDGES))),
    ("injury", "region"): _region_said, ("splint", "site"): _region_said, ("dressing", "site"): _region_said,
    ("access", "site"): lambda t, v: _said(t, _forms(lx.ACCESS_SITES, v)) or _region_said(t, v),
    ("tourniquet", "limb"): _limb_said,
    ("tourniquet", "category"): lambda t, v: v == "extremity" or _said(t, _forms(lx.TOURNIQUET_CATEGORIES, v)),
    ("tourniquet", "device"): lambda t, v: _said(t, _forms(lx.TOURNIQUET_DEVICES, v)),
    ("dressing", "dressing"): lambda t, v: _said(t, list(lx.HEMOSTATIC if v == "hemostatic" else lx.PRESSURE)),
    ("dressing", "product"): lambda t, v: _said(t, _forms(lx.HEMOSTATIC, v) + _forms(lx.PRESSURE, v)),
    ("airway", "airway"): lambda t, v: _said(t, _forms(lx.AIRWAY, v)),
    ("breathing", "breathing"): lambda t, v: _said(t, _forms(lx.BREATHING, v)),
    ("access", "access"): lambda t, v: _said(t, _forms(lx.ACCESS, v)),
    ("fluid", "product"): lambda t, v: _said(t, _forms(lx.FLUIDS, v, lambda c: c[0])),
    ("medication", "name"): lambda t, v: _said(t, _forms(lx.MEDICATIONS, v, lambda c: c[0])),
    ("pulse", "location"): lambda t, v: _said(t, [v]),
    ("avpu", "level"): lambda t, v: _said(t, _forms(lx.AVPU, v)),
    ("hypothermia", "method"): lambda t, v: _said(t, _forms(lx.HYPOTHERMIA, v)),
    ("allergies", "allergies"): lambda t, v: _said(t, ["no known allergies", "no known drug allergies", "nka",
                                                       "nkda"]) if v == "NKA" else v.lower() in t,
    ("note", "text"): lambda t, v: v.lower() in t,
    ("last_four", "digits"): lambda t, v: _digits_said(t, v),
    ("responder", "last_four"): lambda t, v: _digits_said(t, v),
}
DERIVED = {("fluid", "blood"), ("medication", "drug_class")}  # follow from the product or drug named


def unsupported(event: Event) -> list[str]:
    """The fields of an event that the words of its span do not say."""
    text, problems = event.words.text.lower(), []
    for name, value in event.what.model_dump().items():
        if name == "kind" or value is None or (event.kind, name) in DERIVED:
            continue
        check = CHECKS.get((event.kind, name))
        if check is not None:
            ok = check(text, value)
        elif isinstance(value, float):
            ok = _number_said(text, value)
        elif name in ("route",):
            ok = _said(text, _forms(lx.ROUTES, value))
        elif name == "side":
            ok = _said(text, SIDE_FORMS[value]) or (value == "both" and "both" in text)
        elif name == "unit":
            ok = True  # read with its number, checked there
        elif event.kind == "casualty":
            ok = _number_said(text, value) or "next" in text
        else:
            ok = str(value).lower() in text
        if not ok:
            problems.append(f"{event.kind}.{name}={value!r} from {event.words.text!r}")
    return problems


def run(utterance: str) -> tuple[str, list[Event]]:
    """The record's text for an utterance, and the events the card stage finds in it."""
    seg = segment(utterance, [])
    return seg["text"], READER.extract(CardExtract(text=seg["text"], segments=[seg], journal_seq=1, request_id="p",
                                                   source="mic", utterance_ts=1795511820.0, utc_offset_min=0,
                                                   casualty=1)).events


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CLINICAL + NEAR_MISSES + FILLER), min_size=1, max_size=5),
       st.sampled_from([" ", ", "]))
def test_no_field_is_filled_from_words_outside_its_span(fragments: list[str], joiner: str) -> None:
    utterance = joiner.join(f.rstrip(".") if joiner == ", " else f for f in fragments)
    text, events = run(utterance)
    for event in events:
        assert text[event.words.start_char:event.words.end_char] == event.words.text
        if event.rule != "correction.restated":  # a restated slot keeps the rest of the entry it corrects
            assert unsupported(event) == [], utterance


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(FILLER), min_size=1, max_size=6))
def test_filler_alone_gives_no_event(fragments: list[str]) -> None:
    assert run(" ".join(fragments))[1] == []


def test_the_checker_catches_a_field_its_words_do_not_say() -> None:
    [event] = run("Tourniquet left leg at zero nine twelve.")[1]
    wrong = event.model_copy(update={"what": event.what.model_copy(update={"limb": "right arm"})})
    assert unsupported(event) == [] and unsupported(wrong) == ["tourniquet.limb='right arm' from "
                                                               "'Tourniquet left leg at 0912'"]
