package acp

import (
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/mcpclient"
)

// TestZeroMeansOff: in the configuration file an absent limit is the
// default and 0 is "off": maxRestarts 0 never restarts, callsPerMinute 0
// has no rate limit.
func TestZeroMeansOff(t *testing.T) {
	tests := []struct {
		name, src   string
		noRestart   bool
		maxRestarts int
		callsPerMin int
	}{
		{"absent", `{"mcpServers": {"s": {"command": "c"}}}`, false, config.DefaultMaxRestarts, 0},
		{"zero", `{"mcpServers": {"s": {"command": "c", "maxRestarts": 0}}, "limits": {"callsPerMinute": 0}}`, true, 0, mcpclient.Unlimited},
		{"set", `{"mcpServers": {"s": {"command": "c", "maxRestarts": 2}}, "limits": {"callsPerMinute": 7}}`, false, 2, 7},
		{"restartOnCrash false", `{"mcpServers": {"s": {"command": "c", "restartOnCrash": false}}}`, true, config.DefaultMaxRestarts, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := config.Parse([]byte(tt.src), "config.json")
			if err != nil {
				t.Fatal(err)
			}
			cf := &agentConfig{opts: &Options{Config: func() *config.Config { return c }}}
			sc, err := cf.sessionConfigFor("")
			if err != nil || len(sc.servers) != 1 {
				t.Fatalf("sessionConfigFor: %v %+v", err, sc)
			}
			spec := sc.servers[0]
			if spec.NoRestart != tt.noRestart || spec.MaxRestarts != tt.maxRestarts {
				t.Errorf("NoRestart %v MaxRestarts %d, want %v %d", spec.NoRestart, spec.MaxRestarts, tt.noRestart, tt.maxRestarts)
			}
			var mo mcpclient.Options
			sc.applyLimits(&mo, sc.servers)
			if mo.CallsPerMinute != tt.callsPerMin {
				t.Errorf("CallsPerMinute %d, want %d", mo.CallsPerMinute, tt.callsPerMin)
			}
		})
	}
}

// TestSamplingPolicy: a server's sampling settings win over the limits and
// the top-level mode, which win over the defaults; a denied server is not
// offered sampling.
func TestSamplingPolicy(t *testing.T) {
	c, _, err := config.Parse([]byte(`{"sampling": "allow", "limits": {"samplingMaxTokens": 100},
		"mcpServers": {"a": {"command": "c"}, "b": {"command": "c", "sampling": "deny", "samplingPerMinute": 0}, "c": {"command": "c", "samplingMaxTokens": 7}}}`), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	cf := &agentConfig{opts: &Options{Config: func() *config.Config { return c }}}
	sc, err := cf.sessionConfigFor("")
	if err != nil {
		t.Fatal(err)
	}
	for server, want := range map[string]samplingPolicy{
		"a":      {config.SamplingAllow, 100, defaultSamplingPerMinute},
		"b":      {config.SamplingDeny, 100, 0},
		"c":      {config.SamplingAllow, 7, defaultSamplingPerMinute},
		"client": {config.SamplingAllow, 100, defaultSamplingPerMinute},
	} {
		if got := sc.samplingFor(server); got != want {
			t.Errorf("%s: %+v, want %+v", server, got, want)
		}
	}
	sc.applyLimits(&mcpclient.Options{}, sc.servers)
	for _, s := range sc.servers {
		if s.NoSampling != (s.Name == "b") {
			t.Errorf("%s: NoSampling %v", s.Name, s.NoSampling)
		}
	}
	var none sessionConfig
	if got := none.samplingFor("x"); got != (samplingPolicy{config.SamplingAsk, defaultSamplingMaxTokens, defaultSamplingPerMinute}) {
		t.Errorf("defaults: %+v", got)
	}
}
