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

// Package ociimage builds container images from files, with no container engine,
// as OCI image-layout archives that containerd (`ctr images import`), podman
// (`podman load`) and kind (`kind load image-archive`) read.
//
// Builds are reproducible: every tar entry has a fixed time, owner and order, the
// image config has a fixed creation time, and gzip output depends only on its
// input, so the same files give the same digests on any machine.
package ociimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Epoch is the time every file and the image config carry unless Image.Created
// says otherwise: fixed, so that builds are reproducible.
var Epoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// Annotations on the archive's index entry that name the image.
const (
	// AnnotationContainerdName is the full reference containerd imports the image as.
	AnnotationContainerdName = "io.containerd.image.name"
	// AnnotationRefName is the OCI reference name: the tag alone.
	AnnotationRefName = "org.opencontainers.image.ref.name"
)

// NonRoot is the user and group id the project's images run as (distroless's "nonroot").
const NonRoot = 65532

// File is one entry of a layer. Exactly one of Source, Data, Link or Dir is used.
type File struct {
	// Path inside the image, absolute ("/usr/local/bin/hub").
	Path string
	// Source is a file on this machine whose content is copied.
	Source string
	// Data is the content, when there is no Source.
	Data []byte
	// Link makes the entry a symbolic link to this target.
	Link string
	// Dir makes the entry a directory.
	Dir bool
	// Mode is the permission bits. Default: 0o755 for directories and files from
	// Source that are executable, else 0o644.
	Mode int64
	// UID and GID own the entry. Default: 0 (root).
	UID, GID int
}

// Image describes an image to build.
type Image struct {
	// Ref is the full reference the image is stored as, such as
	// docker.io/library/flotilla-hub:dev. Required.
	Ref string
	// Layers, bottom first; each is a list of files.
	Layers [][]File
	// Entrypoint, Cmd, Env, User and WorkingDir go into the image config.
	Entrypoint []string
	Cmd        []string
	Env        []string
	User       string
	WorkingDir string
	// Labels are the config's labels (org.opencontainers.image.*).
	Labels map[string]string
	// Created is the config's creation time. Default: Epoch.
	Created time.Time
	// OS and Architecture are the platform of the image's binaries, as GOOS
	// and GOARCH name them. Default: linux and amd64.
	OS, Architecture string
}

// platform is the image's platform, with the defaults filled in.
func (img Image) platform() v1.Platform {
	p := v1.Platform{OS: img.OS, Architecture: img.Architecture}
	if p.OS == "" {
		p.OS = "linux"
	}
	if p.Architecture == "" {
		p.Architecture = "amd64"
	}
	return p
}

// Result is what WriteArchive built.
type Result struct {
	// Digest is the image manifest's digest, sha256:<hex>.
	Digest string
	// Size is the archive's size in bytes.
	Size int64
}

// Build assembles img in memory.
func Build(img Image) (v1.Image, error) {
	if img.Ref == "" {
		return nil, fmt.Errorf("image has no reference")
	}
	created := img.Created
	if created.IsZero() {
		created = Epoch
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	adds := make([]mutate.Addendum, 0, len(img.Layers))
	for i, files := range img.Layers {
		data, err := layerTar(files, created)
		if err != nil {
			return nil, fmt.Errorf("failed to build layer %d of %s: %w", i, img.Ref, err)
		}
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
		if err != nil {
			return nil, fmt.Errorf("failed to build layer %d of %s: %w", i, img.Ref, err)
		}
		adds = append(adds, mutate.Addendum{
			Layer:   layer,
			History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "ociimage " + layerSummary(files)},
		})
	}
	out, err := mutate.Append(base, adds...)
	if err != nil {
		return nil, fmt.Errorf("failed to add the layers of %s: %w", img.Ref, err)
	}
	cf, err := out.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	platform := img.platform()
	cf.Architecture = platform.Architecture
	cf.OS = platform.OS
	cf.Created = v1.Time{Time: created}
	cf.Config.Entrypoint = img.Entrypoint
	cf.Config.Cmd = img.Cmd
	cf.Config.Env = img.Env
	cf.Config.User = img.User
	cf.Config.WorkingDir = img.WorkingDir
	cf.Config.Labels = img.Labels
	out, err = mutate.ConfigFile(out, cf)
	if err != nil {
		return nil, fmt.Errorf("failed to set the config of %s: %w", img.Ref, err)
	}
	return out, nil
}

// WriteArchive builds img and writes it to file as an OCI image-layout tar.
func WriteArchive(file string, img Image) (Result, error) {
	built, err := Build(img)
	if err != nil {
		return Result{}, err
	}
	digest, err := built.Digest()
	if err != nil {
		return Result{}, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(file), ".ociimage-")
	if err != nil {
		return Result{}, fmt.Errorf("failed to create a work folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return Result{}, fmt.Errorf("failed to start the image layout: %w", err)
	}
	if err := p.AppendImage(built, layout.WithAnnotations(map[string]string{
		AnnotationContainerdName: img.Ref,
		AnnotationRefName:        tagOf(img.Ref),
	})); err != nil {
		return Result{}, fmt.Errorf("failed to write %s: %w", img.Ref, err)
	}
	size, err := tarFolder(tmp, file)
	if err != nil {
		return Result{}, err
	}
	return Result{Digest: digest.String(), Size: size}, nil
}

// WriteIndexArchive builds one image per platform (imgs, each with its OS and
// Architecture, all stored as ref) and writes them to file as an OCI
// image-layout tar whose index.json names one image index: a multi-platform
// image, which a runtime resolves to its own platform's image. The Result's
// Digest is the image index's.
func WriteIndexArchive(file, ref string, imgs []Image) (Result, error) {
	if len(imgs) == 0 {
		return Result{}, fmt.Errorf("%s has no images", ref)
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	seen := map[string]bool{}
	for _, img := range imgs {
		platform := img.platform()
		key := platform.OS + "/" + platform.Architecture
		if seen[key] {
			return Result{}, fmt.Errorf("%s: two images for %s", ref, key)
		}
		seen[key] = true
		built, err := Build(img)
		if err != nil {
			return Result{}, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        built,
			Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &platform},
		})
	}
	digest, err := idx.Digest()
	if err != nil {
		return Result{}, fmt.Errorf("failed to build the image index of %s: %w", ref, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(file), ".ociimage-")
	if err != nil {
		return Result{}, fmt.Errorf("failed to create a work folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return Result{}, fmt.Errorf("failed to start the image layout: %w", err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		AnnotationContainerdName: ref,
		AnnotationRefName:        tagOf(ref),
	})); err != nil {
		return Result{}, fmt.Errorf("failed to write %s: %w", ref, err)
	}
	size, err := tarFolder(tmp, file)
	if err != nil {
		return Result{}, err
	}
	return Result{Digest: digest.String(), Size: size}, nil
}

// tagOf returns the tag of ref ("dev" of "docker.io/library/hub:dev"), or "latest".
func tagOf(ref string) string {
	name := ref
	if i := strings.Index(name, "@"); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		return name[i+1:]
	}
	return "latest"
}

func layerSummary(files []File) string {
	names := make([]string, 0, len(files))
	for _, f := range files {
		if !f.Dir {
			names = append(names, f.Path)
		}
	}
	if len(names) > 4 {
		names = append(names[:4], fmt.Sprintf("and %d more", len(names)-4))
	}
	return strings.Join(names, " ")
}

// layerTar writes files, with every parent directory, as a tar in path order.
func layerTar(files []File, mtime time.Time) ([]byte, error) {
	entries := map[string]File{}
	for _, f := range files {
		p := path.Clean("/" + f.Path)
		if p == "/" {
			return nil, fmt.Errorf("a file has no path")
		}
		if _, dup := entries[p]; dup {
			return nil, fmt.Errorf("%s is given twice", p)
		}
		f.Path = p
		entries[p] = f
		for dir := path.Dir(p); dir != "/"; dir = path.Dir(dir) {
			if _, ok := entries[dir]; !ok {
				entries[dir] = File{Path: dir, Dir: true}
			}
		}
	}
	paths := make([]string, 0, len(entries))
	for p := range entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		f := entries[p]
		hdr := &tar.Header{
			Name:    strings.TrimPrefix(p, "/"),
			ModTime: mtime,
			Uid:     f.UID,
			Gid:     f.GID,
			Format:  tar.FormatPAX,
		}
		var content []byte
		switch {
		case f.Dir:
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
			hdr.Mode = orDefault(f.Mode, 0o755)
		case f.Link != "":
			hdr.Typeflag = tar.TypeSymlink
			hdr.Linkname = f.Link
			hdr.Mode = orDefault(f.Mode, 0o777)
		case f.Source != "":
			st, err := os.Stat(f.Source)
			if err != nil {
				return nil, fmt.Errorf("failed to read %s for %s: %w", f.Source, p, err)
			}
			if content, err = os.ReadFile(f.Source); err != nil {
				return nil, fmt.Errorf("failed to read %s for %s: %w", f.Source, p, err)
			}
			hdr.Typeflag = tar.TypeReg
			hdr.Mode = orDefault(f.Mode, modeOf(st.Mode()))
		default:
			hdr.Typeflag = tar.TypeReg
			content = f.Data
			hdr.Mode = orDefault(f.Mode, 0o644)
		}
		hdr.Size = int64(len(content))
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func modeOf(m fs.FileMode) int64 {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

func orDefault(mode, def int64) int64 {
	if mode == 0 {
		return def
	}
	return mode
}

// tarFolder writes the folder dir as a tar to file, entries in path order with
// fixed times and owners, and returns the tar's size.
func tarFolder(dir, file string) (int64, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("failed to list %s: %w", dir, err)
	}
	sort.Strings(paths)
	tmp := file + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return 0, fmt.Errorf("failed to create %s: %w", tmp, err)
	}
	defer os.Remove(tmp)
	defer out.Close()
	tw := tar.NewWriter(out)
	for _, p := range paths {
		st, err := os.Lstat(p)
		if err != nil {
			return 0, err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: Epoch, Format: tar.FormatPAX}
		if st.IsDir() {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
			if err := tw.WriteHeader(hdr); err != nil {
				return 0, err
			}
			continue
		}
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, st.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return 0, err
		}
		in, err := os.Open(p)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(tw, in)
		in.Close()
		if err != nil {
			return 0, fmt.Errorf("failed to copy %s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	if err := out.Close(); err != nil {
		return 0, err
	}
	st, err := os.Stat(tmp)
	if err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, file); err != nil {
		return 0, fmt.Errorf("failed to write %s: %w", file, err)
	}
	return st.Size(), nil
}

// BaseFiles are what a minimal non-root image needs besides its binary: the
// nonroot user and group, and a writable /tmp.
func BaseFiles() []File {
	return []File{
		{Path: "/etc/passwd", Data: []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRoot, NonRoot))},
		{Path: "/etc/group", Data: []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRoot))},
		{Path: "/home/nonroot", Dir: true, Mode: 0o700, UID: NonRoot, GID: NonRoot},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
	}
}
