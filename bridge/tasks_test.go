package bridge_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/mcpclient"
)

// A task that outlived the call timeout is reported as still running,
// with its id, to the editor and to the model (not as "could not be
// called").
func TestStillRunningTask(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &mcpclient.TaskRunningError{Server: "srv", Tool: "t", TaskID: "task-42", Status: "working", Message: "stage 2", Waited: time.Minute})
	out := execOne(t, nil, nil, err)
	text := out.Content[0].Text
	if !out.IsError || !strings.HasPrefix(text, "Still running") || !strings.Contains(text, "task-42") || strings.Contains(text, "could not be called") {
		t.Errorf("editor sees %q", text)
	}
	if !strings.Contains(out.ForModel, "still running on its server as task task-42") || !strings.Contains(out.ForModel, "working: stage 2") {
		t.Errorf("model sees %q", out.ForModel)
	}
}
