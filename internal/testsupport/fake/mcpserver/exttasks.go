package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// -ext-tasks: the 2026-07-28 Tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663), which mcp-go's server does not implement. The server
// advertises it (server/discover capabilities), and a filter on stdin
// answers, before mcp-go sees them, every tools/call of ext_job and the
// tasks/get, tasks/update and tasks/cancel of its tasks, writing the
// answers to stdout:
//
//	ext_job {steps?: integer, ask?: boolean, fail?: boolean, instant?: boolean}
//	    Listed like any tool. Records "call ext_job". A request whose _meta
//	    client capabilities do not declare the extension gets the error
//	    -32021 with data {requiredCapabilities: {extensions:
//	    {"io.modelcontextprotocol/tasks": {}}}}; with ask, one that does not
//	    declare elicitation gets -32021 with {requiredCapabilities:
//	    {elicitation: {}}}. Otherwise the answer is a CreateTaskResult
//	    (status working, statusMessage "started", pollIntervalMs 1, task
//	    ids ext-1, ext-2, ...; with instant and neither ask nor fail, status
//	    completed, statusMessage "done", without the result). Each tasks/get
//	    then moves the job on: for
//	    the first steps polls it is working with statusMessage "step <i>";
//	    then, with ask, it is input_required with one elicitation input
//	    request under the key "answer-<task id>" (message "Your name?",
//	    requestedSchema {name: string}) until a tasks/update answers that
//	    key, and once more after it (the update is taken before it shows,
//	    as the extension allows); then it is failed with the error
//	    {code -32603, message "job failed"} when fail is set, or completed
//	    with the text result "job done <steps>" (with ask: followed by "
//	    answer <the input response as JSON>").
//	tasks/get, tasks/update, tasks/cancel of an ext_job task
//	    Answered with -32021 (as above) when the request does not declare
//	    the extension. tasks/update records "ext tasks/update <keys>" (the
//	    keys of inputResponses, in order); tasks/cancel records "ext
//	    tasks/cancel <task id>" and the job is cancelled from then on.
//	    Requests for other tasks go to mcp-go.
//	resources/read of test://ext-task
//	    Answered with a CreateTaskResult, which the extension allows for
//	    tools/call only (an invalid answer, for clients to refuse).
//
// Over stdio (a filter on stdin) or streamable HTTP (a filter on POST
// bodies), with -protocol 2026-07-28 or both.

const extTasksID = "io.modelcontextprotocol/tasks"

// extTaskFlags registers -ext-tasks.
func extTaskFlags(fs *flag.FlagSet, c *config) {
	fs.BoolVar(&c.extTasks, "ext-tasks", false, "the 2026-07-28 Tasks extension and its tool ext_job (stdio or http; -protocol 2026-07-28 or both)")
}

// validExtTasks reports whether -ext-tasks fits the other flags.
func validExtTasks(c *config) error {
	if c.extTasks && (c.transport == "sse" || c.protocol == protoLegacy) {
		return errors.New("-ext-tasks needs -transport stdio or http and -protocol 2026-07-28 or both")
	}
	return nil
}

// extTaskOptions are the server options of -ext-tasks.
func (a taskRole) extTaskOptions() []server.ServerOption {
	if !a.cfg.extTasks {
		return nil
	}
	return []server.ServerOption{server.WithExtensions(map[string]any{extTasksID: map[string]any{}})}
}

// addExtTaskTools lists ext_job (-ext-tasks); its calls never reach mcp-go.
func (a taskRole) addExtTaskTools() {
	if !a.cfg.extTasks {
		return
	}
	a.srv.AddTool(mcp.NewTool("ext_job",
		mcp.WithDescription("Runs as a 2026-07-28 task (io.modelcontextprotocol/tasks): working for steps polls, then asks (ask), fails (fail) or completes."),
		mcp.WithInteger("steps", mcp.Min(0), mcp.DefaultNumber(0)),
		mcp.WithBoolean("ask"),
		mcp.WithBoolean("fail"),
		mcp.WithBoolean("instant"),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("ext_job is answered by the -ext-tasks filter")
	})
}

// extJob is one ext_job task. Its fields are guarded by extTasks.mu.
type extJob struct {
	id, key          string // the task id, the key of its input request
	steps, polls     int
	ask, fail        bool
	answer           json.RawMessage // the input response, once given
	shownAnswer      bool            // a poll has shown the answer taken
	cancelled        bool
	created, updated string
}

// extTasks is the state of the -ext-tasks filter.
type extTasks struct {
	a    *app
	mu   sync.Mutex
	seq  int
	jobs map[string]*extJob
}

// extTasksInput returns r with the ext_job requests taken out and answered
// (-ext-tasks), or r itself.
func (a taskRole) extTasksInput(r io.Reader) io.Reader {
	if !a.cfg.extTasks {
		return r
	}
	return takeLines(r, a.extFilter().handle)
}

// extFilter returns a new -ext-tasks filter.
func (a taskRole) extFilter() *extTasks { return &extTasks{a: a.app, jobs: map[string]*extJob{}} }

// extTasksHTTP returns h with the ext_job requests of POSTs taken out and
// answered with application/json (-ext-tasks over streamable HTTP), or h
// itself.
func (a taskRole) extTasksHTTP(h http.Handler) http.Handler {
	if !a.cfg.extTasks {
		return h
	}
	x := a.extFilter()
	return answeringPOSTs(h, func(r *http.Request, body []byte) (any, bool) {
		out, ok := x.answer(body)
		if name := r.Header.Get(mcp.HeaderName); ok && name != "" {
			x.a.rec.event("http %s %s", mcp.HeaderName, name)
		}
		return out, ok
	})
}

// extRequest is what the filter reads of a request.
type extRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		URI       string `json:"uri"`
		TaskID    string `json:"taskId"`
		Arguments struct {
			Steps   int  `json:"steps"`
			Ask     bool `json:"ask"`
			Fail    bool `json:"fail"`
			Instant bool `json:"instant"`
		} `json:"arguments"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		Meta           struct {
			Caps struct {
				Extensions  map[string]json.RawMessage `json:"extensions"`
				Elicitation json.RawMessage            `json:"elicitation"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

// handle answers line if it is an ext_job request (on stdout), and
// reports whether it was.
func (x *extTasks) handle(line []byte) bool {
	out, ok := x.answer(line)
	if ok {
		_ = x.a.out.writeJSON(out)
	}
	return ok
}

// answer returns the JSON-RPC answer to msg if it is an ext_job request.
func (x *extTasks) answer(msg []byte) (map[string]any, bool) {
	var req extRequest
	if json.Unmarshal(msg, &req) != nil || len(req.ID) == 0 {
		return nil, false
	}
	var res any
	var rpcErr *mcp.JSONRPCErrorDetails
	switch req.Method {
	case string(mcp.MethodToolsCall):
		if req.Params.Name != "ext_job" {
			return nil, false
		}
		x.a.rec.event("call ext_job")
		res, rpcErr = x.start(&req)
	case string(mcp.MethodTasksGet), "tasks/update", string(mcp.MethodTasksCancel):
		x.mu.Lock()
		j := x.jobs[req.Params.TaskID]
		x.mu.Unlock()
		if j == nil {
			return nil, false
		}
		res, rpcErr = x.task(&req, j)
	case string(mcp.MethodResourcesRead):
		if req.Params.URI != "test://ext-task" {
			return nil, false
		}
		res = map[string]any{"resultType": "task", "taskId": "ext-read", "status": "working",
			"createdAt": time.Now().UTC().Format(time.RFC3339), "lastUpdatedAt": time.Now().UTC().Format(time.RFC3339), "ttlMs": 60000}
	default:
		return nil, false
	}
	out := map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": req.ID}
	if rpcErr != nil {
		out["error"] = rpcErr
	} else {
		out["result"] = res
	}
	return out, true
}

// missing is the -32021 error naming the capability want.
func missing(want map[string]any) *mcp.JSONRPCErrorDetails {
	return &mcp.JSONRPCErrorDetails{Code: mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, Message: "Missing required client capability",
		Data: map[string]any{"requiredCapabilities": want}}
}

var needExtension = map[string]any{"extensions": map[string]any{extTasksID: map[string]any{}}}

// declares reports whether req declares the extension.
func declares(req *extRequest) bool {
	_, ok := req.Params.Meta.Caps.Extensions[extTasksID]
	return ok
}

// start answers a tools/call of ext_job.
func (x *extTasks) start(req *extRequest) (any, *mcp.JSONRPCErrorDetails) {
	args := req.Params.Arguments
	switch {
	case !declares(req):
		return nil, missing(needExtension)
	case args.Ask && len(req.Params.Meta.Caps.Elicitation) == 0:
		return nil, missing(map[string]any{"elicitation": map[string]any{}})
	}
	now := time.Now().UTC().Format(time.RFC3339)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.seq++
	id := "ext-" + strconv.Itoa(x.seq)
	j := &extJob{id: id, key: "answer-" + id, steps: args.Steps, ask: args.Ask, fail: args.Fail, created: now, updated: now}
	x.jobs[id] = j
	t := j.task("working", "started")
	if args.Instant && !args.Ask && !args.Fail {
		// Done at once: the seed says so, the result comes with tasks/get.
		j.polls = j.steps
		t = j.task("completed", "done")
	}
	t["resultType"] = "task"
	return t, nil
}

// task answers tasks/get, tasks/update or tasks/cancel for j.
func (x *extTasks) task(req *extRequest, j *extJob) (any, *mcp.JSONRPCErrorDetails) {
	if !declares(req) {
		return nil, missing(needExtension)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	j.updated = time.Now().UTC().Format(time.RFC3339)
	switch req.Method {
	case "tasks/update":
		var keys []string
		for k := range req.Params.InputResponses {
			keys = append(keys, k)
		}
		x.a.rec.event("ext tasks/update %v", keys)
		if r, ok := req.Params.InputResponses[j.key]; ok && j.answer == nil {
			j.answer = r
		}
		return map[string]any{"resultType": "complete"}, nil
	case string(mcp.MethodTasksCancel):
		x.a.rec.event("ext tasks/cancel %s", j.id)
		j.cancelled = true
		return map[string]any{"resultType": "complete"}, nil
	}
	return j.poll(), nil
}

// poll moves j on by one tasks/get and returns what that answers.
func (j *extJob) poll() map[string]any {
	j.polls++
	var t map[string]any
	switch {
	case j.cancelled:
		t = j.task("cancelled", "cancelled by the client")
	case j.polls <= j.steps:
		t = j.task("working", fmt.Sprintf("step %d", j.polls))
	case j.ask && (j.answer == nil || !j.shownAnswer):
		j.shownAnswer = j.answer != nil
		t = j.task("input_required", "waiting for an answer")
		t["inputRequests"] = map[string]any{j.key: map[string]any{
			"method": "elicitation/create",
			"params": map[string]any{"mode": "form", "message": "Your name?", "requestedSchema": map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
			}},
		}}
	case j.fail:
		t = j.task("failed", "the job failed")
		t["error"] = map[string]any{"code": mcp.INTERNAL_ERROR, "message": "job failed"}
	default:
		msg := fmt.Sprintf("job done %d", j.steps)
		if j.ask {
			msg += " answer " + string(j.answer)
		}
		t = j.task("completed", "done")
		t["result"] = mcp.NewToolResultText(msg)
	}
	t["resultType"] = "complete"
	return t
}

// task is j's Task object with status and message.
func (j *extJob) task(status, message string) map[string]any {
	return map[string]any{
		"taskId": j.id, "status": status, "statusMessage": message,
		"createdAt": j.created, "lastUpdatedAt": j.updated, "ttlMs": 60000, "pollIntervalMs": 1,
	}
}
