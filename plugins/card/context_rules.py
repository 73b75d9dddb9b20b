"""The assertion rules as data: profiles/card/context.yaml (or a unit's copy), checked and compiled once.

The file lists, per category, trigger phrases with a direction, a scope and a
position; the pseudo-triggers, terminators and correction cues; which category
wins when several reach one mention; and which are kept as notes. It is read
when the card stage starts (a mistake in it stops the stage with the file and
the field named, as any bad parameter does), and compiled into one
phrase index (tcccd.plugins.card.phrases) and a few patterns, so that reading a
sentence is a fixed number of passes over it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tcccd.plugins.card.fast_patterns import Gate, Gates, first_grouped
from tcccd.plugins.card.phrases import PhraseIndex
from tcccd.wire.validation import format_validation_error


class ContextRulesError(ValueError):
    """The rules file cannot be used; the message names the file and each fault."""


class TriggerEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    words: list[str] = Field(default_factory=list, description="phrases as said, lower case")
    pattern: str | None = Field(None, description="one regular expression, for what a phrase cannot say")
    direction: Literal["forward", "backward", "both"] = "both"
    # next: only the mention said right after it; person: its clause, and when that names nothing, the clauses after
    # it that speak of the person again ("Checked the driver too, he's got a pulse of one ten")
    scope: Literal["clause", "sentence", "next", "person"] = "clause"
    position: Literal["anywhere", "clause_start", "sentence_start"] = "anywhere"
    terminated_by: list[str] = Field(default_factory=list)
    may_be_done: bool = Field(False, description="a verb whose past tense sounds alike ('give'/'gave')")
    past_tense: bool = Field(False, description="an act word that says the act is over ('applied', 'given')")

    @model_validator(mode="after")
    def _one_form(self) -> TriggerEntry:
        if bool(self.words) == (self.pattern is not None):
            raise ValueError("give either `words` or `pattern`")
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern is not a regular expression: {exc}") from None
        return self


class ContextFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1]
    priority: list[str] = Field(min_length=1)
    notes: list[str]
    repeats: list[str] = Field(default_factory=list, description="statuses of what is done, said again (a handover): "
                               "the entry already on the card where one matches, never a second one")
    marks: dict[str, str] = Field(default_factory=dict)
    shouted: dict[str, str] = Field(default_factory=dict, description="a sentence ended by this mark and holding no "
                                    "act word is said as this category ('TQ!': a call for one)")
    fillers: list[str] = Field(default_factory=list)
    terminators: list[str] = Field(default_factory=list)
    corrections: list[str] = Field(min_length=1)
    correction_patterns: list[str] = Field(default_factory=list, description="cues a phrase cannot say")
    pseudo: list[TriggerEntry] = Field(default_factory=list)
    categories: dict[str, list[TriggerEntry]]
    done: list[TriggerEntry] = Field(default_factory=list)

    @model_validator(mode="after")
    def _names_agree(self) -> ContextFile:
        unknown = sorted(set(self.priority) ^ set(self.categories))
        if unknown:
            raise ValueError(f"`priority` and `categories` must name the same categories; differing: {unknown}")
        stray = sorted((set(self.notes) | set(self.repeats) | set(self.marks.values()) | set(self.shouted.values()))
                       - set(self.categories))
        if stray:
            raise ValueError(f"`notes`/`repeats`/`marks`/`shouted` name categories that are not defined: {stray}")
        return self


@dataclass(frozen=True)
class Trigger:
    category: str
    rx: re.Pattern[str] | None  # an entry given as a pattern; its phrases are in ContextRules.index
    direction: str
    scope: str
    position: str
    terminated_by: re.Pattern[str] | None
    may_be_done: bool


@dataclass(frozen=True)
class ContextRules:
    index: PhraseIndex[Trigger]  # every trigger phrase
    patterned: Gates[Trigger]  # the triggers given as patterns
    pseudo: PhraseIndex[None]
    pseudo_patterns: Gates[None]
    done: PhraseIndex[bool]  # each act word, and whether it is past tense
    terminators: re.Pattern[str] | None
    acted: re.Pattern[str]  # a past act word taking an object ("packed it"): a new statement, in speech unpunctuated
    corrections: Gate
    fillers: re.Pattern[str]
    priority: dict[str, int]
    notes: frozenset[str]
    repeats: frozenset[str]
    marks: dict[str, str]
    shouted: dict[str, str]

    @classmethod
    def load(cls, path: Path | None = None) -> ContextRules:
        """The rules in `path`, or the ones shipped with tcccd."""
        where = path or Path(str(resources.files("tcccd.profiles").joinpath("card", "context.yaml")))
        try:
            raw = yaml.load(where.read_text(), Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader
        except (OSError, yaml.YAMLError) as exc:
            raise ContextRulesError(f"{where}: cannot be read as YAML: {exc}") from None
        try:
            parsed = ContextFile.model_validate(raw)
        except ValidationError as exc:
            raise ContextRulesError(f"{where}: " + "; ".join(format_validation_error(ContextFile, exc))) from None
        return cls.compiled(parsed)

    @classmethod
    def compiled(cls, parsed: ContextFile) -> ContextRules:
        triggers = [(entry, Trigger(category, re.compile(entry.pattern) if entry.pattern else None, entry.direction,
                                    entry.scope, entry.position, phrases(entry.terminated_by), entry.may_be_done))
                    for category, entries in parsed.categories.items() for entry in entries]
        past = [w for e in parsed.done if e.past_tense for w in e.words]  # act words that say the act is over
        ends = [f"and {w}" for w in past]
        return cls(index=PhraseIndex([(w, t) for entry, t in triggers for w in entry.words]),
                   patterned=Gates([(t.rx, t) for _, t in triggers if t.rx is not None]),
                   pseudo=PhraseIndex([(w, None) for e in parsed.pseudo for w in e.words]),
                   pseudo_patterns=Gates([(re.compile(e.pattern), None) for e in parsed.pseudo if e.pattern]),
                   done=PhraseIndex([(w, e.past_tense) for e in parsed.done for w in e.words]),
                   terminators=re.compile(_NOT_OWNED + _union(_longest_first(parsed.terminators + ends))),
                   acted=re.compile(_union(past) + r"(?=\s+(?:it|him|her|them|the|a|an|his|some)\b)"),
                   corrections=Gate(re.compile("|".join([_union(_longest_first(parsed.corrections),
                                                                between=r"[\s,]+"), *parsed.correction_patterns]))),
                   fillers=re.compile(r"[\s,]*(?:" + _union(_longest_first(parsed.fillers)) + r"[\s,]*)*"),
                   priority={name: i for i, name in enumerate(parsed.priority)}, notes=frozenset(parsed.notes),
                   repeats=frozenset(parsed.repeats), marks=dict(parsed.marks), shouted=dict(parsed.shouted))


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key said twice in one mapping: plain YAML keeps the last one silently, so a
    pasted `terminated_by` would quietly replace another entry's."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:  # type: ignore[override]
        seen: set = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"key {key!r} given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _union(words: list[str], between: str = r"\s+") -> str:
    """Phrases as one pattern, tried in the order given: any run of spaces (or `between`) between words, either
    apostrophe, word edges either side. The edge checks are said once around the alternatives, not in each of them:
    Python's regex engine then leaves a position inside a word after one check instead of one per phrase; at a word
    start, it compares only the phrases that start with its character (fast_patterns.first_grouped)."""
    def body(phrase: str) -> str:
        return re.escape(phrase.strip().lower()).replace(r"\ ", between).replace("'", "['’]")
    plain = [(w.strip().lower(), body(w)) for w in words if not w.startswith("'")]
    quoted = [body(w) for w in words if w.startswith("'")]  # "'s": starts at the apostrophe, inside a word
    parts = ([r"(?<![\w-])(?:" + first_grouped(plain) + ")"] if plain else []) + (["|".join(quoted)] if quoted else [])
    return "(?:" + "|".join(f"(?:{p})" for p in parts) + r")(?![\w-])" if parts else "(?!)"


def _longest_first(words: list[str]) -> list[str]:
    return sorted(set(words), key=len, reverse=True)


# a report's section word said as a thing owned or sought ("for his vitals", "no other injuries") ends no reach
_NOT_OWNED = r"(?<!\bhis )(?<!\bher )(?<!\bfor )(?<!\bother )(?<!\bmore )(?<!\bany )"


def phrases(words: list[str]) -> re.Pattern[str] | None:
    """One pattern for many phrases, the longest first."""
    if not words:
        return None
    return re.compile(_union(_longest_first(words)))


