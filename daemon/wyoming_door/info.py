"""What the Wyoming `describe` answers: tcccd's Whisper and Piper, read from the daemon's own status.

Only what runs is advertised: an `asr` program when a stage serves `transcribe`,
a `tts` program when one serves `speak`, with the model and voice the stages
report loaded. Synthesis streaming is advertised because `speak` replies
sentence by sentence; transcript streaming only when the door streams
transcriptions (tcccd.wyoming_door.asr), which it decides from its settings and
the `stream` route.
"""

from __future__ import annotations

from wyoming.info import AsrModel, AsrProgram, Attribution, Info, TtsProgram, TtsVoice

from tcccd import __version__
from tcccd.wire.status import PluginHealth, StatusReport

TCCCD = Attribution(name="OpenAI Whisper, served by tcccd", url="https://github.com/openai/whisper")
PIPER = Attribution(name="rhasspy", url="https://github.com/rhasspy/piper")
ASR_PROGRAM, TTS_PROGRAM = "tcccd-whisper", "tcccd-piper"
PROGRAMS = (ASR_PROGRAM, TTS_PROGRAM)  # what a client may name in select-program


def _stage_health(report: StatusReport, plugin: str) -> PluginHealth | None:
    return next((stage.plugin_health for stage in report.stages if stage.plugin == plugin), None)


def describe(report: StatusReport, transcript_streaming: bool) -> Info:
    info = Info()
    whisper = _stage_health(report, "whisper")
    if whisper is not None:
        model = whisper.fact("model") or "tiny.en"
        info.asr.append(AsrProgram(
            name=ASR_PROGRAM, description="tcccd's Whisper (English)", attribution=TCCCD, installed=True,
            version=__version__, supports_transcript_streaming=transcript_streaming,
            models=[AsrModel(name=model, description=f"Whisper {model}", attribution=TCCCD, installed=True,
                             version=None, languages=["en"])]))
    piper = _stage_health(report, "piper")
    if piper is not None:
        voice = piper.fact("voice") or "en_US-joe-medium"
        info.tts.append(TtsProgram(
            name=TTS_PROGRAM, description="tcccd's Piper voice", attribution=PIPER, installed=True,
            version=__version__, supports_synthesize_streaming=True,
            voices=[TtsVoice(name=voice, description=f"Piper {voice}", attribution=PIPER, installed=True,
                             version=None, languages=["en"])]))
    return info
