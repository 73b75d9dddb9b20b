"""`tcccd transcripts` on a mission's journal: 150 transcripts with word timings, far past the 64 KiB header that
one JSON reply held before (82 broke it). Every frame the daemon sends is read raw and fits the protocol; the
CLI and the Python client read every page."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tcccd.record.journal import Entry, JournalSettings, TranscriptJournal
from tcccd.wire.protocol import MAX_HEADER_BYTES, Message
from tcccd.wire.replies import TranscriptsReply
from tests.support.rawclient import RawClient, header

SAID = "tourniquet placed high and tight on the right leg at zero nine fifteen then one gram of TXA"


def dictated(state_dir: Path, count: int) -> list[str]:
    """A journal as a mission leaves it: each transcript with its segment and word timings."""
    journal = TranscriptJournal.open(state_dir, JournalSettings())
    texts = []
    for n in range(count):
        text = f"{SAID} number {n}"
        starts = [i for i in range(len(text)) if text[i] != " " and (i == 0 or text[i - 1] == " ")]
        words = [{"text": w, "start_s": i * 0.3, "end_s": i * 0.3 + 0.25, "probability": 0.91,
                  "start_char": start, "end_char": start + len(w)}
                 for i, (w, start) in enumerate(zip(text.split(), starts, strict=True))]
        segment = {"start_s": 0.0, "end_s": len(words) * 0.3, "text": text, "avg_logprob": -0.21, "words": words}
        journal.append(Entry(time.time(), "mic", "field", f"mic-{n}", text, 0.88, [segment]))
        texts.append(text)
    journal.close()
    return texts


def test_a_journal_past_the_header_limit_is_read_whole_by_the_cli_and_every_frame_fits(start_daemon, tmp_path):
    texts = dictated(tmp_path / "state", 150)
    daemon = start_daemon([], {})
    daemon.wait_healthy()
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("transcripts.since", "all", final=True))
        raw.send(header("transcripts.since", "page", final=True, data={"after_seq": 40, "limit": 50}))
        raw.collect(until=lambda: raw.finals("all") and raw.finals("page"))
    assert all(len(frames[0]) <= MAX_HEADER_BYTES for frames in raw.frames)
    replies = {}
    for frames in raw.frames:
        message = Message.from_frames(frames)
        replies[message.id] = (TranscriptsReply.from_message(message), TranscriptsReply.entries_of(message))
    whole, entries = replies["all"]
    assert whole.count == 150 and not whole.more and [e.text for e in entries] == texts
    assert len(json.dumps([e.to_data() for e in entries])) > 4 * MAX_HEADER_BYTES  # one header could not hold it
    assert entries[3].segments[0].words[0].text == "tourniquet"  # word timings kept
    page, paged = replies["page"]
    assert (page.count, page.more, page.last_seq) == (50, True, 90) and [e.seq for e in paged] == list(range(41, 91))

    result = daemon.cli("transcripts", "--json")
    assert result.returncode == 0, result.stderr
    assert [e["text"] for e in json.loads(result.stdout)] == texts
    with daemon.client() as client:
        assert [e.text for e in client.transcripts_since(page=20)] == texts  # eight pages
        assert [e.seq for e in client.transcripts_since(after_seq=145, page=2)] == [146, 147, 148, 149, 150]
