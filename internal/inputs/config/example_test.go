package config_test

import (
	"errors"
	"fmt"

	"github.com/acpgate/acpgate/internal/inputs/config"
)

// A configuration file parsed, and the configuration a profile gets: the
// defaults merged with the profile, the servers sorted by name with their
// transports inferred.
func ExampleParse() {
	file := []byte(`{
	  "model": {"baseUrl": "http://127.0.0.1:11434/v1", "model": "qwen3"},
	  "agents": {"list": [{"id": "work", "model": {"model": "gpt-4.1"},
	    "mcp": {"servers": {"remote": {"url": "http://127.0.0.1:9000/mcp"}}}}]},
	  "mcpServers": {"fs": {"command": "mcp-fs", "args": ["/tmp"]}},
	  "colour": "blue"
	}`)
	cfg, warnings, err := config.Parse(file, "config.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range warnings {
		fmt.Println("warning:", w)
	}
	fmt.Println("profiles:", cfg.Profiles())
	eff, err := cfg.Effective("work")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("model:", eff.Model.Model, "at", eff.Model.BaseURL)
	for _, s := range eff.Servers {
		fmt.Println("server:", s.Name, s.Transport)
	}
	// Validation errors are *FieldError values at a JSON path.
	_, _, err = config.Parse([]byte(`{"mcpServers": {"fs": "mcp-fs"}}`), "config.json")
	var fe *config.FieldError
	if errors.As(err, &fe) {
		fmt.Println("error at", fe.Path+":", fe.Message)
	}
	// Output:
	// warning: colour: unknown key
	// profiles: [work]
	// model: gpt-4.1 at http://127.0.0.1:11434/v1
	// server: fs stdio
	// server: remote http
	// error at mcpServers.fs: want an object
}
