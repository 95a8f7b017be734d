package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/acpgate/acpgate/internal/testsupport/loopback"
	"github.com/mark3labs/mcp-go/mcp"
)

// dialFlag is the hidden flag of the child the dial tool starts with
// via_child: it connects to the address, prints the outcome and exits
// (0 connected, 3 refused).
const dialFlag = "dial-mode"

// runDialChild is the process of -dial-mode PROTOCOL,ADDR.
func runDialChild(arg string) {
	proto, addr, _ := strings.Cut(arg, ",")
	if err := loopback.Dial(proto, addr); err != nil {
		fmt.Println("dial:", err)
		os.Exit(3)
	}
	fmt.Println("connected")
}

// addSandboxTools adds the tools the sandbox tests use:
//
//	dial {addr: string, protocol?: "tcp"|"udp"|"mptcp", via_child?: boolean}
//	    connects to addr (tcp, the default, or mptcp) or sends it a
//	    datagram (udp); with via_child a child process of the server
//	    does; returns "connected" or an isError result with the error.
//	read_path {path: string}   the file's contents, or isError with the error.
//	write_path {path: string, text: string}  writes the file; "written" or
//	    isError with the error.
func (a *app) addSandboxTools() {
	a.srv.AddTool(mcp.NewTool("dial",
		mcp.WithDescription("Connects to a TCP address."),
		mcp.WithString("addr", mcp.Required()),
		mcp.WithString("protocol", mcp.Enum("tcp", "udp", "mptcp")),
		mcp.WithBoolean("via_child"),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		addr, err := req.RequireString("addr")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		proto := req.GetString("protocol", "tcp")
		if req.GetBool("via_child", false) {
			exe, err := os.Executable()
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			out, err := exec.CommandContext(ctx, exe, "-"+dialFlag, proto+","+addr).CombinedOutput()
			if err != nil {
				return mcp.NewToolResultError(fmt.Sprintf("child: %v: %s", err, out)), nil
			}
			return text("connected"), nil
		}
		if err := loopback.Dial(proto, addr); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return text("connected"), nil
	})
	a.srv.AddTool(mcp.NewTool("read_path",
		mcp.WithDescription("Reads a file."),
		mcp.WithString("path", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		path, err := req.RequireString("path")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return text(string(data)), nil
	})
	a.srv.AddTool(mcp.NewTool("write_path",
		mcp.WithDescription("Writes a file."),
		mcp.WithString("path", mcp.Required()),
		mcp.WithString("text", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		path, err := req.RequireString("path")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if err := os.WriteFile(path, []byte(req.GetString("text", "")), 0o644); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return text("written"), nil
	})
}
