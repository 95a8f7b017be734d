// Command release makes acpgate's release from the module in the current
// directory (package cmd/internal/release/dist): run by make release, see
// docs/releases.md ("Making a release"). The version and commit are stamped into each
// binary; each archive entry's time is $SOURCE_DATE_EPOCH, else the
// commit's time. The binary for the machine it runs on is started with
// --version, which must print "acpgate VERSION (commit COMMIT)".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/acpgate/acpgate/cmd/internal/release/dist"
	"github.com/acpgate/acpgate/cmd/internal/release/registry"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	version := fs.String("version", "", "the release's version, x.y.z (make release VERSION=x.y.z)")
	urlTemplate := fs.String("url", "", "the archives' download URL; {version} and {file} are replaced")
	repo := fs.String("repository", "", "the source repository's URL, for the registry entry")
	out := fs.String("out", "dist", "the output directory (created; must be empty)")
	goCmd := fs.String("go", "go", "the go command")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" {
		return errors.New("no version: make release VERSION=x.y.z")
	}
	if err := dist.CheckVersion(*version); err != nil {
		return err
	}
	if _, err := dist.ArchiveURL(*urlTemplate, *version, "f"); err != nil {
		return err
	}
	commit, mtime, err := source(ctx)
	if err != nil {
		return err
	}
	pages, err := filepath.Glob("docs/*.md") // the reference the README links to
	if err != nil || len(pages) == 0 {
		return fmt.Errorf("no docs/*.md to archive beside the README (%v)", err)
	}
	start := time.Now()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	logger.Info("release", "version", *version, "commit", commit, "time", mtime.UTC().Format(time.RFC3339))
	build := dist.GoBuild(*goCmd, ".", *version, commit)
	opts := &dist.Options{
		Version:     *version,
		Time:        mtime,
		URLTemplate: *urlTemplate,
		Out:         *out,
		Docs:        append([]string{"LICENSE", "README.md"}, pages...),
		DocsDir:     ".",
		Icon:        "docs/icon.svg",
		Entry: registry.Entry{
			ID:          "acpgate",
			Name:        "acpgate",
			Description: "Agent for any OpenAI-compatible model, with the editor's MCP servers connected per session",
			Repository:  *repo,
			Authors:     []string{"The acpgate authors"},
			License:     "Apache-2.0",
		},
		Build:  selfTested(build, "acpgate "+*version+" (commit "+commit+")"),
		Logger: logger,
	}
	if _, err := dist.Build(ctx, opts); err != nil {
		return err
	}
	logger.Info("done", "out", *out, "took", time.Since(start).Round(time.Second))
	return nil
}

// selfTested wraps build: the binary for this machine's platform must
// print want for --version.
func selfTested(build dist.BuildFunc, want string) dist.BuildFunc {
	return func(ctx context.Context, p dist.Platform, path string) error {
		if err := build(ctx, p, path); err != nil {
			return err
		}
		if p.GOOS != runtime.GOOS || p.GOARCH != runtime.GOARCH {
			return nil
		}
		got, err := exec.CommandContext(ctx, path, "--version").Output()
		if err != nil {
			return fmt.Errorf("%s --version: %w", path, err)
		}
		if strings.TrimSpace(string(got)) != want {
			return fmt.Errorf("%s --version printed %q, want %q", path, got, want)
		}
		return nil
	}
}

// source returns the commit of the working tree (12 hex digits, and
// "-dirty" if a file differs from it) and the time for the archives'
// entries: $SOURCE_DATE_EPOCH, else the commit's time.
func source(ctx context.Context) (commit string, mtime time.Time, err error) {
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", args...).Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	commit, err = git("rev-parse", "--short=12", "HEAD")
	if err != nil {
		return "", time.Time{}, err
	}
	status, err := git("status", "--porcelain")
	if err != nil {
		return "", time.Time{}, err
	}
	if status != "" {
		commit += "-dirty"
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if epoch, err = git("log", "-1", "--format=%ct", "HEAD"); err != nil {
			return "", time.Time{}, err
		}
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH or the commit time %q: %w", epoch, err)
	}
	return commit, time.Unix(sec, 0).UTC(), nil
}
