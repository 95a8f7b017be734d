package setup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acpgate/acpgate/internal/base/atomicfile"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// Options is what `acpgate setup` was given. ConfigPath, In, Out and
// Redactor are required.
type Options struct {
	// ConfigPath is the configuration file to write (created with its
	// directory if missing).
	ConfigPath string
	// Provider (a Catalogue ID), BaseURL (over the provider's) and Model
	// are the --provider, --base-url and --model flags; "": not given.
	Provider, BaseURL, Model string
	// APIKeyStdin: the API key is the first line of In.
	APIKeyStdin bool
	// Interactive: In is a terminal, so what the flags do not give is
	// asked. Otherwise a missing value is an error (*MissingError).
	Interactive bool
	// In is the standard input (the answers, the key).
	In *os.File
	// Out receives the questions and the outcome; it should redact
	// Redactor's values (the command writes through Redactor.Writer).
	Out io.Writer
	// Redactor is given the API key as soon as it is read, so that it
	// never reaches Out or an error message shown through it.
	Redactor *secrets.Redactor
	// Client checks the endpoints (nil: http.DefaultClient).
	Client *http.Client
	// Providers is the catalogue (nil: Catalogue()).
	Providers []Provider
	// Timeout bounds each check of an endpoint (0: 20 s).
	Timeout time.Duration
}

// MissingError is returned, when nothing may be asked, for the flags that
// a setup needs and did not get. It is plain data.
type MissingError struct {
	// Flags are the missing flags, as "--model".
	Flags []string
	// Models are the endpoint's models, when --model alone was missing.
	Models []string
}

// Error names the missing flags (and lists the models that --model may
// name).
func (e *MissingError) Error() string {
	msg := "missing " + strings.Join(e.Flags, ", ") + " (stdin is not a terminal, so nothing is asked; see acpgate setup -h)"
	if len(e.Models) > 0 {
		shown := e.Models[:min(len(e.Models), 20)]
		msg += "; the endpoint lists: " + strings.Join(shown, ", ")
		if n := len(e.Models) - len(shown); n > 0 {
			msg += fmt.Sprintf(" and %d more", n)
		}
	}
	return msg
}

// ErrNoAnswer: the input ended before a question was answered.
var ErrNoAnswer = errors.New("no answer: the input ended")

// run is one setup: the options and what has been chosen so far.
type run struct {
	o        Options
	in       *bufio.Reader
	data     []byte       // the configuration file's contents; nil: none
	perm     fs.FileMode  // its mode
	cur      config.Model // its top-level model block
	missing  []string
	provider Provider
	baseURL  string
	key      string // the API key ("": none)
	keyFile  string // where it is kept
	keep     bool   // key is what keyFile holds already
}

// Run runs `acpgate setup`: it chooses the provider, base URL and API key
// (from the flags, else by asking), checks them against the endpoint,
// chooses the model from the endpoint's list and writes the key file and
// the configuration file's model block. Nothing is written unless every
// step succeeds. A check that fails returns an *EndpointError; missing
// flags when nothing may be asked, a *MissingError.
func Run(ctx context.Context, o Options) error {
	r, err := start(o)
	if err != nil {
		return err
	}
	if err := r.chooseProvider(ctx); err != nil {
		return err
	}
	if err := r.chooseBaseURL(); err != nil {
		return err
	}
	if err := r.chooseKey(); err != nil {
		return err
	}
	if r.o.Model == "" && !r.o.Interactive {
		r.missing = append(r.missing, "--model")
	}
	if len(r.missing) > 0 {
		return r.missingError(ctx)
	}
	models, err := r.verify(ctx)
	if err != nil {
		return err
	}
	model, err := r.chooseModel(models)
	if err != nil {
		return err
	}
	return r.write(model)
}

// start reads the configuration file, which must be valid if it exists.
func start(o Options) (*run, error) {
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.Providers == nil {
		o.Providers = Catalogue()
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Second
	}
	// The key file's reference must be an absolute path.
	abs, err := filepath.Abs(o.ConfigPath)
	if err != nil {
		return nil, fmt.Errorf("the configuration file: %w", err)
	}
	o.ConfigPath = abs
	r := &run{o: o, in: bufio.NewReader(o.In), perm: 0o600}
	data, err := config.ReadFile(o.ConfigPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r, nil
	case err != nil:
		return nil, fmt.Errorf("reading the configuration: %w", err)
	}
	if fi, err := os.Stat(o.ConfigPath); err == nil {
		r.perm = fi.Mode().Perm()
	}
	r.data = data
	if len(strings.TrimSpace(string(data))) > 0 {
		c, _, err := config.Parse(data, o.ConfigPath)
		if err != nil {
			return nil, fmt.Errorf("%s is not a valid configuration, so it is left as it is: %w", o.ConfigPath, err)
		}
		r.cur = c.Model
	}
	return r, nil
}

// chooseProvider sets the provider: --provider, else the user's choice.
func (r *run) chooseProvider(ctx context.Context) error {
	if r.o.Provider != "" {
		p, ok := find(r.o.Providers, r.o.Provider)
		if !ok {
			return fmt.Errorf("--provider: unknown provider %q (want one of: %s)", r.o.Provider, ids(r.o.Providers))
		}
		r.provider = p
		return nil
	}
	if !r.o.Interactive {
		r.missing = append(r.missing, "--provider")
		return nil
	}
	running := detect(ctx, r.o.Client, r.o.Providers)
	p, err := r.pickProvider(running)
	r.provider = p
	return err
}

// chooseBaseURL sets the base URL: --base-url, else the provider's, else
// the user's answer.
func (r *run) chooseBaseURL() error {
	r.baseURL = trimURL(r.o.BaseURL)
	if r.baseURL == "" {
		r.baseURL = r.provider.BaseURL
	}
	switch {
	case r.baseURL != "" || r.provider.ID == "":
		return nil
	case !r.o.Interactive:
		r.missing = append(r.missing, "--base-url")
		return nil
	}
	for r.baseURL == "" {
		u, err := r.line("Base URL of the endpoint (such as http://127.0.0.1:8000/v1): ")
		if err != nil {
			return err
		}
		r.baseURL = trimURL(u)
	}
	return nil
}

// chooseKey sets the API key: the first line of stdin with
// --api-key-stdin, else the key configured now for this provider, else
// the user's answer (without echo).
func (r *run) chooseKey() error {
	if r.provider.ID == "" {
		return nil // --provider is missing
	}
	r.keyFile = filepath.Join(filepath.Dir(r.o.ConfigPath), "keys", r.provider.ID+".key")
	if r.o.APIKeyStdin {
		key, err := r.secret("API key: ")
		if err != nil {
			return fmt.Errorf("--api-key-stdin: %w", err)
		}
		if key == "" {
			return errors.New("--api-key-stdin: the first line of stdin is empty")
		}
		r.key = key
		return nil
	}
	saved := ""
	if r.cur.APIKey == keyRef(r.keyFile) {
		if b, err := os.ReadFile(r.keyFile); err == nil {
			saved = strings.TrimRight(string(b), "\r\n")
		}
	}
	if saved != "" && !r.o.Interactive {
		r.key, r.keep = saved, true
		r.o.Redactor.Register(saved)
		return nil
	}
	switch {
	case r.provider.Local:
		return nil
	case !r.o.Interactive && r.provider.NeedsKey:
		r.missing = append(r.missing, "--api-key-stdin")
		return nil
	case !r.o.Interactive:
		return nil
	}
	return r.askKey(saved)
}

// askKey asks for the API key; Enter keeps saved when there is one.
func (r *run) askKey(saved string) error {
	prompt := "API key (Enter for none): "
	switch {
	case saved != "":
		prompt = "API key (Enter keeps the saved one): "
	case r.provider.NeedsKey:
		if r.provider.KeyURL != "" {
			r.say("Get an API key at %s.\n", r.provider.KeyURL)
		}
		prompt = "API key: "
	}
	for {
		key, err := r.secret(prompt)
		if err != nil {
			return err
		}
		switch {
		case key != "":
			r.key, r.keep = key, false
			return nil
		case saved != "":
			r.key, r.keep = saved, true
			r.o.Redactor.Register(saved)
			return nil
		case !r.provider.NeedsKey:
			return nil
		}
		r.say("%s needs an API key.\n", r.provider.Name)
	}
}

// missingError is the *MissingError for r.missing, with the endpoint's
// models when only --model is missing and the endpoint answers.
func (r *run) missingError(ctx context.Context) error {
	e := &MissingError{Flags: r.missing}
	if len(r.missing) == 1 {
		e.Models, _ = r.check(ctx)
	}
	return e
}

// check checks the endpoint with the chosen key, within o.Timeout, as
// the API its provider speaks.
func (r *run) check(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	if r.provider.API == config.ProviderAnthropic {
		return checkAnthropic(ctx, r.o.Client, r.baseURL, r.key)
	}
	return check(ctx, r.o.Client, r.baseURL, r.key, r.provider.KeyPath)
}

// verify checks the endpoint and returns its models. In a terminal, a
// refused key is asked again (three times at most).
func (r *run) verify(ctx context.Context) ([]string, error) {
	r.say("Checking %s ...\n", r.baseURL)
	for attempt := 1; ; attempt++ {
		models, err := r.check(ctx)
		if !errors.Is(err, ErrKeyRefused) || !r.o.Interactive || r.o.APIKeyStdin || attempt == 3 {
			return models, err
		}
		r.say("%v\nTry again.\n", err)
		if err := r.askKey(""); err != nil {
			return nil, err
		}
	}
}

// chooseModel returns --model (with a warning when the endpoint does not
// list it), else the user's choice from models.
func (r *run) chooseModel(models []string) (string, error) {
	if m := r.o.Model; m != "" {
		if len(models) > 0 && !slices.Contains(models, m) {
			r.say("Warning: %s does not list the model %q; using it anyway.\n", r.baseURL, m)
		}
		return m, nil
	}
	def := ""
	if trimURL(r.cur.BaseURL) == r.baseURL && slices.Contains(models, r.cur.Model) {
		def = r.cur.Model
	}
	return r.pickModel(models, def)
}

// keyRef is the secret reference of the key file at path (absolute).
func keyRef(path string) string { return secrets.Scheme + "file/" + path }

// write writes the key file (unless kept) and the model block, and says
// what it wrote.
func (r *run) write(model string) error {
	m := config.Model{Provider: r.provider.API, BaseURL: r.baseURL, Model: model}
	if r.key != "" {
		m.APIKey = keyRef(r.keyFile)
	}
	out, err := config.SetModel(r.data, r.o.ConfigPath, m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.o.ConfigPath), 0o700); err != nil {
		return fmt.Errorf("creating the configuration directory: %w", err)
	}
	if r.key != "" && !r.keep {
		if err := os.MkdirAll(filepath.Dir(r.keyFile), 0o700); err != nil {
			return fmt.Errorf("creating the key directory: %w", err)
		}
		if err := atomicfile.WriteFile(r.keyFile, []byte(r.key+"\n"), 0o600); err != nil {
			return fmt.Errorf("saving the API key: %w", err)
		}
	}
	written, err := atomicfile.WriteThrough(r.o.ConfigPath, out, r.perm)
	if err != nil {
		return err
	}
	name := r.provider.Name
	if r.provider.ID == Custom {
		name = r.baseURL
	}
	r.say("Set up %s, model %s, in %s.\n", name, model, r.o.ConfigPath)
	if written != r.o.ConfigPath {
		r.say("%s is a symbolic link: the file it leads to, %s, was written, and the link kept.\n", r.o.ConfigPath, written)
	}
	if r.key != "" {
		r.say("The API key is in %s (mode 0600), which the configuration references.\n", r.keyFile)
	}
	r.say("acpgate uses it from its next start; a running acpgate uses it for new sessions.\n")
	return nil
}
