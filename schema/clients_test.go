package schema

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestShiftClockMovesEveryInstant: every int64 field of a record named *Ns is an instant that
// ShiftClock moves (and chunk_ns with it), but the two durations, connect_ns and tls_ns; a
// new instant field not shifted fails here.
func TestShiftClockMovesEveryInstant(t *testing.T) {
	durations := map[string]bool{"ConnectNs": true, "TLSNs": true}
	var r RequestRecord
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.Type.Kind() == reflect.Int64 && strings.HasSuffix(f.Name, "Ns") {
			v.Field(i).SetInt(int64(1000 + i))
		}
	}
	r.ChunkNs = []int64{5000, 6000}

	r.ShiftClock(-300)
	after := reflect.ValueOf(r)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Type.Kind() != reflect.Int64 || !strings.HasSuffix(f.Name, "Ns") {
			continue
		}
		want := int64(1000+i) - 300
		if durations[f.Name] {
			want = int64(1000 + i)
		}
		if got := after.Field(i).Int(); got != want {
			t.Errorf("%s: %d after ShiftClock(-300) from %d, want %d", f.Name, got, int64(1000+i), want)
		}
	}
	if r.ChunkNs[0] != 4700 || r.ChunkNs[1] != 5700 {
		t.Errorf("chunk_ns %v, want 4700 5700", r.ChunkNs)
	}
	var unset RequestRecord
	unset.StartNs, unset.EndNs = 10, 20
	unset.ShiftClock(5)
	if unset.ScheduledNs != 0 || unset.SentNs != 0 || unset.StartNs != 15 {
		t.Errorf("an unset instant moved or a set one did not: %+v", unset)
	}
}

// TestMaxClientsIsTheKeysRange: MaxClients is cells[].clients' upper bound as its range tag
// (the loader and the JSON Schema) says.
func TestMaxClientsIsTheKeysRange(t *testing.T) {
	f, _ := reflect.TypeOf(Cell{}).FieldByName("Clients")
	lo, hi, _ := strings.Cut(f.Tag.Get("range"), ",")
	if lo != "0" || hi != strconv.Itoa(MaxClients) {
		t.Errorf("clients range %q, want 0,%d", f.Tag.Get("range"), MaxClients)
	}
}
