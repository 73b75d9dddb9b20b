"""What one sentence leaves for the next, as medics talk: a question and its answer, a list that goes on, a device
done again after it failed or came off.

- A question about one reading, the allergies or the last four ("What's his pulse?", "Any allergies?", "Doc's
  asking for a pressure") is answered by a sentence that holds only the value ("One twenty-eight, radial.",
  "Ninety-six over sixty.", "Penicillin.", "Five five zero seven, Doc."): the answer is that reading, observed.
  A question about a treatment is never answered into the card ("Did he get TXA?" "Yes." is no dose, route or
  time), but one asking when it was done is, by a sentence that holds only a clock time ("What time did his TQ go
  on?" "Nine forty one, Doc."): the treatment at that time, the entry it is where the card holds it already.
- A sentence that only continues the one before ("Somebody bring me the HPMK." "And a SAM splint.") is said as that
  one was: a request, a plan or a question goes on being one.
- A clause that names nothing but says the thing done again ("NPA wouldn't pass on the right, got it in on the
  left", "IV blew." "Second one's in, right hand") is the device that failed or came off, done, with the slots of
  that clause.

The card stage keeps no state: what is pending between transcripts travels in the request's `carry`.
"""

from __future__ import annotations

import re

from tcccd.plugins.card import lexicon as lx
from tcccd.plugins.card.context import Said, valid_hhmm
from tcccd.plugins.card.finding import Finding
from tcccd.plugins.card.rules_header import allergens, digits_at
from tcccd.plugins.card.sentences import Sentence, first_number
from tcccd.wire.card_events import (
    VITAL_KINDS,
    Allergies,
    BloodPressure,
    LastFour,
    Pain,
    Pulse,
    RespiratoryRate,
    SpO2,
)
from tcccd.wire.card_stage import Restatable

ASKABLE = {"pulse": lx.alternation([*lx.PULSE_WORDS, "heart rate"]), "bp": lx.alternation([*lx.BP_WORDS, "pressure"]),
           "rr": lx.alternation([w for w in lx.RR_WORDS if w != "breathing"]), "spo2": lx.alternation(lx.SPO2_WORDS),
           "pain": r"\bpain\b", "allergies": r"\ballerg(?:y|ies|ic)\b", "last_four": r"\blast\s+(?:four|4)\b",
           "systolic": r"\bsystolic\b"}
_ASKED = {kind: re.compile(rx) for kind, rx in ASKABLE.items()}
# an answer: what may open it, what makes it no answer, and the values it may be
_LEAD = re.compile(r"\s*(?:(?:yeah|yes|yep|yup|uh|um|ok|okay|so|it['’]s|it\s+is|he['’]s|she['’]s|(?:he|she)\s+says|"
                   r"about|around|roughly|"
                   r"approximately|like|maybe|was|is|reads|reading|an?(?=\s+(?:one|two|three|four|five|six|seven|"
                   r"eight|nine|ten|\d)\b))\b[\s,]*)*")  # "like a five"
_ASKS_FOR = re.compile(r"\b(?:asking\s+for|asks\s+for|asked\s+for|wants|needs\s+(?:to\s+know)?|"
                       r"ask\s+(?:him|her)(?:\s+for)?)\s+"
                       r"(?:an?|the|his|her)\s+")
_NOT_AN_ANSWER = re.compile(r"\s*(?:no|nope|negative|not|none|nothing|unknown|don['’]t|didn['’]t|can['’]t|couldn['’]t|"
                            r"haven['’]t|unable|i\s+don['’]t)\b")
_ADDRESSED = r"(?:doc|sir|ma['’]am|sarge|sergeant)"  # whom an answer is said to: "No, Doc, nothing."
_NO = re.compile(r"(?:(?:no|nope|nah|negative)\b\s*,?\s*)?(?:" + _ADDRESSED + r"\b\s*,?\s*)?")
_NONE_KNOWN = re.compile(r"\s*(?:none(?:\s+known)?|nothing|nka|nkda|no\s+known(?:\s+drug)?\s+allergies)"
                         r"(?:[\s,]+(?:" + _ADDRESSED + r"|that\s+i\s+know\s+of))?[\s,.!]*$")
# a blood pressure as the number step writes it ("96/60"), or palpated ("eighty palp")
_RATIO = re.compile(r"(\d{2,3})\s*(?:/|\s+over\s+)(\d{2,3})\b")
_OVER = re.compile(r"\s*(?:/|over)\s*")
_PALP = re.compile(r"\s*(?:/|over\s+)?(?:palp|palpated|by\s+palp(?:ation)?)\b")
_SITE = re.compile(r"\b(?:(?:left|right)\s+)?(?:radial|carotid|femoral|brachial|pedal)\b")  # where a pulse was felt
_UNIT_WORD = re.compile(r"\s*(?:%|percent|out\s+of\s+(?:10|ten)|bpm|beats)?")
# what may follow an answer's value ("One oh two over sixty, tell him.", "Like a five, Doc.")
_REST = re.compile(r"[\s,.;:!-]*(?:(?:and\s+)?(?:(?:left|right)\s+)?(?:radial|carotid|femoral|brachial|pedal)|"
                   r"on\s+room\s+air|room\s+air|regular|irregular|weak|strong|thready|bounding|now|still|"
                   r"palp(?:ated)?|doc|sir|ma['’]am|sergeant|sarge|tell\s+(?:him|her)|at\s+the|"
                   r"by\s+(?:the\s+)?cuff|and\s+it['’]s\s+(?:stronger|weaker|better|steady|regular)|"
                   r"i\s+just\s+took\s+it|[\s,.;:!-])*$")
_WHEN = re.compile(r"\b(?:what\s+time|when)\s+(?:did|was|were|is|has|had)\b")  # "What time did his TQ go on?"
# what may follow a time said as an answer ("Nine forty one, Doc, I checked my watch.")
_ASKED_CLOCK = re.compile(r"\d{4}|[2-9]\d\d")  # "one twenty" may be 01:20 or 13:20: no clock read
_TIME_REST = re.compile(r"(?:[\s,.;:!-]|\b(?:" + _ADDRESSED + r"|hours|hrs|local|exactly|on\s+the\s+dot|"
                        r"i\s+checked\s+my\s+watch|by\s+my\s+watch|on\s+my\s+watch|i\s+wrote\s+it\s+down|"
                        r"it['’]s\s+on\s+the\s+(?:tq|tourniquet|strap|cat)|i\s+wrote\s+it\s+on\s+(?:the|his|her)\s+"
                        r"(?:tq|tourniquet|strap|cat|tape|card|forehead|hand|glove))\b)*")
CONTINUES = re.compile(r"\s*(?:and|also|plus|or|and\s+also)\b(?!\s+(?:then|now|he|she|we|i|you)\b)")
_REFERS = re.compile(r"\b(?:it|one|another|a\s+new\s+one|the\s+other\s+one|a\s+fresh\s+one)\b")
_REDONE = re.compile(r"\b(?:replaced|reapplied|re-applied|redid|re-did|redone|re-placed|reinserted|re-inserted|"
                     r"restarted|re-started|re-established|reestablished|repacked|re-packed|retightened|"
                     r"re-tightened|reseated|re-seated|swapped|changed\s+out|put\s+(?:in\s+)?(?:a\s+)?new|"
                     r"(?:new|fresh)\s+one(?:['’]s)?\s+(?:on|in|placed|applied))\b")

Span = tuple[int, int]


def asked(s: Sentence) -> str | None:
    """The one reading (or the allergies) a sentence asks for, when it names exactly one."""
    kinds = [kind for kind, rx in _ASKED.items() if rx.search(s.lower, s.start, s.end)]
    return kinds[0] if len(kinds) == 1 else None


def asks_for(s: Sentence) -> bool:
    """A question said as a report of one ("Doc's asking for a pressure", "PA wants his pulse", "Ask him his pain")."""
    return _ASKS_FOR.search(s.lower, s.start, s.end) is not None


def answered(s: Sentence, kind: str, found: list) -> list[Finding] | None:
    """The sentence as the answer to a question about `kind`, when it names nothing but readings with no value or,
    to "Any allergies?", drugs alone ("Morphine, his throat swells up."): the answer's finding, else None."""
    drugs = [f for f in found if isinstance(f, Finding) and kind == "allergies" and f.what.kind == "medication"]
    if not all(f in drugs or isinstance(f, Finding) and f.rule.endswith(".incomplete") for f in found):
        return None
    reply = answer(s, kind)
    listed = reply.what.allergies.split(", ") if reply is not None and isinstance(reply.what, Allergies) else []
    if reply is None or not all(s.lower[slice(*f.named)] in listed for f in drugs):
        return None  # "Any allergies?" "Gave him morphine.": the drug is no allergen named
    return [reply]


def answer(s: Sentence, kind: str) -> Finding | None:
    """The value a sentence gives as the answer to a question about `kind`, when the sentence holds that value and
    nothing else ("One twenty-eight, radial."); None for any other sentence ("No, not yet.")."""
    lead = _LEAD.match(s.lower, s.start, s.end)
    at = lead.end() if lead else s.start
    if _NOT_AN_ANSWER.match(s.lower, at, s.end) and kind != "allergies":
        return None
    if kind == "allergies":
        if _NONE_KNOWN.fullmatch(s.lower, _NO.match(s.lower, at, s.end).end(), s.end):  # "Nope, none."
            return Finding(Allergies(allergies="NKA"), at, s.end, "answer.allergies")
        if _NOT_AN_ANSWER.match(s.lower, at, s.end) or first_number(s.text, at, s.end) is not None:
            return None
        listed = allergens(s.lower[at:s.end])
        if any(len(a.split()) > 3 for a in listed):
            return None  # "he said something about bees": not a list of allergens
        return Finding(Allergies(allergies=", ".join(dict.fromkeys(listed))), at, s.end, "answer.allergies") \
            if listed else None
    if kind == "last_four":  # "What's your last four?" "Five five zero seven, Doc."
        digits = digits_at(s, at)
        return Finding(LastFour(digits=digits[0]), at, digits[1], "answer.last_four") \
            if digits and _REST.fullmatch(s.lower, digits[1], s.end) else None
    ratio = _RATIO.match(s.lower, at, s.end) if kind == "bp" else None
    if ratio is not None:  # "96/60", as the number step writes "ninety-six over sixty"
        return Finding(BloodPressure(systolic=float(ratio.group(1)), diastolic=float(ratio.group(2))), ratio.start(),
                       ratio.end(), "answer.bp") if _REST.fullmatch(s.lower, ratio.end(), s.end) else None
    number = first_number(s.text, at, s.end)
    if number is None or number.value is None or number.start != at:
        return None
    if kind == "systolic":  # "The PA's asking for a systolic." "Ninety by cuff."
        return Finding(BloodPressure(systolic=number.value, diastolic=None), number.start, number.end,
                       "answer.bp") if _REST.fullmatch(s.lower, number.end, s.end) else None
    if kind == "bp":  # "one oh two over sixty" in words; "eighty palp": the systolic alone
        over = _OVER.match(s.lower, number.end, s.end)
        lower = first_number(s.text, over.end(), s.end) if over else None
        if lower is not None and lower.start == over.end() and lower.value is not None:
            return Finding(BloodPressure(systolic=number.value, diastolic=lower.value), number.start, lower.end,
                           "answer.bp") if _REST.fullmatch(s.lower, lower.end, s.end) else None
        palp = _PALP.match(s.lower, number.end, s.end)
        return Finding(BloodPressure(systolic=number.value, diastolic=None), number.start, palp.end(), "answer.bp") \
            if palp and _REST.fullmatch(s.lower, palp.end(), s.end) else None
    unit = _UNIT_WORD.match(s.lower, number.end, s.end)
    end = unit.end() if unit else number.end
    if not _REST.fullmatch(s.lower, end, s.end):
        return None
    site = _SITE.search(s.lower, end, s.end)
    what = {"pulse": lambda v: Pulse(rate=v, location=site.group() if site else None),
            "rr": lambda v: RespiratoryRate(rate=v), "spo2": lambda v: SpO2(percent=v),
            "pain": lambda v: Pain(score=v)}[kind](number.value)
    return Finding(what, number.start, site.end() if site and kind == "pulse" else end, f"answer.{kind}")


def asked_when(s: Sentence, found: list) -> Restatable | None:
    """The one treatment a question asks the time of ("What time did his TQ go on?", "When was the TXA given?")."""
    if s.mark != "?" or not _WHEN.search(s.lower, s.start, s.end):
        return None
    treated = [f for f in found if isinstance(f, Finding) and f.what.kind not in VITAL_KINDS
               and not f.rule.endswith(".incomplete")]
    return Restatable(what=treated[0].what) if len(treated) == 1 else None


def time_answer(s: Sentence, said: list[Said]) -> Said | None:
    """The clock time a sentence gives and nothing else ("Nine forty one, Doc, I checked my watch.", "Zero one
    ten."), as the answer to a question asking when; None for any other sentence ("No idea, ask Ramos.")."""
    lead = _LEAD.match(s.lower, s.start, s.end)
    at = lead.end() if lead else s.start
    clock = [t for t in said if t.spoken is not None and t.start == at]
    number = first_number(s.text, at, s.end) if not clock else None
    digits = number.digits if number is not None and number.start == at else ""
    if _ASKED_CLOCK.fullmatch(digits) and valid_hhmm(digits.zfill(4)):  # "Nine forty one.": a time was asked for
        clock = [Said(number.digits.zfill(4), None, number.start, number.end)]
    return clock[0] if clock and _TIME_REST.fullmatch(s.lower, clock[0].end, s.end) else None


def continues(s: Sentence) -> bool:
    """The sentence only goes on with the one before ("And a SAM splint.")."""
    return CONTINUES.match(s.lower, s.start, s.end) is not None


def redone(s: Sentence, heads: list[Span], done_words: list[Span]) -> list[tuple[int, int, int]]:
    """Assertion clauses that name nothing, refer back ("it", "one", "a new one") and say it done ("got it in on the
    left", "second one's in", "replaced it"): each clause's start and end, and where the word referring back is."""
    found = []
    for start, end in s.acts:
        if any(start <= h[0] < end for h in heads):
            continue
        refers = _REFERS.search(s.lower, start, end)
        again = _REDONE.search(s.lower, start, end)  # "reapplied": done again, what was there before
        if again or (refers and any(start <= w[0] < end for w in done_words)):
            found.append((start, end, (refers or again).start()))  # type: ignore[union-attr]
    return found
