package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestAgentFlags checks the agent command's and --agents' refusals of
// bad or missing settings.
func TestAgentFlags(t *testing.T) {
	t.Setenv("CONCBENCH_AGENT_TOKEN", "")
	tests := []struct {
		name string
		cmd  func(context.Context, []string, io.Reader, io.Writer, io.Writer) error
		args []string
		want string
	}{
		{name: "agent without listen", cmd: runAgent, args: []string{"--token", "t"}, want: "--listen is required"},
		{name: "agent without token", cmd: runAgent, args: []string{"--listen", "127.0.0.1:0"}, want: "--token"},
		{name: "agent with a bad allow", cmd: runAgent, args: []string{"--listen", "127.0.0.1:0", "--token", "t", "--allow", "10.0.0.0/40"}, want: "allow"},
		{name: "load without token", cmd: runLoad, args: []string{"--addr", "127.0.0.1:1", "--rate", "10", "--agents", "127.0.0.1:2"}, want: "--agent-token"},
		{name: "load pinned with agents", cmd: runLoad, args: []string{"--addr", "127.0.0.1:1", "--rate", "10", "--agents", "127.0.0.1:2", "--agent-token", "t", "--cpus", "0"}, want: "--cpus with --agents"},
		{name: "load with a request count", cmd: runLoad, args: []string{"--addr", "127.0.0.1:1", "--rate", "10", "--requests", "10", "--agents", "127.0.0.1:2", "--agent-token", "t"}, want: "needs a duration"},
		{name: "bench without token", cmd: runBench, args: []string{"--agents", "127.0.0.1:2"}, want: "--agent-token"},
		{name: "bench with a wildcard server", cmd: runBench, args: []string{"--server-addr", "0.0.0.0:0"}, want: "not a wildcard"},
		{name: "gate without token", cmd: runGate, args: []string{"--base", "HEAD", "--agents", "127.0.0.1:2"}, want: "--agent-token"},
		{name: "bench token without agents", cmd: runBench, args: []string{"--agent-token", "t"}, want: "without --agents"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cmd(context.Background(), tc.args, nil, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v: %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}
