package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fakekafka/fakekafka/chaos"
	"github.com/fakekafka/fakekafka/server"
)

// loadChaosSpec reads --chaos: a spec in ParseSpec's text form, or the
// name of a file holding a JSON spec.
func loadChaosSpec(arg string) (chaos.Spec, error) {
	head, _, _ := strings.Cut(arg, ",")
	if _, preset := chaos.Presets[head]; preset || strings.ContainsAny(arg, "={") {
		return chaos.ParseSpec(arg)
	}
	b, err := os.ReadFile(arg)
	if err != nil {
		return chaos.Spec{}, fmt.Errorf("%q is neither a preset (%s) nor a readable spec file: %v", arg, strings.Join(chaos.PresetNames(), ", "), err)
	}
	return chaos.ParseSpec(string(b))
}

// startChaos starts the run and prints its seed, so that a failing run can
// be replayed with seed=N.
func startChaos(c *server.Cluster, spec chaos.Spec, stdout io.Writer) error {
	actions, err := c.StartChaos(spec)
	if err != nil {
		return err
	}
	rep, err := c.ChaosReport()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fakekafka chaos: seed=%d preset=%s duration=%s actions=%d (GET /v1/chaos/report)\n", rep.Seed, rep.Spec.Preset, rep.Spec.Duration, len(actions))
	return nil
}

// stopChaos ends the run at shutdown and summarises its report.
func stopChaos(c *server.Cluster, stderr io.Writer) {
	rep, err := c.StopChaos()
	if errors.Is(err, server.ErrNoChaos) {
		if rep, err = c.ChaosReport(); err != nil {
			return
		}
	} else if err != nil {
		fmt.Fprintf(stderr, "fakekafka chaos: %v\n", err)
		return
	}
	v := rep.Violations()
	fmt.Fprintf(stderr, "fakekafka chaos: seed=%d, %d actions, %d violations\n", rep.Seed, len(rep.Actions), len(v))
	for _, x := range v {
		fmt.Fprintf(stderr, "fakekafka chaos: %s\n", x)
	}
}
