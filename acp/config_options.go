package acp

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/session"
)

// This file is session/set_config_option and session/set_mode: the model
// picker (config option "model") and the permission mode ("mode"), and
// what a session reports of both.

// Models builds the models of sessions and lists what their endpoints
// offer, for the session config option "model" (the model picker).
// Implementations are safe for concurrent use.
type Models interface {
	// Settings returns the model settings in force for a session whose
	// configuration file (its profile) says m: the command line's over
	// them, for example.
	Settings(m config.Model) config.Model
	// Provider returns the provider of settings s, taken exactly as given
	// (a session's chosen model replaces s.Model); nil with a nil error
	// when s names no model. It should cache what it builds.
	Provider(ctx context.Context, s config.Model) (gateway.Provider, error)
	// Listed returns the models the endpoint of s lists, as far as known
	// when ctx ends (it must not wait longer); nil when unknown.
	Listed(ctx context.Context, s config.Model) []gateway.ModelInfo
}

// The session config options' ids.
const (
	optModel = "model"
	optMode  = "mode"
)

// Session metadata keys: the model chosen with the model picker, and the
// cost of the session's model responses so far, by currency.
const (
	extraModel = "model"
	extraCost  = "cost"
)

// picker is a session's model choice: the model picked, the model built
// for it (the provider, and the generation of the client's endpoint it
// was built for), what the endpoint listed, and the session's cost. The
// zero value has none of them; safe for concurrent use (its own lock,
// taken after the session's mutex when both are, never before).
type picker struct {
	mu sync.Mutex
	// chosen is the model picked with session/set_config_option ("": the
	// configured one).
	chosen string
	// provider is the model, built for the configuration and chosen; nil:
	// none. gen is the generation of the client's endpoint it was built
	// for (see agentConfig.model).
	provider gateway.Provider
	gen      uint64
	// listed is what the session's endpoint listed when it opened.
	listed []gateway.ModelInfo
	// cost is the cost of the session's priced responses, by currency.
	cost map[string]float64
}

// restore sets the choice and the cost saved with a session (m).
func (p *picker) restore(m session.Meta) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cost = map[string]float64{}
	p.chosen, _ = m.Extra[extraModel].(string)
	if costs, ok := m.Extra[extraCost].(map[string]any); ok {
		for cur, v := range costs {
			if f, ok := v.(float64); ok {
				p.cost[cur] = f
			}
		}
	}
}

// choice returns the model picked ("": the configured one).
func (p *picker) choice() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chosen
}

// choose records the model picked and the provider built for it (gen: the
// endpoint's generation it was built for).
func (p *picker) choose(chosen string, provider gateway.Provider, gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chosen, p.provider, p.gen = chosen, provider, gen
}

// setProvider records the provider built for the choice as it is (a new
// configuration: /reload).
func (p *picker) setProvider(provider gateway.Provider, gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.provider, p.gen = provider, gen
}

// model returns the provider (nil: none) and the generation it was built
// for.
func (p *picker) model() (gateway.Provider, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.provider, p.gen
}

// rebuilt replaces the provider built for generation built by provider
// (for gen) and returns it, unless it was rebuilt meanwhile (/reload, the
// model picker): then it returns that one.
func (p *picker) rebuilt(built uint64, provider gateway.Provider, gen uint64) gateway.Provider {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen != built {
		return p.provider
	}
	p.provider, p.gen = provider, gen
	return provider
}

// setListed records what the endpoint lists.
func (p *picker) setListed(models []gateway.ModelInfo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listed = models
}

// addCost adds amount in currency cur to the session's cost, and returns
// the new total in cur.
func (p *picker) addCost(cur string, amount float64) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cost == nil {
		p.cost = map[string]float64{}
	}
	p.cost[cur] += amount
	return p.cost[cur]
}

// costs returns a copy of the session's cost by currency.
func (p *picker) costs() map[string]float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.cost)
}

// current is the session's current model as picker p knows it, with set the
// configuration's model settings (see liveSession.current).
func (p *picker) current(set config.Model) (name string, window int, pricing *config.Pricing) {
	p.mu.Lock()
	defer p.mu.Unlock()
	name, window, pricing = set.Model, set.ContextWindow, set.Pricing
	if p.chosen != "" && p.chosen != set.Model {
		name, pricing = p.chosen, nil // the configured price is another model's
	}
	// A choice's own window and price, where it says them, are the ones of
	// its model (the configured model may be among the choices too).
	if i := slices.IndexFunc(set.Choices, func(c config.ModelChoice) bool { return c.ID == name }); i >= 0 {
		c := set.Choices[i]
		if c.ContextWindow > 0 {
			window = c.ContextWindow
		}
		if c.Pricing != nil {
			pricing = c.Pricing
		}
	}
	if i := slices.IndexFunc(p.listed, func(m gateway.ModelInfo) bool { return m.ID == name }); window <= 0 && i >= 0 {
		window = p.listed[i].ContextWindow
	}
	return name, window, pricing
}

// listedModels returns what the endpoint listed.
func (p *picker) listedModels() []gateway.ModelInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.listed
}

// current returns the session's model name ("" when none is configured)
// and what is known of it: the context window (the configuration's, else
// the one the endpoint lists) and the pricing, for its configuration cfg.
func (s *liveSession) current(cf *agentConfig, cfg sessionConfig) (name string, window int, pricing *config.Pricing) {
	return s.pick.current(cf.settings(cfg))
}

// modelValues returns the model picker's entries: the configured model,
// model.choices, then the endpoint's list, each id once; the current
// model is always among them (for its configuration cfg).
func (s *liveSession) modelValues(cf *agentConfig, cfg sessionConfig) []acpsdk.SessionConfigSelectOption {
	set := cf.settings(cfg)
	cur, _, _ := s.current(cf, cfg)
	var out []acpsdk.SessionConfigSelectOption
	seen := map[string]bool{}
	add := func(id, name, desc string) {
		if id == "" || seen[id] {
			return
		}
		seen[id] = true
		o := acpsdk.SessionConfigSelectOption{Value: acpsdk.SessionConfigValueId(id), Name: cmp.Or(name, id)}
		if desc != "" {
			o.Description = acpsdk.Ptr(desc)
		}
		out = append(out, o)
	}
	add(cur, "", "")
	add(set.Model, "", "the configured model")
	for _, c := range set.Choices {
		add(c.ID, c.Name, c.Description)
	}
	for _, m := range s.pick.listedModels() {
		add(m.ID, m.Name, m.Description)
	}
	// The configured model's entry carries its description even when it
	// is the current one (added first, without).
	for i := range out {
		if string(out[i].Value) == set.Model && out[i].Description == nil {
			out[i].Description = acpsdk.Ptr("the configured model")
		}
	}
	return out
}

// configOptions returns the session's config options with their current
// values: the model picker (when a model is configured) and the
// permission mode.
func (s *liveSession) configOptions(cf *agentConfig) []acpsdk.SessionConfigOption {
	var opts []acpsdk.SessionConfigOption
	var mode string
	s.update(func(st *sessionState) {
		mode = st.mode
		cur, _, _ := s.current(cf, st.cfg)
		if cur == "" {
			return
		}
		values := acpsdk.SessionConfigSelectOptionsUngrouped(s.modelValues(cf, st.cfg))
		opts = append(opts, acpsdk.SessionConfigOption{Select: &acpsdk.SessionConfigOptionSelect{
			Id: optModel, Name: "Model", Category: acpsdk.Ptr(acpsdk.SessionConfigOptionCategoryModel),
			Description:  acpsdk.Ptr("The model that answers this session's prompts, from the next prompt on"),
			CurrentValue: acpsdk.SessionConfigValueId(cur), Type: "select",
			Options: acpsdk.SessionConfigSelectOptions{Ungrouped: &values},
		}})
	})
	var modes acpsdk.SessionConfigSelectOptionsUngrouped
	for _, m := range permissionModes() {
		modes = append(modes, acpsdk.SessionConfigSelectOption{Value: acpsdk.SessionConfigValueId(m.Id), Name: m.Name, Description: m.Description})
	}
	opts = append(opts, acpsdk.SessionConfigOption{Select: &acpsdk.SessionConfigOptionSelect{
		Id: optMode, Name: "Permission mode", Category: acpsdk.Ptr(acpsdk.SessionConfigOptionCategoryMode),
		Description:  acpsdk.Ptr("When tools ask before they run"),
		CurrentValue: acpsdk.SessionConfigValueId(mode), Type: "select",
		Options: acpsdk.SessionConfigSelectOptions{Ungrouped: &modes},
	}})
	return opts
}

// permissionModes are the session's permission modes, as ACP modes.
func permissionModes() []acpsdk.SessionMode {
	return []acpsdk.SessionMode{
		{Id: modeAsk, Name: "Ask", Description: acpsdk.Ptr("Ask before running tools that are not read-only")},
		{Id: modeAuto, Name: "Auto-approve", Description: acpsdk.Ptr("Run every tool without asking, except shell commands (run_command)")},
	}
}

// SetSessionConfigOption answers session/set_config_option: "model" switches the
// session's model from its next prompt on (same endpoint, key and
// headers), "mode" its permission mode; both are saved with the session.
// The response carries every option; a mode change is also sent as a
// current_mode_update for clients of the older modes API.
func (a *Agent) SetSessionConfigOption(ctx context.Context, p acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	if p.Boolean != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, invalidParams("config option %q is not a boolean: acpgate's options (%s, %s) take a value id", p.Boolean.ConfigId, optModel, optMode)
	}
	if p.ValueId == nil {
		return acpsdk.SetSessionConfigOptionResponse{}, invalidParams("no value given")
	}
	s, err := a.lookup(p.ValueId.SessionId)
	if err != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, err
	}
	value := string(p.ValueId.Value)
	switch p.ValueId.ConfigId {
	case optModel:
		err = a.setModel(ctx, s, value)
	case optMode:
		err = a.setMode(s, value)
		if err == nil {
			a.peer.update(s, acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{CurrentModeId: acpsdk.SessionModeId(value)}})
		}
	default:
		err = invalidParams("unknown config option %q (acpgate's are %q and %q)", p.ValueId.ConfigId, optModel, optMode)
	}
	if err != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, err
	}
	return acpsdk.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions(a.conf)}, nil
}

// setModel switches session s to model id, one of its model picker's
// entries, and saves the choice.
func (a *Agent) setModel(ctx context.Context, s *liveSession, id string) error {
	cur, values, sc := s.modelChoice(a.conf)
	if cur == "" {
		return invalidParams("config option %q: this session has no model configured", optModel)
	}
	if !slices.ContainsFunc(values, func(o acpsdk.SessionConfigSelectOption) bool { return string(o.Value) == id }) {
		return invalidParams("config option %q: unknown model %q (offered: %s)", optModel, id, valueList(values))
	}
	chosen := id
	if id == a.conf.settings(sc).Model {
		chosen = "" // back to the configured model: follows the configuration again
	}
	model, gen := a.conf.provider(ctx, sc, chosen)
	if err := s.chooseModel(chosen, model, gen); err != nil {
		return internalError("saving the model: %v", err)
	}
	return nil
}

// modelChoice is what setModel decides from, read at once: the session's
// current model (agentConfig.current), the models its picker offers and
// its configuration.
func (s *liveSession) modelChoice(cf *agentConfig) (cur string, values []acpsdk.SessionConfigSelectOption, sc sessionConfig) {
	s.update(func(st *sessionState) {
		cur, _, _ = s.current(cf, st.cfg)
		values, sc = s.modelValues(cf, st.cfg), st.cfg
	})
	return cur, values, sc
}

// chooseModel makes chosen (built as model, gen; "" for the configured
// one) the session's model and saves the choice in its metadata.
func (s *liveSession) chooseModel(chosen string, model gateway.Provider, gen uint64) error {
	s.pick.choose(chosen, model, gen)
	return s.store.UpdateMeta(func(m *session.Meta) {
		delete(m.Extra, extraModel)
		if chosen != "" {
			m.Extra[extraModel] = chosen
		}
	})
}

// valueList names the first values of a select option, for an error.
func valueList(values []acpsdk.SessionConfigSelectOption) string {
	const most = 20
	var ids []string
	for i, v := range values {
		if i == most {
			ids = append(ids, fmt.Sprintf("and %d more", len(values)-most))
			break
		}
		ids = append(ids, fmt.Sprintf("%q", v.Value))
	}
	return strings.Join(ids, ", ")
}

// setMode sets session s's permission mode and saves it.
func (a *Agent) setMode(s *liveSession, mode string) error {
	if mode != modeAsk && mode != modeAuto {
		return invalidParams("unknown mode %q (want %q or %q)", mode, modeAsk, modeAuto)
	}
	if err := s.setMode(mode); err != nil {
		return internalError("saving the mode: %v", err)
	}
	return nil
}

// setMode makes mode the session's permission mode and saves it in its
// metadata.
func (s *liveSession) setMode(mode string) error {
	s.update(func(st *sessionState) { st.mode = mode })
	return s.store.UpdateMeta(func(m *session.Meta) { m.Mode = mode })
}
