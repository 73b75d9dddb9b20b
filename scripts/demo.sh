#!/usr/bin/env bash
# make demo: start tcccd on its embedded default, transcribe the bundled samples (the kit's own Piper voice at
# several rates, and a real recording), show what was heard, what the record says, what was rewritten or
# rejected by the audio check and which words are uncertain; speak a confirmation, show status, stop.
# Everything runs offline on this machine's CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
tcccd=.venv/bin/tcccd
work=$(mktemp -d)
export XDG_RUNTIME_DIR="$work" XDG_STATE_HOME="$work" XDG_CACHE_HOME="${XDG_CACHE_HOME:-$HOME/.cache}"
export TCCCD_CONFIG="" TCCCD_ENDPOINT=""

if $tcccd status >/dev/null 2>&1; then
    echo "demo: a tcccd is already running on the default endpoint; stop it first" >&2; exit 1
fi
echo "== starting tcccd (embedded default; the first start exports the Whisper encoder to ONNX)"
$tcccd run >"$work/daemon.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 600); do  # every stage up: healthy, or degraded with its reason (a kit with no microphone here)
    state=$( ($tcccd status --json 2>/dev/null || true) \
        | .venv/bin/python -c 'import json, sys; print(json.load(sys.stdin).get("state", ""))' 2>/dev/null || true)
    [ "$state" = healthy ] || [ "$state" = degraded ] && break
    kill -0 $pid 2>/dev/null || { echo "demo: tcccd exited:"; tail -20 "$work/daemon.log"; exit 1; }
    sleep 1
done

echo; echo "== transcribing the bundled samples: said, heard, record, rewrites (with the audio's scores), unsure words"
while IFS=$'\t' read -r file reference; do
    [ -z "$file" ] && continue
    $tcccd transcribe --json --deadline 60 "$file" | .venv/bin/python scripts/demo_report.py "$reference"
done < samples/references.txt

echo "== silence must give nothing"
sox -n -r 16000 -c 1 -b 16 "$work/silence.wav" trim 0 5 2>/dev/null \
    || .venv/bin/python -c "import numpy,soundfile;soundfile.write('$work/silence.wav',numpy.zeros(80000),16000)"
printf 'silence.wav      heard: "%s"\n\n' "$($tcccd transcribe "$work/silence.wav")"

echo "== speaking a confirmation"
$tcccd speak "Tourniquet time logged, zero nine fifteen." -o "$work/confirmation.wav"
echo; echo "== status"
$tcccd status || true
echo; echo "== stopping"
