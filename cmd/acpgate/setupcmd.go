package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/acpgate/acpgate/cmd/acpgate/internal/setup"
	"github.com/acpgate/acpgate/cmd/internal/tty"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// setupArg is the argument of `acpgate setup`, as the terminal auth
// method offers it (the editor runs acpgate with it in a terminal).
const setupArg = "setup"

const setupUsage = `usage: acpgate setup [--config FILE] [--provider ID] [--base-url URL] [--model NAME] [--api-key-stdin]
       acpgate setup --show [--config FILE]

Sets up the model acpgate uses: in a terminal it asks for what the flags do
not give (the provider from a list, the API key without echo, the model from
the endpoint's list); otherwise every value must come from the flags. It
checks the endpoint (GET /models; Anthropic's GET /v1/models) and writes the configuration file's
"model" block, keeping the rest of the file, with the API key in a file of
mode 0600 next to it (keys/PROVIDER.key).

`

// setupCommand runs `acpgate setup` (see setupUsage) with the terminal or
// pipes of the process, and returns the exit code: 0 when set up, 1 when
// setup failed (the reason on stderr), 2 for bad usage. configPath is the
// --config given before "setup" ("": none), which its own --config
// overrides.
func setupCommand(args []string, configPath string, stdin *os.File, stdout, stderr io.Writer) int {
	red := secrets.NewRedactor()
	stdout, stderr = red.Writer(stdout), red.Writer(stderr)
	var o setup.Options
	fs := flag.NewFlagSet("acpgate setup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, setupUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.ConfigPath, "config", configPath, "configuration file (default $XDG_CONFIG_HOME/acpgate/config.json, else ~/.config/acpgate/config.json)")
	fs.StringVar(&o.Provider, "provider", "", "the provider: "+setup.IDs())
	fs.StringVar(&o.BaseURL, "base-url", "", "the endpoint's base URL (required for custom; default: the provider's)")
	fs.StringVar(&o.Model, "model", "", "the default model (default: asked, from the endpoint's list)")
	fs.BoolVar(&o.APIKeyStdin, "api-key-stdin", false, "read the API key from the first line of stdin")
	show := fs.Bool("show", false, "print what is set up (the API key as its reference) and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "acpgate setup: unexpected arguments: %v\n", fs.Args())
		return 2
	}
	if o.ConfigPath == "" {
		p, err := config.DefaultPath()
		if err != nil {
			fmt.Fprintf(stderr, "acpgate setup: %v (give --config)\n", err)
			return 1
		}
		o.ConfigPath = p
	}
	var err error
	if *show {
		err = setup.Show(o.ConfigPath, stdout, os.Getenv)
	} else {
		o.In, o.Out, o.Redactor = stdin, stdout, red
		o.Interactive = tty.IsTerminal(stdin)
		err = setup.Run(context.Background(), o)
	}
	if err != nil {
		fmt.Fprintf(stderr, "acpgate setup: %v\n", err)
		return 1
	}
	return 0
}
