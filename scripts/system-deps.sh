#!/usr/bin/env bash
# Debian/Ubuntu packages tcccd's set-up needs: libsystemd-dev + pkg-config to build systemd-python,
# espeak-ng (piper's phonemes, speech for tests), sox (audio tools), libportaudio2 and libpulse0 (the capture
# stage: PortAudio, and asking PulseAudio/PipeWire for its rate) and
# pulseaudio + pulseaudio-utils + libasound2-plugins (a private real-time virtual microphone for the capture
# tests), pipewire + pipewire-pulse + wireplumber + dbus-daemon (the same on PipeWire). Installs only what is
# missing (--no-install-recommends: nothing else of a desktop).
set -euo pipefail
need=()
for pkg in libsystemd-dev pkg-config espeak-ng sox libportaudio2 libpulse0 pulseaudio pulseaudio-utils libasound2-plugins \
           pipewire pipewire-pulse wireplumber dbus-daemon; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0
echo "system-deps: installing ${need[*]}"
if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "system-deps: need root to install ${need[*]} (apt-get install -y ${need[*]})" >&2; exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 \
    || { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"; }
