package secrets

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/acpgate/acpgate/internal/base/safefile"
)

// Scheme is the prefix of a secret reference.
const Scheme = "secret://"

// ErrBadReference is wrapped by the errors for malformed references: an
// unknown provider, an empty name, a relative file path, a malformed
// ${...}. It is never reassigned.
var ErrBadReference = errors.New("bad secret reference")

// ErrNotSet is wrapped by the errors for an environment variable that is
// not set (secret://env/NAME or ${NAME}). It is never reassigned.
var ErrNotSet = errors.New("not set")

// MaxFileSize bounds what a secret://file reference reads.
const MaxFileSize = 1 << 20

// LooksLikeCredential reports whether a configuration key (an environment
// variable or header name) looks like it holds a credential: whether it
// contains, in any case, "token", "secret", "password", "key", "auth" or
// "assertion". A
// literal value under such a key deserves a warning recommending a
// secret:// reference. It is safe for concurrent use.
func LooksLikeCredential(key string) bool {
	k := strings.ToLower(key)
	for _, w := range [...]string{"token", "secret", "password", "key", "auth", "assertion"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// IsReference reports whether value is a reference rather than a literal:
// a secret:// reference (well formed or not: Resolve reports the errors),
// or exactly one ${VAR}. It is safe for concurrent use.
func IsReference(value string) bool {
	if strings.HasPrefix(value, Scheme) {
		return true
	}
	name, ok := strings.CutPrefix(value, "${")
	if !ok {
		return false
	}
	name, ok = strings.CutSuffix(name, "}")
	return ok && validVarName(name)
}

// ContainsReference reports whether value is a reference (IsReference) or
// contains a ${VAR} among literal text, as "Bearer ${TOKEN}" does. It is
// safe for concurrent use.
func ContainsReference(value string) bool {
	if strings.HasPrefix(value, Scheme) {
		return true
	}
	for rest := value; ; {
		_, after, ok := strings.Cut(rest, "${")
		if !ok {
			return false
		}
		if name, _, ok := strings.Cut(after, "}"); ok && validVarName(name) {
			return true
		}
		rest = after
	}
}

// Literal reports whether a Resolver takes value as it is: it is not a
// secret:// reference and holds no "${" that expansion would read (a
// ${VAR} or a malformed one). It is safe for concurrent use.
func Literal(value string) bool {
	return !strings.HasPrefix(value, Scheme) && !strings.Contains(value, "${")
}

// A Resolver resolves secret references. Redactor is required; the other
// fields have defaults. A Resolver is safe for concurrent use as long as
// its fields are not changed and LookupEnv and Run are safe for concurrent
// use (the defaults are).
type Resolver struct {
	// Redactor is where resolved secret values are registered. Required.
	Redactor *Redactor
	// LookupEnv looks up the agent's environment, for secret://env/NAME,
	// ${VAR} and the HOME of ~/ in file references. Default os.LookupEnv.
	// It does not change the environment the default Run gives commands.
	LookupEnv func(string) (string, bool)
	// Run runs a secret manager's command and returns its standard output.
	// Its error must not contain that output. Default RunCommand.
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Resolve resolves value as ResolveKey does with no key, so a value that
// ${VAR} expansion takes from the environment is registered with the
// Redactor only if VAR looks like a credential. Use ResolveKey when the
// value belongs to a key. Resolve is safe for concurrent use.
func (r *Resolver) Resolve(ctx context.Context, value string) (string, error) {
	return r.ResolveKey(ctx, "", value)
}

// ResolveKey resolves the value of a configuration key (an environment
// variable or header name, "api_key"). A value that is exactly a
// secret:// reference is replaced by the secret, which is registered with
// the Redactor. Any other value has its ${VAR}s expanded from the
// environment; the value of each VAR is registered with the Redactor if
// key or VAR looks like a credential (LooksLikeCredential). A value
// without references is returned as is. Values shorter than MinSecretLen
// bytes cannot be registered, so they are not redacted.
//
// The error names the reference that failed, never a secret value; it
// wraps ErrBadReference for a malformed reference, ErrNotSet for an
// environment variable that is not set, and the error of the command, the
// context or the file system otherwise. ResolveKey is safe for concurrent
// use.
func (r *Resolver) ResolveKey(ctx context.Context, key, value string) (string, error) {
	if r.Redactor == nil {
		return "", errors.New("secrets: Resolver has no Redactor")
	}
	if strings.HasPrefix(value, Scheme) {
		return r.resolveRef(ctx, value)
	}
	return r.expand(key, value)
}

// ResolveMap resolves every value of m as ResolveKey does with its key,
// and returns the results in a new map (m is not modified; a nil m gives
// an empty map). Keys are resolved in sorted order, and the first failure
// stops: its error names the key and the reference, as in
// "GITHUB_TOKEN: secret://env/GH: not set". Secrets resolved before the
// failure stay registered. ResolveMap is safe for concurrent use.
func (r *Resolver) ResolveMap(ctx context.Context, m map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, err := r.ResolveKey(ctx, k, m[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

func (r *Resolver) lookupEnv(name string) (string, bool) {
	if r.LookupEnv != nil {
		return r.LookupEnv(name)
	}
	return os.LookupEnv(name)
}

// expand expands the ${VAR}s of value.
func (r *Resolver) expand(key, value string) (string, error) {
	if !strings.Contains(value, "${") {
		return value, nil
	}
	var b strings.Builder
	var found []string
	rest := value
	for {
		before, after, ok := strings.Cut(rest, "${")
		b.WriteString(before)
		if !ok {
			break
		}
		offset := len(value) - len(rest) + len(before)
		name, tail, ok := strings.Cut(after, "}")
		if !ok {
			return "", fmt.Errorf("unterminated ${ at byte %d: %w", offset, ErrBadReference)
		}
		if !validVarName(name) {
			return "", fmt.Errorf("${%s} at byte %d: %w: invalid variable name", name, offset, ErrBadReference)
		}
		v, ok := r.lookupEnv(name)
		if !ok {
			return "", fmt.Errorf("${%s}: %w", name, ErrNotSet)
		}
		b.WriteString(v)
		if LooksLikeCredential(key) || LooksLikeCredential(name) {
			found = append(found, v)
		}
		rest = tail
	}
	r.Redactor.Register(found...)
	return b.String(), nil
}

// validVarName reports whether name is a letter or underscore followed by
// letters, digits and underscores (ASCII).
func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range []byte(name) {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// resolveRef resolves a secret:// reference and registers the secret.
func (r *Resolver) resolveRef(ctx context.Context, ref string) (string, error) {
	v, err := r.fetch(ctx, ref)
	if err != nil {
		return "", r.scrubbed(fmt.Errorf("%s: %w", ref, err), "")
	}
	r.Redactor.Register(v)
	return v, nil
}

// Check reports, without resolving anything, a malformed reference in
// value: a secret:// reference with an unknown provider, an empty or
// malformed name, or a ${...} that is not a valid variable. The error
// names the reference and wraps ErrBadReference; a value without
// references is fine. Check is safe for concurrent use.
func Check(value string) error {
	if strings.HasPrefix(value, Scheme) {
		if _, _, err := splitRef(value); err != nil {
			return fmt.Errorf("%s: %w", value, err)
		}
		return nil
	}
	// Expansion with every variable set finds the malformed ones only.
	r := &Resolver{Redactor: NewRedactor(), LookupEnv: func(string) (string, bool) { return "", true }}
	_, err := r.expand("", value)
	return err
}

// splitRef returns the provider of a secret:// reference and the rest,
// after the syntax checks that need no provider.
func splitRef(ref string) (provider, rest string, err error) {
	provider, rest, _ = strings.Cut(strings.TrimPrefix(ref, Scheme), "/")
	switch provider {
	case "env", "file", "gcp", "aws", "vault":
	case "":
		return "", "", fmt.Errorf("%w: no provider (want env, file, gcp, aws or vault)", ErrBadReference)
	default:
		return "", "", fmt.Errorf("%w: unknown provider %q (want env, file, gcp, aws or vault)", ErrBadReference, provider)
	}
	if rest == "" {
		return "", "", fmt.Errorf("%w: empty name", ErrBadReference)
	}
	return provider, rest, checkName(rest)
}

// fetch returns the secret ref refers to.
func (r *Resolver) fetch(ctx context.Context, ref string) (string, error) {
	provider, rest, err := splitRef(ref)
	if err != nil {
		return "", err
	}
	switch provider {
	case "env":
		v, ok := r.lookupEnv(rest)
		if !ok {
			return "", ErrNotSet
		}
		return v, nil
	case "file":
		return r.readFile(rest)
	case "gcp":
		name, version, hasVersion := strings.Cut(rest, "#")
		if !hasVersion {
			version = "latest"
		}
		if err := checkArgs(name, version); err != nil {
			return "", err
		}
		return r.run(ctx, "gcloud", "secrets", "versions", "access", version, "--secret="+name)
	case "aws":
		if err := checkArgs(rest); err != nil {
			return "", err
		}
		v, err := r.run(ctx, "aws", "secretsmanager", "get-secret-value", "--secret-id", rest, "--query", "SecretString", "--output", "text")
		if err == nil && v == "None" {
			// What the CLI prints for a null SecretString.
			return "", errors.New("the secret has no SecretString (binary secrets are not supported)")
		}
		return v, err
	default: // vault
		path, field, hasField := strings.Cut(rest, "#")
		if !hasField {
			field = "value"
		}
		if err := checkArgs(path, field); err != nil {
			return "", err
		}
		return r.run(ctx, "vault", "kv", "get", "-field="+field, path)
	}
}

// checkName rejects names with control characters or surrounding space,
// which are typos rather than names.
func checkName(name string) error {
	if strings.TrimSpace(name) != name {
		return fmt.Errorf("%w: leading or trailing space", ErrBadReference)
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return fmt.Errorf("%w: control character", ErrBadReference)
	}
	return nil
}

// checkArgs rejects empty command arguments and ones a CLI would take for
// flags.
func checkArgs(args ...string) error {
	for _, a := range args {
		if a == "" {
			return fmt.Errorf("%w: empty name, version or field", ErrBadReference)
		}
		if strings.HasPrefix(a, "-") {
			return fmt.Errorf("%w: %q starts with a dash", ErrBadReference, a)
		}
	}
	return nil
}

// readFile reads the secret in a file.
func (r *Resolver) readFile(path string) (string, error) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, ok := r.lookupEnv("HOME")
		if !ok || home == "" {
			return "", fmt.Errorf("~/: HOME %w", ErrNotSet)
		}
		path = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%w: relative file path %q (an absolute path starts with a second slash: secret://file//%s)", ErrBadReference, path, path)
	}
	// A named pipe or device refused at once, never waited on.
	data, err := safefile.ReadFile(path, MaxFileSize, true)
	if err != nil {
		return "", err
	}
	return trimNewline(string(data)), nil
}

// run runs a secret manager's CLI and returns its output, trimmed.
func (r *Resolver) run(ctx context.Context, name string, args ...string) (string, error) {
	run := r.Run
	if run == nil {
		run = RunCommand
	}
	out, err := run(ctx, name, args...)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			err = fmt.Errorf("the %s CLI is needed: %w", name, err)
		}
		return "", r.scrubbed(err, string(out))
	}
	return trimNewline(string(out)), nil
}

// trimNewline trims one trailing newline ("\n" or "\r\n").
func trimNewline(s string) string {
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		return strings.TrimSuffix(t, "\r")
	}
	return s
}

// scrubbed returns err, or if its message holds a registered secret or
// part of output, an error with a scrubbed message that still matches
// what err matches with errors.Is (but not errors.As, which could expose
// the original message).
func (r *Resolver) scrubbed(err error, output string) error {
	msg := err.Error()
	clean := r.Redactor.Redact(scrubOutput(msg, output))
	if clean == msg {
		return err
	}
	return &scrubbedError{msg: clean, err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }

// Is reports whether the original error matches target.
func (e *scrubbedError) Is(target error) bool { return errors.Is(e.err, target) }

// withheld replaces a message that holds a piece of output too short to
// redact.
const withheld = "(message withheld: it contains part of the command's output)"

// scrubOutput returns msg with output, and each of its lines, redacted.
func scrubOutput(msg, output string) string {
	output = strings.TrimSpace(output)
	if output == "" {
		return msg
	}
	red := NewRedactor()
	for _, p := range append(strings.Split(output, "\n"), output) {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if red.Add(p) > 0 && strings.Contains(msg, p) {
			return withheld
		}
	}
	return red.Redact(msg)
}
