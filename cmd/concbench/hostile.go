package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"concbench/internal/cli"
	"concbench/programs/hostile"
	"concbench/programs/serverconf"
)

const hostileUsage = `usage: concbench hostile [--attack amplify|slowheader] [flags] label='serve flags' ...

Measures what hostile clients cost a concbench server, configuration by
configuration (each given as label='serve flags'; runs alternate across
them, each on a fresh server pinned to --server-cpus, over HTTP).

amplify: --conns clients each pipeline --requests requests for --size
byte bodies and never read. It measures a victim client's p99 unattacked,
opens the attacking connections, waits until every one has had a response
produced and the server has stopped writing (the kernel's socket buffers
full: the attack at rest; --rest=false: as soon as every attacker has had
a response produced), reads the server's resident set size, its CPU use
and the victim's p99 under attack, closes the attackers and reads the RSS
again once the server has closed them. The bound it compares the growth
per connection with is models.ConnMemoryBound.

slowheader: --conns clients each send the start of a request and then one
more header byte every second, never finishing it. It measures the
victim's p99 unattacked, --during after the attackers connected, and
after the server has closed every attacker for its header timeout (serve
--header-timeout: give it in the configuration's flags), how long that
took and how many the server counted as header_timeout and truncated.

The victim sends one small request at a time for 3 s (at least 2000
requests); a victim that gets no answer within a minute fails the run.

  concbench hostile --attack amplify --conns 200 'lf=--model leaderfollowers' 'netpoll=--model netpoll'
  concbench hostile --attack slowheader --conns 2000 'lf=--model leaderfollowers --header-timeout 5s'

Flags:
`

func runHostile(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	c, err := parseHostileFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	return hostile.Run(ctx, c, stdout, stderr)
}

// parseHostileFlags reads and checks the command line.
func parseHostileFlags(args []string, stdout, stderr io.Writer) (hostile.Config, error) {
	fs := flag.NewFlagSet("hostile", flag.ContinueOnError)
	c, def := hostile.Default(), hostile.Default()
	fs.StringVar(&c.ServerBinary, "server-binary", "", "the concbench executable that serves; default: this one")
	fs.StringVar(&c.Attack, "attack", def.Attack, "amplify or slowheader")
	fs.IntVar(&c.Conns, "conns", def.Conns, "attacking connections")
	fs.IntVar(&c.PerConn, "requests", def.PerConn, "amplify: requests each attacker pipelines")
	fs.IntVar(&c.Size, "size", def.Size, "amplify: response body bytes each request asks for")
	fs.IntVar(&c.Reps, "reps", def.Reps, "runs of each configuration")
	fs.StringVar(&c.ServerCPUs, "server-cpus", def.ServerCPUs, "CPUs the server is pinned to")
	fs.BoolVar(&c.Rest, "rest", def.Rest, "amplify: measure once the server has stopped writing (the attack at rest); false: as soon as every attacker has had a response produced, while the kernel's socket buffers are still being filled")
	fs.DurationVar(&c.During, "during", def.During, "slowheader: how long after the attackers connected the victim is measured under attack")
	cli.Renamed(fs, "runs", "reps", stderr)
	if err := cli.Parse(fs, args, stdout, hostileUsage); err != nil {
		return c, err
	}
	var err error
	if c.Configs, err = serverconf.Parse(fs.Args()); err != nil {
		return c, fmt.Errorf("hostile: %w", err)
	}
	return c.Check()
}
