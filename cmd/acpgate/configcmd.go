package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/inputs/config"
)

// errNoDefaultConfig: no --config was given and there is no default path
// (no HOME).
var errNoDefaultConfig = errors.New("no default configuration file")

// loadConfig reads the configuration file: path if given (it must exist),
// else the default path (which may be missing; no default path is
// errNoDefaultConfig).
func loadConfig(path string) (*config.Config, []config.Warning, string, error) {
	mustExist := path != ""
	if path == "" {
		var err error
		if path, err = config.DefaultPath(); err != nil {
			return nil, nil, "", fmt.Errorf("%w: %w", errNoDefaultConfig, err)
		}
	}
	cfg, warnings, err := config.Load(path, mustExist)
	return cfg, warnings, path, err
}

// configCommand runs `acpgate config check|show [--config F] [--profile P]`
// and `acpgate config schema`.
func configCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && args[0] == "schema" {
		_, _ = stdout.Write(config.Schema())
		return 0
	}
	if len(args) == 0 || (args[0] != "check" && args[0] != "show") {
		fmt.Fprintln(stderr, "usage: acpgate config check|show [--config FILE] [--profile ID]\n       acpgate config schema")
		return 2
	}
	fs := flag.NewFlagSet("acpgate config "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "configuration file (default $XDG_CONFIG_HOME/acpgate/config.json, else ~/.config/acpgate/config.json)")
	profile := fs.String("profile", "", "agent profile to check or show")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	cfg, warnings, file, err := loadConfig(*path)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "%s: warning: %s\n", file, w)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", file, err)
		return 1
	}
	if _, err := cfg.Effective(*profile); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", file, err)
		return 1
	}
	if args[0] == "show" {
		_, _ = stdout.Write(cfg.Redacted().JSON())
		fmt.Fprintln(stdout)
		return 0
	}
	eff, _ := cfg.Effective(*profile)
	fmt.Fprintf(stdout, "%s: OK (%d servers; profiles: %s)\n", file, len(eff.Servers), strings.Join(cfg.Profiles(), ", "))
	sandboxReport(stdout, eff, sandbox.System.Probe())
	return 0
}

// liveConfig holds the configuration in force; the watcher replaces it and
// signals changed (acp.Options.ConfigChanged).
type liveConfig struct {
	p       atomic.Pointer[config.Config]
	changed chan struct{} // buffered: one pending signal covers any number of changes
}

func newLiveConfig(cfg *config.Config) *liveConfig {
	l := &liveConfig{changed: make(chan struct{}, 1)}
	l.p.Store(cfg)
	return l
}

func (l *liveConfig) get() *config.Config { return l.p.Load() }

// watch keeps l current with the file at path until ctx ends. A broken edit
// keeps the last good configuration and is logged.
func (l *liveConfig) watch(ctx context.Context, path string, logger *slog.Logger) {
	config.Watch(ctx, path, time.Second, func(c *config.Config, warnings []config.Warning) {
		logWarnings(logger, warnings)
		l.p.Store(c)
		select {
		case l.changed <- struct{}{}:
		default: // a signal is pending: the reader will see c
		}
		logger.Info("configuration reloaded; new sessions use it, shared servers that changed restart, /reload applies it to a session", "file", path)
	}, func(err error) {
		logger.Error("configuration not reloaded; keeping the last good one", "file", path, "err", err)
	})
}

func logWarnings(logger *slog.Logger, warnings []config.Warning) {
	for _, w := range warnings {
		logger.Warn("configuration: " + w.String())
	}
}
