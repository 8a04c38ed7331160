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

package properties

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestCollectReportsAnUnreachableAPIServerAsUnhealthy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	c, err := New(&rest.Config{Host: "https://" + addr}, Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Latest(); got.APIServerHealthy {
		t.Errorf("before the first collection, Latest() = %+v, want unhealthy", got)
	}
	got := c.Collect(context.Background())
	if got.APIServerHealthy || !strings.Contains(got.APIServerMessage, "not ready") || strings.Contains(got.APIServerMessage, "\n") {
		t.Errorf("Collect() = %+v, want unhealthy with a one-line message", got)
	}
	if latest := c.Latest(); latest.APIServerMessage != got.APIServerMessage {
		t.Errorf("Latest() = %+v, want what Collect returned, %+v", latest, got)
	}
}
