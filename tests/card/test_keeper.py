"""The card keeper between the journal and the card stage: in order, one at a time, written before published, and
nothing lost to a restart, a crashed worker or a stage that was down.

The keeper runs as the daemon builds it, on a real journal, card log and store, with its real internal clients;
the card stage is the real plugin in a PluginHarness (the worker's own Stage). The test plays the broker: it takes
the requests the keeper's clients queued and decides when each is answered, which is what lets it see the order
and what is in flight. The events socket is a list (the boundary with subscribers).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tcccd import config as cfg
from tcccd.card.clock import ClockWatch
from tcccd.card.keeper import CRASHES_BEFORE_SKIP, CardKeeper
from tcccd.card.log import CardLog
from tcccd.card.readback import ReadBack
from tcccd.card.requests import CardRequests
from tcccd.card.store import CardStore
from tcccd.core.clients import InternalClients
from tcccd.core.health import Alerts, RecentErrors
from tcccd.governor.profiles import ProfileBook
from tcccd.kit.testing import PluginHarness
from tcccd.record.feed import JournalSlot
from tcccd.record.journal import Entry, JournalSettings, TranscriptJournal
from tcccd.wire.card_replies import CardsReply
from tcccd.wire.protocol import Message
from tcccd.wire.status import PluginHealth, read_plugin_health
from tests.support.card_fields import fields
from tests.support.card_scenarios import CARD_PLUGIN, segment

ROUTES = {"card.extract": ["card"], "speak.play": ["piper", "mic"]}
PIPELINE = [{"name": "card", "plugin": "card"}, {"name": "piper", "plugin": "piper"},
            {"name": "mic", "plugin": "capture"}]
CARD = b"internal:card"
READBACK = b"internal:readback"


class Events:
    """The events socket: what was published, in order."""

    def __init__(self) -> None:
        self.published: list[tuple[str, Message]] = []

    def publish(self, topic: str, message: Message) -> None:
        self.published.append((topic, message))


class Stages:
    """The workers' health as they report it: the capture stage on the play route, with or without its device."""

    def __init__(self, speaker_missing: str | None) -> None:
        self.speaker_missing = speaker_missing

    def stage_health(self) -> dict[str, PluginHealth]:
        if self.speaker_missing is None:
            return {"mic": read_plugin_health({"plugin": "capture", "capture": "listening"})}
        reason = self.speaker_missing.removeprefix("no speaker: ")
        return {"mic": read_plugin_health({"plugin": "capture", "capture": "no_device", "no_device_reason": reason})}


class Profile:
    """The running profile (the switcher's part of it): a fixed name, its settings from the profile book."""

    def __init__(self, book: ProfileBook, name: str) -> None:
        self.book = book
        self._name = name

    def name(self) -> str:
        return self._name

    def settings(self) -> cfg.ProfileFile:
        return self.book.load(self._name)


class Kit:
    """A keeper on a journal in `tmp`, its requests held until the test answers them."""

    def __init__(self, tmp: Path, routes: dict[str, list[str]] | None = None, profile: str = "field",
                 profiles_dir: Path | None = None, speaker_missing: str | None = None,
                 events: Events | None = None) -> None:
        self.config = cfg.RunningConfig(cfg.Config.model_validate(
            {"pipeline": PIPELINE, "routes": ROUTES if routes is None else routes, "profiles_dir": profiles_dir}))
        self.journal = TranscriptJournal.open(tmp, JournalSettings())
        slot = JournalSlot(self.journal)
        self.events = events or Events()
        self.errors = RecentErrors()
        self.clients = InternalClients()
        self.store = CardStore(slot, self.events)
        readback = ReadBack(self.config, Profile(ProfileBook(self.config), profile), self.clients.client("readback"),
                            Stages(speaker_missing))
        alerts = Alerts(self.events, self.errors)
        self.keeper = CardKeeper(self.config, slot, self.store, self.clients.client("card"), readback, alerts,
                                 ClockWatch(alerts))
        self.sent: list[tuple[bytes, Message]] = []

    @property
    def published(self) -> list[tuple[str, Message]]:
        return self.events.published

    @property
    def error_texts(self) -> list[str]:
        return [entry["message"] for entry in self.errors.entries]

    def tick(self) -> None:
        self.keeper.tick(time.monotonic())

    def say(self, *heard: str, source: str = "client") -> list[int]:
        """Journal what the medic said, one final transcript each, and tell the keeper as the feed does."""
        seqs = []
        for words in heard:
            seg = segment(words, [])
            seq = self.journal.append(Entry(time.time(), source, "field", f"r{len(seqs)}", seg["text"], None, [seg]))
            self.keeper.heard(source, False, seq)
            seqs.append(seq)
        return seqs

    def requests(self, client: bytes) -> list[Message]:
        """What the keeper's client has sent so far (the loop takes them into the broker)."""
        self.sent += list(self.clients.outgoing())
        return [m for key, m in self.sent if key == client]

    def extracts(self) -> list[Message]:
        return self.requests(CARD)

    def reply(self, client: bytes, message: Message) -> None:
        self.clients.deliver(client, message)
        self.tick()

    def answer(self, harness: PluginHarness, index: int = -1) -> None:
        """The card stage answers the request at `index` of those sent."""
        [reply] = harness.request(self.extracts()[index])
        self.reply(CARD, reply)

    def fail(self, code: str, index: int = -1) -> None:
        self.reply(CARD, self.extracts()[index].error(code, f"{code} in the test"))

    def cards(self) -> set[str]:
        reply = CardRequests(self.store).answer(Message("card.get", final=True))
        return fields(CardsReply.cards_of(reply))


@pytest.fixture
def harness(tmp_path: Path):
    with PluginHarness(CARD_PLUGIN, {}, tmp_path / "stage") as h:
        yield h


def test_one_extract_in_flight_in_journal_order_each_with_the_casualty_the_last_one_left(tmp_path, harness):
    kit = Kit(tmp_path)
    seqs = kit.say("Casualty two. Gunshot wound to the left thigh.", "Pulse one twenty.", "Next patient.")
    assert [m.data["journal_seq"] for m in kit.extracts()] == [seqs[0]]  # the others wait their turn
    assert kit.extracts()[0].data["casualty"] == 1
    kit.answer(harness)
    assert [m.data["journal_seq"] for m in kit.extracts()] == seqs[:2]
    assert kit.extracts()[1].data["casualty"] == 2  # what the first transcript switched to
    kit.answer(harness)
    kit.answer(harness)
    assert [m.data["journal_seq"] for m in kit.extracts()] == seqs and kit.store.casualty == 3
    lines = kit.cards()
    assert "c2 b injury[left thigh] = gunshot wound" in {line.lower() for line in lines}
    assert [line for line in lines if line.endswith("pulse = 120")][0].startswith("c2 c vitals")


def test_the_card_is_on_disk_before_it_is_published(tmp_path, harness):
    on_disk_at_publish = []

    class CountingEvents(Events):
        def publish(self, topic: str, message: Message) -> None:
            on_disk_at_publish.append((topic, CardLog.open(kit.journal.path).count(), message))

    kit = Kit(tmp_path, events=CountingEvents())
    kit.say("Tourniquet applied to the left leg at zero nine twelve.")
    kit.answer(harness)
    [(topic, count, message)] = on_disk_at_publish
    assert topic == "card" and count == 1 and message.data["changed"] == ["j1.0"]
    [card] = CardsReply.cards_of(message).cards
    assert card.b_injury.tourniquets[0].event.time.at_hhmm == "0912"


def test_after_a_restart_the_cards_are_rebuilt_and_what_was_not_extracted_is_sent_in_order(tmp_path, harness):
    said = ("Casualty one. Gunshot wound to the left thigh.", "Tourniquet applied to the left leg at zero nine twelve.",
            "Casualty two. Pulse one hundred.", "Back to casualty one. One gram of TXA IV.")
    whole = Kit(tmp_path / "whole")
    whole.say(*said)
    for _ in said:
        whole.answer(harness)

    first = Kit(tmp_path / "cut")
    first.say(*said[:2])
    first.answer(harness)  # the second is in flight when the daemon is killed: never answered
    first.say(*said[2:])
    assert len(first.extracts()) == 2
    again = Kit(tmp_path / "cut")  # a new daemon on the same state directory
    again.tick()
    for expected in (2, 3, 4):
        assert again.extracts()[-1].data["journal_seq"] == expected
        again.answer(harness)
    assert again.extracts()[2].data["casualty"] == 2 and again.cards() == whole.cards()
    assert len(again.extracts()) == 3


def test_a_lost_worker_loses_nothing_and_a_transcript_that_keeps_crashing_it_is_skipped_loudly(tmp_path, harness):
    kit = Kit(tmp_path)
    kit.say("Pulse one twenty.", "Sats ninety six percent.")
    kit.fail("worker_lost")
    kit.tick()
    assert len(kit.extracts()) == 1  # backing off
    kit.keeper.retry_at = 0.0
    kit.tick()
    assert [m.data["journal_seq"] for m in kit.extracts()] == [1, 1]
    assert kit.extracts()[0].id != kit.extracts()[1].id  # a new request: the old id is spent
    kit.answer(harness)
    kit.answer(harness)
    assert any(line.endswith("pulse = 120") for line in kit.cards())
    assert any(line.endswith("spo2 = 96%") for line in kit.cards())

    kit.say("Pulse one hundred.", "Respiratory rate twenty.")
    for _ in range(CRASHES_BEFORE_SKIP):
        kit.fail("worker_lost")
        kit.keeper.retry_at = 0.0
        kit.tick()
    assert kit.extracts()[-1].data["journal_seq"] == 4  # the next one goes on
    assert any("transcript 3" in e and "is not on the card" in e for e in kit.error_texts)
    assert [m.data["kind"] for t, m in kit.published if t == "alert"] == ["card_skipped"]
    kit.answer(harness)
    restarted = Kit(tmp_path)
    restarted.tick()
    assert restarted.extracts() == []  # the skipped one is not sent again after a restart


def test_a_transcript_the_stage_cannot_finish_is_retried_a_bounded_number_of_times_then_skipped(tmp_path, harness):
    """A transcript retried for ever (deadline_exceeded each time) would stall every later one. A stage that is away
    (busy, not connected) is still waited for without a bound: that is not the transcript's doing."""
    kit = Kit(tmp_path)
    kit.say("Pulse one twenty.", "Sats ninety six percent.")
    for _ in range(CRASHES_BEFORE_SKIP + 3):
        kit.fail("unavailable")
        kit.keeper.retry_at = 0.0
        kit.tick()
    assert {m.data["journal_seq"] for m in kit.extracts()} == {1} and kit.error_texts == []
    for _ in range(CRASHES_BEFORE_SKIP):
        kit.fail("deadline_exceeded")
        kit.keeper.retry_at = 0.0
        kit.tick()
    assert kit.extracts()[-1].data["journal_seq"] == 2  # the next one goes on
    assert any("transcript 1" in e and "could not finish it" in e and "deadline_exceeded" in e for e in kit.error_texts)
    assert [m.data["kind"] for t, m in kit.published if t == "alert"] == ["card_skipped"]
    kit.answer(harness)
    cards = kit.cards()
    assert any(line.endswith("spo2 = 96%") for line in cards) and not any("pulse" in line for line in cards)


def test_a_correction_said_alone_is_carried_to_the_next_transcript_and_across_a_restart(tmp_path, harness):
    kit = Kit(tmp_path)
    kit.say("Ketamine fifty milligrams IM.", "Correction.")
    kit.answer(harness, 0)
    kit.answer(harness, 1)
    assert kit.store.carry.correcting
    assert CardLog.open(tmp_path / "transcripts.sqlite3").last_carry().correcting
    restarted = Kit(tmp_path)  # the daemon restarts between the cue and the restatement
    restarted.say("Twenty five milligrams.")
    [request] = restarted.extracts()
    assert request.data["carry"]["correcting"] and request.data["carry"]["last"]["what"]["name"] == "ketamine"
    restarted.answer(harness)
    assert {line for line in restarted.cards() if "ketamine" in line} == {
        "c1 f medication[ketamine] = 25 mg", "c1 f medication[ketamine].route = im"}


def test_input_the_stage_refuses_is_skipped_not_retried(tmp_path, harness):
    kit = Kit(tmp_path)
    kit.say("Pulse one twenty.", "Pulse one hundred.")
    kit.fail("bad_message")
    assert [m.data["journal_seq"] for m in kit.extracts()] == [1, 2]
    assert any("refused it (bad_message)" in e for e in kit.error_texts)


def test_with_no_card_route_nothing_is_sent_and_the_backlog_goes_once_it_is_routed(tmp_path, harness):
    kit = Kit(tmp_path, routes={"speak.play": ["piper", "mic"]})
    kit.say("Pulse one twenty.", "Sats ninety six percent.")
    kit.tick()
    assert kit.extracts() == []
    routed = Kit(tmp_path)
    routed.tick()
    routed.answer(harness)
    routed.answer(harness)
    assert [m.data["journal_seq"] for m in routed.extracts()] == [1, 2]


def readbacks(kit: Kit) -> list[dict[str, Any]]:
    return [m.data for m in kit.requests(READBACK)]


def test_read_back_waits_while_the_medic_talks_and_says_what_was_logged(tmp_path, harness):
    kit = Kit(tmp_path)
    kit.say("Tourniquet applied to the left leg at zero nine fifteen.", source="mic")
    kit.keeper.heard("mic", True, None)  # the medic has started the next sentence
    kit.answer(harness)
    kit.tick()
    assert readbacks(kit) == []
    kit.keeper.heard("mic", False, None)  # ...and paused (its final transcript)
    kit.tick()
    assert readbacks(kit) == [{"text": "Tourniquet, left leg, zero nine fifteen.", "play": True}]

    kit.say("Pulse one twenty.", "Sats ninety six percent.", source="mic")
    kit.answer(harness)
    kit.answer(harness)
    assert len(readbacks(kit)) == 1  # one read-back at a time; the next ones wait for it
    speak = kit.requests(READBACK)[0]
    kit.reply(READBACK, speak.reply("audio", {"sentence": 1}, payload=b"\0\0"))
    kit.reply(READBACK, speak.reply("audio", {"sentences": 1}, final=True))
    assert readbacks(kit)[1] == {"text": "Pulse 120. Sats 96 percent.", "play": True}
    assert len(kit.keeper.readback.first_audio_ms) == 1


def test_only_what_was_said_into_the_kit_is_read_back_unless_the_config_adds_a_source(tmp_path, harness):
    """Recordings sent through `transcribe` would queue read-backs that gate the kit's microphone for minutes."""
    kit = Kit(tmp_path)
    kit.say("Pulse one twenty.", source="client")
    kit.say("Sats ninety six percent.", source="wyoming")
    kit.answer(harness, 0)
    kit.answer(harness, 1)
    kit.tick()
    assert readbacks(kit) == [] and len([line for line in kit.cards() if "vitals" in line]) == 2
    kit.config.replace(kit.config.current().model_copy(
        update={"card": cfg.CardSettings(readback_sources=["mic", "client"])}))  # as a reload would
    kit.say("Respiratory rate twenty.", source="client")
    kit.answer(harness)
    kit.tick()
    assert readbacks(kit) == [{"text": "Respirations 20.", "play": True}]


def test_read_back_is_a_profile_setting(tmp_path, harness):
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "quiet.yaml").write_text("description: no read-back\nreadback: false\n")
    kit = Kit(tmp_path, profile="quiet", profiles_dir=profiles)
    kit.say("Pulse one twenty.", source="mic")
    kit.answer(harness)
    assert readbacks(kit) == [] and any(line.endswith("pulse = 120") for line in kit.cards())
    for name in ("emergency", "field", "training"):
        assert cfg.load_profile(cfg.load(None), name).readback is True


def test_no_speaker_no_read_back_and_no_error_for_each_entry(tmp_path, harness):
    """A kit with no audio device: nothing is sent to Piper to be thrown away, and status says why, once."""
    kit = Kit(tmp_path, speaker_missing="no speaker: no audio device named 'default'")
    kit.say("Tourniquet applied to the left leg at zero nine fifteen.", "Pulse one twenty.", source="mic")
    kit.answer(harness)
    kit.answer(harness)
    kit.tick()
    report = kit.keeper.report()
    assert readbacks(kit) == [] and kit.error_texts == []
    assert (report["readbacks"], report["readbacks_not_played"], report["readback_errors"]) == (0, 2, 0)
    assert report["readback_last_error"] == "no speaker: no audio device named 'default'"
