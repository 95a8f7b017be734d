package fakeanthropic

import (
	"fmt"
	"net/http"

	"github.com/acpgate/acpgate/internal/testsupport/fake/scripted"
)

// Model is one entry of GET /v1/models.
type Model struct {
	ID          string
	DisplayName string
}

// modelsState is what GET /v1/models answers; the zero value lists
// DefaultModel.
type modelsState struct {
	list    []Model // nil: DefaultModel alone
	status  int     // non-zero: answer this error status
	headers []http.Header
}

// SetModels sets the models GET /v1/models lists, in order (none:
// DefaultModel alone).
func (s *Server) SetModels(models ...Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models.list = append([]Model(nil), models...)
}

// FailModels makes GET /v1/models answer with an error of this HTTP status
// (0: list the models again).
func (s *Server) FailModels(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models.status = status
}

// ModelsRequests returns the headers of every GET /v1/models request that
// passed the key check, in order.
func (s *Server) ModelsRequests() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.models.headers...)
}

// listModels answers GET /v1/models in Anthropic's shape (one page).
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.models.headers = append(s.models.headers, r.Header.Clone())
	st := s.models
	s.mu.Unlock()
	if st.status != 0 {
		writeError(w, st.status, errorType(st.status), fmt.Sprintf("models failed with %d", st.status))
		return
	}
	list := st.list
	if list == nil {
		list = []Model{{ID: DefaultModel, DisplayName: "Claude Fake"}}
	}
	data := make([]any, 0, len(list))
	for _, m := range list {
		data = append(data, map[string]any{"type": "model", "id": m.ID, "display_name": m.DisplayName, "created_at": "2025-01-01T00:00:00Z"})
	}
	first, last := "", ""
	if len(list) > 0 {
		first, last = list[0].ID, list[len(list)-1].ID
	}
	scripted.WriteJSON(w, http.StatusOK, map[string]any{"data": data, "has_more": false, "first_id": first, "last_id": last})
}
