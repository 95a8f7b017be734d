package acp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestCapabilitiesFromRoutes: initialize advertises a capability only when
// the agent has its method: with the route of each removed, the
// capability goes; with all routes, all are there.
func TestCapabilitiesFromRoutes(t *testing.T) {
	for _, tc := range []struct {
		method string
		caps   func(r initializeResponse) bool // whether the capability is advertised
	}{
		{acpsdk.AgentMethodSessionList, func(r initializeResponse) bool { return r.AgentCapabilities.SessionCapabilities.List != nil }},
		{acpsdk.AgentMethodSessionClose, func(r initializeResponse) bool { return r.AgentCapabilities.SessionCapabilities.Close != nil }},
		{acpsdk.AgentMethodSessionResume, func(r initializeResponse) bool { return r.AgentCapabilities.SessionCapabilities.Resume != nil }},
		{acpsdk.AgentMethodSessionFork, func(r initializeResponse) bool { return r.AgentCapabilities.SessionCapabilities.Fork != nil }},
		{methodSessionDelete, func(r initializeResponse) bool { return r.AgentCapabilities.SessionCapabilities.Delete != nil }},
		{acpsdk.AgentMethodSessionLoad, func(r initializeResponse) bool { return r.AgentCapabilities.LoadSession }},
		{acpsdk.AgentMethodLogout, func(r initializeResponse) bool { return r.AgentCapabilities.Auth.Logout != nil }},
		{acpsdk.AgentMethodMcpMessage, func(r initializeResponse) bool { return r.AgentCapabilities.McpCapabilities.Acp }},
	} {
		a := newAgent(Options{Logger: slog.New(slog.DiscardHandler)}, io.Discard)
		init := func() initializeResponse {
			res, err := a.initialize(context.Background(), json.RawMessage(`{"protocolVersion":1}`))
			if err != nil {
				t.Fatal(err)
			}
			return res.(initializeResponse)
		}
		if !tc.caps(init()) {
			t.Errorf("%s: not advertised with its route", tc.method)
		}
		delete(a.methods.table, tc.method)
		if tc.caps(init()) {
			t.Errorf("%s: advertised without its route", tc.method)
		}
	}
}
