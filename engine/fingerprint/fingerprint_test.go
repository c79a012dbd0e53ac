package fingerprint

import (
	"strings"
	"testing"
)

type inputs struct {
	Zeta  string `json:"zeta"`
	Alpha string `json:"alpha"`
}

// Fingerprint documents are stored in the journal: a URL password never enters one, and a
// document without a secret keeps its encoding (and so its fingerprint).
func TestCanonicalRedacts(t *testing.T) {
	secret, err := Canonical(inputs{Zeta: "http://bench:hunter22@h:8000", Alpha: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(secret), "hunter22") || string(secret) != `{"alpha":"a","zeta":"http://bench:xxxxx@h:8000"}` {
		t.Errorf("Canonical = %s", secret)
	}
	plain, err := Canonical(inputs{Zeta: "sim://", Alpha: "12@34"})
	if err != nil {
		t.Fatal(err)
	}
	if string(plain) != `{"zeta":"sim://","alpha":"12@34"}` {
		t.Errorf("a document without a secret was re-encoded: %s", plain)
	}
	a, _ := Canonical(inputs{Zeta: "http://bench:one-password@h"})
	b, _ := Canonical(inputs{Zeta: "http://bench:another-one@h"})
	if string(a) != string(b) {
		t.Errorf("a changed password changes the fingerprint input: %s vs %s", a, b)
	}
}
