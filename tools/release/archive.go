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

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// entry is one file of an archive.
type entry struct {
	// Name inside the archive.
	Name string
	// Data is the content.
	Data []byte
	// Mode is the permission bits.
	Mode int64
}

// tarGz writes entries as a gzip-compressed tar that depends only on them and
// mtime: entries sorted by name, every one with the time mtime, owner and
// group 0 with no names, and a gzip header with no file name or time.
func tarGz(entries []entry, mtime time.Time) ([]byte, error) {
	sorted := append([]entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for i, e := range sorted {
		if i > 0 && sorted[i-1].Name == e.Name {
			return nil, fmt.Errorf("%s is in the archive twice", e.Name)
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     e.Name,
			Mode:     e.Mode,
			Size:     int64(len(e.Data)),
			ModTime:  mtime.UTC().Truncate(time.Second),
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("failed to add %s: %w", e.Name, err)
		}
		if _, err := tw.Write(e.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sha256Hex is the hex SHA-256 of data.
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// fileSHA256 is the hex SHA-256 of a file.
func fileSHA256(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("failed to read %s: %w", file, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// SumsFile is the checksum file of a release.
const SumsFile = "SHA256SUMS"

// writeSums writes SumsFile in dir over every other file of dir, in name
// order, in the format `sha256sum --check` reads.
func writeSums(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range ents { // ReadDir sorts by name
		if e.IsDir() || e.Name() == SumsFile {
			continue
		}
		sum, err := fileSHA256(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, e.Name())
	}
	if err := os.WriteFile(filepath.Join(dir, SumsFile), []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	return b.String(), nil
}
