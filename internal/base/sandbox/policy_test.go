package sandbox

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestPolicyJSON(t *testing.T) {
	for _, c := range []struct {
		in, str string
	}{
		{`"off"`, "off"},
		{`"read-only"`, "read-only"},
		{`"workspace-write"`, "workspace-write"},
		{`{"files":"workspace-write","network":"none"}`, "workspace-write, network none"},
		{`{"files":{"read":["/usr"],"write":["~/out"]},"hide":["~/x"],"network":{"connect":[443,8080]},"failIfUnavailable":false}`,
			"custom (read 1, write 1), 1 more hidden, network ports 443,8080, best effort"},
		{`{}`, "read-only"},
	} {
		var p Policy
		if err := json.Unmarshal([]byte(c.in), &p); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := p.String(); got != c.str {
			t.Errorf("%s: String = %q, want %q", c.in, got, c.str)
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back Policy
		if err := json.Unmarshal(out, &back); err != nil || back.String() != c.str {
			t.Errorf("%s: round trip %s = %q, %v", c.in, out, back.String(), err)
		}
	}
}

func TestPolicyJSONErrors(t *testing.T) {
	for in, want := range map[string]string{
		`"sealed"`:                             `"sealed"`,
		`{"files":"everything"}`:               "files",
		`{"network":"some"}`:                   "network",
		`{"network":{"connect":[0]}}`:          "port 0",
		`{"network":{"connect":[70000]}}`:      "network",
		`{"files":{"read":["relative/path"]}}`: "files.read[0]",
		`{"hide":[""]}`:                        "hide[0]",
		`{"color":"blue"}`:                     "color",
		`{"files":{"read":[],"exec":[]}}`:      "exec",
	} {
		var p Policy
		err := json.Unmarshal([]byte(in), &p)
		if err == nil {
			err = p.Check()
		}
		if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want ErrPolicy naming %q", in, err, want)
		}
	}
}

func TestResolve(t *testing.T) {
	home := t.TempDir()
	p := Policy{Files: FilesWorkspaceWrite, Hide: []string{"~/private"}}
	r := p.Resolve(Places{Home: home, Workspace: []string{"/work/a", "/work/a"}, Cache: []string{"~/.npm"}, Hidden: []string{"/etc/acpgate"}, Temp: "/tmp/t"})
	if strings.Join(r.Read, ",") != "/" {
		t.Errorf("Read = %v", r.Read)
	}
	if got := strings.Join(r.Write, ","); got != home+"/.npm,/tmp/t,/work/a" {
		t.Errorf("Write = %s", got)
	}
	for _, want := range []string{home + "/.ssh", home + "/private", "/etc/acpgate"} {
		if !contains(r.Hide, want) {
			t.Errorf("Hide lacks %s: %v", want, r.Hide)
		}
	}
	ro := Policy{Files: FilesReadOnly}.Resolve(Places{Home: home, Workspace: []string{"/work/a"}})
	if len(ro.Write) != 0 {
		t.Errorf("read-only writes %v", ro.Write)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestProfile(t *testing.T) {
	r := Rules{Read: []string{"/"}, Write: []string{"/work/a b", `/odd"name`}, Hide: []string{"/Users/u/.ssh"}, Network: NetPorts, Connect: []uint16{443}}
	got := Profile(r)
	want := `(version 1)
(allow default)
(deny file-write*)
(allow file-write* (subpath "/work/a b") (subpath "/odd\"name") (literal "/dev/null") (literal "/dev/zero") (literal "/dev/full") (literal "/dev/tty") (literal "/dev/random") (literal "/dev/urandom"))
(deny file-read* file-write* (subpath "/Users/u/.ssh"))
(deny network-outbound (remote ip))
(allow network-outbound (remote tcp "*:443"))
`
	if got != want {
		t.Errorf("Profile =\n%s\nwant\n%s", got, want)
	}
	custom := Profile(Rules{Read: []string{"/opt"}, Network: NetNone})
	for _, part := range []string{"(deny file-read-data)\n", `(allow file-read-data (subpath "/opt")`, "(deny network-outbound (remote ip))\n(deny network-bind (local ip))\n"} {
		if !strings.Contains(custom, part) {
			t.Errorf("custom profile lacks %q:\n%s", part, custom)
		}
	}
	if q := quote("a\nb"); q != `"a\x0ab"` {
		t.Errorf("quote = %s", q)
	}
}

func TestExplain(t *testing.T) {
	if h := Explain("read-only", "Error: EACCES: permission denied, open '/x'"); !strings.Contains(h, "read-only") {
		t.Errorf("hint = %q", h)
	}
	if h := Explain("read-only", "connection reset"); h != "" {
		t.Errorf("hint for an unrelated failure: %q", h)
	}
}
