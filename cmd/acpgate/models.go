package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// models builds the model providers of sessions (acp.Options.Models): one
// per distinct effective model settings, created when a session first
// needs it and kept for every later session with the same settings; and
// it keeps the endpoints' model lists (GET /models), one per base URL,
// for the model picker. Its methods are safe for concurrent use.
//
// Precedence, field by field (docs/models.md states it): the flags and
// environment (--provider, --model, --base-url, and the API key of the
// provider in force: OPENAI_API_KEY or ANTHROPIC_API_KEY) over the
// session's profile (agents.list[].model) over the file's top-level model.
type models struct {
	flags  config.Model      // what the command line and environment set
	keys   map[string]string // the environment's API key, by provider
	res    *secrets.Resolver
	logger *slog.Logger

	catalog *gateway.Catalog // the endpoints' model lists, by base URL

	mu    sync.Mutex
	cache map[settingsKey]*modelEntry
}

var _ acp.Models = (*models)(nil)

// settingsKey identifies model settings as written (secret references
// unresolved): a hash, so that no settings value, a literal API key
// included, is kept or can be logged through the key.
type settingsKey [sha256.Size]byte

// modelEntry is one cached provider; ready is closed once p or err is set.
type modelEntry struct {
	ready chan struct{}
	p     gateway.Provider
	err   error
}

func newModels(c cliConfig, res *secrets.Resolver, logger *slog.Logger) *models {
	return &models{
		flags:   config.Model{Provider: c.provider, BaseURL: c.baseURL, Model: c.model},
		keys:    map[string]string{config.ProviderOpenAI: c.apiKey, config.ProviderAnthropic: c.anthropicKey},
		res:     res,
		logger:  logger,
		cache:   map[settingsKey]*modelEntry{},
		catalog: gateway.NewCatalog(0),
	}
}

// settings returns the model settings in force over the file's settings
// for a profile (see the precedence above): an environment key goes only
// to its own provider's endpoint.
func (m *models) settings(file config.Model) config.Model {
	s := file.Over(m.flags)
	if key := m.keys[s.ResolvedProvider()]; key != "" {
		s.APIKey = key
	}
	return s
}

// Settings implements acp.Models.
func (m *models) Settings(file config.Model) config.Model { return m.settings(file) }

// provider returns the provider for the file's model settings file (a
// profile's, as config.Effective merged them): nil when no model name is
// set.
func (m *models) provider(ctx context.Context, file config.Model) (gateway.Provider, error) {
	return m.Provider(ctx, m.settings(file))
}

// Listed implements acp.Models: the models the endpoint of s lists, from
// the catalog (fetched once per base URL, in the background; see
// gateway.Catalog), waiting at most until ctx ends.
func (m *models) Listed(ctx context.Context, s config.Model) []gateway.ModelInfo {
	key, lister := m.lister(ctx, s)
	if lister == nil {
		return nil
	}
	return m.catalog.Models(ctx, key, lister)
}

// prefetch starts listing the models of the endpoint of the file's
// settings file in the background (acpgate's start), so that the first
// session finds the list ready.
func (m *models) prefetch(ctx context.Context, file config.Model) {
	if key, lister := m.lister(ctx, m.settings(file)); lister != nil {
		m.catalog.Prefetch(ctx, key, lister)
	}
}

// lister returns the catalog key of settings s (its provider and base
// URL) and the provider that lists its endpoint's models; nil when there
// is none.
func (m *models) lister(ctx context.Context, s config.Model) (string, gateway.ModelLister) {
	p, err := m.Provider(ctx, s)
	if err != nil || p == nil {
		return "", nil
	}
	l, ok := p.(gateway.ModelLister)
	if !ok {
		return "", nil
	}
	return s.ResolvedProvider() + " " + s.BaseURL, l
}

// Provider implements acp.Models: the provider of settings s as given,
// nil when no model name is set. A provider that failed to build (a
// secret reference that does not resolve) is not cached: the next session
// tries again.
func (m *models) Provider(ctx context.Context, s config.Model) (gateway.Provider, error) {
	if s.Model == "" {
		return nil, nil
	}
	key, err := keyOf(s)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	e, ok := m.cache[key]
	if !ok {
		e = &modelEntry{ready: make(chan struct{})}
		m.cache[key] = e
	}
	m.mu.Unlock()
	if ok {
		select {
		case <-e.ready:
			return e.p, e.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e.p, e.err = m.build(ctx, s)
	if e.err != nil {
		m.mu.Lock()
		delete(m.cache, key)
		m.mu.Unlock()
	}
	close(e.ready)
	return e.p, e.err
}

// build resolves the secret references of s and makes its provider.
func (m *models) build(ctx context.Context, s config.Model) (gateway.Provider, error) {
	apiKey := s.APIKey
	if apiKey != "" {
		var err error
		if apiKey, err = m.res.ResolveKey(ctx, "apiKey", apiKey); err != nil {
			return nil, fmt.Errorf("model API key: %w", err)
		}
	}
	if err := secrets.CheckHeaderValue(apiKey); err != nil {
		return nil, fmt.Errorf("model API key: the key %w", err)
	}
	headers, err := m.res.ResolveMap(ctx, s.Headers)
	if err != nil {
		return nil, fmt.Errorf("model headers: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		if err := secrets.CheckHeaderValue(headers[name]); err != nil {
			return nil, fmt.Errorf("model header %s: the value %w", name, err)
		}
	}
	p, err := newProvider(s, apiKey, headers)
	if err != nil {
		return nil, fmt.Errorf("model provider: %w", err)
	}
	m.logger.Info("model provider ready", "provider", s.ResolvedProvider(), "model", s.Model, "base_url", s.BaseURL)
	return p, nil
}

// keyOf is the cache key of s.
func keyOf(s config.Model) (settingsKey, error) {
	data, err := json.Marshal(s) // map keys sorted: deterministic
	if err != nil {
		return settingsKey{}, fmt.Errorf("model settings: %w", err)
	}
	return sha256.Sum256(data), nil
}
