//go:build nomodels

package main

import (
	"errors"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/config"
)

// This file replaces providers.go in a build with the nomodels tag (make
// demo's): everything but the model providers, without the model SDKs.

// modelProviders reports whether this build can reach a model.
const modelProviders = false

// errNoModelProviders is every model's error in a nomodels build.
var errNoModelProviders = errors.New("this acpgate was built without model providers (the nomodels tag, make demo's build): build it with make build to use a model")

// newProvider fails: this build has no model providers.
func newProvider(config.Model, string, map[string]string) (gateway.Provider, error) {
	return nil, errNoModelProviders
}
