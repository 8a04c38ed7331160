#!/usr/bin/env bash
# Installs what the console's browser test needs, once: Debian's Chromium (and
# Node.js with npm) when they are missing, and playwright-core at a pinned
# version into a versioned cache folder.
# Usage: install-browser.sh <output-dir> <playwright-core version>
set -euo pipefail
out=$1
version=$2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} from Debian's packages (first time only: about a minute)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -f "$out/node_modules/playwright-core/package.json" ]; then
  echo "installing playwright-core $version into $out"
  mkdir -p "$out"
  # No package.json and no lock file: the version is pinned here and in the Makefile.
  npm install --silent --no-save --no-package-lock --no-audit --no-fund --prefix "$out" "playwright-core@$version" >/dev/null
fi
