package setup

import (
	"fmt"
	"io"
	"strings"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/config"
)

// Show writes what is set up in the configuration file at path: the
// provider, base URL, model and API key of its top-level model block, the
// key as its reference (a literal key is redacted), and the environment
// variables (read with getenv) that override them when acpgate runs. A
// missing file says to run acpgate setup; an invalid one is an error.
func Show(path string, out io.Writer, getenv func(string) string) error {
	c, _, err := config.Load(path, false)
	if err != nil {
		return err
	}
	m := c.Redacted().Model
	fmt.Fprintf(out, "Configuration: %s\n", path)
	if m.Model == "" {
		fmt.Fprintln(out, "No model is set up: run `acpgate setup`.")
	} else {
		base, api := m.BaseURL, ""
		switch {
		case m.ResolvedProvider() == config.ProviderAnthropic:
			base, api = gateway.AnthropicRootURL(base), config.ProviderAnthropic
		case base == "":
			base = gateway.OpenAIBaseURL
		}
		fmt.Fprintf(out, "Provider:      %s\nBase URL:      %s\nModel:         %s\n", byURL(Catalogue(), base, api).Name, base, m.Model)
		key := m.APIKey
		switch {
		case key == config.RedactedValue:
			key += " (a literal key in the configuration; `acpgate setup` moves it to a key file)"
		case key == "":
			key = "none"
		}
		fmt.Fprintf(out, "API key:       %s\n", key)
	}
	var set []string
	for _, v := range []string{"ACPGATE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		if getenv(v) != "" {
			set = append(set, v)
		}
	}
	if len(set) > 0 {
		fmt.Fprintf(out, "Set in this environment, and used over the file when acpgate runs with it: %s\n", strings.Join(set, ", "))
	}
	return nil
}
