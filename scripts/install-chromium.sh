#!/usr/bin/env bash
# The browser test needs a Chromium-family browser and the ChromeDriver of the
# same major version. This script finds such a pair, or installs Debian's
# `chromium` and `chromium-driver` when there is none.
#
#   scripts/install-chromium.sh          # make sure a pair exists (installs if needed)
#   scripts/install-chromium.sh --find   # print the browser and the driver, one a line
#
# Where it looks, in this order: the variables CHROME_BIN and CHROMEDRIVER (a
# reader's own choice), then chromium, chromium-browser, google-chrome and
# google-chrome-stable with chromedriver (also $CHROMEWEBDRIVER/chromedriver).
# On GitHub's Ubuntu runners the `chromium` apt package is only a shim for a
# snap that cannot run there, but Google Chrome and its ChromeDriver come
# preinstalled: a candidate counts only if it answers --version with a version
# number, and the driver's major version must match the browser's.
set -euo pipefail

major_version() {
  timeout 30 "$1" --version 2>/dev/null | grep -oE '[0-9]+(\.[0-9]+)+' | head -n 1 | cut -d. -f1
}

find_pair() {
  local browsers=() drivers=() name path browser driver wanted
  if [ -n "${CHROME_BIN:-}" ]; then browsers+=("$CHROME_BIN"); fi
  if [ -n "${CHROMEDRIVER:-}" ]; then drivers+=("$CHROMEDRIVER"); fi
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    if path=$(command -v "$name"); then browsers+=("$path"); fi
  done
  if [ -n "${CHROMEWEBDRIVER:-}" ]; then drivers+=("$CHROMEWEBDRIVER/chromedriver"); fi
  if path=$(command -v chromedriver); then drivers+=("$path"); fi
  for browser in "${browsers[@]}"; do
    [ -x "$browser" ] || continue
    wanted=$(major_version "$browser") || continue
    for driver in "${drivers[@]}"; do
      [ -x "$driver" ] || continue
      if [ "$(major_version "$driver" || true)" = "$wanted" ]; then
        printf '%s\n%s\n' "$browser" "$driver"
        return 0
      fi
    done
  done
  return 1
}

if [ "${1:-}" = "--find" ]; then
  find_pair || {
    echo "No se encontró un navegador Chromium (o Google Chrome) con su ChromeDriver de la misma versión." >&2
    echo "Ejecuta scripts/install-chromium.sh, o indica los tuyos con CHROME_BIN=... y CHROMEDRIVER=..." >&2
    exit 1
  }
  exit 0
fi

if find_pair >/dev/null; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO="sudo"
  else
    cat >&2 <<'MSG'
La prueba del navegador necesita Chromium y ChromeDriver, que no están instalados,
y este script no puede instalarlos: no eres root y sudo no está disponible sin contraseña.
Instálalos tú (en Debian o Ubuntu: sudo apt-get install chromium chromium-driver)
o indica un navegador y su controlador con CHROME_BIN=... y CHROMEDRIVER=..., y vuelve a ejecutar make test.
MSG
    exit 1
  fi
fi
if ! command -v apt-get >/dev/null; then
  echo "Faltan Chromium y ChromeDriver, y esta máquina no tiene apt-get: instálalos con el gestor de paquetes de tu sistema o indica CHROME_BIN=... y CHROMEDRIVER=..." >&2
  exit 1
fi
echo "Instalando Chromium y ChromeDriver (paquetes de Debian chromium y chromium-driver)..."
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
if ! find_pair >/dev/null; then
  echo "Se instalaron los paquetes, pero no hay un Chromium que funcione con su ChromeDriver (en Ubuntu, 'chromium' es solo un acceso a un snap): instala Google Chrome y su ChromeDriver e indícalos con CHROME_BIN=... y CHROMEDRIVER=..." >&2
  exit 1
fi
