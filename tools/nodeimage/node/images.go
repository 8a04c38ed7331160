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
	"path"
	"path/filepath"
	"strings"

	"github.com/flotilla-io/flotilla/tools/ociimage"
)

// kubeadmImages asks the pinned kubeadm which images it deploys, by short name
// (kube-apiserver, etcd, coredns, pause, ...), so that the node carries exactly those.
func (b *Builder) kubeadmImages(ctx context.Context) (map[string]string, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(b.kubeNodeDir, "kubeadm"), "config", "images", "list",
		"--kubernetes-version", b.versions.Kubernetes).Output()
	if err != nil {
		return nil, fmt.Errorf("kubeadm config images list: %w", err)
	}
	refs := map[string]string{}
	for _, ref := range strings.Fields(string(out)) {
		name := ref
		if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
			name = name[:i]
		}
		refs[path.Base(name)] = ref
	}
	for _, want := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "etcd", "coredns", "pause"} {
		if refs[want] == "" {
			return nil, fmt.Errorf("kubeadm %s does not list a %s image: got %q", b.versions.Kubernetes, want, out)
		}
	}
	return refs, nil
}

func tagOf(ref string) string { return ref[strings.LastIndex(ref, ":")+1:] }

// checkVersions fails when what kubeadm deploys differs from what we build.
func (b *Builder) checkVersions(refs map[string]string) error {
	if got := tagOf(refs["coredns"]); got != b.versions.CoreDNS {
		return fmt.Errorf("kubeadm %s deploys CoreDNS %s but tools/nodeimage/pins/coredns pins %s: pin the version kubeadm deploys",
			b.versions.Kubernetes, got, b.versions.CoreDNS)
	}
	if got := tagOf(refs["etcd"]); !strings.HasPrefix(got, strings.TrimPrefix(b.versions.Etcd, "v")+"-") {
		return fmt.Errorf("kubeadm %s deploys etcd %s but tools/k8s pins %s", b.versions.Kubernetes, got, b.versions.Etcd)
	}
	config, err := os.ReadFile(filepath.Join(b.opts.RepoRoot, "tools/nodeimage/files/etc/containerd/config.toml"))
	if err != nil {
		return err
	}
	if !strings.Contains(string(config), `sandbox = "`+refs["pause"]+`"`) {
		return fmt.Errorf("containerd's config.toml does not pin the sandbox image kubeadm %s names, %s", b.versions.Kubernetes, refs["pause"])
	}
	return nil
}

// buildComponentImages writes every image a node runs into <rootfs>/kind/images.
func (b *Builder) buildComponentImages(ctx context.Context) error {
	if err := b.unpackBase(ctx); err != nil {
		return err
	}
	refs, err := b.kubeadmImages(ctx)
	if err != nil {
		return err
	}
	if err := b.checkVersions(refs); err != nil {
		return err
	}
	pause := filepath.Join(b.work, "pause")
	if err := b.command(ctx, b.opts.RepoRoot, []string{"CGO_ENABLED=0"}, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", pause, "./tools/nodeimage/pause"); err != nil {
		return err
	}
	iptables, err := iptablesFiles(ctx, b.rootfs())
	if err != nil {
		return fmt.Errorf("failed to collect iptables for kube-proxy: %w", err)
	}
	env := []string{"PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"}
	binary := func(name, src string) []ociimage.File {
		return []ociimage.File{{Path: "/usr/local/bin/" + name, Source: src, Mode: 0o755}}
	}
	images := []ociimage.Image{
		{Ref: refs["kube-apiserver"], Layers: [][]ociimage.File{ociimage.BaseFiles(), binary("kube-apiserver", filepath.Join(b.controlPlaneDir, "kube-apiserver"))}, Env: env},
		{Ref: refs["kube-controller-manager"], Layers: [][]ociimage.File{ociimage.BaseFiles(), binary("kube-controller-manager", filepath.Join(b.controlPlaneDir, "kube-controller-manager"))}, Env: env},
		{Ref: refs["kube-scheduler"], Layers: [][]ociimage.File{ociimage.BaseFiles(), binary("kube-scheduler", filepath.Join(b.controlPlaneDir, "kube-scheduler"))}, Env: env},
		{Ref: refs["kube-proxy"], Layers: [][]ociimage.File{ociimage.BaseFiles(), iptables, binary("kube-proxy", filepath.Join(b.kubeNodeDir, "kube-proxy"))}, Env: env},
		{Ref: refs["etcd"], Layers: [][]ociimage.File{ociimage.BaseFiles(), binary("etcd", filepath.Join(b.controlPlaneDir, "etcd"))}, Env: env},
		{Ref: refs["coredns"], Layers: [][]ociimage.File{ociimage.BaseFiles(), {{Path: "/coredns", Source: filepath.Join(b.corednsDir, "coredns"), Mode: 0o755}}},
			Entrypoint: []string{"/coredns"}},
		{Ref: refs["pause"], Layers: [][]ociimage.File{{{Path: "/pause", Source: pause, Mode: 0o755}}},
			Entrypoint: []string{"/pause"}, User: "65535:65535"},
	}
	dir := filepath.Join(b.rootfs(), "kind", "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, img := range images {
		name := path.Base(img.Ref[:strings.LastIndex(img.Ref, ":")])
		img.Labels = map[string]string{
			"org.opencontainers.image.title":       name,
			"org.opencontainers.image.version":     tagOf(img.Ref),
			"org.opencontainers.image.description": name + " built from source by Flotilla's tools/nodeimage",
		}
		res, err := ociimage.WriteArchive(filepath.Join(dir, name+".tar"), img)
		if err != nil {
			return err
		}
		fmt.Fprintf(b.opts.Out, "    %s %s (%d MB)\n", img.Ref, res.Digest, res.Size>>20)
	}
	return nil
}

// iptablesFiles collects the nft-based iptables commands from the node's base,
// with their extensions and every shared library they load, as a layer.
func iptablesFiles(ctx context.Context, rootfs string) ([]ociimage.File, error) {
	files := map[string]ociimage.File{}
	roots := []string{"/usr/sbin/xtables-nft-multi"}
	exts, _ := filepath.Glob(filepath.Join(rootfs, "usr/lib/x86_64-linux-gnu/xtables/*.so"))
	for _, e := range exts {
		roots = append(roots, strings.TrimPrefix(e, rootfs))
	}
	for _, r := range roots {
		if err := addWithLinks(rootfs, r, files); err != nil {
			return nil, err
		}
		out, err := exec.CommandContext(ctx, "chroot", rootfs, "/usr/bin/ldd", r).Output()
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %w", r, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			for _, field := range strings.Fields(line) {
				if strings.HasPrefix(field, "/") {
					if err := addWithLinks(rootfs, field, files); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	for _, cmd := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"} {
		files["/usr/sbin/"+cmd] = ociimage.File{Path: "/usr/sbin/" + cmd, Link: "xtables-nft-multi"}
	}
	// The merged-/usr links the loader path (/lib64/ld-linux-x86-64.so.2) goes through.
	files["/lib"] = ociimage.File{Path: "/lib", Link: "usr/lib"}
	files["/lib64"] = ociimage.File{Path: "/lib64", Link: "usr/lib64"}
	out := make([]ociimage.File, 0, len(files))
	for _, f := range files {
		out = append(out, f)
	}
	return out, nil
}

// addWithLinks adds p (a path inside rootfs) with its folder's symbolic links
// resolved, following a link file to its target.
func addWithLinks(rootfs, p string, files map[string]ociimage.File) error {
	for range 10 {
		dir, err := filepath.EvalSymlinks(filepath.Join(rootfs, path.Dir(p)))
		if err != nil {
			return err
		}
		canonical := path.Join("/", strings.TrimPrefix(dir, rootfs), path.Base(p))
		src := filepath.Join(rootfs, canonical)
		st, err := os.Lstat(src)
		if err != nil {
			return err
		}
		if st.Mode()&os.ModeSymlink == 0 {
			files[canonical] = ociimage.File{Path: canonical, Source: src}
			return nil
		}
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		files[canonical] = ociimage.File{Path: canonical, Link: target}
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(canonical), target)
		}
		p = target
	}
	return fmt.Errorf("too many links at %s", p)
}
