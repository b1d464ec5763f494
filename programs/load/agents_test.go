package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"concbench/internal/concbenchtest"
	"concbench/internal/testenv"
	"concbench/programs/agent"
)

// TestLoadAgents runs two agents (programs/agent) in-process and a load
// over them against the netpoll model: the JSON result is the merged one
// with a report per agent.
func TestLoadAgents(t *testing.T) {
	testenv.EndToEnd(t)
	saved := agentMaxUncertainty
	agentMaxUncertainty = time.Second // a loaded test machine may delay a pong; the bound's check is agent's TestEstimate
	t.Cleanup(func() { agentMaxUncertainty = saved })
	addr := concbenchtest.Netpoll(t, "http")
	var agents []string
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- agent.Run(ctx, agent.Config{Listen: "127.0.0.1:0", Token: "t0ken"}, pw, io.Discard)
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
	c := Defaults()
	c.Gen.Addr, c.Gen.Rate, c.Gen.Conns, c.Gen.Duration, c.Gen.Warmup = addr, 400, 4, 300*time.Millisecond, 100*time.Millisecond
	c.Agents, c.AgentToken, c.AgentLead, c.JSON, c.AllowInvalid = strings.Join(agents, ","), "t0ken", 300*time.Millisecond, "-", true
	c.Given = map[string]bool{"addr": true, "rate": true, "conns": true, "duration": true, "warmup": true}
	var stdout bytes.Buffer
	err := Run(context.Background(), c, &stdout, io.Discard)
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
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("JSON: %v in %q", err, stdout.String())
	}
	if len(res.Agents) != 2 || res.Requests.OK == 0 || res.Requests.OK != res.Agents[0].Result.Requests.OK+res.Agents[1].Result.Requests.OK {
		t.Errorf("merged %d ok from agents %+v", res.Requests.OK, res.Agents)
	}
	c = Defaults()
	c.Gen.Addr, c.Gen.Rate, c.Gen.Duration, c.Agents, c.AgentToken = addr, 400, 300*time.Millisecond, agents[0], "wrong"
	c.Given = map[string]bool{"addr": true, "rate": true, "duration": true}
	err = Run(context.Background(), c, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "wrong token") {
		t.Errorf("load with a wrong token: %v", err)
	}
}
