package inprocess

import (
	"errors"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
)

// TestCheckRefusesServerKnobs: the in-process engine is registered, passes
// a plain config and async rollouts on one device, and names the knob of
// each setting only servers use, and of async rollouts on several devices.
func TestCheckRefusesServerKnobs(t *testing.T) {
	for _, ok := range []engine.Config{{Name: Name}, {Name: Name, Async: true, Devices: 1}, {Name: Name, Devices: 4}} {
		if err := engine.Check(ok); err != nil {
			t.Errorf("Check(%+v) = %v", ok, err)
		}
	}
	for _, tc := range []struct {
		c   engine.Config
		key string
	}{
		{engine.Config{Name: Name, URLs: []string{"http://a:1"}}, "rollout_engine_urls"},
		{engine.Config{Name: Name, WeightsDir: "w"}, "weights_dir"},
		{engine.Config{Name: Name, Batch: 4}, "rollout_engine_batch"},
		{engine.Config{Name: Name, Async: true, Devices: 2}, "async_rollouts"},
	} {
		var fe *engine.FieldError
		if err := engine.Check(tc.c); !errors.As(err, &fe) || fe.Key != tc.key {
			t.Errorf("Check(%+v) = %v, want a %s error", tc.c, err, tc.key)
		}
	}
}

// TestNewNeedsTheModel: without the model in process (Policy.Local) the
// engine is refused, not made to fail later.
func TestNewNeedsTheModel(t *testing.T) {
	for _, local := range []any{nil, "model", Local{}} {
		if _, err := engine.New(engine.Config{Name: Name}, engine.Policy{Vocab: 10, Local: local}); err == nil || !strings.Contains(err.Error(), "model") {
			t.Errorf("New with Local %#v = %v, want an error", local, err)
		}
	}
}
