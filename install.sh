#!/usr/bin/env bash
# Install tcccd as a systemd service: user, virtual environment, config, unit. Safe to re-run.
# Run ./install.sh --help for the options; docs/operations.md explains what it sets up.
set -Eeuo pipefail

usage() {
    cat <<'EOF'
Usage: install.sh [options]

Installs tcccd: the system user `tcccd`, a virtual environment in /opt/tcccd/venv, the config in
/etc/tcccd/tcccd.yaml (an operator's edits are never overwritten), the systemd unit; then enables and
starts it. Re-running changes only what differs.

Options:
  --root DIR         install into the staging tree DIR (packaging, tests): no user is created and
                     systemctl is not run; those steps are printed as skipped
  --dry-run          print every step without doing it
  --uninstall        remove the unit, the venv, the docs and the user; keep /etc/tcccd and /var/lib/tcccd
  --purge            with --uninstall: also remove /etc/tcccd, /var/lib/tcccd and /var/cache/tcccd
  --python PATH      interpreter for the venv (default: python3; on a Jetson /usr/bin/python3)
  --platform NAME    jetson, generic or auto (default: auto, a Jetson has /etc/nv_tegra_release)
  --extras LIST      tcccd extras to install, comma-separated, or none (default: asr,tts,systemd,capture,card)
  --wheel FILE       install this prebuilt tcccd wheel instead of building one from this checkout
                     (offline installs: build it with `pip wheel --no-deps .` on another machine)
  --pip-args ARGS    extra arguments for pip install, e.g. "--no-deps --no-index" (word-split)
  --no-start         install and enable, but do not start or restart the service
  -h, --help         show this help
EOF
}

die() { echo "install.sh: error: $*" >&2; exit 1; }
say() { echo "==> $*"; }

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT="" DRY_RUN=0 UNINSTALL=0 PURGE=0 PYTHON="" PLATFORM=auto EXTRAS="asr,tts,systemd,capture,card"
WHEEL="" PIP_ARGS="" START=1 CHANGES=0

while [[ $# -gt 0 ]]; do
    case "$1" in
        --root) [[ $# -ge 2 && -n "$2" ]] || die "--root needs a directory"; ROOT=$2; shift 2 ;;
        --dry-run) DRY_RUN=1; shift ;;
        --uninstall) UNINSTALL=1; shift ;;
        --purge) PURGE=1; shift ;;
        --python) [[ $# -ge 2 ]] || die "--python needs an interpreter path"; PYTHON=$2; shift 2 ;;
        --platform) [[ $# -ge 2 ]] || die "--platform needs jetson, generic or auto"; PLATFORM=$2; shift 2 ;;
        --extras) [[ $# -ge 2 ]] || die "--extras needs a list such as asr,tts or none"; EXTRAS=$2; shift 2 ;;
        --wheel) [[ $# -ge 2 ]] || die "--wheel needs a .whl file"; WHEEL=$2; shift 2 ;;
        --pip-args) [[ $# -ge 2 ]] || die "--pip-args needs a string"; PIP_ARGS=$2; shift 2 ;;
        --no-start) START=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option '$1' (accepted: --root DIR, --dry-run, --uninstall, --purge, --python PATH,
       --platform jetson|generic|auto, --extras LIST, --wheel FILE, --pip-args ARGS, --no-start, --help)" ;;
    esac
done

[[ $PURGE -eq 0 || $UNINSTALL -eq 1 ]] || die "--purge only goes with --uninstall"
[[ $PLATFORM =~ ^(auto|jetson|generic)$ ]] || die "--platform must be jetson, generic or auto, not '$PLATFORM'"
[[ $EXTRAS =~ ^(none|[a-z]+(,[a-z]+)*)$ ]] || die "--extras must be 'none' or a list like asr,tts,systemd"
if [[ -n $ROOT ]]; then
    [[ $ROOT == /* ]] || ROOT="$PWD/$ROOT"
    ROOT=${ROOT%/}
    [[ -n $ROOT ]] || die "--root / is the host: leave --root out instead"
fi
if [[ -n $WHEEL ]]; then
    [[ -f $WHEEL && $WHEEL == *.whl ]] || die "--wheel '$WHEEL' is not a .whl file"
    WHEEL=$(cd "$(dirname "$WHEEL")" && pwd)/$(basename "$WHEEL")
fi
if [[ -z $ROOT && $DRY_RUN -eq 0 && $(id -u) -ne 0 ]]; then
    die "run as root (sudo $0 ...), or use --root DIR to stage, or --dry-run to see the steps"
fi

OPT_DIR="$ROOT/opt/tcccd" VENV="$ROOT/opt/tcccd/venv" ETC_DIR="$ROOT/etc/tcccd"
CONFIG="$ROOT/etc/tcccd/tcccd.yaml" CONFIG_SUM="$ROOT/etc/tcccd/.tcccd.yaml.installed.sha256"
UNIT="$ROOT/etc/systemd/system/tcccd.service" DOC_DIR="$ROOT/usr/share/doc/tcccd"
HELPER_UNITS=(tcccd-nvpmodel.socket tcccd-nvpmodel.service)
STATE_DIR="$ROOT/var/lib/tcccd" CACHE_DIR="$ROOT/var/cache/tcccd" STAMP="$ROOT/opt/tcccd/venv/.tcccd-install.sha256"

WORK_DIR=$(mktemp -d)
trap 'rm -rf "$WORK_DIR"' EXIT
trap 'echo "install.sh: error: this step failed: $BASH_COMMAND" >&2' ERR

# Every change goes through run: printed always, done unless --dry-run.
run() {
    echo "+ $*"
    [[ $DRY_RUN -eq 1 ]] || "$@"
}
changed() { CHANGES=$((CHANGES + 1)); say "$*"; }
# Steps that would touch the host's users or services are never run against a staging tree.
host() {
    if [[ -n $ROOT ]]; then
        echo "skipped (--root $ROOT): $*"
    else
        run "$@"
    fi
}
sha() { sha256sum "$1" | cut -d' ' -f1; }
systemd_running() { [[ -z $ROOT && -d /run/systemd/system ]]; }

detect_platform() {
    if [[ $PLATFORM == auto ]]; then
        if [[ -f /etc/nv_tegra_release ]]; then PLATFORM=jetson; else PLATFORM=generic; fi
    fi
    if [[ -z $PYTHON ]]; then
        if [[ $PLATFORM == jetson ]]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
    fi
    command -v "$PYTHON" >/dev/null || die "python '$PYTHON' not found (choose one with --python PATH)"
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
        || die "$PYTHON is older than Python 3.10, which tcccd needs"
    "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null \
        || die "$PYTHON cannot create virtual environments: apt-get install python3-venv"
    say "platform: $PLATFORM ($(uname -m)), python: $PYTHON ($("$PYTHON" -c 'import platform; print(platform.python_version())'))"
}

# pip constraints: a CPU machine pins torch to the CPU wheel (any other spec pulls GBs of CUDA);
# a Jetson keeps JetPack's torch, which pip must never replace with a PyPI build.
write_constraints() {
    local file=$1
    if [[ $PLATFORM == jetson ]]; then
        local torch_version
        torch_version=$("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null) \
            || die "JetPack's torch is not importable by $PYTHON: install NVIDIA's torch wheel for JetPack 6 first
       (pip would otherwise fetch a CPU-only torch from PyPI); see docs/operations.md"
        echo "torch==$torch_version" >"$file"
        say "keeping JetPack's torch $torch_version"
    elif [[ $(uname -m) == x86_64 ]] && ! command -v nvidia-smi >/dev/null; then
        cp "$REPO_DIR/constraints-cpu.txt" "$file"
    else
        : >"$file"
    fi
}

install_venv() {
    local spec=$REPO_DIR extras_suffix="" constraints fingerprint
    [[ -n $WHEEL ]] && spec=$WHEEL
    [[ $EXTRAS != none ]] && extras_suffix="[$EXTRAS]"
    if [[ $EXTRAS == *systemd* ]] && ! pkg-config --exists libsystemd 2>/dev/null \
        && ! "$PYTHON" -c 'import systemd.journal' 2>/dev/null; then
        die "the systemd extra builds systemd-python: apt-get install libsystemd-dev pkg-config (or leave it out of --extras)"
    fi
    if [[ $EXTRAS == *capture* ]] && ! ldconfig -p 2>/dev/null | grep -q 'libportaudio\.so\.2'; then
        die "the capture extra (microphone, speaker) needs PortAudio at run time: apt-get install libportaudio2"
    fi
    constraints="$WORK_DIR/constraints.txt"
    write_constraints "$constraints"
    fingerprint=$(source_fingerprint "$constraints")
    if [[ -x $VENV/bin/python ]] && "$VENV/bin/python" -c 'import tcccd' 2>/dev/null \
        && [[ -f $STAMP && $(cat "$STAMP") == "$fingerprint" ]]; then
        say "venv $VENV: up to date"
        return
    fi
    local venv_args=()
    [[ $PLATFORM == jetson ]] && venv_args+=(--system-site-packages)
    [[ -x $VENV/bin/python ]] || run "$PYTHON" -m venv "${venv_args[@]}" "$VENV"
    # shellcheck disable=SC2086  # PIP_ARGS is a list of words on purpose
    run "$VENV/bin/python" -m pip install --disable-pip-version-check -c "$constraints" $PIP_ARGS "$spec$extras_suffix"
    [[ $DRY_RUN -eq 1 ]] || echo "$fingerprint" >"$STAMP"
    changed "venv $VENV: tcccd installed"
}

# What decides whether the venv is current: the sources (or wheel), extras, pip arguments and constraints.
source_fingerprint() {
    {
        if [[ -n $WHEEL ]]; then
            sha "$WHEEL"
        else
            (cd "$REPO_DIR" && find pyproject.toml daemon plugins profiles -type f \
                ! -path '*/__pycache__/*' ! -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum)
        fi
        echo "extras=$EXTRAS pip=$PIP_ARGS platform=$PLATFORM python=$PYTHON"
        cat "$1"
    } | sha256sum | cut -d' ' -f1
}

# The operator's config wins: replace it only while it is still exactly what install.sh put there.
install_config() {
    local default="$REPO_DIR/daemon/default.yaml" new_sum
    new_sum=$(sha "$default")
    [[ -d $ETC_DIR ]] || run install -d -m 0755 "$ETC_DIR"
    if [[ ! -e $CONFIG ]]; then
        run install -m 0640 "$default" "$CONFIG"
        changed "config $CONFIG: installed"
    elif cmp -s "$default" "$CONFIG"; then
        say "config $CONFIG: unchanged"
    elif [[ -f $CONFIG_SUM && $(cat "$CONFIG_SUM") == "$(sha "$CONFIG")" ]]; then
        run install -m 0640 "$default" "$CONFIG"
        changed "config $CONFIG: updated to the new default (it had not been edited)"
    elif [[ -f $CONFIG.new ]] && cmp -s "$default" "$CONFIG.new"; then
        say "config $CONFIG: kept (edited by the operator); the new default is already in $CONFIG.new"
    else
        run install -m 0640 "$default" "$CONFIG.new"
        changed "config $CONFIG: kept (edited by the operator); new default written to $CONFIG.new: compare and merge"
    fi
    if [[ ! -f $CONFIG_SUM || $(cat "$CONFIG_SUM") != "$new_sum" ]]; then
        if [[ $DRY_RUN -eq 1 ]]; then echo "+ record sha256 of the default in $CONFIG_SUM"; else echo "$new_sum" >"$CONFIG_SUM"; fi
    fi
    if [[ -z $ROOT ]] && getent group tcccd >/dev/null; then
        [[ $(stat -c %G "$CONFIG" 2>/dev/null) == tcccd ]] || run chgrp tcccd "$CONFIG"
    fi
}

install_file() {
    local source=$1 target=$2 what=$3
    if cmp -s "$source" "$target"; then
        say "$what $target: unchanged"
        return 1
    fi
    [[ -d $(dirname "$target") ]] || run install -d -m 0755 "$(dirname "$target")"
    run install -m 0644 "$source" "$target"
    changed "$what $target: installed"
}

create_user() {
    if getent passwd tcccd >/dev/null && [[ -z $ROOT ]]; then
        say "user tcccd: exists"
    else
        host useradd --system --user-group --home-dir /var/lib/tcccd --no-create-home \
            --shell /usr/sbin/nologin --comment "tcccd voice daemon" tcccd
        [[ -n $ROOT ]] || changed "user tcccd: created"
    fi
    local group
    for group in audio video render; do
        getent group "$group" >/dev/null || continue
        if [[ -z $ROOT ]] && id -nG tcccd 2>/dev/null | tr ' ' '\n' | grep -qx "$group"; then
            continue
        fi
        host usermod --append --groups "$group" tcccd
        [[ -n $ROOT ]] || changed "user tcccd: added to group $group"
    done
}

start_service() {
    local unit_changed=$1
    if [[ -n $ROOT ]]; then
        echo "skipped (--root $ROOT): systemctl daemon-reload; systemctl enable --now tcccd.service"
        [[ $PLATFORM != jetson ]] || echo "skipped (--root $ROOT): systemctl enable --now tcccd-nvpmodel.socket"
        return
    fi
    [[ $unit_changed -eq 0 ]] || ! systemd_running || run systemctl daemon-reload
    # The power mode helper (root, behind a socket only group tcccd may use) exists for nvpmodel: Jetson only.
    if [[ $PLATFORM == jetson ]] && ! systemctl is-enabled --quiet tcccd-nvpmodel.socket 2>/dev/null; then
        run systemctl enable --now tcccd-nvpmodel.socket
        changed "power mode helper: tcccd-nvpmodel.socket enabled"
    fi
    if systemctl is-enabled --quiet tcccd.service 2>/dev/null; then
        say "service: enabled"
    else
        run systemctl enable tcccd.service
        changed "service: enabled at boot"
    fi
    if [[ $START -eq 0 ]]; then
        say "service: not started (--no-start)"
    elif ! systemd_running; then
        say "service: systemd is not running here; it starts at next boot"
    elif [[ $CHANGES -gt 0 ]] && systemctl is-active --quiet tcccd.service; then
        run systemctl restart tcccd.service
        say "service: restarted to pick up the changes"
    elif systemctl is-active --quiet tcccd.service; then
        say "service: running"
    else
        run systemctl start tcccd.service
        changed "service: started (follow it with: journalctl -u tcccd -f)"
    fi
}

do_install() {
    detect_platform
    local unit_changed=0
    create_user
    [[ -d $OPT_DIR ]] || run install -d -m 0755 "$OPT_DIR"
    install_venv
    install_config
    install_file "$REPO_DIR/systemd/tcccd.service" "$UNIT" "unit" && unit_changed=1
    local helper
    for helper in "${HELPER_UNITS[@]}"; do
        install_file "$REPO_DIR/systemd/$helper" "$ROOT/etc/systemd/system/$helper" "unit" && unit_changed=1
    done
    install_file "$REPO_DIR/docs/operations.md" "$DOC_DIR/operations.md" "docs" || true
    start_service "$unit_changed"
}

remove() {
    local path=$1
    if [[ -e $path || -L $path ]]; then
        run rm -rf -- "$path"
        changed "removed $path"
    fi
}

do_uninstall() {
    if [[ -z $ROOT ]] && systemctl list-unit-files tcccd.service >/dev/null 2>&1 && [[ -e $UNIT ]]; then
        run systemctl disable --now tcccd.service || true
    elif [[ -n $ROOT ]]; then
        echo "skipped (--root $ROOT): systemctl disable --now tcccd.service"
    fi
    if [[ -z $ROOT ]] && systemctl list-unit-files tcccd-nvpmodel.socket >/dev/null 2>&1; then
        run systemctl disable --now tcccd-nvpmodel.socket tcccd-nvpmodel.service || true
    fi
    remove "$UNIT"
    local helper
    for helper in "${HELPER_UNITS[@]}"; do remove "$ROOT/etc/systemd/system/$helper"; done
    systemd_running && run systemctl daemon-reload
    remove "$OPT_DIR"
    remove "$DOC_DIR"
    if [[ -n $ROOT ]]; then
        echo "skipped (--root $ROOT): userdel tcccd"
    elif getent passwd tcccd >/dev/null; then
        run userdel tcccd
        changed "user tcccd: removed"
    fi
    if [[ $PURGE -eq 1 ]]; then
        remove "$ETC_DIR"
        remove "$STATE_DIR"
        remove "$CACHE_DIR"
    else
        say "kept $ETC_DIR and $STATE_DIR (add --purge to remove them)"
    fi
}

[[ $DRY_RUN -eq 0 ]] || say "dry run: nothing is changed"
if [[ $UNINSTALL -eq 1 ]]; then do_uninstall; else do_install; fi
if [[ $DRY_RUN -eq 1 ]]; then
    say "dry run finished: nothing was changed"
elif [[ $CHANGES -eq 0 ]]; then
    say "nothing changed: tcccd is already $([[ $UNINSTALL -eq 1 ]] && echo uninstalled || echo installed and up to date)"
else
    say "done: $CHANGES change(s)"
fi
