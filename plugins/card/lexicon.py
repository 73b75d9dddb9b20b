"""The card's words: what a medic says for each thing DD Form 1380 records, and how the card writes it.

Each table maps spoken forms (lower case, as the ASR writes them after its own
vocabulary and number steps) to the value the card records. A value is only
ever written when one of its spoken forms was heard: these tables are also what
the tests use to check that no field was filled from words that are not there.
Abbreviations a medic says as such (NPA, TXA, LR) are kept as the card writes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tcccd.plugins.card.fast_patterns import first_grouped

SIDES = {"left": "left", "right": "right", "bilateral": "both", "both": "both", "each": "both"}
# body parts as said (plural folded), and the limb a tourniquet on that part is on
BODY_PARTS = {
    "head": "head", "scalp": "scalp", "face": "face", "eye": "eye", "eyes": "eye", "jaw": "jaw", "neck": "neck",
    "chest": "chest", "abdomen": "abdomen", "belly": "abdomen", "stomach": "abdomen", "flank": "flank",
    "back": "back", "pelvis": "pelvis", "pelvic": "pelvis", "groin": "groin", "buttock": "buttock",
    "buttocks": "buttock",
    "hip": "hip", "shoulder": "shoulder", "shoulders": "shoulder", "upper arm": "upper arm",
    "upper arms": "upper arm", "arm": "arm", "arms": "arm", "elbow": "elbow", "elbows": "elbow", "forearm": "forearm",
    "forearms": "forearm", "wrist": "wrist", "hand": "hand", "hands": "hand", "thigh": "thigh", "thighs": "thigh",
    "knee": "knee", "knees": "knee", "lower leg": "lower leg", "lower legs": "lower leg", "leg": "leg",
    "legs": "leg", "calf": "calf", "ankle": "ankle", "foot": "foot", "feet": "foot", "femur": "femur",
    "humerus": "humerus", "tibia": "tibia", "fibula": "fibula", "clavicle": "clavicle", "axilla": "axilla",
    "armpit": "armpit", "cheek": "cheek", "cheeks": "cheek", "forehead": "forehead", "temple": "temple",
    "ear": "ear", "ears": "ear", "nose": "nose", "mouth": "mouth", "chin": "chin", "throat": "throat",
    "finger": "finger", "fingers": "finger", "thumb": "thumb", "shin": "shin", "heel": "heel", "toes": "toe",
    "upper leg": "thigh", "lower arm": "forearm", "torso": "torso", "ribs": "ribs", "lower back": "lower back",
    "upper chest": "upper chest", "lower chest": "lower chest", "upper abdomen": "upper abdomen",
    "lower abdomen": "lower abdomen",
    "upper back": "upper back", "skull": "skull", "tib fib": "lower leg", "tib-fib": "lower leg", "bowel": "bowel",
    "antecubital": "antecubital", "ac": "AC", "armpits": "armpit", "spine": "spine", "eyebrow": "eyebrow",
    "eyelid": "eyelid", "lip": "lip", "lips": "lip", "toe": "toe", "palm": "palm", "sole": "sole", "shin bone": "shin",
    "radius": "radius", "ulna": "ulna", "index finger": "index finger", "middle finger": "middle finger",
    "ring finger": "ring finger", "little finger": "little finger", "pinky": "little finger",
    "pinky finger": "little finger",
}
LIMB_OF_PART = {"upper arm": "arm", "arm": "arm", "elbow": "arm", "forearm": "arm", "wrist": "arm", "hand": "arm",
                "thigh": "leg", "knee": "leg", "lower leg": "leg", "leg": "leg", "calf": "leg", "ankle": "leg",
                "foot": "leg", "femur": "leg", "tibia": "leg", "fibula": "leg", "humerus": "arm", "shin": "leg",
                "radius": "arm", "ulna": "arm", "finger": "arm", "thumb": "arm", "heel": "leg", "index finger": "arm",
                "middle finger": "arm", "ring finger": "arm", "little finger": "arm"}
# "took a round through the right thigh": shot there
TOOK_A_ROUND = tuple(f"took a round {way} {whose}" for way in ("to", "through", "in")
                     for whose in ("the", "his", "her"))
MECHANISMS = {
    "gunshot wound": "GSW", "gunshot wounds": "GSW", "gunshot": "GSW", "gsw": "GSW", "bullet wound": "GSW",
    "ied": "IED", "improvised explosive device": "IED", "ied blast": "IED", "blast": "blast",
    "explosion": "blast", "grenade": "grenade", "rpg": "RPG", "artillery": "artillery", "mortar": "mortar",
    "landmine": "landmine", "land mine": "landmine", "mvc": "MVC", "vehicle rollover": "MVC", "rollover": "MVC",
    "truck rolled over": "MVC", "vehicle rolled over": "MVC", "truck rolled": "MVC", "vehicle rolled": "MVC",
    "rolled the truck": "MVC", "rolled the vehicle": "MVC", "vehicle crash": "MVC", "car crash": "MVC",
    "motor vehicle collision": "MVC", "motor vehicle crash": "MVC",
    "fall from height": "fall", "fall injury": "fall",
    "blunt trauma": "blunt", "blunt force": "blunt",
    "vehicle fire": "burn", "building fire": "burn", "house fire": "burn", "burning vehicle": "burn",
    "fuel fire": "burn", "flash fire": "burn", "from the fire": "burn", "in the fire": "burn",
    "truck fire": "burn", "caught fire": "burn", "on fire": "burn",
    "shot in the": "GSW", "shot high in the": "GSW", "shot through the": "GSW", "shot in his": "GSW", "gsws": "GSW",
    "through and through": "GSW",
    "ieds": "IED",
    "stepped on a mine": "landmine", "a mine": "landmine", "mine blast": "landmine", "mine strike": "landmine",
    "hit by a car": "MVC", "hit by a vehicle": "MVC", "hit by a truck": "MVC", "struck by a vehicle": "MVC",
    "run over": "MVC", "ran over": "MVC",
    "shot in her": "GSW", "shot through his": "GSW", "shot through her": "GSW", "shot twice": "GSW",
    "shot once": "GSW", "shot three times": "GSW", **dict.fromkeys(TOOK_A_ROUND, "GSW"),
}
INJURIES = {
    "gunshot wound": "gunshot wound", "gunshot wounds": "gunshot wound", "gsw": "gunshot wound",
    "bullet wound": "gunshot wound", "bullet wounds": "gunshot wound", "gsws": "gunshot wound",
    "shrapnel wound": "shrapnel wound", "shrapnel wounds": "shrapnel wound",
    "shrapnel": "shrapnel wound", "fragment wound": "fragment wound", "fragment wounds": "fragment wound",
    "laceration": "laceration", "lacerations": "laceration", "lac": "laceration", "lacs": "laceration",
    "amputation": "amputation",
    "amputations": "amputation", "amputated": "amputation", "partial amputation": "partial amputation",
    "burn": "burn", "burns": "burn",
    "fracture": "fracture", "fractured": "fracture", "broken": "fracture", "puncture wound": "puncture wound",
    "stab wound": "stab wound", "penetrating wound": "penetrating wound", "blunt trauma": "blunt trauma",
    "abrasion": "abrasion", "abrasions": "abrasion", "contusion": "contusion", "avulsion": "avulsion",
    "degloving": "degloving injury", "degloving injury": "degloving injury", "crush injury": "crush injury",
    "entry wound": "entry wound",
    "exit wound": "exit wound", "wound": "wound", "injury": "injury", "injuries": "injury",
    "open fracture": "open fracture", "closed fracture": "closed fracture",
    "sucking chest wound": "sucking chest wound", "flail chest": "flail chest",
    "tension pneumothorax": "tension pneumothorax", "pneumothorax": "pneumothorax", "evisceration": "evisceration",
    "impaled object": "impaled object", "tbi": "TBI", "traumatic brain injury": "TBI", "concussion": "concussion",
    "pneumo": "pneumothorax", "tension pneumo": "tension pneumothorax", "hemothorax": "hemothorax",
    "frag wound": "shrapnel wound", "frag wounds": "shrapnel wound", "frag": "shrapnel wound",
    "shot in the": "gunshot wound", "shot through the": "gunshot wound", "shot in his": "gunshot wound",
    "shot in her": "gunshot wound", "shot high in the": "gunshot wound",
    "shot through his": "gunshot wound", "shot through her": "gunshot wound",
    "shot twice": "gunshot wound", "shot once": "gunshot wound", "shot three times": "gunshot wound",
    # the same injuries said as what happened to the part ("eviscerated bowel", "lacerated scalp")
    "eviscerated": "evisceration", "lacerated": "laceration", "burned": "burn", "burnt": "burn",
    "avulsed": "avulsion", "degloved": "degloving injury", "crushed": "crush injury", "impaled": "impaled object",
    "dog bite": "dog bite", "animal bite": "animal bite", "bite wound": "bite wound",
    "bit by a dog": "dog bite", "bit by a stray dog": "dog bite", "bitten by a dog": "dog bite",
    "bitten by a stray dog": "dog bite", "sprained": "sprain", "sprain": "sprain", "sprains": "sprain",
    "blister": "blister", "blisters": "blister", "frostnip": "frostnip", "frostbite": "frostbite",
    "frostbitten": "frostbite", "dislocated": "dislocation", "dislocation": "dislocation",
    **dict.fromkeys(TOOK_A_ROUND, "gunshot wound"),
}
# a fall is a mechanism when said with where from or how far ("fell off the back of the truck", "fell about fifteen
# feet"); "his pressure fell from 110" is no fall
FALL_WORDS = ("fell", "fall", "fallen")
FALL_FROM = ("roof", "rooftop", "height", "building", "wall", "ladder", "stairs", "stairwell", "staircase", "steps",
             "truck", "vehicle", "humvee", "mrap", "tower", "cliff", "window", "balcony", "helicopter", "bird",
             "ramp", "bridge", "ledge", "tree", "rocks", "hill", "hillside", "floor", "story", "stories", "deck",
             "hatch", "turret", "litter", "bed", "top", "back", "side", "edge", "compound", "guard tower", "trench",
             "ditch", "wadi", "feet", "foot", "ft", "meters", "metres", "yards")
GENERIC_INJURIES = ("wound", "injury")  # said without a body region, these say nothing
NEEDS_REGION = ("broken", "fractured", "frag", "shot in the", "shot high in the", "shot in his", "burn", "burns",
                "shot in her",
                "shot through his", "shot through her", "shot twice", "shot once", "shot three times", "lacerated",
                "burned", "burnt", "crushed", "blunt trauma", "blister", "blisters", "frostnip", "frostbite",
                "frostbitten", "dislocated", "dislocation",
                *TOOK_A_ROUND)  # nor these alone ("blunt trauma": a mechanism)
PAIRED = ("arm", "leg", "hand", "foot", "thigh", "forearm", "upper arm", "lower leg", "knee", "ankle", "wrist",
          "shoulder", "hip", "eye", "calf", "buttock", "elbow")  # said in the plural with no side: both sides
SITE_OF_CARE = ("wound", "injury", "entry wound", "exit wound")  # with a treatment in the clause: where it went
DEVICES_NAMED_FOR_A_PART = ("chest seal", "chest seals", "vented chest seal", "chest tube", "chest tubes",
                            "eye shield", "eye shields", "hand me", "back of the", "back to", "head to toe")
HEDGES = {"possible": "suspected", "suspected": "suspected", "probable": "suspected", "likely": "suspected",
          "looks": "suspected", "maybe": "suspected", "query": "suspected", "possibly": "suspected",
          "probably": "suspected", "concern for": "suspected",
          "worried about": "suspected", "rule out": "suspected"}
TOURNIQUET_WORDS = ("tourniquet", "tourniquets", "tq", "tqs")
TOURNIQUET_DEVICES = {"cat": "CAT", "cats": "CAT", "c-a-t": "CAT", "combat application tourniquet": "CAT",
                      "softt": "SOFTT-W", "sof tactical tourniquet": "SOFTT-W", "sof-t": "SOFTT-W",
                      "sam junctional": "SAM-JT",
                      "junctional emergency treatment tool": "JETT", "jett": "JETT", "crock": "CRoC",
                      "aaj": "AAJT", "aajt": "AAJT", "rmt": "RMT", "swat": "SWAT-T", "swat-t": "SWAT-T"}
TOURNIQUET_CATEGORIES = {"junctional": "junctional", "truncal": "truncal"}
HEMOSTATIC = {"combat gauze": "Combat Gauze", "quikclot": "QuikClot", "quick clot": "QuikClot",
              "celox": "Celox", "chitogauze": "ChitoGauze", "chito gauze": "ChitoGauze", "xstat": "XStat",
              "hemostatic gauze": None, "hemostatic dressing": None, "hemostatic agent": None, "hemostatic": None}
PRESSURE = {"pressure dressing": None, "pressure dressings": None, "pressure bandage": None,
            "israeli bandage": "Israeli bandage",
            "an israeli": "Israeli bandage", "israeli dressing": "Israeli bandage",
            "emergency trauma dressing": "emergency trauma dressing", "etd": "emergency trauma dressing",
            "olaes": "OLAES"}
AIRWAY = {"airway intact": "intact", "airway is intact": "intact", "intact airway": "intact",
          "airway patent": "intact", "airway is patent": "intact", "patent airway": "intact",
          "airway clear": "intact", "airway is clear": "intact", "airway open": "intact", "airway is open": "intact",
          **{f"airway{mark}s {state}": "intact" for mark in "'’" for state in ("open", "clear", "intact", "patent")},
          "npa": "NPA", "nasopharyngeal airway": "NPA",
          "nasal airway": "NPA", "nasal trumpet": "NPA", "sga": "SGA", "supraglottic airway": "SGA", "i-gel": "SGA",
          "igel": "SGA",
          "king lt": "SGA", "cric": "CRIC", "cricothyrotomy": "CRIC", "cricothyroidotomy": "CRIC",
          "surgical airway": "CRIC", "et tube": "ET tube", "endotracheal tube": "ET tube", "intubated": "ET tube",
          "intubation": "ET tube", "crickey": "CRIC", "tubed": "ET tube"}
BREATHING = {"oxygen": "O2", "o2": "O2", "nasal cannula": "O2", "non-rebreather": "O2", "non rebreather": "O2",
             "needle decompression": "needle decompression",
             "needle decompressed": "needle decompression", "needle d": "needle decompression",
             "needled": "needle decompression",
             "needle thoracostomy": "needle decompression", "14 gauge needle": "needle decompression",
             "10 gauge needle": "needle decompression", "14g needle": "needle decompression",
             "ncd": "needle decompression",
             "decompressed": "needle decompression", "chest tube": "chest tube", "chest seal": "chest seal",
             "chest seals": "chest seal", "vented chest seal": "chest seal", "occlusive dressing": "chest seal",
             "hyfin": "chest seal", "bolin": "chest seal", "seal": "chest seal", "seals": "chest seal",
             "vented seal": "chest seal"}
NOT_OXYGEN = ("oxygen saturation", "o2 sat", "o2 sats", "o2 saturation")
ACCESS = {"iv": "IV", "io": "IO", "intravenous": "IV", "intraosseous": "IO", "saline lock": "IV", "ez-io": "IO",
          "fast1": "IO", "ivs": "IV", "ios": "IO", "fast io": "IO", "cannula": "IV", "cannulated": "IV"}
ACCESS_PLURALS = ("ivs", "ios")
ACCESS_CUES_AFTER = ("access", "line", "established", "placed", "started", "inserted", "in the", "into the", "to the",
                     "in his", "in her", "in right", "in left", "site", "'s in", "is in", "in place", "in,",
                     "in.", "attempt", "attempts", "blew", "blown", "infiltrated", "failed", "missed", "didn't take",
                     "wouldn't", "won't", "was unsuccessful", "unsuccessful", "dislodged", "came out", "fell out",
                     "ripped out", "pulled out", "'s still good", "is still good", "'s good", "is good", "is patent",
                     "'s patent", "still patent", "patent", "flushes", "is flushing", "'s flushing", "'s still running",
                     "is still running", "still running", "went in", "go in", "goes in")
ACCESS_SITES = {"sternum": "sternum", "sternal": "sternum", "tibia": "tibia", "tibial": "tibia",
                "humerus": "humerus", "humeral": "humerus", "antecubital": "antecubital"}
FLUIDS = {"lactated ringers": ("lactated Ringer's", False), "lactated ringer's": ("lactated Ringer's", False),
          "ringer's lactate": ("lactated Ringer's", False), "lr": ("lactated Ringer's", False),
          "normal saline": ("normal saline", False), "saline": ("saline", False), "ns": ("normal saline", False),
          "plasma-lyte": ("Plasma-Lyte", False), "plasmalyte": ("Plasma-Lyte", False),
          "hextend": ("Hextend", False), "whole blood": ("whole blood", True),
          "fresh whole blood": ("whole blood", True), "fwb": ("whole blood", True),
          "low titer o whole blood": ("LTOWB", True),
          "ltowb": ("LTOWB", True), "cold stored low titer o whole blood": ("LTOWB", True),
          "packed red blood cells": ("packed red blood cells", True),
          "packed red cells": ("packed red blood cells", True), "prbc": ("packed red blood cells", True),
          "prbcs": ("packed red blood cells", True), "red cells": ("packed red blood cells", True),
          "blood": ("blood", True), "plasma": ("plasma", True), "fresh frozen plasma": ("plasma", True),
          "ffp": ("plasma", True),
          "freeze dried plasma": ("freeze-dried plasma", True), "platelets": ("platelets", True),
          "hartmann's": ("Hartmann's", False), "hartmanns": ("Hartmann's", False)}
MEDICATIONS = {"txa": ("TXA", "other"), "tranexamic acid": ("TXA", "other"), "fentanyl": ("fentanyl", "analgesic"),
               "otfc": ("fentanyl", "analgesic"),
               "oral transmucosal fentanyl citrate": ("fentanyl", "analgesic"), "ketamine": ("ketamine", "analgesic"),
               "morphine": ("morphine", "analgesic"), "meloxicam": ("meloxicam", "analgesic"),
               "mobic": ("meloxicam", "analgesic"), "acetaminophen": ("acetaminophen", "analgesic"),
               "tylenol": ("acetaminophen", "analgesic"), "apap": ("acetaminophen", "analgesic"),
               "paracetamol": ("acetaminophen", "analgesic"), "ertapenem": ("ertapenem", "antibiotic"),
               "moxifloxacin": ("moxifloxacin", "antibiotic"), "cefazolin": ("cefazolin", "antibiotic"),
               "cefotetan": ("cefotetan", "antibiotic"), "clindamycin": ("clindamycin", "antibiotic"),
               "ketorolac": ("ketorolac", "analgesic"), "lidocaine": ("lidocaine", "other"),
               "hydroxocobalamin": ("hydroxocobalamin", "other"), "atropine": ("atropine", "other"),
               "pralidoxime": ("pralidoxime", "other"), "ceftriaxone": ("ceftriaxone", "antibiotic"),
               "ondansetron": ("ondansetron", "other"), "zofran": ("ondansetron", "other"),
               "naloxone": ("naloxone", "other"), "narcan": ("naloxone", "other"),
               "calcium": ("calcium", "other"), "calcium chloride": ("calcium chloride", "other"),
               "calcium gluconate": ("calcium gluconate", "other"), "epinephrine": ("epinephrine", "other"),
               "promethazine": ("promethazine", "other"), "phenergan": ("promethazine", "other"),
               "diphenhydramine": ("diphenhydramine", "other"), "benadryl": ("diphenhydramine", "other"),
               "midazolam": ("midazolam", "other"), "versed": ("midazolam", "other"),
               "acetazolamide": ("acetazolamide", "other"), "diamox": ("acetazolamide", "other"),
               "moxi": ("moxifloxacin", "antibiotic"), "fentanyl lollipop": ("fentanyl", "analgesic"),
               "fentanyl lollipops": ("fentanyl", "analgesic"), "ancef": ("cefazolin", "antibiotic"),
               "invanz": ("ertapenem", "antibiotic"), "toradol": ("ketorolac", "analgesic"),
               "morph": ("morphine", "analgesic"), "tranexamic": ("TXA", "other"), "fent": ("fentanyl", "analgesic"),
               "ertap": ("ertapenem", "antibiotic"),
               "methoxyflurane": ("methoxyflurane", "analgesic"), "penthrox": ("methoxyflurane", "analgesic"),
               "ibuprofen": ("ibuprofen", "analgesic"), "motrin": ("ibuprofen", "analgesic"),
               "advil": ("ibuprofen", "analgesic"), "tdap": ("Tdap", "other"), "tetanus shot": ("Tdap", "other"),
               "tetanus booster": ("Tdap", "other")}
ROUTES = {"iv": "IV", "io": "IO", "im": "IM", "po": "PO", "in": "IN", "intranasal": "IN", "intravenous": "IV",
          "intravenously": "IV", "intraosseous": "IO", "intramuscular": "IM", "intramuscularly": "IM",
          "by mouth": "PO", "oral": "PO", "orally": "PO", "otfc": "OTFC", "lozenge": "OTFC", "buccal": "buccal",
          "sublingual": "SL", "sl": "SL", "odt": "PO", "orally disintegrating": "PO", "cannula": "IV",
          "in the vein": "IV", "into the vein": "IV", "in the muscle": "IM", "into the muscle": "IM"}
PULSE_WORDS = ("pulse", "pulse rate", "heart rate", "hr", "pulses", "tachy", "tachycardic", "brady", "bradycardic")
PULSE_LOCATIONS = ("radial", "carotid", "femoral", "brachial", "pedal", "wrist", "neck", "groin")
# a pulse said by where it was felt ("radial's weak, about 130")
PULSE_SITES = ("radial", "radials", "carotid", "femoral", "brachial", "pedal", "pedals", "distal pulses")
BP_WORDS = ("blood pressure", "bp")
RR_WORDS = ("respiratory rate", "respirations", "respiration", "respiration rate", "resps", "rr", "breathing rate",
            "resp", "resp rate", "resps rate", "respiratory", "breathing", "breathing at")
SPO2_WORDS = ("sats", "sat", "spo2", "sp02", "saturation", "oxygen saturation", "pulse ox", "o2 sat", "o2 sats",
              "satting", "sating", "saturating", "pulse oximetry", "sp o2", "o2 saturation", "oxygen sats", "pulse-ox")
AVPU = {"alert": "A", "responds to voice": "V", "wakes to voice": "V", "wakes up to voice": "V",
        "wakes up when i say his name": "V", "wakes when i say his name": "V", "wakes up when i say her name": "V",
        "responding to voice": "V", "responsive to voice": "V",
        "responds to verbal": "V", "responding to verbal": "V", "responds to pain": "P",
        "responding to pain": "P", "responsive to pain": "P", "responds to painful stimuli": "P",
        "unresponsive": "U", "unconscious": "U", "a and o": "A", "alert and oriented": "A", "a&o": "A",
        "responsive to verbal": "V", "responds to painful stimulus": "P", "responding to painful stimuli": "P",
        "only responds to pain": "P", "only responding to pain": "P", "responds only to pain": "P",
        "responds to voice only": "V", "non-responsive": "U", "nonresponsive": "U", "voice only": "V",
        "verbal only": "V", "to voice only": "V", "reacts to voice": "V", "reacting to voice": "V",
        "opens eyes to voice": "V", "opens his eyes to voice": "V", "reacts to pain": "P", "reacting to pain": "P",
        "withdraws to pain": "P", "withdraws from pain": "P", "opens eyes to pain": "P", "to pain only": "P",
        "unarousable": "U", "unresponsive to pain": "U", "awake and oriented": "A", "conscious and oriented": "A",
        "awake and talking": "A", "awake and alert": "A",
        **{f"avpu{joint}{level}": level.upper() for level in "avpu" for joint in (" ", " is ", " of ", ": ")},
        **{f"{level} on avpu": level.upper() for level in "avpu"}}
EVAC_CATEGORIES = {"urgent surgical": "urgent surgical", "urgent-surgical": "urgent surgical", "urgent": "urgent",
                   "priority": "priority", "routine": "routine", "convenience": "convenience"}
MOBILITY = {"litter": "litter", "liter": "litter", "litter patient": "litter", "ambulatory": "ambulatory",
            "ambulatory patient": "ambulatory", "walking wounded": "ambulatory", "stretcher": "litter",
            "stretcher case": "litter"}
HYPOTHERMIA = {"hypothermia prevention kit": "HPMK", "hpmk": "HPMK",
               "hypothermia prevention and management kit": "HPMK",
               "heat reflective shell": "heat reflective shell", "blizzard blanket": "Blizzard blanket",
               "blizzard": "Blizzard blanket", "ready-heat": "Ready-Heat", "ready heat": "Ready-Heat",
               "space blanket": "space blanket", "blanket": "blanket", "hypothermia wrap": None,
               "hypothermia prevention": None}
PILL_PACK = ("combat wound medication pack", "combat pill pack", "pill pack", "cwmp")
NATO = {"alpha": "A", "alfa": "A", "bravo": "B", "charlie": "C", "delta": "D", "echo": "E", "foxtrot": "F",
        "golf": "G", "hotel": "H", "india": "I", "juliet": "J", "juliett": "J", "kilo": "K", "lima": "L",
        "mike": "M", "november": "N", "oscar": "O", "papa": "P", "quebec": "Q", "romeo": "R", "sierra": "S",
        "tango": "T", "uniform": "U", "victor": "V", "whiskey": "W", "x-ray": "X", "xray": "X", "yankee": "Y",
        "zulu": "Z"}
DIGIT_WORDS = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
               "seven": "7", "eight": "8", "nine": "9", "niner": "9"}


def choices(forms: Iterable[str]) -> str:
    """A regex alternation of spoken forms, longest first (so 'urgent surgical' wins over 'urgent')."""
    ordered = sorted(set(forms), key=len, reverse=True)
    return first_grouped([(f, re.escape(f).replace(r"\ ", r"\s+")) for f in ordered])


def alternation(forms: Iterable[str]) -> str:
    """The same, each form bounded by word edges."""
    return r"(?<![\w-])(?:" + choices(forms) + r")(?![\w-])"


def pattern(forms: Iterable[str]) -> re.Pattern[str]:
    return re.compile(alternation(forms))
