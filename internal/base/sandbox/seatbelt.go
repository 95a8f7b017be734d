package sandbox

import (
	"strconv"
	"strings"
)

// SandboxExec is macOS's sandbox-exec, which runs a command under a
// profile (Seatbelt's policy language).
const SandboxExec = "/usr/bin/sandbox-exec"

// Profile returns the sandbox-exec profile of r: everything allowed but
// writing (allowed in r.Write and the devices only), reading outside
// r.Read (custom policies), the hidden trees, and the network as r says.
// Later rules win in a profile, so the order is allow all, deny, allow
// the exceptions, deny the hidden.
func Profile(r Rules) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n")
	if !(len(r.Read) == 1 && r.Read[0] == "/") {
		b.WriteString("(deny file-read-data)\n")
		b.WriteString("(allow file-read-data" + filters(r.Read, "subpath") + filters([]string{"/dev", "/System", "/usr/lib", "/private/var/db/dyld"}, "subpath") + ")\n")
	}
	b.WriteString("(deny file-write*)\n")
	b.WriteString("(allow file-write*" + filters(r.Write, "subpath") + filters(devices, "literal") + ")\n")
	if len(r.Hide) > 0 {
		b.WriteString("(deny file-read* file-write*" + filters(r.Hide, "subpath") + ")\n")
	}
	switch r.Network {
	case NetNone:
		b.WriteString("(deny network-outbound (remote ip))\n(deny network-bind (local ip))\n")
	case NetPorts:
		b.WriteString("(deny network-outbound (remote ip))\n(allow network-outbound")
		for _, port := range r.Connect {
			b.WriteString(` (remote tcp "*:` + strconv.Itoa(int(port)) + `")`)
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// filters is " (kind "p1") (kind "p2")..." for paths, each quoted as
// the profile language's strings are.
func filters(paths []string, kind string) string {
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(" (" + kind + " " + quote(p) + ")")
	}
	return b.String()
}

// quote writes s as a profile string: in double quotes, with backslash
// and double quote escaped; control characters, which no path here
// holds, are escaped too.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x` + strconv.FormatInt(int64(r)|0x100, 16)[1:])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
