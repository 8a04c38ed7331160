package app

import (
	"flag"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// goFlagSet exposes the logger's flags (--zap-log-level, --zap-devel, ...).
func goFlagSet(zapOpts *zap.Options) *flag.FlagSet {
	fs := flag.NewFlagSet("hub", flag.ContinueOnError)
	zapOpts.BindFlags(fs)
	return fs
}
