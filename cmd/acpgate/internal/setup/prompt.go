package setup

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/acpgate/acpgate/cmd/internal/tty"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// This file is the questions setup asks in a terminal.

// shownModels bounds the models listed at once; a longer list is narrowed
// by typing part of a name.
const shownModels = 30

// say writes to the user.
func (r *run) say(format string, args ...any) { fmt.Fprintf(r.o.Out, format, args...) }

// line asks a question and returns the answer, trimmed.
func (r *run) line(prompt string) (string, error) {
	r.say("%s", prompt)
	s, err := r.in.ReadString('\n')
	if err != nil && (err != io.EOF || s == "") {
		return "", ErrNoAnswer
	}
	return strings.TrimSpace(s), nil
}

// secret reads one line without echo when the input is a terminal
// (asking with prompt), else the first line of the input, and registers
// it with the redactor.
func (r *run) secret(prompt string) (string, error) {
	var s string
	var err error
	if !tty.IsTerminal(r.o.In) {
		if s, err = r.in.ReadString('\n'); err != nil && (err != io.EOF || s == "") {
			return "", ErrNoAnswer
		}
	} else {
		err = tty.WithoutEcho(r.o.In, func() error {
			var err error
			s, err = r.line(prompt)
			return err
		})
		r.say("\n") // the Enter that was not echoed
		if err != nil {
			return "", err
		}
	}
	s = strings.TrimSpace(s)
	r.o.Redactor.Register(s)
	if err := secrets.CheckHeaderValue(s); err != nil {
		return "", fmt.Errorf("the API key %w: paste the key alone", err)
	}
	return s, nil
}

// choose lists items, numbered from 1, and returns the index of the one
// the user picks (Enter: def).
func (r *run) choose(items []string, def int) (int, error) {
	for i, it := range items {
		r.say("%3d) %s\n", i+1, it)
	}
	for {
		a, err := r.line(fmt.Sprintf("Choice [1-%d, Enter: %d]: ", len(items), def+1))
		if err != nil {
			return 0, err
		}
		if a == "" {
			return def, nil
		}
		if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(items) {
			return n - 1, nil
		}
		r.say("Type a number from 1 to %d.\n", len(items))
	}
}

// pickProvider asks for the provider; the local servers found running
// are marked, and the first of them is the default.
func (r *run) pickProvider(running map[string]bool) (Provider, error) {
	r.say("Which model provider should acpgate use?\n")
	items := make([]string, len(r.o.Providers))
	def := -1
	for i, p := range r.o.Providers {
		items[i] = fmt.Sprintf("%-36s %s", p.Name, p.BaseURL)
		switch {
		case p.Local && running[p.ID]:
			items[i] += "  (running)"
			if def < 0 {
				def = i
			}
		case p.Local:
			items[i] += "  (not running)"
		case p.ID == Custom:
			items[i] = p.Name + " (you give its URL)"
		}
	}
	i, err := r.choose(items, max(def, 0))
	if err != nil {
		return Provider{}, err
	}
	return r.o.Providers[i], nil
}

// pickModel asks for the model among models (Enter: def, else the first).
// A long list is shown in part; typing part of a name narrows it. With no
// models listed, the name is asked.
func (r *run) pickModel(models []string, def string) (string, error) {
	if len(models) == 0 {
		r.say("The endpoint lists no models.\n")
		for {
			m, err := r.line("Model name: ")
			if err != nil || m != "" {
				return m, err
			}
		}
	}
	if def == "" {
		def = models[0]
	}
	r.say("Which model should be the default? (%d listed", len(models))
	if len(models) > shownModels {
		r.say("; type part of a name to narrow the list")
	}
	r.say(")\n")
	shown := models
	for {
		for i, m := range shown[:min(len(shown), shownModels)] {
			r.say("%3d) %s\n", i+1, m)
		}
		if n := len(shown) - shownModels; n > 0 {
			r.say("     (%d more)\n", n)
		}
		a, err := r.line(fmt.Sprintf("Model [number or name, Enter: %s]: ", def))
		if err != nil {
			return "", err
		}
		if m, ok := modelAnswer(a, def, models, shown); ok {
			return m, nil
		}
		if shown = narrow(models, a); len(shown) == 0 {
			r.say("No model matches %q.\n", a)
			shown = models
		}
	}
}

// modelAnswer is the model answer a names: Enter is def, a number one of
// shown, a listed name itself.
func modelAnswer(a, def string, models, shown []string) (string, bool) {
	if a == "" {
		return def, true
	}
	if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= min(len(shown), shownModels) {
		return shown[n-1], true
	}
	for _, m := range models {
		if m == a {
			return m, true
		}
	}
	return "", false
}

// narrow returns the models whose name contains part, ignoring case.
func narrow(models []string, part string) []string {
	var out []string
	for _, m := range models {
		if strings.Contains(strings.ToLower(m), strings.ToLower(part)) {
			out = append(out, m)
		}
	}
	return out
}
