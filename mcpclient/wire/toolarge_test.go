package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestIDScanner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		id     string // "" = not a response with an id
		method bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, "7", false},
		{`{"result":{"id":1,"text":"\"id\":9"},"id":"abc"}`, `"abc"`, false},
		{`{"result":[{"id":1}],"id" : 12 }`, "12", false},
		{`{"id":"a\"b","result":{}}`, `"a\"b"`, false},
		{`{"i\u0064":3,"result":{}}`, "", false},
		{`{"method":"x","id":3,"params":{}}`, "", true},
		{`{"params":{"method":"x"},"id":4}`, "4", false},
		{`[{"id":1}]`, "", false},
		{`{"id":null,"error":{}}`, "", false},
		{`{"id":{"x":1}}`, "", false},
		{`{"result":"` + strings.Repeat(`a\\`, 1000) + `","id":5}`, "5", false},
	} {
		var s idScanner
		// Byte by byte and whole: the same answer.
		for _, chunks := range [][]string{{tc.in}, strings.Split(tc.in, "")} {
			s.reset()
			for _, c := range chunks {
				s.write([]byte(c))
			}
			id, ok := s.responseID()
			got := ""
			if ok {
				b, _ := json.Marshal(id)
				got = string(b)
			}
			if got != tc.id || s.method != tc.method {
				t.Errorf("%.60s: id %q method %v, want %q %v", tc.in, got, s.method, tc.id, tc.method)
			}
		}
	}
}
