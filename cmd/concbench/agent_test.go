package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"concbench/internal/testenv"
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

// TestLoadAgents runs "concbench agent" twice in-process and "load
// --agents" against the netpoll model: the JSON result is the merged one
// with a report per agent.
func TestLoadAgents(t *testing.T) {
	testenv.EndToEnd(t)
	saved := agentMaxUncertainty
	agentMaxUncertainty = time.Second // a loaded test machine may delay a pong; the bound's check is agent's TestEstimate
	t.Cleanup(func() { agentMaxUncertainty = saved })
	addr := startNetpoll(t, "http")
	var agents []string
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- runAgent(ctx, []string{"--listen", "127.0.0.1:0", "--token", "t0ken"}, nil, pw, io.Discard)
		}()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("agent: %v", err)
			}
			pr.Close()
		})
		line, err := bufio.NewReader(pr).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		go io.Copy(io.Discard, pr)
		agents = append(agents, strings.TrimPrefix(strings.TrimSpace(line), "agent listening on "))
	}
	out, _, err := load("--addr", addr, "--rate", "400", "--conns", "4", "--duration", "300ms", "--warmup", "100ms",
		"--agents", strings.Join(agents, ","), "--agent-token", "t0ken", "--agent-lead", "300ms", "--json", "-", "--allow-invalid")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Requests struct{ OK int64 } `json:"requests"`
		Agents   []struct {
			Conns  int `json:"conns"`
			Result struct {
				Requests struct{ OK int64 } `json:"requests"`
			} `json:"result"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("JSON: %v in %q", err, out)
	}
	if len(res.Agents) != 2 || res.Requests.OK == 0 || res.Requests.OK != res.Agents[0].Result.Requests.OK+res.Agents[1].Result.Requests.OK {
		t.Errorf("merged %d ok from agents %+v", res.Requests.OK, res.Agents)
	}
	_, _, err = load("--addr", addr, "--rate", "400", "--duration", "300ms", "--agents", agents[0], "--agent-token", "wrong")
	if err == nil || !strings.Contains(err.Error(), "wrong token") {
		t.Errorf("load with a wrong token: %v", err)
	}
}
