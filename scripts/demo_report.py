"""make demo: print one `tcccd transcribe --json` reply as a reviewer reads it.

What was said (the sample's reference), what the model heard, what goes on the
record, every rewrite with the audio's scores (heard vs written), the rewrites
the audio did not support, the words the model was unsure of, and any speech
that was not transcribed.

    tcccd transcribe --json FILE | python scripts/demo_report.py "REFERENCE"
"""

from __future__ import annotations

import json
import sys


def scores(entry: dict, heard_key: str, new_key: str) -> str:
    heard, new = entry.get(heard_key), entry.get(new_key)
    return "" if heard is None or new is None else f"  (audio: {new:.1f} vs heard {heard:.1f})"


def report(reply: dict, reference: str) -> list[str]:
    segments = reply.get("segments", [])
    lines = [f"  said:      {reference}", f"  heard:     {' '.join(s['heard'] for s in segments)}",
             f"  record:    {reply.get('text', '')}"]
    for s in segments:
        for c in s["corrections"]:
            lines.append(f"  rewritten: {c['heard']!r} -> {c['term']!r}"
                         + scores(c, "audio_logprob_heard", "audio_logprob_term"))
        for n in s["numbers"]:
            lines.append(f"  number:    {n['heard']!r} -> {n['written']!r} ({n['rule']})"
                         + scores(n, "audio_logprob_heard", "audio_logprob_written"))
        for c in s["considered"]:
            lines.append(f"  rejected:  {c['heard']!r} -> {c['proposed']!r} ({c['kind']})"
                         + scores(c, "audio_logprob_heard", "audio_logprob_proposed"))
        for u in s["uncertain"]:
            other = f", or {u['alternative']!r}?" if u["alternative"] else ""
            if u.get("twin"):  # a number the audio does not tell from its sound-alike
                other = (f", sounds like {u['twin']!r}: audio {u['audio_logprob_twin']:.1f} vs heard "
                         f"{u['audio_logprob_heard']:.1f}")
            lines.append(f"  unsure:    {u['text']!r} (p {u['probability']:.2f}{other})")
    for d in reply.get("dropped", []):
        lines.append(f"  LOST:      speech at {d['start_s']:.1f}-{d['end_s']:.1f} s not transcribed ({d['reason']})")
    return lines


def main() -> None:
    reply = json.loads(sys.stdin.read())
    print(reply.get("file", ""))
    print("\n".join(report(reply, sys.argv[1] if len(sys.argv) > 1 else "")))
    print()


if __name__ == "__main__":
    main()
