package config_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/config"
)

func TestSetModel(t *testing.T) {
	m := config.Model{BaseURL: "http://127.0.0.1:11434/v1?a=1&b=2", Model: "qwen3", APIKey: "secret://file//keys/ollama.key"}
	const block = `{
  "baseUrl": "http://127.0.0.1:11434/v1?a=1&b=2",
  "model": "qwen3",
  "apiKey": "secret://file//keys/ollama.key"
}`
	const compact = `{"baseUrl":"http://127.0.0.1:11434/v1?a=1&b=2","model":"qwen3","apiKey":"secret://file//keys/ollama.key"}`
	indented := func(prefix, unit string) string {
		return strings.NewReplacer("\n  ", "\n"+prefix+unit, "\n}", "\n"+prefix+"}").Replace(block)
	}
	profiles := `"agents": {"list": [{"id": "work", "model": {"model": "gpt-4.1"}}]}`
	for _, tc := range []struct{ name, in, want string }{
		{"empty file", "", "{\n  \"model\": " + indented("  ", "  ") + "\n}\n"},
		{"empty object", "{}\n", "{\n  \"model\": " + indented("  ", "  ") + "\n}\n"},
		{"absent", "{\n  \"sampling\": \"ask\",\n  " + profiles + "\n}\n",
			"{\n  \"sampling\": \"ask\",\n  " + profiles + ",\n  \"model\": " + indented("  ", "  ") + "\n}\n"},
		{"first", "{\n  \"model\": {\"model\": \"old\"},\n    \"sampling\":   \"deny\"\n}",
			"{\n  \"model\": " + indented("  ", "  ") + ",\n    \"sampling\":   \"deny\"\n}"},
		{"middle", "{\n\t\"sampling\": \"ask\",\n\t\"model\": {\n\t\t\"model\": \"old\",\n\t\t\"contextWindow\": 8192\n\t},\n\t" + profiles + "\n}\n",
			"{\n\t\"sampling\": \"ask\",\n\t\"model\": " + indented("\t", "\t") + ",\n\t" + profiles + "\n}\n"},
		{"last", "{\"sampling\": \"ask\",\n \"model\": null}", "{\"sampling\": \"ask\",\n \"model\": " + indented(" ", " ") + "}"},
		{"compact", `{"sampling":"ask","model":{"model":"old"},"limits":{"maxTools":5}}`,
			`{"sampling":"ask","model":` + compact + `,"limits":{"maxTools":5}}`},
		{"compact absent", `{"sampling":"ask"}`, `{"sampling":"ask", "model": ` + compact + `}`},
		{"repeated key: the last one", "{\n  \"model\": {\"model\": \"a\"},\n  \"model\": {\"model\": \"b\"}\n}",
			"{\n  \"model\": {\"model\": \"a\"},\n  \"model\": " + indented("  ", "  ") + "\n}"},
		{"CRLF", "{\r\n  \"sampling\": \"ask\"\r\n}\r\n",
			"{\r\n  \"sampling\": \"ask\",\r\n  \"model\": " + strings.ReplaceAll(indented("  ", "  "), "\n", "\r\n") + "\r\n}\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := config.SetModel([]byte(tc.in), "config.json", m)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", out, tc.want)
			}
			c, _, err := config.Parse(out, "out")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Model, m) {
				t.Errorf("parsed model %+v", c.Model)
			}
		})
	}
}

// TestSetModelInvalid: an invalid file is the error of Parse, naming it;
// so is a model block that does not validate.
func TestSetModelInvalid(t *testing.T) {
	for _, in := range []string{`{"model": `, `[1]`, `{"limits": {"maxTools": -1}}`, `{} {}`} {
		_, err := config.SetModel([]byte(in), "/home/u/config.json", config.Model{Model: "m"})
		if err == nil || !strings.Contains(err.Error(), "/home/u/config.json") {
			t.Errorf("%s: %v", in, err)
		}
	}
	_, err := config.SetModel([]byte(`{}`), "c.json", config.Model{Model: "m", APIKey: "secret://nope/x"})
	var fe *config.FieldError
	if !errors.As(err, &fe) || fe.Path != "model.apiKey" {
		t.Errorf("bad reference: %v", err)
	}
}
