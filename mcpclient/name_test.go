package mcpclient_test

import (
	"errors"
	"testing"

	"github.com/acpgate/acpgate/mcpclient"
)

// TestCheckName: a server name is one line of printable text; anything
// that could break a line or reorder text is refused, and a spec with
// such a name does not validate.
func TestCheckName(t *testing.T) {
	for _, name := range []string{"github", "my server", "Ünïcode-名前", "a/b:c", "#", "<<<x>>>", "\uFFFD"} {
		if err := mcpclient.CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"a\nb", "a\rb", "a\tb", "\x00", "a\x1b[31m", "a\x7f", "a\u0085b", "a\u2028b", "a\u2029b", "a\u202eb", "a\u200bb", "a\ufeff", "\xff"} {
		err := mcpclient.CheckName(name)
		if !errors.Is(err, mcpclient.ErrBadName) {
			t.Errorf("CheckName(%q) = %v, want ErrBadName", name, err)
		}
		spec := mcpclient.ServerSpec{Name: name, Command: "x"}
		if err := spec.Validate(); !errors.Is(err, mcpclient.ErrBadName) || !errors.Is(err, mcpclient.ErrInvalidSpec) {
			t.Errorf("Validate of %q = %v", name, err)
		}
	}
}
