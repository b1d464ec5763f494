package partitioned

import (
	"testing"

	"concbench/models"
	"concbench/models/modeltest"
)

func TestConformance(t *testing.T) {
	modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
		return Start(cfg, Options{})
	})
}
