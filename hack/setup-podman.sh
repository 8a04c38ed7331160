#!/usr/bin/env bash
# Makes this machine ready for kind fleets (make podman): installs podman, runc and
# debootstrap from Debian's packages when they are missing, points podman at runc
# with rlimits this machine allows, and checks that privileged containers run.
# Safe to repeat; it changes nothing once the machine is ready.
set -euo pipefail

fail() { echo "kind fleets cannot run on this machine: $*" >&2; exit 1; }

missing=()
for cmd in podman runc debootstrap; do
  command -v "$cmd" >/dev/null || missing+=("$cmd")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || fail "${missing[*]} missing; install them as root (apt-get install ${missing[*]})"
  command -v apt-get >/dev/null || fail "${missing[*]} missing and there is no apt-get to install them"
  echo "installing ${missing[*]} from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ "$(id -u)" = 0 ] || fail "kind's podman provider here runs as root (the nodes are privileged containers)"

# crun refuses hybrid cgroup v1 hosts and podman's default rlimits exceed what a
# process may raise here, so: runc, and the machine's own hard limits. conmon caps
# its NPROC at 32768, so containers may not ask for more.
limit() { local v=$1 cap=$2; if [ "$v" = unlimited ] || [ "$v" -gt "$cap" ]; then echo "$cap"; else echo "$v"; fi; }
nofile=$(limit "$(ulimit -Hn)" 1048576)
nproc=$(limit "$(ulimit -Hu)" 32768)
conf=/etc/containers/containers.conf
marker="# Written by Flotilla's hack/setup-podman.sh"
want="$marker: runc, and rlimits this machine allows.
[containers]
default_ulimits = [\"nofile=${nofile}:${nofile}\", \"nproc=${nproc}:${nproc}\"]
[engine]
runtime = \"runc\""
if [ ! -f "$conf" ] || head -1 "$conf" | grep -qF "$marker"; then
  if [ "$(cat "$conf" 2>/dev/null)" != "$want" ]; then
    mkdir -p "$(dirname "$conf")"
    printf '%s\n' "$want" >"$conf"
    echo "configured podman in $conf (runtime runc, nofile=$nofile, nproc=$nproc)"
  fi
elif ! grep -Eq '^runtime *= *"runc"' "$conf"; then
  fail "$conf exists and does not set runtime = \"runc\" under [engine] (crun cannot run on cgroup v1 hybrid hosts)"
fi

# kind mounts the host's /lib/modules into every node; a machine without kernel
# module files still needs the folder.
[ -d /lib/modules ] || { mkdir -p /lib/modules && echo "created the empty /lib/modules kind mounts into its nodes"; }

# A one-file root (a static program that exits 0) serves: no image is needed to check.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src" "$dir/root"
printf 'package main\n\nfunc main() {}\n' >"$dir/src/main.go"
(cd "$dir/src" && GOFLAGS= GO111MODULE=off CGO_ENABLED=0 go build -o "$dir/root/true" main.go) || fail "cannot build the check program (is Go installed?)"
if ! out=$(podman run --rm --privileged --net=none --rootfs "$dir/root" /true 2>&1); then
  fail "podman cannot run a privileged container: $(echo "$out" | tail -1)"
fi
