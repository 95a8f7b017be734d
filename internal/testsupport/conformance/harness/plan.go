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
	envWorkloadToken     = "CONFORMANCE_WIF_TOKEN"
)

// call is one prompt of the plan: by default `/call` of a tool of the
// scenario's server with args.
type call struct {
	tool string
	args map[string]any
	// builtin: tool is one of acpgate's own tools (such as
	// mcp_read_resource), called by its own name.
	builtin bool
	// text, when set, is sent as the prompt instead of a /call: a slash
	// command of acpgate's (a server's prompt), or, with plan.model, a
	// request to the model.
	text string
	// mayFail: the prompt need not end in a completed tool call (a tool
	// acpgate should not offer at all, a prompt command with no model);
	// what the scenario checks is what reached its server.
	mayFail bool
}

// label names c in the harness's messages.
func (c call) label() string {
	if c.text != "" {
		return fmt.Sprintf("%q", c.text)
	}
	return "/call " + c.tool
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
	// model, when set, is acpgate's model: a fake Chat Completions server
	// (model.go) that answers as a model reading the tools acpgate offers
	// it would.
	model *modelEcho
}

// scenarioContext is MCP_CONFORMANCE_CONTEXT, the union of every
// scenario's fields (src/schemas/context.ts in the suite, and the
// toolCalls of http-custom-headers, src/scenarios/client/http-custom-headers.ts).
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
	// ValidJWT is auth/wif-jwt-bearer's workload token (the assertion of
	// a JWT bearer grant), which acpgate has no setting for yet.
	ValidJWT string `json:"valid_jwt"`
	// ToolCalls are the calls a scenario asks for with the arguments it
	// checks (http-custom-headers: values that exercise the encoding of
	// Mcp-Param headers).
	ToolCalls []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"toolCalls"`
}

// invalidHeaderTools are the tools of http-invalid-tool-headers whose
// x-mcp-header annotation is invalid (INVALID_TOOL_CONSTRAINT_IDS in the
// suite's http-custom-headers.ts), with arguments that satisfy their
// schemas. A client must not offer them: the harness tries each as a
// model that was offered it would, and the scenario checks that none
// reached the server.
var invalidHeaderTools = []call{
	{tool: "invalid_empty_header", args: map[string]any{"value": "v"}},
	{tool: "invalid_object_header", args: map[string]any{"data": map[string]any{}}},
	{tool: "invalid_array_header", args: map[string]any{"items": []any{"a"}}},
	{tool: "invalid_null_header", args: map[string]any{"nil": nil}},
	{tool: "invalid_number_header", args: map[string]any{"score": 1.5}},
	{tool: "invalid_duplicate_same_case", args: map[string]any{"field1": "a", "field2": "b"}},
	{tool: "invalid_duplicate_diff_case", args: map[string]any{"field1": "a", "field2": "b"}},
	{tool: "invalid_space_in_name", args: map[string]any{"value": "v"}},
	{tool: "invalid_colon_in_name", args: map[string]any{"value": "v"}},
	{tool: "invalid_non_ascii_name", args: map[string]any{"value": "v"}},
	{tool: "invalid_control_char_name", args: map[string]any{"value": "v"}},
}

// planFor returns the plan for scenario, given its context (MCP_CONFORMANCE_CONTEXT,
// empty when the scenario has none). Unknown non-auth scenarios get a plan
// with no calls: the session is opened, the tools listed, and closed.
func planFor(scenario, rawContext string) (plan, error) {
	var sc scenarioContext
	if rawContext != "" {
		if err := json.Unmarshal([]byte(rawContext), &sc); err != nil {
			return plan{}, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	switch scenario {
	case "initialize", "request-metadata", "json-schema-ref-no-deref":
		// The session is opened and the tools listed: that is what these
		// check (request-metadata's server offers no tools).
		return plan{}, nil
	case "tools_call":
		return plan{calls: []call{{tool: "add_numbers", args: map[string]any{"a": 2, "b": 40}}}}, nil
	case "elicitation-sep1034-client-defaults":
		return plan{calls: []call{{tool: "test_client_elicitation_defaults", args: map[string]any{}}}}, nil
	case "sse-retry":
		return plan{calls: []call{{tool: "test_reconnection", args: map[string]any{}}}}, nil
	case "http-standard-headers":
		// Each kind of request that carries Mcp-Name: a tools/call (of
		// both tools, one with a hyphen), a resources/read (acpgate's
		// resource tool, with the first resource the server lists) and a
		// prompts/get (the prompt as a slash command; with no model the
		// turn then fails, after the prompt was fetched).
		return plan{calls: []call{
			{tool: "test_headers", args: map[string]any{}},
			{tool: "my-hyphenated-tool", args: map[string]any{}},
			{tool: "mcp_read_resource", builtin: true, args: map[string]any{"uri": "file:///path/to/file%20name.txt", "server": serverName}},
			{text: "/" + serverName + ".test_prompt", mayFail: true},
		}}, nil
	case "http-custom-headers":
		var p plan
		for _, tc := range sc.ToolCalls {
			p.calls = append(p.calls, call{tool: tc.Name, args: tc.Arguments})
		}
		return p, nil
	case "http-invalid-tool-headers":
		p := plan{calls: []call{{tool: "valid_tool", args: map[string]any{"region": "us-west1"}}}}
		for _, c := range invalidHeaderTools {
			c.mayFail = true
			p.calls = append(p.calls, c)
		}
		return p, nil
	case "sep-2640-client-no-prefetch":
		// The skills are listed (/skills) and none is loaded: the scenario
		// checks that no skill file was read.
		return plan{calls: []call{{text: "/skills", mayFail: true}}}, nil
	case "sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter":
		// The skills are listed, then the server's skill is loaded as a
		// user would, with its slash command: the server serves a SKILL.md
		// that fails one check, which acpgate must refuse (the turn says
		// why) without reading the skill's other file.
		return plan{calls: []call{
			{text: "/skills", mayFail: true},
			{text: "/" + serverName + ":pdf-processing", mayFail: true},
		}}, nil
	case "sep-2322-client-request-state":
		// Each tool answers input_required (an elicitation, accepted),
		// but test_mrtr_unrelated, called between the others to check
		// that no state of theirs leaks into it, and
		// test_mrtr_no_result_type, whose result has no resultType.
		var p plan
		for _, tool := range []string{"test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
			p.calls = append(p.calls, call{tool: tool, args: map[string]any{}})
		}
		return p, nil
	case "json-schema-2020-12-preservation":
		// The echo tool's argument is the focal tool's input schema as
		// acpgate offers it to a model: the harness's fake model reads it
		// in the tools of its request and passes it back.
		m := &modelEcho{from: "json_schema_2020_12_tool", to: "json_schema_echo", arg: "schema"}
		return plan{model: m, calls: []call{{text: m.prompt()}}}, nil
	}
	if !strings.HasPrefix(scenario, "auth/") {
		return plan{}, nil
	}
	return authPlan(scenario, sc), nil
}

// authPlan is the plan of an auth scenario: a call of its one tool,
// test-tool, after a sign-in, with the oauth keys and credentials the
// scenario's context gives where it needs any.
func authPlan(scenario string, sc scenarioContext) plan {
	p := plan{calls: []call{{tool: "test-tool", args: map[string]any{}}}, signIn: true}
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
	case "auth/enterprise-managed-authorization":
		// Cross-app access (SEP-990): formerly auth/cross-app-access-complete-flow.
		p.oauth = map[string]any{
			"clientId": sc.ClientID, "clientSecret": "secret://env/" + envClientSecret,
			"identityAssertion": "secret://env/" + envIdentityAssertion,
			"idpClientId":       sc.IDPClientID, "idpIssuer": sc.IDPIssuer, "idpTokenEndpoint": sc.IDPTokenEndpoint,
		}
		p.env = []string{envClientSecret + "=" + sc.ClientSecret, envIdentityAssertion + "=" + sc.IDPIDToken}
		p.signIn = false
	case "auth/wif-jwt-bearer":
		// Workload identity federation (SEP-1933): the workload token
		// (valid_jwt) is the assertion of a JWT bearer grant; acpgate
		// reads it from a command, as from a platform's token helper.
		p.oauth = map[string]any{
			"grantType": "urn:ietf:params:oauth:grant-type:jwt-bearer", "clientId": sc.ClientID,
			"workloadToken": map[string]any{"command": []string{"printenv", envWorkloadToken}},
		}
		p.env = []string{envWorkloadToken + "=" + sc.ValidJWT}
		p.signIn = false
	}
	return p
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
