package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// taskCancels is closed by the first tasks/cancel the server receives.
//
// mcp-go v1.2.1 runs a task tool's handler with a context derived from the
// tools/call request's, which ends as soon as the CreateTaskResult is
// written (the task would be cancelled at once), and tells the handler
// neither its task id nor a tasks/cancel. The task tool therefore works on
// a context that does not end with the request, and a held task ends at
// the first tasks/cancel of any task (tests run one per server).
type taskCancels struct {
	once sync.Once
	ch   chan struct{}
}

// taskOptions are the server options of task support: tasks/list,
// tasks/cancel and task-augmented tools/call (2025-11-25 experimental
// tasks). Every tasks/cancel is recorded ("tasks/cancel").
func (a taskRole) taskOptions(hooks *server.Hooks) []server.ServerOption {
	a.tasks = &taskCancels{ch: make(chan struct{})}
	hooks.AddBeforeCancelTask(func(context.Context, any, *mcp.CancelTaskRequest) {
		a.rec.event("tasks/cancel")
		a.tasks.once.Do(func() { close(a.tasks.ch) })
	})
	return []server.ServerOption{server.WithTaskCapabilities(true, true, true)}
}

// addTaskTools registers the task tool (see the package doc).
func (a taskRole) addTaskTools() {
	a.srv.AddTaskTool(mcp.NewTool("task",
		mcp.WithDescription("Runs as a task (taskSupport required): sends steps progress notifications interval_ms apart, then completes with \"task done <steps>\"; with hold, keeps running after the last step until a tasks/cancel."),
		mcp.WithTaskSupport(mcp.TaskSupportRequired),
		mcp.WithInteger("steps", mcp.Required(), mcp.Min(0), mcp.Description("Number of progress notifications.")),
		mcp.WithInteger("interval_ms", mcp.Min(0), mcp.DefaultNumber(0), mcp.Description("Wait before each notification.")),
		mcp.WithBoolean("hold", mcp.Description("Keep running after the last step until a tasks/cancel.")),
	), a.taskTool)
}

// taskTool is the handler of the task tool (see taskCancels).
func (a taskRole) taskTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
	steps, err := req.RequireInt("steps")
	if err != nil {
		return nil, err
	}
	work, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	go func() {
		select {
		case <-a.tasks.ch:
			stop()
		case <-work.Done():
		}
	}()
	res, err := a.progressTool(work, req) // the same steps and notifications
	if err != nil || res.IsError {
		if work.Err() != nil {
			return nil, work.Err()
		}
		return &mcp.CreateTaskResult{Content: res.Content, IsError: true}, nil
	}
	if req.GetBool("hold", false) {
		<-work.Done()
		a.cancelled("task")
		return nil, work.Err()
	}
	return &mcp.CreateTaskResult{Content: []mcp.Content{mcp.NewTextContent(fmt.Sprintf("task done %d", steps))}}, nil
}

// taskRole is the app's tasks: the 2025-11-25 tasks capability (this
// file) and the extension's tasks (exttasks.go).
type taskRole struct{ *app }
