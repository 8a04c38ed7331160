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

package ociimage

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

func sample(t *testing.T, content string) Image {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(bin, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	// Source files' own times must not matter.
	if err := os.Chtimes(bin, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	return Image{
		Ref:        "docker.io/library/tool:v1",
		Layers:     [][]File{BaseFiles(), {{Path: "/tool", Source: bin}}},
		Entrypoint: []string{"/tool"},
		User:       "65532:65532",
		Labels:     map[string]string{"org.opencontainers.image.version": "v1"},
	}
}

func TestSameInputsGiveTheSameArchiveAndDigest(t *testing.T) {
	dir := t.TempDir()
	a, err := WriteArchive(filepath.Join(dir, "a.tar"), sample(t, "binary"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // a later build, with a newer source file
	b, err := WriteArchive(filepath.Join(dir, "b.tar"), sample(t, "binary"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest != b.Digest {
		t.Errorf("digests differ: %s and %s", a.Digest, b.Digest)
	}
	da, _ := os.ReadFile(filepath.Join(dir, "a.tar"))
	db, _ := os.ReadFile(filepath.Join(dir, "b.tar"))
	if !bytes.Equal(da, db) {
		t.Error("the two archives differ byte for byte")
	}
	c, err := WriteArchive(filepath.Join(dir, "c.tar"), sample(t, "another binary"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Digest == a.Digest {
		t.Error("different content gave the same digest")
	}
}

func TestArchiveIsAnOCILayoutNamingTheImage(t *testing.T) {
	dir := t.TempDir()
	res, err := WriteArchive(filepath.Join(dir, "img.tar"), sample(t, "binary"))
	if err != nil {
		t.Fatal(err)
	}
	// Unpack and read it back as an OCI image layout.
	f, err := os.Open(filepath.Join(dir, "img.tar"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root := filepath.Join(dir, "layout")
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !hdr.ModTime.Equal(Epoch) {
			t.Errorf("%s has time %s, want the fixed %s", hdr.Name, hdr.ModTime, Epoch)
		}
		p := filepath.Join(root, hdr.Name)
		if hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(root)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("%d manifests, want 1", len(m.Manifests))
	}
	want := map[string]string{AnnotationContainerdName: "docker.io/library/tool:v1", AnnotationRefName: "v1"}
	if diff := cmp.Diff(want, m.Manifests[0].Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if got := m.Manifests[0].Digest.String(); got != res.Digest {
		t.Errorf("index names %s, WriteArchive said %s", got, res.Digest)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || cf.Config.Entrypoint[0] != "/tool" || !cf.Created.Time.Equal(Epoch) ||
		cf.Config.Labels["org.opencontainers.image.version"] != "v1" || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("config = %+v", cf)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 2 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}
	rc, err := layers[1].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	lr := tar.NewReader(rc)
	hdr, err := lr.Next()
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Name != "tool" || hdr.Mode != 0o755 || hdr.Uid != 0 {
		t.Errorf("layer entry %s mode %o uid %d, want tool 755 0", hdr.Name, hdr.Mode, hdr.Uid)
	}
}

func TestLayerRefusesDuplicatePaths(t *testing.T) {
	_, err := layerTar([]File{{Path: "/a", Data: []byte("1")}, {Path: "a", Data: []byte("2")}}, Epoch)
	if err == nil {
		t.Fatal("two files at /a were accepted")
	}
}

func TestTagOf(t *testing.T) {
	for ref, want := range map[string]string{
		"docker.io/library/hub:dev":  "dev",
		"localhost:5000/hub":         "latest",
		"registry.k8s.io/pause:3.10": "3.10",
		"hub@sha256:abc":             "latest",
	} {
		if got := tagOf(ref); got != want {
			t.Errorf("tagOf(%q) = %q, want %q", ref, got, want)
		}
	}
}

// unpack extracts an archive WriteArchive or WriteIndexArchive wrote into a
// folder and opens it as an OCI image layout.
func unpack(t *testing.T, archive string) layout.Path {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root := filepath.Join(t.TempDir(), "layout")
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, hdr.Name)
		if hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return layout.Path(root)
}

func TestIndexArchiveHoldsOneImagePerPlatform(t *testing.T) {
	dir := t.TempDir()
	amd, arm := sample(t, "amd64 binary"), sample(t, "arm64 binary")
	arm.Architecture = "arm64"
	write := func(name string) Result {
		res, err := WriteIndexArchive(filepath.Join(dir, name), "docker.io/library/tool:v1", []Image{amd, arm})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := write("a.tar")
	if again := write("b.tar"); again.Digest != res.Digest {
		t.Errorf("digests differ: %s and %s", res.Digest, again.Digest)
	}
	da, _ := os.ReadFile(filepath.Join(dir, "a.tar"))
	db, _ := os.ReadFile(filepath.Join(dir, "b.tar"))
	if !bytes.Equal(da, db) {
		t.Error("the two archives differ byte for byte")
	}

	top, err := unpack(t, filepath.Join(dir, "a.tar")).ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Manifests) != 1 || tm.Manifests[0].Digest.String() != res.Digest || tm.Manifests[0].Annotations[AnnotationRefName] != "v1" {
		t.Fatalf("index.json = %+v, want one entry: the image index %s tagged v1", tm.Manifests, res.Digest)
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d.Platform.OS+"/"+d.Platform.Architecture+" config "+cf.OS+"/"+cf.Architecture)
	}
	want := []string{"linux/amd64 config linux/amd64", "linux/arm64 config linux/arm64"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
}

func TestIndexArchiveRefusesTwoImagesOfOnePlatform(t *testing.T) {
	_, err := WriteIndexArchive(filepath.Join(t.TempDir(), "a.tar"), "tool:v1", []Image{sample(t, "a"), sample(t, "b")})
	if err == nil {
		t.Fatal("two linux/amd64 images were accepted")
	}
}
