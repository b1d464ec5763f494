package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"concbench/models"
	"concbench/models/netpoll"
	"concbench/service"
	"concbench/wire"
)

// roleEnv names the role a re-executed test binary plays in
// TestAgentsInNamespaces: "agent" or "coordinator".
const roleEnv = "CONCBENCH_AGENT_TEST_ROLE"

// TestMain lets the test binary play a role inside a network namespace
// when re-executed by TestAgentsInNamespaces.
func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		if err := playRole(role); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", role, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// playRole runs a role: an agent listening on $LISTEN for targets in
// $ALLOW until its standard input ends, printing its address first; or a
// server on every address with a coordinator that drives it at
// $TARGET_IP through the agents $AGENTS, printing the Result as JSON.
func playRole(role string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch role {
	case "agent":
		allow, err := ParseAllow(os.Getenv("ALLOW"))
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", os.Getenv("LISTEN"))
		if err != nil {
			return err
		}
		fmt.Printf("%s\n", ln.Addr())
		go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
		err = (&Agent{Token: token, Allow: allow}).Serve(ctx, ln)
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	case "coordinator":
		codec, err := wire.New("http", wire.Limits{})
		if err != nil {
			return err
		}
		svc, err := service.New(service.Config{})
		if err != nil {
			return err
		}
		srv, err := netpoll.Start(models.Config{Addr: "0.0.0.0:0", Codec: codec, Service: svc}, netpoll.Options{})
		if err != nil {
			return err
		}
		defer srv.Close()
		target := net.JoinHostPort(os.Getenv("TARGET_IP"), fmt.Sprint(srv.Addr().Port()))
		co := &Coordinator{Agents: strings.Split(os.Getenv("AGENTS"), ","), Token: token, Lead: 500 * time.Millisecond,
			MaxUncertainty: loaded}
		res, err := co.Run(ctx, e2eConfig(target))
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	return fmt.Errorf("unknown role %q", role)
}

// TestAgentsInNamespaces runs a server (with the coordinator) in one
// network namespace and an agent in each of two others, joined to it by
// veth pairs, and checks that the merged result is what the agents
// measured. It needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2's
// ip; without them it skips, saying why. Only the namespaces' own
// addresses are targeted, in a 10.x.y.0/24 unused on this host.
func TestAgentsInNamespaces(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipped: needs iproute2's ip command to create network namespaces: ", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: creating network namespaces needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN)")
	}
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	pid := os.Getpid()
	ns := map[string]string{}
	for _, r := range []string{"s", "a1", "a2"} {
		ns[r] = fmt.Sprintf("cbt%d%s", pid, r)
		if err := ip("netns", "add", ns[r]); err != nil {
			if len(ns) == 1 {
				t.Skip("skipped: cannot create a network namespace here (no privilege?): ", err)
			}
			t.Fatal(err)
		}
		name := ns[r]
		t.Cleanup(func() {
			if err := ip("netns", "del", name); err != nil {
				t.Error(err)
			}
		})
	}
	net24 := freeSubnet(t, pid)
	addr := func(host int) string { return fmt.Sprintf("%s.%d", net24, host) }
	// s–a1 on .0/30 (s .1, a1 .2), s–a2 on .4/30 (s .5, a2 .6); each agent
	// reaches the rest of the /24 through s, so that both target s's .1.
	for i, r := range []string{"a1", "a2"} {
		sIf, aIf := fmt.Sprintf("cb%ds%d", pid, i+1), fmt.Sprintf("cb%da%d", pid, i+1)
		sIP, aIP := addr(4*i+1), addr(4*i+2)
		if err := ip("link", "add", sIf, "netns", ns["s"], "type", "veth", "peer", "name", aIf, "netns", ns[r]); err != nil {
			t.Skip("skipped: cannot create a veth pair here (no veth support in this kernel?): ", err)
		}
		for _, args := range [][]string{
			{"-n", ns["s"], "addr", "add", sIP + "/30", "dev", sIf},
			{"-n", ns[r], "addr", "add", aIP + "/30", "dev", aIf},
			{"-n", ns["s"], "link", "set", sIf, "up"},
			{"-n", ns[r], "link", "set", aIf, "up"},
			{"-n", ns[r], "link", "set", "lo", "up"},
			{"-n", ns[r], "route", "add", net24 + ".0/24", "via", sIP},
		} {
			if err := ip(args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := ip("-n", ns["s"], "link", "set", "lo", "up"); err != nil {
		t.Fatal(err)
	}

	target := addr(1)
	var agents []string
	for i, r := range []string{"a1", "a2"} {
		agents = append(agents, startRole(t, ns[r], "agent", "LISTEN="+addr(4*i+2)+":0", "ALLOW="+target))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns["s"], os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=coordinator", "TARGET_IP="+target, "AGENTS="+strings.Join(agents, ","))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("coordinator: %v: %s", err, stderr.String())
	}
	var res Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("coordinator's result: %v", err)
	}
	for _, a := range res.Agents {
		if a.Target != target+":"+strings.Split(res.Config.Addr, ":")[1] {
			t.Errorf("%s drove %s, want %s's port on %s", a.Label, a.Target, res.Config.Addr, target)
		}
	}
	checkMerged(t, e2eConfig(res.Config.Addr), &res)
}

// freeSubnet returns the first three octets of a 10.x.y.0/24 that no
// address or route on this host mentions, chosen from the pid so that
// concurrent runs differ.
func freeSubnet(t *testing.T, pid int) string {
	t.Helper()
	var seen strings.Builder
	for _, args := range [][]string{{"-o", "addr"}, {"route"}} {
		out, err := exec.Command("ip", args...).Output()
		if err != nil {
			t.Fatalf("ip %s: %v", strings.Join(args, " "), err)
		}
		seen.Write(out)
	}
	for i := range 1000 {
		k := pid + 7919*i
		s := fmt.Sprintf("10.%d.%d", 200+k%50, (k/50)%256)
		if !strings.Contains(seen.String(), s+".") {
			return s
		}
	}
	t.Fatal("no unused 10.x.y.0/24 found")
	return ""
}

// startRole starts the test binary as an agent in namespace name and
// returns the address it listens on; it stops when the test ends.
func startRole(t *testing.T, name, role string, env ...string) string {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", name, os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), roleEnv+"="+role), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the agent stops at the end of its input
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s in %s: %v", role, name, err)
		}
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case s := <-line:
		if s == "" {
			t.Fatalf("%s in %s exited without its address", role, name)
		}
		return s
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s in %s did not print its address within 30s", role, name)
	}
	return ""
}
