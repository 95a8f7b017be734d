package fakellm

import (
	"fmt"
	"net/http"

	"github.com/acpgate/acpgate/internal/testsupport/fake/scripted"
)

// modelsState is what GET /v1/models answers; the zero value lists
// DefaultModel.
type modelsState struct {
	ids      []string                  // nil: DefaultModel alone
	extra    map[string]map[string]any // more fields of a model's entry, by id
	status   int                       // non-zero: answer this error status
	hold     <-chan struct{}           // non-nil: wait for it to be closed first
	requests int
}

// SetModels sets the model ids GET /v1/models lists, in order (none:
// DefaultModel alone).
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models.ids = append([]string(nil), ids...)
}

// SetModelFields adds fields to the entry GET /v1/models lists for model
// id (the endpoint's own, such as OpenRouter's "context_length"); nil
// removes them.
func (s *Server) SetModelFields(id string, fields map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	extra := map[string]map[string]any{id: fields} // a new map: listModels reads the old one unlocked
	for k, v := range s.models.extra {
		if k != id {
			extra[k] = v
		}
	}
	s.models.extra = extra
}

// FailModels makes GET /v1/models answer with an OpenAI-style error of
// this HTTP status (0: list the models again).
func (s *Server) FailModels(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models.status = status
}

// HoldModels makes GET /v1/models wait until release is closed (or the
// request ends, or the server closes) before answering; nil answers at
// once again.
func (s *Server) HoldModels(release <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models.hold = release
}

// ModelsRequests returns how many GET /v1/models requests arrived.
func (s *Server) ModelsRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.models.requests
}

// listModels answers GET /v1/models.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.models.requests++
	st := s.models
	s.mu.Unlock()
	if st.hold != nil && !s.http.Wait(r, st.hold) {
		return
	}
	if st.status != 0 {
		writeError(w, st.status, fmt.Sprintf("models failed with %d", st.status), "server_error", "")
		return
	}
	ids := st.ids
	if ids == nil {
		ids = []string{DefaultModel}
	}
	data := make([]any, 0, len(ids))
	for _, id := range ids {
		e := map[string]any{"id": id, "object": "model", "created": 1700000000, "owned_by": "fakellm"}
		for k, v := range st.extra[id] {
			e[k] = v
		}
		data = append(data, e)
	}
	scripted.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}
