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

package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPrometheusOptionsAreValidated(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Options)
		want   string
	}{
		{"no Prometheus is valid", func(*Options) {}, ""},
		{"a Prometheus URL", func(o *Options) { o.PrometheusURL = "http://prometheus.monitoring:9090" }, ""},
		{"a Prometheus URL with a token file", func(o *Options) {
			o.PrometheusURL = "https://prometheus.monitoring:9090"
			o.PrometheusBearerTokenFile = token
		}, ""},
		{"a URL that is not http", func(o *Options) { o.PrometheusURL = "prometheus:9090" }, "--prometheus-url"},
		{"a token file that does not exist", func(o *Options) {
			o.PrometheusURL = "http://prometheus:9090"
			o.PrometheusBearerTokenFile = filepath.Join(dir, "missing")
		}, "--prometheus-bearer-token-file"},
		{"a CA file with no certificate", func(o *Options) {
			o.PrometheusURL = "https://prometheus:9090"
			o.PrometheusCAFile = notPEM
		}, "holds no PEM certificate"},
		{"a token file without a URL", func(o *Options) { o.PrometheusBearerTokenFile = token }, "need --prometheus-url"},
		{"a sub-second query timeout", func(o *Options) {
			o.PrometheusURL = "http://prometheus:9090"
			o.PrometheusTimeout = 100 * time.Millisecond
		}, "--prometheus-timeout must be at least 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.ReplicaName = "r"
			tc.mutate(o)
			err := o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}
