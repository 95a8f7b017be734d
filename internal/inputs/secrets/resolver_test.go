package secrets_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// fakeCLI writes an executable name into dir that records its arguments
// (NUL-terminated) in a file, prints stdout and stderr and exits with
// code. It returns the file the arguments go to.
func fakeCLI(t *testing.T, dir, name, stdout, stderr string, code int) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("fake CLIs are shell scripts")
	}
	args := filepath.Join(dir, name+".args")
	for _, s := range []string{dir, stdout, stderr} {
		if strings.Contains(s, "'") {
			t.Fatalf("cannot single-quote %q", s)
		}
	}
	// Only shell builtins: PATH holds nothing but the fakes.
	script := "#!/bin/sh\n" +
		"for a in \"$@\"; do printf '%s\\0' \"$a\"; done > '" + args + "'\n" +
		"printf '%s' '" + stdout + "'\n" +
		"printf '%s' '" + stderr + "' >&2\n" +
		"exit " + strconv.Itoa(code) + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return args
}

// readArgs returns the arguments a fake CLI recorded.
func readArgs(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the CLI did not run: %v", err)
	}
	args := strings.Split(string(data), "\x00")
	return args[:len(args)-1]
}

// fakePath makes a directory the only one on PATH and returns it.
func fakePath(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	return dir
}

func TestResolveCommands(t *testing.T) {
	tests := []struct {
		ref, cli, stdout string
		wantArgs         []string
		want             string
	}{
		{"secret://gcp/db-password", "gcloud", "s3cr3t-gcp\n",
			[]string{"secrets", "versions", "access", "latest", "--secret=db-password"}, "s3cr3t-gcp"},
		{"secret://gcp/projects/p/secrets/db#5", "gcloud", "v5-value",
			[]string{"secrets", "versions", "access", "5", "--secret=projects/p/secrets/db"}, "v5-value"},
		{"secret://aws/prod/db", "aws", "aws-secret\n\n",
			[]string{"secretsmanager", "get-secret-value", "--secret-id", "prod/db", "--query", "SecretString", "--output", "text"}, "aws-secret\n"},
		{"secret://aws/arn:aws:secretsmanager:eu-west-1:123:secret:x", "aws", `{"user":"u","pass":"p w"}` + "\n",
			[]string{"secretsmanager", "get-secret-value", "--secret-id", "arn:aws:secretsmanager:eu-west-1:123:secret:x", "--query", "SecretString", "--output", "text"}, `{"user":"u","pass":"p w"}`},
		{"secret://vault/secret/data/app", "vault", "vault-value\r\n",
			[]string{"kv", "get", "-field=value", "secret/data/app"}, "vault-value"},
		{"secret://vault/secret/app#password", "vault", "multi\nline secret\n",
			[]string{"kv", "get", "-field=password", "secret/app"}, "multi\nline secret"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			args := fakeCLI(t, fakePath(t), tt.cli, tt.stdout, "", 0)
			r := &secrets.Resolver{Redactor: secrets.NewRedactor()}
			got, err := r.Resolve(context.Background(), tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Resolve = %q, want %q", got, tt.want)
			}
			if argv := readArgs(t, args); !slices.Equal(argv, tt.wantArgs) {
				t.Errorf("%s ran with %q, want %q", tt.cli, argv, tt.wantArgs)
			}
			if red := r.Redactor.Redact("x " + tt.want); red != "x [REDACTED]" {
				t.Errorf("the secret is not registered: %q", red)
			}
		})
	}
}

func TestResolveCommandFailure(t *testing.T) {
	const earlier = "earlier-secret-value"
	tests := []struct {
		name, ref, cli, stdout, stderr string
		code                           int
		want                           []string // in the error
		leaks                          []string // not in the error
	}{
		{
			name: "partial output", ref: "secret://aws/prod/db", cli: "aws",
			stdout: "partial-secret-abc\nsecond-line-xyz", stderr: "error: denied for partial-secret-abc\nsecond-line-xyz\n", code: 1,
			want:  []string{"secret://aws/prod/db", "aws: exit status 1", "error: denied for [REDACTED]"},
			leaks: []string{"partial-secret-abc", "second-line-xyz"},
		},
		{
			name: "stderr only", ref: "secret://gcp/db#7", cli: "gcloud",
			stderr: "ERROR: (gcloud.secrets.versions.access) NOT_FOUND\n", code: 1,
			want: []string{"secret://gcp/db#7: gcloud: exit status 1: ERROR: (gcloud.secrets.versions.access) NOT_FOUND"},
		},
		{
			name: "stderr holds a registered secret", ref: "secret://vault/kv/app", cli: "vault",
			stderr: "token " + earlier + " rejected", code: 2,
			want:  []string{"secret://vault/kv/app", "exit status 2", "token [REDACTED] rejected"},
			leaks: []string{earlier},
		},
		{
			name: "output too short to redact", ref: "secret://vault/kv/app", cli: "vault",
			stdout: "ab", stderr: "bad value ab", code: 1,
			want:  []string{"secret://vault/kv/app", "message withheld"},
			leaks: []string{"ab"},
		},
		{
			name: "binary AWS secret", ref: "secret://aws/blob", cli: "aws",
			stdout: "None\n",
			want:   []string{"secret://aws/blob: the secret has no SecretString"},
		},
		{
			name: "long stderr", ref: "secret://gcp/db", cli: "gcloud",
			stdout: "partial-secret-abc", stderr: strings.Repeat("e", 2000) + " partial-secret-abc", code: 1,
			want:  []string{"secret://gcp/db: gcloud: exit status 1: eeee", "e..."},
			leaks: []string{"partial-secret-abc", strings.Repeat("e", 1025)},
		},
		{
			name: "no output, no stderr", ref: "secret://gcp/db", cli: "gcloud", code: 3,
			want: []string{"secret://gcp/db: gcloud: exit status 3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeCLI(t, fakePath(t), tt.cli, tt.stdout, tt.stderr, tt.code)
			r := &secrets.Resolver{Redactor: newRedactor(t, earlier)}
			got, err := r.Resolve(context.Background(), tt.ref)
			if err == nil {
				t.Fatalf("Resolve = %q, want an error", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, l := range tt.leaks {
				if strings.Contains(err.Error(), l) {
					t.Errorf("error %q contains %q", err, l)
				}
			}
		})
	}
}

func TestResolveMissingCommand(t *testing.T) {
	tests := []struct{ ref, cli string }{
		{"secret://gcp/db", "gcloud"},
		{"secret://aws/prod/db", "aws"},
		{"secret://vault/kv/app#f", "vault"},
	}
	for _, tt := range tests {
		t.Run(tt.cli, func(t *testing.T) {
			fakePath(t) // empty
			r := &secrets.Resolver{Redactor: secrets.NewRedactor()}
			_, err := r.Resolve(context.Background(), tt.ref)
			if !errors.Is(err, exec.ErrNotFound) {
				t.Fatalf("Resolve error = %v, want exec.ErrNotFound", err)
			}
			if want := tt.ref + ": the " + tt.cli + " CLI is needed"; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
		})
	}
}

func TestResolveCanceled(t *testing.T) {
	args := fakeCLI(t, fakePath(t), "gcloud", "value-1234", "", 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &secrets.Resolver{Redactor: secrets.NewRedactor()}
	_, err := r.Resolve(ctx, "secret://gcp/db")
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "secret://gcp/db: ") {
		t.Errorf("Resolve error = %v, want context.Canceled naming the reference", err)
	}
	if _, err := os.Stat(args); err == nil {
		t.Error("the CLI ran despite the canceled context")
	}
}

// env returns a LookupEnv over m.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestResolveEnvAndFile(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if err := os.WriteFile(filepath.Join(home, "tok"), []byte("home-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := write("plain", "file-secret")
	twoNewlines := write("two", "file-secret\n\n")
	crlf := write("crlf", "file-secret\r\n")
	pem := write("pem", "-----BEGIN KEY-----\nabc\n-----END KEY-----\n")
	big := write("big", strings.Repeat("x", secrets.MaxFileSize+1))
	lookup := env(map[string]string{"GH": "ghp_value_123", "EMPTY": "", "HOME": home})

	tests := []struct {
		ref     string
		lookup  func(string) (string, bool)
		want    string
		wantErr error
		wantMsg string
	}{
		{ref: "secret://env/GH", want: "ghp_value_123"},
		{ref: "secret://env/EMPTY", want: ""},
		{ref: "secret://env/NOPE", wantErr: secrets.ErrNotSet, wantMsg: "secret://env/NOPE: not set"},
		{ref: "secret://file/" + plain, want: "file-secret"},
		{ref: "secret://file/" + twoNewlines, want: "file-secret\n"},
		{ref: "secret://file/" + crlf, want: "file-secret"},
		{ref: "secret://file/" + pem, want: "-----BEGIN KEY-----\nabc\n-----END KEY-----"},
		{ref: "secret://file/~/tok", want: "home-secret"},
		{ref: "secret://file/~/tok", lookup: env(nil), wantErr: secrets.ErrNotSet, wantMsg: "secret://file/~/tok: ~/: HOME not set"},
		{ref: "secret://file/~/missing", wantErr: fs.ErrNotExist, wantMsg: "secret://file/~/missing: open "},
		{ref: "secret://file/" + dir + "/missing", wantErr: fs.ErrNotExist, wantMsg: "secret://file/" + dir + "/missing: open "},
		{ref: "secret://file/run/secrets/x", wantErr: secrets.ErrBadReference, wantMsg: "secret://file//run/secrets/x"},
		{ref: "secret://file/" + big, wantMsg: "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			r := &secrets.Resolver{Redactor: secrets.NewRedactor(), LookupEnv: lookup}
			if tt.lookup != nil {
				r.LookupEnv = tt.lookup
			}
			got, err := r.Resolve(context.Background(), tt.ref)
			if tt.wantMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantMsg) || !strings.Contains(err.Error(), tt.ref) {
					t.Fatalf("Resolve = %q, %v; want an error naming %s and containing %q", got, err, tt.ref, tt.wantMsg)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("error %v is not %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Resolve = %q, %v; want %q", got, err, tt.want)
			}
			if len(got) >= secrets.MinSecretLen && r.Redactor.Redact(got) != secrets.Redacted {
				t.Errorf("the secret is not registered")
			}
		})
	}
}

func TestBadReferences(t *testing.T) {
	refs := []string{
		"secret://",
		"secret://env",
		"secret://env/",
		"secret://nope/x",
		"secret:///x",
		"secret://ENV/X",
		"secret://gcp/db#",
		"secret://gcp/#3",
		"secret://gcp/db#--help",
		"secret://aws/-x",
		"secret://aws/",
		"secret://vault/kv/app#",
		"secret://vault/-kv#f",
		"secret://env/ X",
		"secret://env/X ",
		"secret://env/A\nB",
		"secret://file/relative",
		"secret://file/~user/x",
		"secret://file/~",
	}
	for _, ref := range refs {
		t.Run(ref, func(t *testing.T) {
			r := &secrets.Resolver{
				Redactor:  secrets.NewRedactor(),
				LookupEnv: env(map[string]string{"HOME": "/home/u", " X": "v", "X ": "v"}),
				Run: func(context.Context, string, ...string) ([]byte, error) {
					t.Error("a command ran for a bad reference")
					return nil, nil
				},
			}
			_, err := r.Resolve(context.Background(), ref)
			if !errors.Is(err, secrets.ErrBadReference) {
				t.Fatalf("Resolve error = %v, want ErrBadReference", err)
			}
			if !strings.HasPrefix(err.Error(), ref+": ") {
				t.Errorf("error %q does not name the reference", err)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	lookup := env(map[string]string{"TOKEN": "tok-value-1", "USER": "bob", "EMPTY": "", "_X1": "x1"})
	tests := []struct {
		value   string
		want    string
		wantErr error
		wantMsg string
	}{
		{value: "", want: ""},
		{value: "plain", want: "plain"},
		{value: "Bearer ${TOKEN}", want: "Bearer tok-value-1"},
		{value: "${USER}:${TOKEN}", want: "bob:tok-value-1"},
		{value: "${_X1}", want: "x1"},
		{value: "$${USER}", want: "$bob"},
		{value: "$$", want: "$$"},
		{value: "$USER", want: "$USER"},
		{value: "cost $5 {x}", want: "cost $5 {x}"},
		{value: "${EMPTY}x", want: "x"},
		{value: "a}b${USER}}", want: "a}bbob}"},
		{value: "${TOKEN} secret://env/X", want: "tok-value-1 secret://env/X"},
		{value: " secret://env/TOKEN", want: " secret://env/TOKEN"},
		{value: "${NOPE}", wantErr: secrets.ErrNotSet, wantMsg: "${NOPE}: not set"},
		{value: "${TOKEN}${NOPE}", wantErr: secrets.ErrNotSet, wantMsg: "${NOPE}: not set"},
		{value: "x ${TOKEN", wantErr: secrets.ErrBadReference, wantMsg: "unterminated ${ at byte 2"},
		{value: "${}", wantErr: secrets.ErrBadReference, wantMsg: "${} at byte 0"},
		{value: "${1A}", wantErr: secrets.ErrBadReference, wantMsg: "${1A}"},
		{value: "${A-B}", wantErr: secrets.ErrBadReference, wantMsg: "${A-B}"},
		{value: "${ TOKEN}", wantErr: secrets.ErrBadReference, wantMsg: "${ TOKEN}"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			r := &secrets.Resolver{Redactor: secrets.NewRedactor(), LookupEnv: lookup}
			got, err := r.ResolveKey(context.Background(), "X_TOKEN", tt.value)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("ResolveKey = %q, %v; want %v containing %q", got, err, tt.wantErr, tt.wantMsg)
				}
				if strings.Contains(err.Error(), "tok-value-1") {
					t.Errorf("error %q contains a value", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ResolveKey = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestExpandRedactionRule(t *testing.T) {
	lookup := env(map[string]string{"GH": "gh-value-1", "HOME": "/home/user", "API_KEY": "key-value-2", "MY_PASSWORD": "pw-value-3"})
	tests := []struct {
		key, value string
		value0     string // the environment value that must or must not be registered
		redacted   bool
	}{
		{"GITHUB_TOKEN", "${GH}", "gh-value-1", true},           // the key looks like a credential
		{"Authorization", "Bearer ${GH}", "gh-value-1", true},   // so does this one
		{"LOG_DIR", "${HOME}/logs", "/home/user", false},        // neither does
		{"URL", "https://x/?k=${API_KEY}", "key-value-2", true}, // the variable does
		{"", "${MY_PASSWORD}", "pw-value-3", true},              // Resolve: the variable does
		{"", "${HOME}", "/home/user", false},
		{"DIR", "secret://env/HOME", "/home/user", true}, // secret:// always
		{"GITHUB_TOKEN", "literal-value", "literal-value", false},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			r := &secrets.Resolver{Redactor: secrets.NewRedactor(), LookupEnv: lookup}
			var err error
			if tt.key == "" {
				_, err = r.Resolve(context.Background(), tt.value)
			} else {
				_, err = r.ResolveKey(context.Background(), tt.key, tt.value)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Redactor.Redact(tt.value0) == secrets.Redacted; got != tt.redacted {
				t.Errorf("%q redacted: %v, want %v", tt.value0, got, tt.redacted)
			}
		})
	}
}

func TestResolveMap(t *testing.T) {
	lookup := env(map[string]string{"GH": "gh-value-1", "USER": "bob"})
	tests := []struct {
		name    string
		in      map[string]string
		want    map[string]string
		wantMsg string
	}{
		{"nil", nil, map[string]string{}, ""},
		{"mixed",
			map[string]string{"GITHUB_TOKEN": "secret://env/GH", "GREETING": "hi ${USER}", "MODE": "fast"},
			map[string]string{"GITHUB_TOKEN": "gh-value-1", "GREETING": "hi bob", "MODE": "fast"}, ""},
		{"failure names key and reference",
			map[string]string{"GITHUB_TOKEN": "secret://env/NOPE", "OK": "secret://env/GH"},
			nil, "GITHUB_TOKEN: secret://env/NOPE: not set"},
		{"first failing key in sorted order",
			map[string]string{"Z": "secret://env/Z", "B": "${B}", "A": "fine", "C": "secret://nope/c"},
			nil, "B: ${B}: not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := maps.Clone(tt.in)
			for range 5 { // map order must not matter
				r := &secrets.Resolver{Redactor: secrets.NewRedactor(), LookupEnv: lookup}
				got, err := r.ResolveMap(context.Background(), tt.in)
				if tt.wantMsg != "" {
					if err == nil || err.Error() != tt.wantMsg {
						t.Fatalf("ResolveMap error = %v, want %q", err, tt.wantMsg)
					}
					continue
				}
				if err != nil || got == nil || !maps.Equal(got, tt.want) {
					t.Fatalf("ResolveMap = %v, %v; want %v", got, err, tt.want)
				}
			}
			if !maps.Equal(tt.in, orig) {
				t.Errorf("input modified: %v", tt.in)
			}
		})
	}
}

// TestCustomRunErrors checks that a Run whose error holds its output, or a
// registered secret, yields a scrubbed error that still matches errors.Is.
func TestCustomRunErrors(t *testing.T) {
	errQuota := errors.New("quota exceeded")
	tests := []struct {
		name   string
		out    string
		err    error
		leaks  []string
		wantIs error
	}{
		{"output in the error", "leaked-output-value", errors.Join(errQuota, errors.New("got leaked-output-value")), []string{"leaked-output-value"}, errQuota},
		{"registered secret in the error", "", errors.Join(errQuota, errors.New("old registered-value-9")), []string{"registered-value-9"}, errQuota},
		{"clean error", "", errQuota, nil, errQuota},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &secrets.Resolver{
				Redactor: newRedactor(t, "registered-value-9"),
				Run: func(context.Context, string, ...string) ([]byte, error) {
					return []byte(tt.out), tt.err
				},
			}
			_, err := r.Resolve(context.Background(), "secret://aws/x")
			if !errors.Is(err, tt.wantIs) || !strings.HasPrefix(err.Error(), "secret://aws/x: ") {
				t.Errorf("error %v does not match %v or name the reference", err, tt.wantIs)
			}
			for _, l := range tt.leaks {
				if strings.Contains(err.Error(), l) {
					t.Errorf("error %q contains %q", err, l)
				}
			}
		})
	}
}

func TestResolverWithoutRedactor(t *testing.T) {
	r := &secrets.Resolver{}
	for _, v := range []string{"plain", "secret://env/HOME"} {
		if _, err := r.Resolve(context.Background(), v); err == nil {
			t.Errorf("Resolve(%q) without a Redactor succeeded", v)
		}
	}
}

func TestLooksLikeCredential(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"GITHUB_TOKEN", true},
		{"github_token", true},
		{"CLIENT_SECRET", true},
		{"DB_PASSWORD", true},
		{"OPENAI_API_KEY", true},
		{"apiKey", true},
		{"Authorization", true},
		{"X-Auth", true},
		{"PATH", false},
		{"HOME", false},
		{"LOG_LEVEL", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := secrets.LooksLikeCredential(tt.key); got != tt.want {
			t.Errorf("LooksLikeCredential(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestIsReference(t *testing.T) {
	tests := []struct {
		value          string
		isRef, contain bool
	}{
		{"secret://env/X", true, true},
		{"secret://nope/x", true, true}, // malformed, but meant as a reference
		{"${TOKEN}", true, true},
		{"${_t0}", true, true},
		{"Bearer ${TOKEN}", false, true},
		{"${A}${B}", false, true},
		{"x ${A} ${", false, true},
		{"${}", false, false},
		{"${1A}", false, false},
		{"${A", false, false},
		{"$TOKEN", false, false},
		{"ghp_literal", false, false},
		{" secret://env/X", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		if got := secrets.IsReference(tt.value); got != tt.isRef {
			t.Errorf("IsReference(%q) = %v, want %v", tt.value, got, tt.isRef)
		}
		if got := secrets.ContainsReference(tt.value); got != tt.contain {
			t.Errorf("ContainsReference(%q) = %v, want %v", tt.value, got, tt.contain)
		}
	}
}

// TestCheck: Check finds malformed references without resolving anything
// (no variable, file or command is needed).
func TestCheck(t *testing.T) {
	tests := []struct {
		value string
		bad   bool
	}{
		{"literal", false},
		{"", false},
		{"secret://env/UNSET_VARIABLE_FOR_CHECK", false},
		{"secret://gcp/name#3", false},
		{"Bearer ${UNSET_VARIABLE_FOR_CHECK}", false},
		{"secret://nope/x", true},
		{"secret://env/", true},
		{"secret:///x", true},
		{"secret://env/ X", true},
		{"${HOME", true},
		{"${1X}", true},
	}
	for _, tt := range tests {
		err := secrets.Check(tt.value)
		if bad := errors.Is(err, secrets.ErrBadReference); bad != tt.bad || (err != nil && !bad) {
			t.Errorf("Check(%q) = %v, want bad %v", tt.value, err, tt.bad)
		}
	}
}

// TestLiteral: Literal holds exactly for the values a Resolver returns as
// they are.
func TestLiteral(t *testing.T) {
	r := &secrets.Resolver{Redactor: secrets.NewRedactor(), LookupEnv: func(string) (string, bool) { return "X", true }}
	for _, v := range []string{"", "plain", "Bearer abc", "$HOME", "$$", "{x}", "secret:/x", "a${b}", "${B}", "${", "x ${1bad}", "secret://env/B", "SECRET://env/B"} {
		got, err := r.Resolve(context.Background(), v)
		asIs := err == nil && got == v
		if secrets.Literal(v) != asIs {
			t.Errorf("Literal(%q) = %v, but Resolve gives %q, %v", v, secrets.Literal(v), got, err)
		}
	}
}
