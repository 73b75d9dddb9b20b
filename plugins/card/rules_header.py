"""Section A and H: evacuation category, litter or ambulatory, battle roster number, last four, allergies, first
responder; and notes the medic dictates ("note, ...").

A category or litter/ambulatory is read only when named as such ("evac category
priority") or said as a clause of its own ("Casualty two, priority, ambulatory."):
"priority is the airway" is not a category. Nothing here is ever inferred: no
category from vitals, no litter from a leg wound.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tcccd.plugins.card.clauses import HEAD
from tcccd.plugins.card.finding import Finding, cut, said
from tcccd.plugins.card.lexicon import EVAC_CATEGORIES, MEDICATIONS, MOBILITY, NATO, choices, pattern
from tcccd.plugins.card.numbers import iter_numbers
from tcccd.plugins.card.sentences import Sentence, first_number
from tcccd.wire.card_events import Allergies, BattleRoster, Evacuation, LastFour, Mobility, Note, Responder

# a casualty named by one word ("Diaz is urgent surgical"); not a word that names something else
_NAMED = (r"(?!(?:that|this|it|what|which|who|nothing|everything|everyone|everybody|nobody|traffic|bleeding|he|she)\b)"
          r"[a-z]+")
_LEAD = (r"\s*(?:(?:um|uh|ok|okay|so|and|now)\s+)*"
         r"(?:(?:my\s+|the\s+|this\s+)?(?:(?:first|second|third|fourth|fifth)\s+)?(?:casualty|patient)"
         r"(?:\s+(?:number\s+)?\w+)?\s*)?"
         r"(?:(?:(?:he|she)(?:['’]s|\s+is|\s+stays|\s+goes\s+out)?|" + _NAMED +
         r"(?:['’]s|\s+is|\s+stays|\s+goes\s+out))\s+"  # "Brandt stays urgent", "he goes out on a litter"
         r"(?:going\s+out\s+(?:as\s+)?|(?:down|up|back)\s+to\s+)?(?:an?\s+)?)?"  # "Molina's down to priority"
         r"(?:(?:put|mark|call)\s+(?:him|her)\s+(?:down\s+)?(?:as\s+)?|"  # "put him down as urgent"
         r"(?:put|mark)\s+" + _NAMED + r"\s+down\s+as\s+|"  # "put Reyes down as priority"
         r"(?:upgrade|downgrade|bump|change|move)\s+(?:him|her)\s+(?:up\s+|down\s+)?to\s+)?"
         r"(?:(?:is|as)\s+)?(?:(?:no|not)\s+)?")
# the casualty named in the clause before: "This is Ward, urgent surgical", "Lopez is a litter, urgent surgical"
_INTRODUCED = re.compile(r"(?:\b(?:this|he|she)\s+is\s+" + _NAMED + r"|\b" + _NAMED + r"\s+is\s+an?\s+"
                         r"(?:litter|ambulatory))\s*,\s*$")
# "Kessler, priority, litter", "Casualty two, urgent": who it is, then his category
_NAMED_FIRST = re.compile(r"\s*(?:(?:casualty|patient)\s+\w+\s*,\s*)?(?:(?!(?:okay|ok|alright|roger|copy|so|right|"
                          r"yes|yeah|no|and|then|now)\b)" + _NAMED + r"\s*,\s*)?(?<=,)\s*")
_ON_A = r"(?:on\s+an?\s+)?"  # "going out urgent, on a litter"
_SUBJECT = re.compile(r"\b(?:he|she|him|her|casualty|patient)\b|['’]s\s+(?:down|up|back)\s+to\b")
_CATEGORY_ALONE = re.compile(_LEAD + r"(?:evac(?:uation)?\s+)?(?:category\s+|precedence\s+)?(?:is\s+)?(?P<v>"
                             + choices(EVAC_CATEGORIES) + r")(?:\s+(?:evac|evacuation|precedence))?"
                             r"(?:\s*,?\s*(?:and\s+)?" + _ON_A + "(?:" + choices(MOBILITY) + r"))?(?:\s+now)?\s*$")
_CATEGORY_CUED = re.compile(r"\b(?:evac(?:uation)?\s+(?:category|precedence|cat|priority)|evac|precedence|category)\s+"
                            r"(?:for\s+(?:him|her|this\s+one)\s+)?(?:is\s+)?"
                            r"(?P<v>"
                            + choices(EVAC_CATEGORIES) + r")\b")
# "ambulatory with help", "litter for now"
_MOBILITY_ALONE = re.compile(_LEAD + r"(?:(?:" + choices(EVAC_CATEGORIES) + r")\s*,?\s*(?:and\s+)?)?" + _ON_A +
                             r"(?P<v>" + choices(MOBILITY) + r")"
                             r"(?:\s+with\s+(?:help|assistance|support|a\s+buddy)|\s+for\s+now)?\s*$")
_WALKS = re.compile(r"(?:\b(?:he|she|casualty|patient)\s*)?(?:(?:can|is\s+able\s+to|able\s+to)\s+walk|(?:is|['’]s)\s+"
                    r"walking(?:\s+on\s+(?:his|her)\s+own)?|walking\s+on\s+(?:his|her)\s+own)\s*$")
_LAST_FOUR = re.compile(r"\blast\s+(?:four|4)(?:\s+(?:is|are|digits|of))*[\s:,]*")
_ROSTER = re.compile(r"\b(?:battle\s+roster|roster|zap)(?:\s+(?:number|#|is))*[\s:,]*")
_ROSTER_TOKEN = re.compile(r"[a-z0-9-]+")
_NKA = re.compile(r"\bno\s+known\s+(?:drug\s+)?allerg(?:ies|y)\b|\bnkda\b|\bnka\b|\bno\s+allergies\b|"
                  r"\bno\s+(?:drug\s+)?allergies\s+to\s+(?:any\s+)?(?:meds|medications?|medicines?|drugs)\b|"
                  r"\bdenies\s+(?:any\s+)?(?:known\s+)?(?:drug\s+)?allergies\b|"
                  r"\ballergies\s*[,:]?\s*(?:(?:he|she)\s+(?:says?|said)\s*,?\s*)?(?:none|nil|negative)\b|"
                  r"\ballergic\s+to\s+(?:nothing|none)\b")
_ALLERGIC = re.compile(r"\b(?:(?:allergic|allergy|allergies|sensitive|anaphylaxis|reaction|reacts|reacted)\s*"
                       r"(?:to|:|are|include|includes|is|except|other\s+than|besides|apart\s+from)|"
                       r"(?:(?<=^)|(?<=[.,;:!?]\s))allerg(?:ies|y)\s*,)"  # "Allergies, morphine." opening a clause
                       r"(?!\s*(?:pain|painful|voice|verbal|sound|noise|touch|light|sternal|stimul\w*|(?:his|her)\s+name)"
                       r"\b)\s*")  # "he only reacts to pain": how he responds (AVPU), no allergy
# "penicillin and sulfa allergies": the names said before the word
_ALLERGEN_BEFORE = re.compile(r"\b((?:[a-z][\w'’-]*(?:\s*,\s*|\s+)){1,6})allerg(?:y|ies)\b")
_NOT_ALLERGEN = re.compile(r"\b(?:no|a|an|the|his|her|known|drug|any|has|had|with|says|he|she|he's|she's|is|severe|"
                           r"bad|mild|none|nil|negative|nkda|nka|nothing|denies|denied|reports|reported|got|have|"
                           r"he['’]s\s+got|food|medication|medicine|other|also|documented|listed|possible|and|or|"
                           r"get|ask|asked|about|check|checked|confirm|unknown|unable|couldn['’]t|can['’]t|him|need|meds|drugs|"
                           r"before|for|uh|um|er|erm|too|said|something|anything|stuff|can['’]t\s+remember\s+what|"
                           r"nah|nope|only|that['’]s\s+(?:it|all))\b")
# "sorry, it's amoxicillin", "just latex", "he says codeine", "he has, to the codeine", "tags say latex"
_SAID_BEFORE = re.compile(r"^(?:(?:he|she|(?:his\s+|her\s+|the\s+|dog\s+)?tags)\s+(?:says?|said|has|had|tells\s+me)"
                          r"\s*,?\s*)?(?:to\s+(?:the\s+)?)?"
                          r"(?:it['’]s\s+)?(?:just\s+)?")
_SAID_AFTER = re.compile(r"\s+(?:too|as\s+well|also)$")  # "he said sulfa too"
_RESTATED = re.compile(r"correction|sorry|i\s+mean|scratch\s+that|make\s+that|no\s+wait|my\s+mistake")
_REACTION = re.compile(r"(?:gets?|got|had|has|causes?|gives?|breaks?|broke|rash|hives|itch\w*|swell\w*|anaphyla\w*|"
                       r"reaction|throat|makes?|made|i|he|she|it|they|my|his|her|throws?|puke\w*|vomit\w*)\b")
# "allergic to amoxicillin, gets a rash", "just wasps, I swell up": what it does, no allergen
_ADDRESS = re.compile(r"(?:doc|sir|ma['’]am|sarge|sergeant|specialist|corporal|lieutenant|captain|el\s+tee|lt|"
                      r"bro|man|over|out)")  # "iodine, and shellfish, Sergeant", "Latex, over": to whom, on the radio
_ALLERGEN_WORD = re.compile(r"[a-z][\w'’-]*|,")
_LIST_SPLIT = re.compile(r"\s*(?:,|\band\b|\bor\b|&)\s*")
_ALLERGEN_END = re.compile(r"\b(?:so|but|otherwise|which|that|who|per|according|since|because|nkda|nka|nothing|"
                           r"none|no\s+others?)\b")  # "codeine, nothing else": the list is closed
_DRUG = pattern(MEDICATIONS)
MAX_ALLERGIES = 200
_FIRST_ON = r"first\s+(?:one|guy|person|man|soldier)\s+(?:on|to)\s+(?:him|her|scene|the\s+scene)"  # "first one on him"
_RESPONDER = re.compile(r"(?i:\b(?:first\s+responder|responder|treated\s+by|" + _FIRST_ON + r")(?:\s+name)?"
                        r"(?:\s+on\s+[A-Z][\w'-]*)?"  # "First responder on Brandt was ..."
                        r"(?:\s+(?:is|was))?(?:\s+(?:his|her)\s+(?:buddy|battle\s+buddy|teammate))?)(?:\s*[,:])?\s+"
                        r"(?:(?:Specialist|Spc|SPC|Private|Pfc|PFC|Pvt|PV2|Corporal|Cpl|Lance\s+Corporal|Sergeant\s+First\s+Class|SFC|Sergeant|Sgt|"
                        r"Staff\s+Sergeant|SSG|Lieutenant|Captain|Seaman|Airman|Doc)\s+)?"  # the rank is no name
                        r"(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)")
_RESPONDER_WORD = re.compile(r"\b(?:first\s+responder|responder|treated\s+by|" + _FIRST_ON + r")\b", re.IGNORECASE)
_NOTE = re.compile(r"\s*note\b[\s,:]*")


def evacuation(s: Sentence) -> Iterator[Finding]:
    """A category said alone in its slot or assertion clause, maybe with its mobility ("urgent surgical, litter"),
    or cued ("category priority"); litter or ambulatory said alone in its slot clause or its assertion clause
    ("He's a litter patient, can't bear weight"), or "he can walk"."""
    told = set()
    for clause_start, clause_end in sorted({*s.clauses, *s.acts}):
        match = _CATEGORY_ALONE.match(s.lower, clause_start, clause_end) or _CATEGORY_CUED.search(
            s.lower, clause_start, clause_end)
        if match and (clause_start, clause_end) not in s.clauses and not _SUBJECT.search(
                s.lower, clause_start, match.start("v")) and not s.lower[:clause_start].rstrip().endswith(":") \
                and not _INTRODUCED.search(s.lower, s.start, clause_start) \
                and not _NAMED_FIRST.fullmatch(s.lower, s.start, clause_start):
            continue  # an assertion clause of its own, said of him or as a report's item: "he's an urgent, litter"
        if match and match.start("v") not in told:
            told.add(match.start("v"))
            yield Finding(Evacuation(category=EVAC_CATEGORIES[said(match, "v")]),
                          match.start("v"), match.end("v"), "evacuation")
    seen = set()
    for clause_start, clause_end in sorted({*s.clauses, *s.acts}):
        match = _MOBILITY_ALONE.match(s.lower, clause_start, clause_end)
        walks = _WALKS.match(s.lower, clause_start, clause_end)  # "he can walk": ambulatory
        value = MOBILITY[said(match, "v")] if match else "ambulatory" if walks else None
        if value is not None and value not in seen:
            seen.add(value)
            start, end = (match.start("v"), match.end("v")) if match else (walks.start(), walks.end())  # type: ignore[union-attr]
            yield Finding(Mobility(mobility=value), start, end, "mobility")


def last_four(s: Sentence) -> Iterator[Finding]:
    if _RESPONDER_WORD.search(s.text, s.start, s.end):
        return  # the responder's own last four, named or not (see responder)
    for match in _LAST_FOUR.finditer(s.lower, s.start, s.end):
        digits = digits_at(s, match.end())
        if digits:
            yield Finding(LastFour(digits=digits[0]), match.start(), digits[1], "last_four")


def digits_at(s: Sentence, at: int) -> tuple[str, int] | None:
    """The four digits said at `at` ('5567', or digit by digit as Whisper may write them: '5 5 6 7'); None when
    what follows is not four digits: a last four is never filled from a part of one."""
    digits, end = "", at
    for number in iter_numbers(s.text, at, s.end):
        if number.start != end + (1 if digits else 0) or not number.digits or len(digits) >= 4:
            break
        digits, end = digits + number.digits, number.end
    return (digits, end) if len(digits) == 4 else None


def battle_roster(s: Sentence) -> Iterator[Finding]:
    """'battle roster number alpha bravo 1234' -> 'AB1234': NATO letters and digits as said, up to the clause end."""
    for match in _ROSTER.finditer(s.lower, s.start, s.end):
        _, clause_end = s.clause_of(match.end())
        parts, end = [], match.end()
        for token in _ROSTER_TOKEN.finditer(s.lower, match.end(), clause_end):
            word = token.group()
            number = first_number(s.text, token.start(), token.end())
            part = NATO.get(word) or (number.digits if number else None) or (word.upper() if word.isalnum() and any(
                c.isdigit() for c in word) else None)
            if part is None:
                break
            parts.append(part)
            end = token.end()
        if parts:
            yield Finding(BattleRoster(number=cut("".join(parts), 32)), match.start(), end, "battle_roster")


def allergies(s: Sentence) -> Iterator[Finding]:
    """'No known allergies' / 'NKDA' / 'allergies, none' -> NKA; 'allergic to morphine and penicillin' -> 'morphine,
    penicillin' (lower case, in the order said, up to the clause's end); 'penicillin allergy' -> 'penicillin'. Named
    allergens win over a 'NKDA otherwise' said beside them. A list longer than the field is cut and marked."""
    named: list[tuple[str, int, int]] = []
    for match in _ALLERGIC.finditer(s.lower, s.start, s.end):
        stop = _ALLERGEN_END.search(s.lower, match.end(), s.end)
        listed = allergens(s.lower[match.end():stop.start() if stop else s.end])
        if listed:
            named += [(w, match.start(), match.end() + len(w)) for w in listed]
            named[-1] = (named[-1][0], match.start(), s.lower.find(listed[-1], match.end()) + len(listed[-1]))
    for match in _ALLERGEN_BEFORE.finditer(s.lower, s.start, s.end):
        if not any(a <= match.start() < b for _, a, b in named):
            named += [(w, match.start(), match.end()) for w in _listed_before(match.group(1))]
    if named:
        text = ", ".join(dict.fromkeys(w for w, _, _ in named))
        yield Finding(Allergies(allergies=cut(text, MAX_ALLERGIES)), min(a for _, a, _ in named),
                      max(b for _, _, b in named), "allergies")
        return
    for match in _NKA.finditer(s.lower, s.start, s.end):
        yield Finding(Allergies(allergies="NKA"), match.start(), match.end(), "allergies.none_known")
        return


def _listed_before(words: str) -> list[str]:
    """The allergens said before "allergy"/"allergies", last first read back to the first word that is none
    ("he's got a latex allergy" -> latex; "penicillin and sulfa allergies" -> penicillin, sulfa)."""
    found: list[list[str]] = [[]]
    said = _ALLERGEN_WORD.findall(words)
    listed = any(w in ("and", "or", "&") for w in said)  # "a, b and c"; "no antibiotics yet, penicillin" is none
    for word in reversed(said):
        if word == "," and not listed:
            break
        if word in (",", "and", "or", "&"):
            found.append([])
        elif _NOT_ALLERGEN.fullmatch(word):
            break
        else:
            found[-1].insert(0, word)
    return [" ".join(name) for name in reversed(found) if name]


def allergens(words: str) -> list[str]:
    """The allergens listed: the first part, then each further one while it reads as a name (three words at most,
    no other clinical mention: "allergic to morphine, tourniquet left leg" lists morphine alone)."""
    found: list[str] = []
    for part in _LIST_SPLIT.split(words.strip(" .")):
        part = _SAID_AFTER.sub("", _SAID_BEFORE.sub("", " ".join(part.split()), count=1))
        part = part[3:] if found and part.lower().startswith("to ") else part  # "latex and to sulfa drugs"
        if _RESTATED.fullmatch(part):  # "allergic to morphine, correction, codeine"
            found.clear()
            continue
        if not part or _NOT_ALLERGEN.fullmatch(part) or _ADDRESS.fullmatch(part.lower()):
            continue
        if found and (len(part.split()) > 3 or _REACTION.match(part) or
                      (HEAD.search(part) and not _DRUG.fullmatch(part))):
            break
        found.append(part)
    return found


def responder(s: Sentence) -> Iterator[Finding]:
    """'First responder Diaz, last four 5567'; a name the ASR did not write as one ('first responder dies') is
    left blank, and the last four said with it is still the responder's."""
    match = _RESPONDER.search(s.text, s.start, s.end) or _RESPONDER_WORD.search(s.text, s.start, s.end)
    if match is None:
        return
    name = match.group("name") if "name" in match.re.groupindex else None
    four = _LAST_FOUR.search(s.lower, match.end(), s.end)
    digits = digits_at(s, four.end()) if four else None
    if name is None and digits is None:
        return
    yield Finding(Responder(name=name, last_four=digits[0] if digits else None), match.start(),
                  digits[1] if digits else match.end(), "responder")


def notes(s: Sentence) -> Iterator[Finding]:
    match = _NOTE.match(s.lower, s.start, s.end)
    if match and match.end() < s.end:
        yield Finding(Note(text=cut(s.text[match.end():s.end].strip(), 2000)), s.start, s.end, "note")
