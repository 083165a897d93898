package scenario

import (
	"testing"
)

func TestSubsetMatchesPartialObjects(t *testing.T) {
	got := map[string]any{"spec": map[string]any{"replicas": int64(3), "x": "y"}, "list": []any{map[string]any{"a": "1", "b": "2"}}}
	if where, ok := subset(map[string]any{"spec": map[string]any{"replicas": int64(3)}, "list": []any{map[string]any{"a": "1"}}}, got, ""); !ok {
		t.Errorf("partial match failed at %s", where)
	}
	if where, ok := subset(map[string]any{"spec": map[string]any{"replicas": int64(4)}}, got, ""); ok || where != "spec.replicas: want 4, got 3" {
		t.Errorf("mismatch reported as %q", where)
	}
}
