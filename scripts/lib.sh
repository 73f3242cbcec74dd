# shellcheck shell=bash disable=SC2034  # variables are used by the sourcing scripts
# Shared helpers for the scripts in this directory. Sourced, not run.
#
# Every message goes to stderr so that a script's stdout stays clean for
# output meant to be consumed (`eval "$(scripts/mariadb.sh env)"`).

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPT_NAME=$(basename "$0" .sh)

# Debian keeps mariadbd and mariadb-install-db in /usr/sbin and /usr/bin, and a
# non-root user's PATH often lacks the sbin directories.
PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

say() { printf '%s: %s\n' "$SCRIPT_NAME" "$*" >&2; }
step() { printf '\n==> %s\n' "$*" >&2; }
die() {
    printf '%s: error: %s\n' "$SCRIPT_NAME" "$*" >&2
    exit 1
}

have() { command -v "$1" >/dev/null 2>&1; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif have sudo; then
        sudo "$@"
    else
        die "this step needs root and sudo is not installed: $*"
    fi
}

# Packages queued by `need`, installed together by `install_needed`.
NEEDED_PACKAGES=()
APT_UPDATED=0

# need PACKAGE COMMAND...: queue PACKAGE when any of the commands is missing.
need() {
    local package=$1 command
    shift
    for command in "$@"; do
        if ! have "$command"; then
            case " ${NEEDED_PACKAGES[*]-} " in
                *" $package "*) ;;
                *) NEEDED_PACKAGES+=("$package") ;;
            esac
            return
        fi
    done
}

install_needed() {
    if [ "${#NEEDED_PACKAGES[@]}" -eq 0 ]; then
        say "Debian packages: everything needed is installed"
        return
    fi
    have apt-get || die "missing ${NEEDED_PACKAGES[*]} and there is no apt-get to install them (this script targets Debian)"
    if [ "$APT_UPDATED" -eq 0 ]; then
        say "running apt-get update"
        as_root apt-get update -q
        APT_UPDATED=1
    fi
    say "installing Debian packages: ${NEEDED_PACKAGES[*]}"
    # The packages' own service (mariadb.service) may start, or be denied by
    # policy-rc.d in containers; either way the rig never uses it.
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
        "${NEEDED_PACKAGES[@]}"
    # The downloaded .deb files are not needed once unpacked; a small CI
    # disk needs the room for the build.
    as_root apt-get clean
    NEEDED_PACKAGES=()
}

need_mariadb() {
    need mariadb-server mariadbd mariadb-install-db
    need mariadb-client mariadb mariadb-admin
}

need_build_tools() {
    # cc links Rust binaries; c++ builds libFuzzer for the fuzz targets.
    need build-essential cc c++ make
    need pkg-config pkg-config
}

# Make cargo available, installing the stable toolchain with rustup when there
# is none: Debian's own rustc is older than the workspace's rust-version.
ensure_rust() {
    if ! have cargo && [ -x "$HOME/.cargo/bin/cargo" ]; then
        PATH="$HOME/.cargo/bin:$PATH"
    fi
    if have cargo; then
        say "Rust: $(cargo --version)"
        ensure_lint_tools
        return
    fi
    need curl curl
    need ca-certificates update-ca-certificates
    install_needed
    say "installing the stable Rust toolchain with rustup into $HOME/.cargo"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
        sh -s -- -y --no-modify-path --profile minimal --default-toolchain stable --component rustfmt,clippy
    PATH="$HOME/.cargo/bin:$PATH"
    say "Rust: $(cargo --version)"
}

# rustfmt and clippy, for scripts/test.sh's lint step: added through rustup
# when the toolchain came without them (rustup's minimal profile).
ensure_lint_tools() {
    if cargo fmt --version >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1; then
        return
    fi
    if have rustup; then
        say "adding rustfmt and clippy (rustup component add rustfmt clippy)"
        rustup component add rustfmt clippy
    else
        say "cargo fmt and cargo clippy are missing and there is no rustup to add them: install your distribution's rustfmt and clippy packages"
        exit 1
    fi
}
