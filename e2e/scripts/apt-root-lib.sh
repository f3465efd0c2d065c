# Sourced by provision-chromium.sh and provision-prometheus.sh: how a tool the tests need is
# installed from a Debian package when it is not there. Needs log().

# Sets SUDO to what runs apt-get as root (empty as root, `sudo -n` otherwise), or logs why the
# package cannot be installed here and exits 1: $1 when there is no apt-get, $2 when there is no
# root and no sudo (each message one or more lines, the first after "error: ").
apt_root() {
  if ! command -v apt-get >/dev/null 2>&1; then
    log_lines "error: $1"
    exit 1
  fi
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO="sudo -n"
    else
      log_lines "error: $2"
      exit 1
    fi
  fi
}

log_lines() { # TEXT: each of its lines logged
  local line
  while IFS= read -r line; do log "$line"; done <<<"$1"
}
