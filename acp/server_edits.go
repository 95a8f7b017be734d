package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/session"
)

// This file is /mcp add, /mcp remove and /mcp restart: a session's MCP
// servers changed while it is open. The change is kept in the session's
// metadata (extraServerEdits), so that session/load and session/resume
// restore it on top of the servers their request passes, and the model
// is told of it at its next turn.

// extraServerEdits is the session metadata key of its serverEdits.
const extraServerEdits = "mcpEdits"

// serverEdits is what /mcp add and /mcp remove changed in a session's
// servers: the servers added (in the form a client passes them) and the
// names removed (from the request's servers or the configured ones).
// A value; the session's copy is its editState's.
type serverEdits struct {
	Added   []mcpservers.Server `json:"added,omitempty"`
	Removed []string            `json:"removed,omitempty"`
}

// editState is a session's serverEdits, the servers its request passed
// (before the edits) and with the edits (client), and the changes the
// model has not been told of yet. The zero value has none; safe for
// concurrent use (its own lock, never held while another is taken).
type editState struct {
	mu      sync.Mutex
	edits   serverEdits
	request []mcpclient.ServerSpec
	client  []mcpclient.ServerSpec // request with the edits
	untold  []string
}

// start sets the servers the request passed and the edits restored for
// them (an error leaves the request's servers unedited).
func (es *editState) start(request []mcpclient.ServerSpec, edits serverEdits) error {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.request, es.client = request, request
	edited, err := edits.client(request)
	if err != nil {
		return err
	}
	es.edits, es.client = edits, edited
	return nil
}

// current returns the edits and the client's servers with them.
func (es *editState) current() (serverEdits, []mcpclient.ServerSpec) {
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.edits, es.client
}

// apply makes edits the session's, returning the client's servers with
// them; an error changes nothing.
func (es *editState) apply(edits serverEdits) ([]mcpclient.ServerSpec, error) {
	es.mu.Lock()
	defer es.mu.Unlock()
	client, err := edits.client(es.request)
	if err != nil {
		return nil, err
	}
	es.edits, es.client = edits, client
	return client, nil
}

// fromClient reports whether the server called name came from the client
// (its request or /mcp add) rather than the configuration.
func (es *editState) fromClient(name string) bool {
	es.mu.Lock()
	defer es.mu.Unlock()
	return slices.ContainsFunc(es.client, func(c mcpclient.ServerSpec) bool { return c.Name == name })
}

// tell queues note for the model's next turn.
func (es *editState) tell(note string) {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.untold = append(es.untold, note)
}

// takeUntold returns, and forgets, what the model has not been told of the
// session's servers, as text to put before the user's input ("": none).
func (es *editState) takeUntold() string {
	es.mu.Lock()
	defer es.mu.Unlock()
	if len(es.untold) == 0 {
		return ""
	}
	note := "[acpgate: the MCP servers of this session changed since your last turn: " + strings.Join(es.untold, " ") + " The tools you have are the current ones.]"
	es.untold = nil
	return note
}

// restoreEdits reads the serverEdits stored in m (none: the zero value).
func restoreEdits(m session.Meta) (serverEdits, error) {
	var e serverEdits
	raw, ok := m.Extra[extraServerEdits]
	if !ok {
		return e, nil
	}
	data, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(data, &e)
	}
	if err != nil {
		return serverEdits{}, fmt.Errorf("the stored MCP server changes (%s) are unreadable: %w", extraServerEdits, err)
	}
	return e, nil
}

// client returns the client's servers, request, with the edits applied:
// the removed ones left out, the added ones appended.
func (e serverEdits) client(request []mcpclient.ServerSpec) ([]mcpclient.ServerSpec, error) {
	out := e.configured(request)
	added, err := mcpservers.Specs(e.Added, extraServerEdits+".added")
	if err != nil {
		return nil, err
	}
	for _, a := range added {
		out = slices.DeleteFunc(out, func(s mcpclient.ServerSpec) bool { return s.Name == a.Name })
		out = append(out, a)
	}
	return out, nil
}

// configured returns servers without the removed ones.
func (e serverEdits) configured(servers []mcpclient.ServerSpec) []mcpclient.ServerSpec {
	return slices.DeleteFunc(slices.Clone(servers), func(s mcpclient.ServerSpec) bool { return slices.Contains(e.Removed, s.Name) })
}

// add records server as added (a name removed before is no longer).
func (e serverEdits) add(server mcpservers.Server) serverEdits {
	name := server.Name
	e.Removed = slices.DeleteFunc(slices.Clone(e.Removed), func(n string) bool { return n == name })
	e.Added = append(slices.DeleteFunc(slices.Clone(e.Added), func(s mcpservers.Server) bool { return s.Name == name }), server)
	return e
}

// remove records the server called name as removed: an added one is
// forgotten, any other is removed from what the request or the
// configuration brings.
func (e serverEdits) remove(name string) serverEdits {
	n := len(e.Added)
	e.Added = slices.DeleteFunc(slices.Clone(e.Added), func(s mcpservers.Server) bool { return s.Name == name })
	if len(e.Added) == n && !slices.Contains(e.Removed, name) {
		e.Removed = append(slices.Clone(e.Removed), name)
	}
	return e
}

// errAddUsage is a /mcp add line that is not one of its forms.
var errAddUsage = errors.New("usage: /mcp add NAME -- COMMAND [ARGS…] (stdio), /mcp add NAME URL (http) or /mcp add --sse NAME URL; options before the name: --env KEY=VALUE (stdio), --header 'Name: value' (http, sse)")

// parseAdd parses what follows "/mcp add" into a server entry, checked
// as session/new checks its mcpServers.
func parseAdd(arg string) (mcpservers.Server, error) {
	words, err := mcpservers.SplitCommand(arg)
	if err != nil {
		return mcpservers.Server{}, fmt.Errorf("%w (%v)", errAddUsage, err)
	}
	var (
		name, url string
		transport = mcpclient.TransportHTTP
		env       []mcpservers.Pair
		headers   []mcpservers.Pair
		command   []string
	)
	for i := 0; i < len(words); i++ {
		w := words[i]
		value := func() (string, error) {
			if i+1 >= len(words) {
				return "", fmt.Errorf("%s needs a value", w)
			}
			i++
			return words[i], nil
		}
		switch {
		case w == "--":
			command = words[i+1:]
			if len(command) == 0 {
				return mcpservers.Server{}, fmt.Errorf("%w: no command after --", errAddUsage)
			}
			i = len(words)
		case w == "--sse":
			transport = mcpclient.TransportSSE
		case w == "--http":
			transport = mcpclient.TransportHTTP
		case w == "--env" || w == "-e":
			v, err := value()
			k, val, ok := strings.Cut(v, "=")
			if err != nil || !ok || k == "" {
				return mcpservers.Server{}, fmt.Errorf("%w: --env takes KEY=VALUE", errAddUsage)
			}
			env = append(env, mcpservers.Pair{Name: k, Value: val})
		case w == "--header" || w == "-H":
			v, err := value()
			k, val, ok := strings.Cut(v, ":")
			if err != nil || !ok || strings.TrimSpace(k) == "" {
				return mcpservers.Server{}, fmt.Errorf("%w: --header takes 'Name: value'", errAddUsage)
			}
			headers = append(headers, mcpservers.Pair{Name: strings.TrimSpace(k), Value: strings.TrimSpace(val)})
		case strings.HasPrefix(w, "-"):
			return mcpservers.Server{}, fmt.Errorf("%w: unknown option %s", errAddUsage, w)
		case name == "":
			name = w
		case url == "":
			url = w
		default:
			return mcpservers.Server{}, fmt.Errorf("%w: unexpected %q (a command goes after --)", errAddUsage, w)
		}
	}
	var server mcpservers.Server
	switch {
	case name == "" || (url == "") == (command == nil):
		return mcpservers.Server{}, errAddUsage
	case command != nil && (headers != nil || transport == mcpclient.TransportSSE):
		return mcpservers.Server{}, fmt.Errorf("%w: --header and --sse are for a server at a URL", errAddUsage)
	case command != nil:
		server = mcpservers.Stdio(name, command[0], command[1:], env)
	case env != nil:
		return mcpservers.Server{}, fmt.Errorf("%w: --env is for a server started with a command", errAddUsage)
	default:
		server = mcpservers.Remote(transport, name, url, headers)
	}
	return checkServer(server)
}

// checkServer checks one server entry with the rules of session/new's
// mcpServers; the error names the member at fault ("url: ...").
func checkServer(server mcpservers.Server) (mcpservers.Server, error) {
	raw, err := json.Marshal([]mcpservers.Server{server})
	if err != nil {
		return mcpservers.Server{}, err
	}
	checked, err := mcpservers.ParseList(raw, "", mcpservers.Options{})
	var perr *mcpservers.Error
	if errors.As(err, &perr) {
		return mcpservers.Server{}, fmt.Errorf("%s: %s", strings.TrimPrefix(strings.TrimPrefix(perr.Path, "[0]"), "."), perr.Problem)
	} else if err != nil {
		return mcpservers.Server{}, err
	}
	// What session/new would start and show as failed is refused here.
	specs, err := mcpservers.Specs(checked, "")
	if err == nil {
		err = specs[0].Validate()
	}
	if err != nil {
		return mcpservers.Server{}, err
	}
	return checked[0], nil
}

// liveEdit is /mcp add, remove or restart of session s.
func (co *commands) liveEdit(ctx context.Context, s commandSession, sub, arg string) string {
	switch sub {
	case "add":
		return co.addServer(ctx, s, arg)
	case "remove":
		return co.removeServer(ctx, s, strings.TrimSpace(arg))
	}
	return co.restartServer(ctx, s, strings.TrimSpace(arg))
}

// addServer is /mcp add.
func (co *commands) addServer(ctx context.Context, s commandSession, arg string) string {
	server, err := parseAdd(arg)
	if err != nil {
		return fmt.Sprintf("Cannot add the server: %v", err)
	}
	name := server.Name
	if _, _, ok := s.serverStatus(name); ok {
		return fmt.Sprintf("This session already has an MCP server called %s; `/mcp remove %s` first, or choose another name.", name, name)
	}
	before := s.edits()
	if err := s.applyEdits(ctx, co.conf, before.add(server)); err != nil {
		return fmt.Sprintf("Cannot apply the change: %v", err)
	}
	// A server that failed at once (it could not start, or it is over
	// the session's limit) is not kept: the session goes back to its
	// servers before the add, and the model is told nothing.
	if st, shared, ok := s.serverStatus(name); ok && !shared && st.State == mcpclient.StateFailed {
		if err := s.applyEdits(ctx, co.conf, before); err != nil {
			co.conf.logger.Warn("undoing a failed /mcp add", "session", s.sessionID(), "server", name, "err", err)
		}
		return fmt.Sprintf("Cannot add MCP server %s: %s. It is not kept with the session.", name, st.Error)
	}
	s.tellModel(fmt.Sprintf("MCP server %s was added.", bridge.ServerLabel(name)))
	return fmt.Sprintf("Added MCP server %s: %s", name, co.serverLine(s, name))
}

// removeServer is /mcp remove.
func (co *commands) removeServer(ctx context.Context, s commandSession, name string) string {
	if msg, ok := co.ownServer(s, "remove", name); !ok {
		return msg
	}
	if err := s.applyEdits(ctx, co.conf, s.edits().remove(name)); err != nil {
		return fmt.Sprintf("Cannot apply the change: %v", err)
	}
	s.tellModel(fmt.Sprintf("MCP server %s was removed.", bridge.ServerLabel(name)))
	return fmt.Sprintf("Removed MCP server %s from this session; its tools are gone.", name)
}

// ownServer reports whether name is one of session s's own servers, which
// /mcp verb can change; when not, it returns what to say.
func (co *commands) ownServer(s commandSession, verb, name string) (string, bool) {
	_, shared, ok := s.serverStatus(name)
	switch {
	case name == "":
		return fmt.Sprintf("Usage: /mcp %s NAME. /mcp lists the servers.", verb), false
	case ok && !shared:
		return "", true
	case ok:
		return fmt.Sprintf("MCP server %s is configured with shared: true and serves every session; /mcp %s cannot change it for one session (change the configuration and /reload).", name, verb), false
	}
	return fmt.Sprintf("This session has no MCP server called %s. /mcp lists the servers.", name), false
}

// restartServer is /mcp restart.
func (co *commands) restartServer(ctx context.Context, s commandSession, name string) string {
	if msg, ok := co.ownServer(s, "restart", name); !ok {
		return msg
	}
	err := s.restartServer(ctx, co.conf, name)
	switch {
	case errors.Is(err, mcpclient.ErrUnknownServer):
		return fmt.Sprintf("This session has no MCP server called %s. /mcp lists the servers.", name)
	case err != nil:
		return fmt.Sprintf("Cannot restart MCP server %s: %v", name, err)
	}
	s.tellModel(fmt.Sprintf("MCP server %s was restarted.", bridge.ServerLabel(name)))
	return fmt.Sprintf("Restarted MCP server %s: %s", name, co.serverLine(s, name))
}

// serverLine says how the server called name of session s is now.
func (co *commands) serverLine(s commandSession, name string) string {
	st, shared, ok := s.serverStatus(name)
	switch {
	case !ok || shared:
		return "gone."
	case st.State == mcpclient.StateReady:
		return fmt.Sprintf("ready, %d tools.", st.Tools)
	case st.Error != "":
		return fmt.Sprintf("%s: %s.", st.State, st.Error)
	}
	return fmt.Sprintf("%s (its tools join when it is ready; /mcp shows it).", st.State)
}

// budgetFor is the startup budget of a session configured as sc.
func (cf *agentConfig) budgetFor(sc sessionConfig) time.Duration {
	if sc.limits.StartupBudget != nil {
		return time.Duration(*sc.limits.StartupBudget) * time.Millisecond
	}
	return cf.opts.StartupBudget
}
