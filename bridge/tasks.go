package bridge

import (
	"errors"
	"fmt"
	"strings"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
)

// gatewayProgress is the gateway's form of an MCP progress report: a
// task's status message and the progress notification's message are both
// kept, in that order.
func gatewayProgress(p mcpclient.Progress) gateway.Progress {
	msg := p.Message
	if p.StatusMessage != "" && p.StatusMessage != p.Message {
		msg = strings.TrimSpace(p.StatusMessage + "; " + p.Message)
		msg = strings.TrimSuffix(msg, ";")
	}
	return gateway.Progress{Progress: p.Progress, Total: p.Total, Message: msg, Status: p.Status, TaskID: p.TaskID}
}

// stillRunning is the result of a call whose task outlived the call
// timeout (err wraps an *mcpclient.TaskRunningError): not a failure to
// call, but an answer saying the work goes on, under which task id, and
// that its result will not come. ok is false for any other error.
func (f *framer) stillRunning(src source, err error) (gateway.Result, bool) {
	var tr *mcpclient.TaskRunningError
	if !errors.As(err, &tr) {
		return gateway.Result{}, false
	}
	state := tr.Status
	if tr.Message != "" {
		state += ": " + tr.Message
	}
	text := fmt.Sprintf("Still running: the MCP tool %s of server %s runs on as task %s (%s). acpgate stopped waiting after %s without news from it; the server keeps the task running, but its result will not be delivered to this conversation.",
		src.tool, src.server, tr.TaskID, state, tr.Waited)
	out := gateway.ErrorResult(text)
	out.ForModel = fmt.Sprintf("The MCP tool %s has not finished: it is still running on its server as task %s. Its result will not arrive in this conversation; do not assume it succeeded.\n%s",
		src.name, tr.TaskID, f.forModel(src, "status message", "status message", state, 0))
	return out, true
}
