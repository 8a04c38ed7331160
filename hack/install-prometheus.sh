#!/usr/bin/env bash
# Installs Debian's prometheus package when prometheus is not on PATH: the PromQL
# analysis tests (hub/updaterun) start it on a free port with a config of their
# own. Needs root or sudo (apt-get). The package's service is not what the tests
# use; where services start on install, stop it with your init system.
set -euo pipefail
if command -v prometheus >/dev/null; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "installing prometheus from Debian's packages (first time only: about a minute)"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
command -v prometheus >/dev/null || { echo "prometheus is still not on PATH after apt-get install"; exit 1; }
