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
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flotilla-io/flotilla/tools/docgen/links"

	agentapp "github.com/flotilla-io/flotilla/agent/app"
	hubapp "github.com/flotilla-io/flotilla/hub/app"
	"github.com/flotilla-io/flotilla/hub/cli"
)

// hostname is this machine's name, which no generated page may contain.
var hostname string

// binaries are the command trees documented in docs/reference/cli, by file name.
var binaries = []struct {
	file, title, intro string
	root               func() *cobra.Command
}{
	{"hub.md", "hub", "The hub binary: with no subcommand it runs the hub (the controllers and the tunnel server); its subcommands create bootstrap tokens and cordon, uncordon and drain members. The Deployment in `manifests/hub` sets the flags it needs.", hubapp.NewCommand},
	{"agent.md", "agent", "The agent binary: `agent join` joins a member cluster to a hub, `agent run` keeps its tunnel and applies its Work, `agent leave` takes it out of the fleet.", agentapp.NewCommand},
	{"kubectl-flotilla.md", "kubectl flotilla", "The kubectl plugin (`make build` builds `bin/kubectl-flotilla`; put it on your `PATH`). It reads, except `approve`, `cordon`, `uncordon` and `drain`.", cli.NewCommand},
}

func genCLI(out output) error {
	// Some defaults come from the environment (the hub's replica name is $POD_NAME or
	// the host name; its memory limit $FLOTILLA_MEMORY_LIMIT): document them as unset,
	// and never the host name of the machine that generated the page.
	for _, env := range []string{"POD_NAME", "FLOTILLA_MEMORY_LIMIT"} {
		if err := os.Unsetenv(env); err != nil {
			return err
		}
	}
	hostname, _ = os.Hostname()
	var index strings.Builder
	index.WriteString("# Command-line reference\n\n")
	index.WriteString("Every command and flag of Flotilla's three binaries, generated from their command trees. The defaults shown are the ones compiled in; the manifests in `manifests/` set some of them differently.\n\n")
	for _, b := range binaries {
		root := b.root()
		var page strings.Builder
		fmt.Fprintf(&page, "# `%s`\n\n%s\n\n", b.title, b.intro)
		var cmds []*cobra.Command
		walk(root, func(c *cobra.Command) { cmds = append(cmds, c) })
		page.WriteString("Commands:\n\n")
		for _, c := range cmds {
			fmt.Fprintf(&page, "- [`%s`](#%s) — %s\n", c.CommandPath(), links.AnchorOf(c.CommandPath()), strings.TrimSpace(c.Short))
		}
		page.WriteString("\n")
		for _, c := range cmds {
			writeCommand(&page, c)
		}
		page.WriteString("Next: [the command-line reference](README.md), [the reference index](../README.md).\n")
		out["docs/reference/cli/"+b.file] = []byte(page.String())
		fmt.Fprintf(&index, "- [`%s`](%s) — %s\n", b.title, b.file, strings.TrimSpace(root.Short))
	}
	index.WriteString("\nNext: [the API reference](../api/README.md), [metrics](../metrics.md).\n")
	out["docs/reference/cli/README.md"] = []byte(index.String())
	return nil
}

// walk visits c and its available subcommands, depth first, in name order (cobra sorts them).
func walk(c *cobra.Command, visit func(*cobra.Command)) {
	if c.Hidden || c.Deprecated != "" || c.Name() == "help" || c.Name() == "completion" {
		return
	}
	visit(c)
	for _, sub := range c.Commands() {
		walk(sub, visit)
	}
}

func writeCommand(b *strings.Builder, c *cobra.Command) {
	fmt.Fprintf(b, "## %s\n\n", c.CommandPath())
	desc := strings.TrimSpace(c.Long)
	if desc == "" {
		desc = strings.TrimSpace(c.Short)
	}
	if desc != "" {
		b.WriteString(desc + "\n\n")
	}
	fmt.Fprintf(b, "```\n%s\n```\n\n", strings.TrimSpace(c.UseLine()))
	if ex := strings.TrimSpace(c.Example); ex != "" {
		fmt.Fprintf(b, "Examples:\n\n```sh\n%s\n```\n\n", ex)
	}
	if subs := available(c); len(subs) > 0 {
		b.WriteString("Subcommands: ")
		for i, s := range subs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "[`%s`](#%s)", s.Name(), links.AnchorOf(s.CommandPath()))
		}
		b.WriteString(".\n\n")
	}
	writeFlags(b, "Flags", c.NonInheritedFlags())
	writeFlags(b, "Flags inherited from the parent command", c.InheritedFlags())
}

func available(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		if !s.Hidden && s.Deprecated == "" && s.Name() != "help" && s.Name() != "completion" {
			out = append(out, s)
		}
	}
	return out
}

func writeFlags(b *strings.Builder, title string, fs *pflag.FlagSet) {
	var rows []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "`--" + f.Name
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" {
			name += " " + varname
		}
		name += "`"
		def := f.DefValue
		switch {
		case hostname != "" && def == hostname:
			def = "" // the usage says where the default comes from
		case def == "" || def == "[]" || def == "map[]":
			def = ""
		case f.Value.Type() == "bool" && def == "false":
			def = ""
		default:
			def = "`" + def + "`"
		}
		if f.Deprecated != "" {
			usage += " (deprecated: " + f.Deprecated + ")"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s |", name, def, cell(usage)))
	})
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n\n| flag | default | description |\n|---|---|---|\n%s\n\n", title, strings.Join(rows, "\n"))
}
