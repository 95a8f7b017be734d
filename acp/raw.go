package acp

import (
	"bytes"
)

// This file is how the translator speaks the ACP methods acp-go-sdk
// v0.13.0 can neither send nor route (mcp/message; mcp/connect with the
// schema's fields): they travel through the SDK as extension methods under
// a private name, which the wire translates. The input filter renames a
// client's message before the SDK reads it (sdkName, through
// extensionFor), the writer renames ours back as they go out (wireName):
// no private name leaves the process.

// rawPrefix starts the private name of a method the SDK carries as an
// extension method; rawNotifyPrefix that of a client's notification (the
// SDK hands requests and notifications to one handler, which must tell
// them apart).
const (
	rawPrefix       = "_acpgate/raw/"
	rawNotifyPrefix = "_acpgate/raw-notification/"
)

// sdkName is the private name under which the SDK sees the client's
// method, sent as a notification or as a request.
func sdkName(method string, notification bool) string {
	if notification {
		return rawNotifyPrefix + method
	}
	return rawPrefix + method
}

// wireName returns frame, a message the SDK writes, with a private method
// name (rawPrefix) replaced by the method's own. Only the members the SDK
// writes first are looked at ({"jsonrpc":"2.0","id":N,"method":...} for a
// request, no id for a notification), so a result or params that happen
// to hold such a name are never touched, and a frame of another kind
// costs a prefix comparison. frame is not modified.
func wireName(frame []byte) []byte {
	rest, ok := bytes.CutPrefix(frame, []byte(`{"jsonrpc":"2.0",`))
	if !ok {
		return frame
	}
	if r, ok := bytes.CutPrefix(rest, []byte(`"id":`)); ok {
		i := 0
		for i < len(r) && '0' <= r[i] && r[i] <= '9' {
			i++
		}
		if i == 0 || i == len(r) || r[i] != ',' {
			return frame
		}
		rest = r[i+1:]
	}
	const member = `"method":"`
	if !bytes.HasPrefix(rest, []byte(member+rawPrefix)) {
		return frame
	}
	at := len(frame) - len(rest) + len(member)
	out := make([]byte, 0, len(frame)-len(rawPrefix))
	out = append(out, frame[:at]...)
	return append(out, frame[at+len(rawPrefix):]...)
}
