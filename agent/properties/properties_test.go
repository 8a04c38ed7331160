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
