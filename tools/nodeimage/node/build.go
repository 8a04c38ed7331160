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
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/tools/toolchain"
)

// Packages are the Debian packages of the node's base, besides debootstrap's
// minbase: systemd as PID 1, iptables (nft) for kube-proxy and the CNI's masquerade,
// runc for containerd, the CNI plugins (ptp, host-local, portmap, loopback), and
// what kubelet and kubeadm call (mount, findmnt, ip, conntrack).
var Packages = []string{
	"systemd", "systemd-sysv", "dbus", "iptables", "iproute2", "ca-certificates",
	"runc", "containernetworking-plugins", "conntrack", "procps", "kmod",
}

// Suite is the Debian release of the node's base.
const Suite = "bookworm"

// Options configure Build.
type Options struct {
	// RepoRoot is the Flotilla checkout. Required.
	RepoRoot string
	// Cache is the folder of the versioned tool cache. Default: toolchain.CacheDir().
	Cache string
	// Out receives progress and the timing of each step. Default: os.Stdout.
	Out io.Writer
	// Force rebuilds the image even when podman has it (the cached binaries and
	// base are reused).
	Force bool
}

// Builder builds the node image.
type Builder struct {
	opts     Options
	versions Versions
	image    string
	// Folders of the cached parts.
	kubeNodeDir, controlPlaneDir, containerdDir, corednsDir, nodeDir string
	// work is this build's scratch folder, removed at the end.
	work string
	// timings are the steps' durations, for the record.
	timings []string
}

// NewBuilder reads the versions and names the image.
func NewBuilder(opts Options) (*Builder, error) {
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.Cache == "" {
		c, err := toolchain.CacheDir()
		if err != nil {
			return nil, err
		}
		opts.Cache = c
	}
	v, err := ReadVersions(opts.RepoRoot)
	if err != nil {
		return nil, err
	}
	image, err := ImageName(opts.RepoRoot)
	if err != nil {
		return nil, err
	}
	b := &Builder{opts: opts, versions: v, image: image}
	b.kubeNodeDir = filepath.Join(opts.Cache, "kube-node-"+v.Kubernetes)
	b.controlPlaneDir = filepath.Join(opts.Cache, "kube-"+v.Kubernetes+"-etcd-"+v.Etcd)
	b.containerdDir = filepath.Join(opts.Cache, "containerd-"+v.Containerd)
	plugins, err := corednsPlugins(opts.RepoRoot)
	if err != nil {
		return nil, err
	}
	b.corednsDir = filepath.Join(opts.Cache, "coredns-"+v.CoreDNS+"-"+plugins)
	b.nodeDir = filepath.Join(opts.Cache, "nodeimage")
	return b, nil
}

// Image is the name of the node image this checkout builds.
func (b *Builder) Image() string { return b.image }

type step struct {
	name string
	// done reports that the step's output is already there.
	done func() bool
	run  func(ctx context.Context) error
}

// Build builds whatever is missing, then the image; with the image already in
// podman it does nothing.
func (b *Builder) Build(ctx context.Context) error {
	if !b.opts.Force && ImageExists(ctx, b.image) {
		fmt.Fprintf(b.opts.Out, "node image %s is up to date\n", b.image)
		return nil
	}
	if err := os.MkdirAll(b.nodeDir, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp(b.nodeDir, "work-")
	if err != nil {
		return fmt.Errorf("failed to create a work folder: %w", err)
	}
	b.work = work
	defer os.RemoveAll(work)

	steps := []step{
		{"kubelet, kubeadm, kubectl and kube-proxy " + b.versions.Kubernetes + " from source",
			b.haveAll(b.kubeNodeDir, "kubelet", "kubeadm", "kubectl", "kube-proxy"), b.buildKubeNode},
		{"control plane " + b.versions.Kubernetes + " and etcd " + b.versions.Etcd + " from source (as `make tools`)",
			b.haveAll(b.controlPlaneDir, "kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"), b.buildControlPlane},
		{"containerd " + b.versions.Containerd + " from source",
			b.haveAll(b.containerdDir, "containerd", "containerd-shim-runc-v2", "ctr"), b.buildContainerd},
		{"CoreDNS " + b.versions.CoreDNS + " from source",
			b.haveAll(b.corednsDir, "coredns"), b.buildCoreDNS},
		{"Debian " + Suite + " base with systemd (debootstrap)",
			func() bool { return exists(b.baseTar()) }, b.buildBase},
		{"component images (control plane, kube-proxy, etcd, CoreDNS, pause)", never, b.buildComponentImages},
		{"node image " + b.image, never, b.assemble},
	}
	total := time.Now()
	for i, s := range steps {
		if s.done() {
			b.record(fmt.Sprintf("[%d/%d] %s: cached", i+1, len(steps), s.name))
			continue
		}
		fmt.Fprintf(b.opts.Out, "[%d/%d] %s ...\n", i+1, len(steps), s.name)
		start := time.Now()
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		b.record(fmt.Sprintf("[%d/%d] %s: %s", i+1, len(steps), s.name, time.Since(start).Round(time.Second)))
	}
	b.record(fmt.Sprintf("node image %s built in %s", b.image, time.Since(total).Round(time.Second)))
	return b.saveTimings()
}

func never() bool { return false }

func (b *Builder) record(line string) {
	fmt.Fprintln(b.opts.Out, line)
	b.timings = append(b.timings, time.Now().UTC().Format(time.RFC3339)+" "+line)
}

// saveTimings appends this build's step times to nodeimage/timings.log in the cache.
func (b *Builder) saveTimings() error {
	f, err := os.OpenFile(filepath.Join(b.nodeDir, "timings.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, strings.Join(b.timings, "\n"))
	return err
}

func (b *Builder) haveAll(dir string, names ...string) func() bool {
	return func() bool {
		for _, n := range names {
			if !exists(filepath.Join(dir, n)) {
				return false
			}
		}
		return true
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ImageExists reports whether podman has image.
func ImageExists(ctx context.Context, image string) bool {
	return exec.CommandContext(ctx, "podman", "image", "exists", image).Run() == nil
}

// command runs name with args in dir, its output going to the progress writer.
func (b *Builder) command(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = b.opts.Out
	cmd.Stderr = b.opts.Out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// goBuild builds static, stripped commands of the pinning module in dir into out.
func (b *Builder) goBuild(ctx context.Context, dir, out string, tags, ldflags string, pkgs ...string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// Build into a scratch folder and move, so an interrupted build leaves no
	// half-written binary that a later run would take as cached.
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := []string{"build", "-trimpath", "-ldflags", "-s -w " + ldflags, "-o", tmp + "/"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	if err := b.command(ctx, filepath.Join(b.opts.RepoRoot, dir), []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64"}, "go", append(args, pkgs...)...); err != nil {
		return err
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.Rename(filepath.Join(tmp, e.Name()), filepath.Join(out, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func (b *Builder) kubeLdflags() string {
	v := b.versions.Kubernetes
	minor := strings.Split(v, ".")[1]
	return "-X k8s.io/component-base/version.gitVersion=" + v +
		" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=" + minor +
		" -X k8s.io/component-base/version.gitTreeState=clean"
}

func (b *Builder) buildKubeNode(ctx context.Context) error {
	return b.goBuild(ctx, "tools/k8s", b.kubeNodeDir, "", b.kubeLdflags(),
		"k8s.io/kubernetes/cmd/kubelet", "k8s.io/kubernetes/cmd/kubeadm",
		"k8s.io/kubernetes/cmd/kubectl", "k8s.io/kubernetes/cmd/kube-proxy")
}

func (b *Builder) buildControlPlane(ctx context.Context) error {
	return b.command(ctx, b.opts.RepoRoot, nil, "tools/k8s/build.sh", b.controlPlaneDir)
}

func (b *Builder) buildContainerd(ctx context.Context) error {
	return b.goBuild(ctx, "tools/nodeimage/pins/containerd", b.containerdDir,
		// No btrfs, devmapper or zfs snapshotters (they need cgo); overlayfs serves.
		"no_btrfs no_devmapper no_zfs osusergo netgo",
		"-X github.com/containerd/containerd/v2/version.Version="+b.versions.Containerd,
		"github.com/containerd/containerd/v2/cmd/containerd",
		"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2",
		"github.com/containerd/containerd/v2/cmd/ctr")
}

// corednsMain is the CoreDNS command the node image carries: CoreDNS with
// the plugins a cluster's Corefile uses (the file says which and why).
const corednsMain = "tools/nodeimage/pins/coredns/main.go"

func (b *Builder) buildCoreDNS(ctx context.Context) error {
	return b.goBuild(ctx, filepath.Dir(corednsMain), b.corednsDir, "", "", ".")
}

// corednsPlugins names the plugin set of corednsMain (a hash of the file), so
// that the cached binary is built again when the set changes.
func corednsPlugins(repoRoot string) (string, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot, corednsMain))
	if err != nil {
		return "", fmt.Errorf("failed to read CoreDNS's plugin set: %w", err)
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])[:12], nil
}

// baseTar is the cached debootstrap output, named after the suite and packages.
func (b *Builder) baseTar() string {
	h := sha256.Sum256([]byte(Suite + " " + strings.Join(Packages, ",")))
	return filepath.Join(b.nodeDir, "base-"+Suite+"-"+hex.EncodeToString(h[:])[:12]+".tar")
}

func (b *Builder) buildBase(ctx context.Context) error {
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return fmt.Errorf("debootstrap is missing: apt-get install debootstrap (make podman does)")
	}
	dir := filepath.Join(b.work, "base")
	args := []string{"--variant=minbase", "--include=" + strings.Join(Packages, ","), Suite, dir}
	if mirror := debianMirror(); mirror != "" {
		args = append(args, mirror)
	}
	if err := b.command(ctx, b.work, nil, "debootstrap", args...); err != nil {
		return err
	}
	// Package lists and caches are not needed on a node.
	for _, junk := range []string{"var/cache/apt/archives", "var/lib/apt/lists"} {
		matches, _ := filepath.Glob(filepath.Join(dir, junk, "*"))
		for _, m := range matches {
			os.RemoveAll(m)
		}
	}
	tmp := b.baseTar() + ".tmp"
	if err := b.command(ctx, dir, nil, "tar", "--numeric-owner", "--xattrs", "-cf", tmp, "."); err != nil {
		return err
	}
	if err := os.Rename(tmp, b.baseTar()); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// debianMirror returns the first Debian mirror this machine's apt sources name,
// or "" for debootstrap's default.
func debianMirror() string {
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	files = append([]string{"/etc/apt/sources.list"}, files...)
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			switch {
			case len(fields) >= 3 && fields[0] == "deb" && !strings.HasPrefix(fields[1], "["):
				if !strings.Contains(fields[1], "security") {
					f.Close()
					return fields[1]
				}
			case len(fields) >= 2 && fields[0] == "URIs:":
				if !strings.Contains(fields[1], "security") {
					f.Close()
					return fields[1]
				}
			}
		}
		f.Close()
	}
	return ""
}
