#!/usr/bin/env bash
# Builds the pinned Kubernetes control-plane binaries into a versioned cache folder.
# Usage: build.sh <output-dir> [kube|etcd|all]. Skips every binary that is already there.
set -euo pipefail
out=$1
what=${2:-all}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
version=$(awk '$1=="k8s.io/kubernetes"{print $2; exit}' "$here/go.mod")
minor=$(echo "$version" | cut -d. -f2)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean"
pkgs=()
for cmd in kube-apiserver kube-controller-manager kube-scheduler; do
  [ -x "$out/$cmd" ] || pkgs+=("k8s.io/kubernetes/cmd/$cmd")
done
if [ "$what" != etcd ] && [ ${#pkgs[@]} -gt 0 ]; then
  echo "building ${pkgs[*]} ${version} into $out (first time only: about 10 minutes on 2 cores)"
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/" "${pkgs[@]}")
fi
if [ "$what" != kube ] && [ ! -x "$out/etcd" ]; then
  echo "building etcd into $out"
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3)
fi
