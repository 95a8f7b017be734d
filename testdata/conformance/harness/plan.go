package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// serverName is the name the scenario's server gets in the session: its
// tools are mcp__conformance__<tool>.
const serverName = "conformance"

// cimdURL is the Client ID Metadata Document URL the suite's auth/basic-cimd
// scenario expects as client_id (CIMD_CLIENT_METADATA_URL in the suite's
// src/scenarios/client/auth/basic-cimd.ts). It is never fetched.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// Environment variables of acpgate that hold the scenario's credentials;
// the configuration file names them as secret://env/... references, so no
// credential is written to disk.
const (
	envClientSecret      = "CONFORMANCE_CLIENT_SECRET"
	envPrivateKey        = "CONFORMANCE_PRIVATE_KEY"
	envIdentityAssertion = "CONFORMANCE_IDP_ID_TOKEN"
)

// call is one `/call` of a tool of the scenario's server.
type call struct {
	tool string
	args map[string]any
}

// plan is what the harness does for one scenario.
type plan struct {
	// oauth is the server's `oauth` configuration (issue 11's key names).
	// When it is set the server is defined in acpgate's configuration
	// file, which is where such keys live; otherwise the server is passed
	// in session/new, as an editor does.
	oauth map[string]any
	// env is added to acpgate's environment: the secrets oauth refers to.
	env []string
	// calls are made in order, each as one prompt.
	calls []call
	// signIn says the server needs an interactive sign-in (a URL
	// elicitation) before its tools can be called.
	signIn bool
}

// scenarioContext is MCP_CONFORMANCE_CONTEXT, the union of every
// scenario's fields (src/schemas/context.ts in the suite).
type scenarioContext struct {
	Name             string `json:"name"`
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPIssuer        string `json:"idp_issuer"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
}

// planFor returns the plan for scenario, given its context (MCP_CONFORMANCE_CONTEXT,
// empty when the scenario has none). Unknown non-auth scenarios get a plan
// with no calls: the session is opened and closed.
func planFor(scenario, rawContext string) (plan, error) {
	var sc scenarioContext
	if rawContext != "" {
		if err := json.Unmarshal([]byte(rawContext), &sc); err != nil {
			return plan{}, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	switch scenario {
	case "initialize":
		return plan{}, nil
	case "tools_call":
		return plan{calls: []call{{"add_numbers", map[string]any{"a": 2, "b": 40}}}}, nil
	case "elicitation-sep1034-client-defaults":
		return plan{calls: []call{{"test_client_elicitation_defaults", map[string]any{}}}}, nil
	case "sse-retry":
		return plan{calls: []call{{"test_reconnection", map[string]any{}}}}, nil
	}
	if !strings.HasPrefix(scenario, "auth/") {
		return plan{}, nil
	}
	// Every auth scenario's server has one tool, test-tool.
	p := plan{calls: []call{{"test-tool", map[string]any{}}}, signIn: true}
	switch scenario {
	case "auth/basic-cimd":
		p.oauth = map[string]any{"clientMetadataUrl": cimdURL}
	case "auth/pre-registration":
		p.oauth = map[string]any{"clientId": sc.ClientID, "clientSecret": "secret://env/" + envClientSecret}
		p.env = []string{envClientSecret + "=" + sc.ClientSecret}
	case "auth/client-credentials-basic":
		p.oauth = map[string]any{
			"grantType": "client_credentials", "clientId": sc.ClientID,
			"clientSecret": "secret://env/" + envClientSecret, "tokenEndpointAuthMethod": "client_secret_basic",
		}
		p.env = []string{envClientSecret + "=" + sc.ClientSecret}
		p.signIn = false
	case "auth/client-credentials-jwt":
		alg := sc.SigningAlgorithm
		if alg == "" {
			alg = "ES256" // the suite's default (everything-client.ts)
		}
		p.oauth = map[string]any{
			"grantType": "client_credentials", "clientId": sc.ClientID,
			"tokenEndpointAuthMethod": "private_key_jwt",
			"privateKey":              "secret://env/" + envPrivateKey, "signingAlgorithm": alg,
		}
		p.env = []string{envPrivateKey + "=" + sc.PrivateKeyPEM}
		p.signIn = false
	case "auth/cross-app-access-complete-flow":
		p.oauth = map[string]any{
			"clientId": sc.ClientID, "clientSecret": "secret://env/" + envClientSecret,
			"identityAssertion": "secret://env/" + envIdentityAssertion,
			"idpClientId":       sc.IDPClientID, "idpIssuer": sc.IDPIssuer, "idpTokenEndpoint": sc.IDPTokenEndpoint,
		}
		p.env = []string{envClientSecret + "=" + sc.ClientSecret, envIdentityAssertion + "=" + sc.IDPIDToken}
		p.signIn = false
	}
	return p, nil
}

// configFile is acpgate's configuration file for plan p: empty unless the
// server carries `oauth` keys, in which case it defines the server.
func (p plan) configFile(serverURL string) ([]byte, error) {
	cfg := map[string]any{}
	if p.oauth != nil {
		cfg["mcpServers"] = map[string]any{serverName: map[string]any{
			"type": "http", "url": serverURL, "oauth": p.oauth,
		}}
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// bridgedName is the name acpgate gives tool of the scenario's server
// (plain ASCII names are kept as they are).
func bridgedName(tool string) string { return "mcp__" + serverName + "__" + tool }
