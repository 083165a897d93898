package anonymize

import (
	"bytes"
	"strings"
	"testing"
)

func TestKeyRoundTrip(t *testing.T) {
	key, printed := NewKey()
	other, _ := NewKey()
	if len(key) != KeySize || bytes.Equal(key, other) {
		t.Fatalf("keys %x and %x", key, other)
	}
	back, err := ParseKey(" " + strings.ToUpper(printed) + "\n")
	if err != nil || !bytes.Equal(back, key) {
		t.Fatalf("ParseKey(%q) = %x, %v; want %x", printed, back, err, key)
	}
	for _, bad := range []string{"", "xyz", printed[:10], printed + "00"} {
		_, err := ParseKey(bad)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "anonymize key") {
			t.Errorf("ParseKey(%q): %v, want one line naming the key", bad, err)
		}
	}
}

func TestImages(t *testing.T) {
	a := New(testKey)
	for in, keep := range map[string]string{
		"nginx":                        "",
		"nginx:latest":                 ":latest",
		"registry.example:5000/x:v1.2": ":v1.2",
		"acme/api:2026.11":             ":2026.11",
		"acme/api:prod-acme":           "",
	} {
		out := a.image(in)
		if !strings.HasSuffix(out, keep) || strings.Contains(out, "acme") || strings.Contains(out, "nginx") || strings.Contains(out, "example") {
			t.Errorf("image(%q) = %q, want the tag %q kept and nothing else", in, out, keep)
		}
	}
	digest := "repo@sha256:" + strings.Repeat("ab", 32)
	if out := a.image(digest); !strings.Contains(out, "@sha256:") || len(out) != tokenLen+len("@sha256:")+64 || strings.Contains(out, "abab") {
		t.Errorf("image(%q) = %q", digest, out)
	}
	if a.image("acme/api:v1") != a.image("acme/api:v1") || a.image("acme/api:v1") == a.image("acme/web:v1") {
		t.Error("equal images must map equal, different ones differently")
	}
}
