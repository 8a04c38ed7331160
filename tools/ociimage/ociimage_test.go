package ociimage

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// testImage is a small image with a binary from disk, inline data, a link and the
// base files.
func testImage(t *testing.T, binary string) Image {
	t.Helper()
	return Image{
		Ref: "docker.io/library/flotilla-test:v1",
		Layers: [][]File{
			BaseFiles(),
			{
				{Path: "/bin/app", Source: binary},
				{Path: "/etc/app/config", Data: []byte("key: value\n")},
				{Path: "/usr/bin/app", Link: "/bin/app"},
			},
		},
		Entrypoint: []string{"/bin/app"},
		User:       "65532:65532",
		Labels:     map[string]string{"org.opencontainers.image.version": "v1.2.3"},
	}
}

func writeBinary(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, "app")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWriteArchiveIsReproducible(t *testing.T) {
	src := t.TempDir()
	binary := writeBinary(t, src, "#!/bin/true\n")

	first := filepath.Join(t.TempDir(), "image.oci.tar")
	r1, err := WriteArchive(first, testImage(t, binary))
	if err != nil {
		t.Fatalf("first build: %v", err)
	}
	// The same inputs later, from a source file with another modification time,
	// into another folder, give the same digest and the same archive bytes.
	if err := os.Chtimes(binary, time.Now().Add(time.Hour), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(t.TempDir(), "image.oci.tar")
	r2, err := WriteArchive(second, testImage(t, binary))
	if err != nil {
		t.Fatalf("second build: %v", err)
	}
	if diff := cmp.Diff(r1, r2); diff != "" {
		t.Errorf("two builds of the same inputs differ (-first +second):\n%s", diff)
	}
	b1, _ := os.ReadFile(first)
	b2, _ := os.ReadFile(second)
	if !bytes.Equal(b1, b2) {
		t.Errorf("two builds of the same inputs wrote different archives (%d and %d bytes)", len(b1), len(b2))
	}

	// A changed binary changes the digest.
	writeBinary(t, src, "#!/bin/false\n")
	r3, err := WriteArchive(filepath.Join(t.TempDir(), "image.oci.tar"), testImage(t, binary))
	if err != nil {
		t.Fatalf("third build: %v", err)
	}
	if r3.Digest == r1.Digest {
		t.Errorf("a changed binary kept the digest %s", r1.Digest)
	}
}

func TestWriteArchiveContent(t *testing.T) {
	binary := writeBinary(t, t.TempDir(), "binary")
	archive := filepath.Join(t.TempDir(), "image.oci.tar")
	res, err := WriteArchive(archive, testImage(t, binary))
	if err != nil {
		t.Fatal(err)
	}
	img, annotations := readArchive(t, archive)

	want := map[string]string{
		AnnotationContainerdName: "docker.io/library/flotilla-test:v1",
		AnnotationRefName:        "v1",
	}
	if diff := cmp.Diff(want, annotations); diff != "" {
		t.Errorf("index annotations (-want +got):\n%s", diff)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if digest.String() != res.Digest {
		t.Errorf("archive holds %s, WriteArchive reported %s", digest, res.Digest)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("config user/os/arch = %q/%s/%s, want 65532:65532/linux/amd64", cf.Config.User, cf.OS, cf.Architecture)
	}
	if !cf.Created.Time.Equal(Epoch) {
		t.Errorf("config created %s, want %s", cf.Created.Time, Epoch)
	}
	if got := cf.Config.Labels["org.opencontainers.image.version"]; got != "v1.2.3" {
		t.Errorf("version label %q, want v1.2.3", got)
	}

	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 {
		t.Fatalf("%d layers, want 2", len(layers))
	}
	got := layerEntries(t, layers[1])
	wantEntries := []string{
		"bin/ dir 755 0:0",
		"bin/app file 755 0:0 binary",
		"etc/ dir 755 0:0",
		"etc/app/ dir 755 0:0",
		"etc/app/config file 644 0:0 key: value",
		"usr/ dir 755 0:0",
		"usr/bin/ dir 755 0:0",
		"usr/bin/app link 777 0:0 /bin/app",
	}
	if diff := cmp.Diff(wantEntries, got); diff != "" {
		t.Errorf("layer entries in order (-want +got):\n%s", diff)
	}
	base := strings.Join(layerEntries(t, layers[0]), "|")
	for _, want := range []string{"home/nonroot/ dir 700 65532:65532", "tmp/ dir 1777 0:0", "etc/passwd file 644 0:0 root:x:0:0"} {
		if !strings.Contains(base, want) {
			t.Errorf("base layer lacks %q: %s", want, base)
		}
	}
}

func TestWriteArchiveBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		img  Image
		want string
	}{
		{name: "an image without a reference", img: Image{}, want: "no reference"},
		{name: "a path given twice", img: Image{Ref: "x:y", Layers: [][]File{{{Path: "/a", Data: []byte("1")}, {Path: "a", Data: []byte("2")}}}}, want: "/a is given twice"},
		{name: "a file with no path", img: Image{Ref: "x:y", Layers: [][]File{{{Path: "/", Data: []byte("1")}}}}, want: "has no path"},
		{name: "a source that does not exist", img: Image{Ref: "x:y", Layers: [][]File{{{Path: "/a", Source: "/does/not/exist"}}}}, want: "failed to read /does/not/exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := WriteArchive(filepath.Join(t.TempDir(), "x.tar"), tc.img)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestTagOf(t *testing.T) {
	for ref, want := range map[string]string{
		"docker.io/library/hub:dev":           "dev",
		"registry.example:5000/team/hub":      "latest",
		"registry.example:5000/team/hub:v1.0": "v1.0",
		"hub@sha256:abcd":                     "latest",
		"hub:v2@sha256:abcd":                  "v2",
	} {
		if got := tagOf(ref); got != want {
			t.Errorf("tagOf(%q) = %q, want %q", ref, got, want)
		}
	}
}

// readArchive unpacks an OCI layout tar and returns its one image and the
// annotations of its index entry.
func readArchive(t *testing.T, archive string) (v1.Image, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("the archive is no OCI layout: %v", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("index has %d manifests, want 1", len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img, m.Manifests[0].Annotations
}

// layerEntries lists a layer's entries as "name type mode uid:gid [content]",
// checking every entry carries the fixed time.
func layerEntries(t *testing.T, l v1.Layer) []string {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !hdr.ModTime.Equal(Epoch) {
			t.Errorf("%s has time %s, want %s", hdr.Name, hdr.ModTime, Epoch)
		}
		owner := strconv.Itoa(hdr.Uid) + ":" + strconv.Itoa(hdr.Gid)
		mode := strconv.FormatInt(hdr.Mode, 8)
		switch hdr.Typeflag {
		case tar.TypeDir:
			out = append(out, hdr.Name+" dir "+mode+" "+owner)
		case tar.TypeSymlink:
			out = append(out, hdr.Name+" link "+mode+" "+owner+" "+hdr.Linkname)
		default:
			data, _ := io.ReadAll(tr)
			s := string(data)
			if len(s) > 10 {
				s = s[:10]
			}
			out = append(out, hdr.Name+" file "+mode+" "+owner+" "+s)
		}
	}
}
