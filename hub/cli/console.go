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

package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Defaults of `kubectl flotilla console`, documented once here.
const (
	// defaultConsoleLiveInterval is the shortest time between two "the fleet
	// changed" messages the console sends a page: watch events closer than
	// this are merged into one refresh.
	defaultConsoleLiveInterval = 500 * time.Millisecond
)

func newConsoleCommand(cfg *Config) *cobra.Command {
	var (
		port      int
		noBrowser bool
	)
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Open a web console of the fleet on 127.0.0.1, with your kubeconfig's credentials",
		Long: "Serve a web console of the fleet on 127.0.0.1: the placement × cluster matrix, placement and\n" +
			"cluster pages, approvals of waiting stages and cordon/uncordon. It talks to the hub with your\n" +
			"kubeconfig's credentials, so your RBAC applies to every read and every action; there is no new\n" +
			"server and no new credential. The first line of output is the console's URL; it is opened in a\n" +
			"browser unless --no-browser. Stop it with Ctrl-C.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return fmt.Errorf("--port must be between 0 (a free port) and 65535, got %d", port)
			}
			restCfg, err := cfg.RESTConfig()
			if err != nil {
				return err
			}
			c, err := client.NewWithWatch(restCfg, client.Options{Scheme: Scheme()})
			if err != nil {
				return fmt.Errorf("failed to create a client for %s: %w", restCfg.Host, err)
			}
			dc, err := dynamic.NewForConfig(restCfg)
			if err != nil {
				return fmt.Errorf("failed to create a client for %s: %w", restCfg.Host, err)
			}
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				return fmt.Errorf("failed to listen on 127.0.0.1:%d (--port): %w", port, err)
			}
			s, err := newConsole(c, dc, ln.Addr().String(), cfg.now)
			if err != nil {
				_ = ln.Close()
				return err
			}
			url := "http://" + ln.Addr().String() + "/"
			fmt.Fprintln(cfg.Out, url)
			if !noBrowser {
				openBrowser(url, cfg.ErrOut)
			}
			return s.serve(cmd.Context(), ln)
		},
	}
	cmd.Flags().IntVar(&port, "port", 0, "Port on 127.0.0.1 to serve the console on (0: a free port).")
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "Do not open the console in a browser; only print its URL.")
	return cmd
}

// openBrowser opens url in the desktop's browser, when there is one; it only
// says so when there is none.
func openBrowser(url string, errOut interface{ Write([]byte) (int, error) }) {
	var name string
	var args []string
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			fmt.Fprintln(errOut, "no display: open the URL above in a browser")
			return
		}
		name = "xdg-open"
	}
	if err := exec.Command(name, append(args, url)...).Start(); err != nil {
		fmt.Fprintf(errOut, "could not open a browser (%v): open the URL above\n", err)
	}
}

// newToken returns a random token for the console's forms: a page of
// another site cannot post to the console without it.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("failed to make the console's form token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// serve serves the console on ln until ctx ends.
func (s *console) serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}
