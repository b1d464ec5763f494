package threadperconn

import (
	"testing"

	"concbench/models"
	"concbench/models/modeltest"
)

func TestConformance(t *testing.T) {
	modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
		cfg.Threads = 0 // one thread per connection: the suite opens hundreds
		return Start(cfg, Options{})
	})
}
