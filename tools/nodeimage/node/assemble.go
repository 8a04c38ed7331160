/*
Copyright 2026 The Flotilla Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func (b *Builder) rootfs() string { return filepath.Join(b.work, "rootfs") }

// unpackBase extracts the cached Debian base into this build's rootfs (once).
func (b *Builder) unpackBase(ctx context.Context) error {
	if exists(filepath.Join(b.rootfs(), "etc", "debian_version")) {
		return nil
	}
	if err := os.MkdirAll(b.rootfs(), 0o755); err != nil {
		return err
	}
	return b.command(ctx, b.rootfs(), nil, "tar", "--numeric-owner", "--xattrs", "-xf", b.baseTar())
}

// units are enabled in the node: containerd and kubelet.
var units = []string{"containerd.service", "kubelet.service"}

// masked are units that have nothing to do in a node container.
var masked = []string{"getty.target", "console-getty.service", "systemd-firstboot.service", "systemd-modules-load.service"}

// assemble lays the node's files, binaries and images over the base and imports
// the result into podman.
func (b *Builder) assemble(ctx context.Context) error {
	root := b.rootfs()
	if err := b.unpackBase(ctx); err != nil {
		return err
	}
	// The repository's files: entrypoint, units, containerd and CNI configuration.
	if err := b.command(ctx, b.opts.RepoRoot, nil, "cp", "-a", "--no-preserve=ownership", "tools/nodeimage/files/.", root+"/"); err != nil {
		return err
	}
	bins := map[string]string{
		"kubelet": b.kubeNodeDir, "kubeadm": b.kubeNodeDir, "kubectl": b.kubeNodeDir,
		"containerd": b.containerdDir, "containerd-shim-runc-v2": b.containerdDir, "ctr": b.containerdDir,
	}
	for name, dir := range bins {
		if err := b.command(ctx, root, nil, "install", "-m", "0755", filepath.Join(dir, name), filepath.Join(root, "usr/local/bin", name)); err != nil {
			return err
		}
	}
	// kind reads the node's Kubernetes version from /kind/version.
	if err := os.WriteFile(filepath.Join(root, "kind", "version"), []byte(b.versions.Kubernetes+"\n"), 0o644); err != nil {
		return err
	}
	// Each node container gets its own machine id at start (entrypoint).
	if err := os.WriteFile(filepath.Join(root, "etc", "machine-id"), nil, 0o444); err != nil {
		return err
	}
	wants := filepath.Join(root, "etc/systemd/system/multi-user.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		return err
	}
	for _, u := range units {
		link := filepath.Join(wants, u)
		os.Remove(link)
		if err := os.Symlink("/etc/systemd/system/"+u, link); err != nil {
			return err
		}
	}
	for _, u := range masked {
		link := filepath.Join(root, "etc/systemd/system", u)
		os.Remove(link)
		if err := os.Symlink("/dev/null", link); err != nil {
			return err
		}
	}
	tarCmd := exec.CommandContext(ctx, "tar", "--numeric-owner", "--xattrs", "-C", root, "-c", ".")
	importCmd := exec.CommandContext(ctx, "podman", "import",
		"--change", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`,
		"--change", "STOPSIGNAL SIGRTMIN+3",
		"--change", "ENV container=podman",
		"--change", "LABEL org.opencontainers.image.title=flotilla-node",
		"--change", "LABEL org.opencontainers.image.version="+b.versions.Kubernetes,
		"--change", "LABEL io.flotilla.containerd="+b.versions.Containerd,
		"-", b.image)
	pipe, err := tarCmd.StdoutPipe()
	if err != nil {
		return err
	}
	importCmd.Stdin = pipe
	var stderr strings.Builder
	tarCmd.Stderr = &stderr
	importCmd.Stderr = &stderr
	if err := tarCmd.Start(); err != nil {
		return err
	}
	out, err := importCmd.Output()
	if werr := tarCmd.Wait(); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("podman import: %w: %s", err, stderr.String())
	}
	fmt.Fprintf(b.opts.Out, "    imported %s (%s)\n", b.image, strings.TrimSpace(string(out)))
	b.removeOlderImages(ctx)
	return nil
}

// removeOlderImages removes the node images of earlier inputs (each is about
// 700 MB); one that a kind node still runs stays.
func (b *Builder) removeOlderImages(ctx context.Context) {
	out, err := exec.CommandContext(ctx, "podman", "images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", "reference="+Repository).Output()
	if err != nil {
		return
	}
	for _, image := range strings.Fields(string(out)) {
		if image != b.image && strings.HasPrefix(image, Repository+":") {
			if exec.CommandContext(ctx, "podman", "rmi", image).Run() == nil {
				fmt.Fprintf(b.opts.Out, "    removed the older node image %s\n", image)
			}
		}
	}
}
